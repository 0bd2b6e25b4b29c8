//! The demo's seed data: two users with plausible data, and a staff user
//! for the administration panel.

use credencial_application::admin::audit_entry;
use credencial_application::{ApiTokenService, PasswordHasher};
use credencial_domain::admin::audit::SECRET_SET;
use credencial_domain::admin::{Actor, ApiPermission, ApiPermissions, AuditAction, AuditTarget};
use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{AcademicDegree, Experience};
use credencial_domain::{Cpf, Degree, ScopeSet, UserData, UserId, Username};
use credencial_ports::{NewUser, OAuthClient, OAuthClientUpdate, RepositoryError};

use crate::storage::Storage;
use credencial_app_actix::client_login::{BACKCHANNEL_PATH, CALLBACK_PATH};

/// The demo's OAuth2 client: the host application of the client component.
pub const DEMO_CLIENT_ID: &str = "demo-host";
/// Its secret (demo only, printed in the README).
pub const DEMO_CLIENT_SECRET: &str = "demo-host-secret";

/// The demo's OpenID Connect client: a confidential application a standard
/// OIDC client library can be configured with (discovery URL, this id and
/// [`DEMO_OIDC_CLIENT_SECRET`]).
pub const DEMO_OIDC_CLIENT_ID: &str = "demo-oidc";
/// Its secret (demo only, printed in the start log and the README).
pub const DEMO_OIDC_CLIENT_SECRET: &str = "demo-oidc-secret";
/// Its redirect URI: an application on this machine's port 8080 (nothing
/// needs to listen there to read the code from the address bar).
pub const DEMO_OIDC_REDIRECT_URI: &str = "http://localhost:8080/callback";
/// Where its logout may send the browser afterwards.
pub const DEMO_OIDC_POST_LOGOUT_URI: &str = "http://localhost:8080/";

/// The demo client's redirect URI for a server bound to `bind`
/// (`0.0.0.0` is reached as `127.0.0.1`).
pub fn demo_redirect_uri(bind: &str) -> String {
    let host_port = bind.strip_prefix("0.0.0.0:").map_or_else(|| bind.to_owned(), |port| format!("127.0.0.1:{port}"));
    format!("http://{host_port}{CALLBACK_PATH}")
}

/// Registers the confidential client `demo-host` with every scope enabled
/// and its back-channel logout URI (the demo host's receiver, beside its
/// callback), unless it exists; an existing one without that URI gets it.
/// Returns whether it was created.
pub async fn seed_client(storage: &Storage, hasher: &PasswordHasher, redirect_uri: &str) -> anyhow::Result<bool> {
    let backchannel = redirect_uri.replace(CALLBACK_PATH, BACKCHANNEL_PATH);
    let client = DemoClient {
        id: DEMO_CLIENT_ID,
        name: "Aplicação de demonstração",
        secret: DEMO_CLIENT_SECRET,
        redirect_uri,
        post_logout_redirect_uri: None,
        backchannel_logout_uri: Some(backchannel.clone()),
    };
    if seed_confidential(storage, hasher, client).await? {
        return Ok(true);
    }
    // A demo database from before back-channel logout.
    let id = ClientId::parse(DEMO_CLIENT_ID)?;
    if storage.clients.find(&id).await?.is_some_and(|c| c.backchannel_logout_uri.is_none()) {
        let actor = Actor::Cli { os_user: "demo".into() };
        let entry = audit_entry(&actor, AuditAction::ClientUpdate, AuditTarget::Client(id.clone()))
            .with("backchannel_logout_uri", &backchannel);
        let changes = OAuthClientUpdate { backchannel_logout_uri: Some(Some(backchannel)), ..Default::default() };
        storage.clients.update(&id, changes, &entry).await?;
    }
    Ok(false)
}

