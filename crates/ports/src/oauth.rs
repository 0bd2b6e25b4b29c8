//! The OAuth2 provider's storage: registered clients and authorization codes.

use async_trait::async_trait;
use credencial_domain::admin::NewAuditEntry;
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::{ClientId, ClientPolicy, CodeChallenge, CodeGrant, CodeHash};
use credencial_domain::{ScopeSet, UserId};

use crate::error::RepositoryError;

/// A registered OAuth2 client. `Debug` hides the secret hash.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// Unique identifier, sent by the client as `client_id`.
    pub client_id: ClientId,
    /// Name shown on the consent page and in `client list`.
    pub name: String,
    /// Django PBKDF2 hash of the secret; `None` for public clients (and
    /// only for them).
    pub secret_hash: Option<String>,
    /// Redirect URIs, matched exactly (see
    /// [`credencial_domain::oauth::validate_redirect_uri`]); at least one.
    pub redirect_uris: Vec<String>,
    /// Where RP-initiated logout may send the browser afterwards, matched
    /// exactly; possibly none.
    pub post_logout_redirect_uris: Vec<String>,
    /// Confidential (has a secret) or public (PKCE instead).
    pub confidential: bool,
    /// Whether a confidential client must use PKCE too.
    pub require_pkce: bool,
    /// Whether the client's users must pass a second factor ("exige
    /// segundo fator"): a session with a password alone is asked for it
    /// before a code is issued.
    pub requires_second_factor: bool,
    /// The lowest gov.br reliability level its users must have ("nível
    /// mínimo da conta gov.br"): a session that is not a login through
    /// gov.br at this level or above is sent through gov.br before a code
    /// is issued; `None` requires none.
    pub minimum_govbr_level: Option<ReliabilityLevel>,
    /// Optional scopes enabled for the client; the required ones are always
    /// granted whatever this holds.
    pub enabled_scopes: ScopeSet,
    /// Whether the client may use the provider: a deactivated one can
    /// neither start an authorization, nor redeem a code, nor refresh, and
    /// its access tokens are refused at the profile read.
    pub is_active: bool,
    /// When it was registered (Unix seconds; ignored by
    /// [`OAuthClientRepository::create`], which stores the current time).
    pub created_at: i64,
    /// Where it is told that a session it received an ID token in ended
    /// (OpenID Connect Back-Channel Logout 1.0); `None`: it is not told.
    pub backchannel_logout_uri: Option<String>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("name", &self.name)
            .field("secret_hash", &self.secret_hash.as_ref().map(|_| "[redacted]"))
            .field("redirect_uris", &self.redirect_uris)
            .field("post_logout_redirect_uris", &self.post_logout_redirect_uris)
            .field("confidential", &self.confidential)
            .field("require_pkce", &self.require_pkce)
            .field("requires_second_factor", &self.requires_second_factor)
            .field("minimum_govbr_level", &self.minimum_govbr_level)
            .field("enabled_scopes", &self.enabled_scopes)
            .field("is_active", &self.is_active)
            .field("created_at", &self.created_at)
            .field("backchannel_logout_uri", &self.backchannel_logout_uri)
            .finish()
    }
}

impl OAuthClient {
    /// What the grant rules need to know about this client.
    pub fn policy(&self) -> ClientPolicy<'_> {
        ClientPolicy {
            client_id: &self.client_id,
            redirect_uris: &self.redirect_uris,
            confidential: self.confidential,
            require_pkce: self.require_pkce,
            enabled_scopes: self.enabled_scopes,
        }
    }
}

/// The columns of a stored client, as every storage adapter selects them, in
/// this order: `client_id`, `name`, `secret_hash`, `confidential`,
/// `redirect_uris`, `post_logout_redirect_uris`, `require_pkce`,
/// `requires_second_factor`, `minimum_govbr_level` (a level's
/// [`name`](ReliabilityLevel::name) or NULL), `enabled_scopes`,
/// `is_active`, `created_at` (Unix seconds), `backchannel_logout_uri`.
/// The three lists come as the text of a JSON array of strings.
pub type ClientColumns = (
    String,
    String,
    Option<String>,
    bool,
    String,
    String,
    bool,
    bool,
    Option<String>,
    String,
    bool,
    i64,
    Option<String>,
);

