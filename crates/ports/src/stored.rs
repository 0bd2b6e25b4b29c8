//! The stored forms every storage adapter shares: scope sets as lists of
//! names, and the columns of the account reads decoded into the ports'
//! types.
//!
//! Each `…Columns` type is the tuple of values one read selects, in the
//! order its SQL lists them; both engines decode such a tuple (sqlx decodes
//! tuples positionally), then the function beside it makes the port's type
//! of it. The SQL that selects them stays in each adapter.

use credencial_domain::account::EntryId;
use credencial_domain::account::EntryKind;
use credencial_domain::admin::{ApiPermission, ApiPermissions, ApiTokenDigest, DirectoryUser};
use credencial_domain::oauth::userinfo::UserIdentity;
use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{AcademicDegree, Experience, OwnProfile};
use credencial_domain::{Degree, Scope, ScopeSet, UserData, UserId};

use crate::account::OwnEntry;
use crate::directory::ApiClientAccess;
use crate::error::RepositoryError;
use crate::users::{AccountRecord, UserCredentials};

fn unexpected(e: impl std::fmt::Display) -> RepositoryError {
    RepositoryError::Unexpected(e.to_string())
}

/// The names of `set`, sorted: the stored form of a scope set.
pub fn scope_names(set: ScopeSet) -> Vec<&'static str> {
    let mut names: Vec<_> = set.iter().map(Scope::name).collect();
    names.sort_unstable();
    names
}

/// The set of stored scope names; an unknown name is a storage error (the
/// schemas' checks keep them out).
pub fn scopes_from_names<S: AsRef<str>>(names: &[S]) -> Result<ScopeSet, RepositoryError> {
    names.iter().map(|n| n.as_ref().parse::<Scope>().map_err(unexpected)).collect()
}

/// The set of stored API permission names; an unknown name is a storage
/// error.
pub fn api_permissions(names: &[String]) -> Result<ApiPermissions, RepositoryError> {
    names
        .iter()
        .map(|n| ApiPermission::from_name(n).ok_or_else(|| unexpected(format!("stored API permission {n:?}"))))
        .collect()
}

/// A stored client id; one that does not parse is a storage error.
pub fn client_id(text: &str) -> Result<ClientId, RepositoryError> {
    ClientId::parse(text).map_err(|e| unexpected(format!("stored client id: {e}")))
}

/// The API access of the application `client_id` whose token digest is
/// `hash` (32 bytes) and whose permissions are named `permissions`.
pub fn api_client_access(
    client_id_text: &str,
    hash: Vec<u8>,
    permissions: &[String],
) -> Result<ApiClientAccess, RepositoryError> {
    let digest: [u8; 32] = hash.try_into().map_err(|_| unexpected("stored API token hash length"))?;
    Ok(ApiClientAccess {
        client_id: client_id(client_id_text)?,
        digest: ApiTokenDigest(digest.into()),
        permissions: api_permissions(permissions)?,
    })
}

/// `id, username, password, is_active, must_change_password` of `users`.
pub type CredentialColumns = (i64, String, String, bool, bool);

/// The credentials of [`CredentialColumns`].
pub fn credentials((id, username, password, is_active, must_change_password): CredentialColumns) -> UserCredentials {
    UserCredentials { id: UserId(id), username, password_hash: password.into(), is_active, must_change_password }
}

/// `id, username, name, email, cpf, is_active, is_staff, receita_validated,
/// must_change_password` and `created_at` (Unix seconds) of `users`.
pub type RecordColumns = (i64, String, String, String, Option<String>, bool, bool, bool, bool, i64);

/// The account record of [`RecordColumns`].
pub fn account_record(
    (id, username, name, email, cpf, is_active, is_staff, validated, must_change_password, created_at): RecordColumns,
) -> AccountRecord {
    AccountRecord {
        id: UserId(id),
        username,
        name,
        email,
        cpf,
        is_active,
        is_staff,
        tax_id_validated: validated,
        must_change_password,
        created_at,
    }
}