/// Registers the confidential OpenID Connect client `demo-oidc` (every
/// scope enabled, [`DEMO_OIDC_REDIRECT_URI`] and
/// [`DEMO_OIDC_POST_LOGOUT_URI`]), unless it exists. It may also get tokens
/// for itself (`client_credentials`) with `users:read`, to show a machine
/// client calling `/usuarios/`. Returns whether it was created.
pub async fn seed_oidc_client(storage: &Storage, hasher: &PasswordHasher) -> anyhow::Result<bool> {
    let client = DemoClient {
        id: DEMO_OIDC_CLIENT_ID,
        name: "Aplicação OpenID Connect de demonstração",
        secret: DEMO_OIDC_CLIENT_SECRET,
        redirect_uri: DEMO_OIDC_REDIRECT_URI,
        post_logout_redirect_uri: Some(DEMO_OIDC_POST_LOGOUT_URI),
        backchannel_logout_uri: None,
    };
    if !seed_confidential(storage, hasher, client).await? {
        return Ok(false);
    }
    let id = ClientId::parse(DEMO_OIDC_CLIENT_ID)?;
    let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
    let actor = Actor::Cli { os_user: "demo".into() };
    ApiTokenService::new(std::sync::Arc::clone(&storage.directory)).set_access(&actor, &id, read, true).await?;
    Ok(true)
}

/// A confidential demo client to register.
struct DemoClient<'a> {
    id: &'static str,
    name: &'static str,
    secret: &'static str,
    redirect_uri: &'a str,
    post_logout_redirect_uri: Option<&'static str>,
    backchannel_logout_uri: Option<String>,
}