impl OAuthClient {
    /// The client a storage adapter read back as [`ClientColumns`].
    /// Errors: `Unexpected` for a stored value this build cannot read (an
    /// invalid client id, an unknown scope, a list that is not JSON).
    pub fn from_columns(columns: ClientColumns) -> Result<Self, RepositoryError> {
        let (
            client_id,
            name,
            secret_hash,
            confidential,
            redirect_uris,
            post_logout,
            require_pkce,
            requires_second_factor,
            minimum_govbr_level,
            scopes,
            is_active,
            created_at,
            backchannel_logout_uri,
        ) = columns;
        let client_id =
            ClientId::parse(&client_id).map_err(|e| RepositoryError::Unexpected(format!("stored client id: {e}")))?;
        let enabled_scopes = json_list(&scopes)?
            .iter()
            .map(|name| name.parse())
            .collect::<Result<ScopeSet, _>>()
            .map_err(|e| RepositoryError::Unexpected(format!("stored scopes of a client: {e}")))?;
        Ok(Self {
            client_id,
            name,
            secret_hash,
            redirect_uris: json_list(&redirect_uris)?,
            post_logout_redirect_uris: json_list(&post_logout)?,
            confidential,
            require_pkce,
            requires_second_factor,
            minimum_govbr_level: minimum_govbr_level.as_deref().map(stored_level).transpose()?,
            enabled_scopes,
            is_active,
            created_at,
            backchannel_logout_uri,
        })
    }
}

/// A level as the `minimum_govbr_level` column stores it (its
/// [`name`](ReliabilityLevel::name)).
pub fn level_name(level: Option<ReliabilityLevel>) -> Option<&'static str> {
    level.map(ReliabilityLevel::name)
}

/// The level a `minimum_govbr_level` column holds: exactly one of the
/// names `bronze`, `prata`, `ouro`.
fn stored_level(name: &str) -> Result<ReliabilityLevel, RepositoryError> {
    ReliabilityLevel::ALL
        .into_iter()
        .find(|level| level.name() == name)
        .ok_or_else(|| RepositoryError::Unexpected(format!("stored gov.br level of a client: {name:?}")))
}

/// The names of `scopes`, as the `enabled_scopes` column lists them.
pub fn scope_names(scopes: ScopeSet) -> Vec<String> {
    scopes.iter().map(|s| s.name().to_owned()).collect()
}

/// A stored list: the text of a JSON array of strings.
fn json_list(text: &str) -> Result<Vec<String>, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unexpected(format!("stored list: {e}")))
}

/// Changes to a registered client; `None` leaves a field as it is. Whether
/// the client is confidential cannot change.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthClientUpdate {
    /// New name.
    pub name: Option<String>,
    /// New redirect URIs, replacing the whole list (at least one).
    pub redirect_uris: Option<Vec<String>>,
    /// New post-logout redirect URIs, replacing the whole list (possibly
    /// with none).
    pub post_logout_redirect_uris: Option<Vec<String>>,
    /// New set of enabled scopes, replacing the old one.
    pub enabled_scopes: Option<ScopeSet>,
    /// New PKCE requirement.
    pub require_pkce: Option<bool>,
    /// New second-factor requirement.
    pub requires_second_factor: Option<bool>,
    /// New minimum gov.br level: `Some(None)` removes the requirement.
    pub minimum_govbr_level: Option<Option<ReliabilityLevel>>,
    /// Hash of a new secret (confidential clients only).
    pub secret_hash: Option<String>,
    /// Deactivate (`false`) or reactivate (`true`).
    pub is_active: Option<bool>,
    /// New back-channel logout URI: `Some(None)` removes it.
    pub backchannel_logout_uri: Option<Option<String>>,
}