/// [`RecordColumns`] followed by the row's place in a search's order (the
/// `after` that reads on from it): the username, or for a search by words
/// the place [`write_term_place`](credencial_domain::admin::write_term_place)
/// writes.
pub type PlacedRecordColumns = (i64, String, String, String, Option<String>, bool, bool, bool, bool, i64, String);

/// The place and the account record of [`PlacedRecordColumns`].
pub fn placed_account_record(
    (id, username, name, email, cpf, is_active, is_staff, validated, must_change_password, created_at, place): PlacedRecordColumns,
) -> (String, AccountRecord) {
    let record = (id, username, name, email, cpf, is_active, is_staff, validated, must_change_password, created_at);
    (place, account_record(record))
}

/// `identificacao, nome_usual, email, campus, tipo_usuario` of `users`.
pub type UserDataColumns = (String, String, String, String, String);

/// The user data of [`UserDataColumns`].
pub fn user_data((identificacao, nome_usual, email, campus, tipo_usuario): UserDataColumns) -> UserData {
    UserData { identificacao, nome_usual, email, campus, tipo_usuario }
}

/// `username, cpf` (`''` when none), `email, name, genero,
/// data_de_nascimento` (`YYYY-MM-DD`) and `receita_validated` of `users`.
pub type DirectoryUserColumns = (String, String, String, String, String, Option<String>, bool);

/// The directory user of [`DirectoryUserColumns`].
pub fn directory_user(
    (username, cpf, email, nome, genero, data_de_nascimento, validado): DirectoryUserColumns,
) -> DirectoryUser {
    DirectoryUser { username, cpf, email, nome, genero, data_de_nascimento, validado }
}

/// `username, name, avatar, cpf, email, email_verified` of `users`: the
/// userinfo claims' data.
pub type IdentityColumns = (String, String, String, Option<String>, String, bool, Option<String>);

/// The identity of [`IdentityColumns`].
pub fn identity(
    (username, name, avatar, cpf, email, email_verified, govbr): IdentityColumns,
) -> Result<UserIdentity, RepositoryError> {
    let govbr_reliability = govbr.as_deref().map(serde_json::from_str).transpose().map_err(unexpected)?;
    Ok(UserIdentity { username, name, avatar, cpf, email, email_verified, govbr_reliability })
}

/// `name, avatar, cpf, email, receita_validated` of `users`, then the
/// user's experiences and degrees, each a JSON array of objects in the
/// profile answer's order: an experience has the fields of [`Experience`]
/// (datetimes `YYYY-MM-DDTHH:MM:SS` or null), a degree those of
/// [`AcademicDegree`] with `grau` its code (dates `YYYY-MM-DD`).
pub type ProfileColumns = (String, String, Option<String>, String, bool, String, String, Option<String>);

/// A degree as [`ProfileColumns`] holds it.
#[derive(serde::Deserialize)]
struct StoredDegree {
    instituicao: String,
    curso: String,
    data_inicio: String,
    data_fim: Option<String>,
    municipio: String,
    descricao: String,
    grau: String,
}

fn degree(code: &str) -> Result<Degree, RepositoryError> {
    Degree::from_code(code).ok_or_else(|| unexpected(format!("degree code {code:?}")))
}