/// Registers `demo` with every scope enabled (with its audit entry, as the
/// CLI would), unless a client with its id exists.
async fn seed_confidential(storage: &Storage, hasher: &PasswordHasher, demo: DemoClient<'_>) -> anyhow::Result<bool> {
    let clients = &storage.clients;
    let id = ClientId::parse(demo.id)?;
    if clients.find(&id).await?.is_some() {
        return Ok(false);
    }
    let secret_hash = hasher.hash(demo.secret.to_owned().into()).await?;
    let client = OAuthClient {
        client_id: id,
        name: demo.name.into(),
        secret_hash: Some(secret_hash),
        redirect_uris: vec![demo.redirect_uri.to_owned()],
        post_logout_redirect_uris: demo.post_logout_redirect_uri.map(str::to_owned).into_iter().collect(),
        confidential: true,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: None,
        enabled_scopes: ScopeSet::all(),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: demo.backchannel_logout_uri,
    };
    let actor = Actor::Cli { os_user: "demo".into() };
    let mut entry = audit_entry(&actor, AuditAction::ClientCreate, AuditTarget::Client(client.client_id.clone()))
        .with("name", &client.name)
        .with("confidential", "true")
        .with("redirect_uris", client.redirect_uris.join(" "))
        .with("enabled_scopes", client.enabled_scopes.to_scope_string())
        .with("secret", SECRET_SET);
    if !client.post_logout_redirect_uris.is_empty() {
        entry = entry.with("post_logout_redirect_uris", client.post_logout_redirect_uris.join(" "));
    }
    if let Some(uri) = &client.backchannel_logout_uri {
        entry = entry.with("backchannel_logout_uri", uri);
    }
    match clients.create(client, &entry).await {
        Ok(()) => Ok(true),
        Err(RepositoryError::Conflict(_)) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// A demo account: username, password, data, public name, CPF.
pub struct DemoUser {
    /// Login name.
    pub username: &'static str,
    /// Password (demo only, printed in the README).
    pub password: &'static str,
    /// What the user-data resource returns for the user.
    pub data: fn() -> UserData,
    /// Public name.
    pub name: &'static str,
    /// CPF with valid check digits, if the account has one.
    pub cpf: Option<&'static str>,
    /// Whether the account may use the administration panel.
    pub staff: bool,
}

/// The demo's users (`admin` is staff).
pub const DEMO_USERS: [DemoUser; 3] = [
    DemoUser {
        username: "ana",
        password: "ana-demo-2026",
        data: || UserData {
            identificacao: "1934207".into(),
            nome_usual: "Ana Souza".into(),
            email: "ana.souza@demo.credencial.gov.br".into(),
            campus: "Natal-Central".into(),
            tipo_usuario: "Servidor".into(),
        },
        name: "Ana Beatriz Souza",
        cpf: Some("52998224725"),
        staff: false,
    },
    DemoUser {
        username: "bruno",
        password: "bruno-demo-2026",
        data: || UserData {
            identificacao: "20231041110077".into(),
            nome_usual: "Bruno Lima".into(),
            email: "bruno.lima@demo.credencial.gov.br".into(),
            campus: "Mossoró".into(),
            tipo_usuario: "Aluno".into(),
        },
        name: "Bruno Carvalho Lima",
        cpf: Some("12345678909"),
        staff: false,
    },
    DemoUser {
        username: "admin",
        password: "admin-demo-2026",
        data: || UserData {
            identificacao: String::new(),
            nome_usual: "Administração".into(),
            email: "admin@demo.credencial.gov.br".into(),
            campus: String::new(),
            tipo_usuario: String::new(),
        },
        name: "Equipe de administração",
        cpf: None,
        staff: true,
    },
];

/// Creates the demo users that do not exist yet; existing ones are kept as
/// they are. Returns how many were created.
pub async fn seed(storage: &Storage, hasher: &PasswordHasher) -> anyhow::Result<usize> {
    let repo = &storage.users;
    let mut created = 0;
    for user in &DEMO_USERS {
        if repo.find_credentials(user.username).await?.is_some() {
            continue;
        }
        let password_hash = hasher.hash(user.password.to_owned().into()).await?;
        let new = NewUser {
            username: Username::parse(user.username)?,
            password_hash,
            is_active: true,
            data: (user.data)(),
            name: user.name.into(),
            cpf: user.cpf.map(Cpf::parse).transpose()?,
        };
        match repo.create(new).await {
            Ok(id) => {
                seed_profile(storage, user.username, id).await?;
                if user.staff {
                    let actor = Actor::Cli { os_user: "demo".into() };
                    let entry = audit_entry(&actor, AuditAction::UserStaff, AuditTarget::User(user.username.into()))
                        .with("is_staff", "true");
                    repo.set_staff(id, true, &entry).await?;
                }
                created += 1;
            }
            // Another instance seeded it meanwhile.
            Err(RepositoryError::Conflict(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(created)
}

/// Ana: validated with the tax authority, two experiences, two degrees.
/// Bruno: not validated, no experience, no degree.
async fn seed_profile(storage: &Storage, username: &str, id: UserId) -> anyhow::Result<()> {
    let profiles = &storage.profiles;
    if username != "ana" {
        return Ok(());
    }
    // No avatar: a demo page or application loads nothing from another site.
    profiles.set_profile(id, "", true).await?;
    let experiences = [
        (
            "Hospital Universitário Onofre Lopes",
            "Enfermeira",
            Some("2015-03-02T08:00:00"),
            Some("2019-01-31T18:00:00"),
            "Natal",
            "Plantões na UTI adulto.",
        ),
        (
            "Secretaria Municipal de Saúde de Natal",
            "Enfermeira da Estratégia Saúde da Família",
            Some("2019-02-01T08:00:00"),
            None,
            "Natal",
            "",
        ),
    ];
    for (estabelecimento, profissao, inicio, fim, municipio, descricao) in experiences {
        profiles
            .add_experience(
                id,
                Experience {
                    estabelecimento: estabelecimento.into(),
                    profissao: profissao.into(),
                    data_inicio: inicio.map(str::to_owned),
                    data_fim: fim.map(str::to_owned),
                    municipio: municipio.into(),
                    descricao: descricao.into(),
                },
            )
            .await?;
    }
    let degrees = [
        (
            "Universidade Federal do Rio Grande do Norte",
            "Enfermagem",
            "2010-03-01",
            Some("2014-12-19"),
            Degree::Graduacao,
            "",
        ),
        (
            "Universidade Federal do Rio Grande do Norte",
            "Saúde da Família",
            "2020-03-02",
            None,
            Degree::MestradoProfissional,
            "Em andamento.",
        ),
    ];
    for (instituicao, curso, inicio, fim, grau, descricao) in degrees {
        profiles
            .add_degree(
                id,
                AcademicDegree {
                    instituicao: instituicao.into(),
                    curso: curso.into(),
                    data_inicio: inicio.into(),
                    data_fim: fim.map(str::to_owned),
                    municipio: "Natal".into(),
                    descricao: descricao.into(),
                    grau,
                },
            )
            .await?;
    }
    Ok(())
}