impl std::fmt::Debug for OAuthClientUpdate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientUpdate")
            .field("name", &self.name)
            .field("redirect_uris", &self.redirect_uris)
            .field("post_logout_redirect_uris", &self.post_logout_redirect_uris)
            .field("enabled_scopes", &self.enabled_scopes)
            .field("require_pkce", &self.require_pkce)
            .field("requires_second_factor", &self.requires_second_factor)
            .field("minimum_govbr_level", &self.minimum_govbr_level)
            .field("secret_hash", &self.secret_hash.as_ref().map(|_| "[redacted]"))
            .field("is_active", &self.is_active)
            .field("backchannel_logout_uri", &self.backchannel_logout_uri)
            .finish()
    }
}

/// The registry of OAuth2 clients (managed in the panel's
/// `/admin/aplicativos/` and with `credencial client …`, both through
/// `ClientAdminService`). Every write appends its audit entry in the same
/// transaction: the change and its entry are stored together or not at all.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OAuthClientRepository: Send + Sync + 'static {
    /// Registers `client` (active or not, as it says) and appends `audit`,
    /// in one transaction. Errors: `Conflict` when the client id is taken;
    /// `Unexpected` otherwise, including a record the schema refuses (a
    /// public client with a secret hash, a confidential one without, no
    /// redirect URI) and an entry the trail refuses (nothing is stored).
    async fn create(&self, client: OAuthClient, audit: &NewAuditEntry) -> Result<(), RepositoryError>;

    /// Applies `changes` to the client and appends `audit`, in one
    /// transaction, and returns the updated record; `Ok(None)` (and nothing
    /// appended) when no client has this id. Errors: `Unexpected` (also
    /// for a change the schema refuses, e.g. a secret hash for a public
    /// client or an empty redirect list, and for an entry the trail
    /// refuses: then nothing changed).
    async fn update(
        &self,
        client_id: &ClientId,
        changes: OAuthClientUpdate,
        audit: &NewAuditEntry,
    ) -> Result<Option<OAuthClient>, RepositoryError>;

    /// The client with exactly this id, active or not; `Ok(None)` when
    /// there is none. Errors: `Unexpected`.
    async fn find(&self, client_id: &ClientId) -> Result<Option<OAuthClient>, RepositoryError>;

    /// Every client, active or not, ordered by client id. Errors:
    /// `Unexpected`.
    async fn list(&self) -> Result<Vec<OAuthClient>, RepositoryError>;
}

/// An authorization code to store: only its hash, with what it grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuthorizationCode {
    /// SHA-256 of the code text (the text itself is never stored).
    pub code_hash: CodeHash,
    /// What the code stands for, including its expiry.
    pub grant: CodeGrant,
    /// The record id of the login session the code was issued in. With
    /// the grant's `sid` (an OpenID Connect grant), the session remembers
    /// that this client was issued an ID token in it, to be told when it
    /// ends (back-channel logout).
    pub session: Option<i64>,
}