/// The own profile of [`ProfileColumns`] (the lists decoded from their
/// JSON).
pub fn own_profile(
    (name, avatar, cpf, email, receita_validated, experiences, degrees, govbr): ProfileColumns,
) -> Result<OwnProfile, RepositoryError> {
    let experiences: Vec<Experience> = serde_json::from_str(&experiences).map_err(unexpected)?;
    let degrees: Vec<StoredDegree> = serde_json::from_str(&degrees).map_err(unexpected)?;
    let degrees = degrees
        .into_iter()
        .map(|d| {
            Ok(AcademicDegree {
                grau: degree(&d.grau)?,
                instituicao: d.instituicao,
                curso: d.curso,
                data_inicio: d.data_inicio,
                data_fim: d.data_fim,
                municipio: d.municipio,
                descricao: d.descricao,
            })
        })
        .collect::<Result<_, RepositoryError>>()?;
    let govbr_reliability = govbr.as_deref().map(serde_json::from_str).transpose().map_err(unexpected)?;
    Ok(OwnProfile { name, avatar, cpf, email, receita_validated, experiences, degrees, govbr_reliability })
}

/// Where one kind of own entry is kept, the same in every schema: the
/// table and the names of its columns.
#[derive(Debug)]
pub struct EntryTable {
    /// The table.
    pub name: &'static str,
    /// The column that says where (`estabelecimento`, `instituicao`).
    pub place: &'static str,
    /// The column that says what (`profissao`, `curso`).
    pub subject: &'static str,
    /// The degree code's column, for degrees.
    pub grau: Option<&'static str>,
    /// Whether rows have an `origin` (`'user'` or `'cnes'`).
    pub has_origin: bool,
}

const EXPERIENCES: EntryTable =
    EntryTable { name: "experiences", place: "estabelecimento", subject: "profissao", grau: None, has_origin: true };
const DEGREES: EntryTable =
    EntryTable { name: "degrees", place: "instituicao", subject: "curso", grau: Some("grau"), has_origin: false };

impl EntryTable {
    /// The table of `kind`.
    pub fn of(kind: EntryKind) -> &'static Self {
        match kind {
            EntryKind::Experience => &EXPERIENCES,
            EntryKind::Degree => &DEGREES,
        }
    }
}

/// `id`, the place and the subject, the degree code (NULL for an
/// experience), `data_inicio` and `data_fim` (`YYYY-MM-DD`), `municipio`,
/// `descricao`, and whether it came from CNES, of an experience or degree.
pub type EntryColumns = (i64, String, String, Option<String>, Option<String>, Option<String>, String, String, bool);

/// The own entry of `kind` of [`EntryColumns`].
pub fn own_entry(
    kind: EntryKind,
    (id, place, subject, grau, data_inicio, data_fim, municipio, descricao, from_cnes): EntryColumns,
) -> Result<OwnEntry, RepositoryError> {
    let grau = match kind {
        EntryKind::Experience => None,
        EntryKind::Degree => Some(degree(grau.as_deref().unwrap_or_default())?),
    };
    Ok(OwnEntry { id: EntryId(id), kind, place, subject, grau, data_inicio, data_fim, municipio, descricao, from_cnes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_names_are_stored_sorted_and_read_back() {
        let set = ScopeSet::parse_strict("receita_federal cpf email").expect("scopes");
        assert_eq!(scope_names(set), ["cpf", "email", "receita_federal"]);
        assert_eq!(scopes_from_names(&scope_names(set)).expect("known"), set);
        assert!(scopes_from_names(&["openid"]).is_err(), "not a profile scope");
    }

    #[test]
    fn a_profile_with_an_unknown_degree_code_is_a_storage_error() {
        let degrees = r#"[{"instituicao":"UFRN","curso":"C","data_inicio":"2010-03-01","data_fim":null,
                          "municipio":"Natal","descricao":"","grau":"XYZ"}]"#;
        let columns =
            (String::new(), String::new(), None, String::new(), false, "[]".to_owned(), degrees.to_owned(), None);
        assert!(matches!(own_profile(columns), Err(RepositoryError::Unexpected(_))));
        let entry = (1, "UFRN".into(), "C".into(), None, None, None, String::new(), String::new(), false);
        assert!(own_entry(EntryKind::Degree, entry.clone()).is_err(), "a degree needs its code");
        assert_eq!(own_entry(EntryKind::Experience, entry).expect("experience").grau, None);
    }
}