/// The columns of a stored authorization code's grant, as every storage
/// adapter selects them, in this order: `client_id`, `user_id`,
/// `redirect_uri`, `redirect_uri_explicit`, `scope` (space-separated),
/// `code_challenge`, `expires_at`, `nonce`, `auth_time` (instants in Unix
/// seconds), `acr`, `amr`, `sid`.
pub type GrantColumns = (
    String,
    i64,
    String,
    bool,
    String,
    Option<String>,
    i64,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The grant a storage adapter read back as [`GrantColumns`]. Errors:
/// `Unexpected` for a stored value this build cannot read.
pub fn grant_from_columns(columns: GrantColumns) -> Result<CodeGrant, RepositoryError> {
    let (
        client_id,
        user_id,
        redirect_uri,
        redirect_uri_explicit,
        scope,
        challenge,
        expires_at,
        nonce,
        auth_time,
        acr,
        amr,
        sid,
    ) = columns;
    let unexpected = |what: &str| RepositoryError::Unexpected(format!("stored code: bad {what}"));
    let code_challenge = match challenge {
        Some(text) => Some(CodeChallenge::parse_s256(&text).ok_or_else(|| unexpected("challenge"))?),
        None => None,
    };
    Ok(CodeGrant {
        client_id: ClientId::parse(&client_id).map_err(|_| unexpected("client id"))?,
        user_id: UserId(user_id),
        redirect_uri,
        redirect_uri_explicit,
        scopes: ScopeSet::parse_strict(&scope).map_err(|_| unexpected("scope"))?,
        code_challenge,
        expires_at,
        nonce,
        auth_time,
        acr,
        amr,
        sid,
    })
}

/// Single-use authorization codes, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AuthorizationCodeStore: Send + Sync + 'static {
    /// Stores a freshly issued code. Errors: `Conflict` when the hash is
    /// already stored; `Unexpected` otherwise (also when the client or the
    /// user does not exist).
    async fn store(&self, code: NewAuthorizationCode) -> Result<(), RepositoryError>;

    /// In one atomic step: marks the code with `code_hash` as used and
    /// returns its grant, provided it is unused, `now` (Unix seconds) is
    /// before its expiry, and it was issued to `client_id`. Returns
    /// `Ok(None)` — and changes nothing — otherwise: unknown, already used,
    /// expired, or issued to another client (a code presented by the wrong
    /// client stays redeemable by its own). Of any number of concurrent
    /// calls with the same code, on any number of instances, at most one
    /// returns `Some`. Errors: `Unexpected`.
    async fn redeem(
        &self,
        code_hash: &CodeHash,
        client_id: &ClientId,
        now: i64,
    ) -> Result<Option<CodeGrant>, RepositoryError>;

    /// Deletes codes that expired before `before` (Unix seconds), used or not,
    /// at most `limit` rows per call (the oldest first, by an index whose
    /// leading column is that time), and returns how many; the caller calls
    /// again until a call returns fewer than `limit` or the service is stopping
    /// (see the application's `purge` module). Errors: `Unexpected`.
    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(client_id: &str, scopes: &str, redirect_uris: &str) -> ClientColumns {
        (
            client_id.into(),
            "Portal".into(),
            Some("pbkdf2_sha256$1$s$h".into()),
            true,
            redirect_uris.into(),
            "[]".into(),
            false,
            false,
            None,
            scopes.into(),
            true,
            1_900_000_000,
            None,
        )
    }

    #[test]
    fn debug_output_of_a_client_hides_the_secret_hash() {
        let client = OAuthClient::from_columns(columns("portal", "[]", r#"["https://p.example/cb"]"#)).expect("read");
        let shown = format!("{client:?}");
        assert!(!shown.contains("pbkdf2") && shown.contains("[redacted]"), "{shown}");
    }

    #[test]
    fn stored_columns_are_read_and_values_this_build_refuses_are_unexpected() {
        let client = OAuthClient::from_columns(columns("portal", r#"["cnes","cpf"]"#, r#"["https://p.example/cb"]"#))
            .expect("read");
        assert_eq!(client.enabled_scopes, ScopeSet::parse_strict("cpf cnes").expect("scopes"));
        assert_eq!(client.redirect_uris, ["https://p.example/cb"]);
        assert_eq!(client.created_at, 1_900_000_000);
        assert_eq!(client.minimum_govbr_level, None);
        let mut prata = columns("portal", "[]", r#"["https://p.example/cb"]"#);
        prata.8 = Some("prata".into());
        let prata = OAuthClient::from_columns(prata).expect("read");
        assert_eq!(prata.minimum_govbr_level, Some(ReliabilityLevel::Prata));
        let mut silver = columns("portal", "[]", "[]");
        silver.8 = Some("silver".into());
        for bad in [
            columns("por tal", "[]", "[]"),
            columns("portal", r#"["retired_scope"]"#, "[]"),
            columns("portal", "[]", "not json"),
            silver,
        ] {
            assert!(matches!(OAuthClient::from_columns(bad), Err(RepositoryError::Unexpected(_))));
        }
        let grant = |challenge: Option<&str>| {
            grant_from_columns((
                "portal".into(),
                1,
                "https://p.example/cb".into(),
                true,
                "dados_publicos cpf email".into(),
                challenge.map(str::to_owned),
                1_900_000_060,
                None,
                None,
                None,
                None,
                None,
            ))
        };
        assert!(grant(None).is_ok());
        assert!(matches!(grant(Some("short")), Err(RepositoryError::Unexpected(_))));
    }
}
