//! `credencial client …`: the OAuth2 clients (the administration panel's
//! twin).

use anyhow::Context;
use clap::{Args, Subcommand};
use credencial_adapters_postgres::{PgOAuthClientRepository, PgUserDirectory};
use credencial_application::ApiTokenService;
use credencial_domain::admin::{Actor, ApiPermissions};
use credencial_domain::oauth::{random_token_text, validate_redirect_uri, ClientId};
use credencial_domain::ScopeSet;
use credencial_ports::{OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};

use super::pool;
use crate::settings::Settings;
use crate::startup::hasher;

/// `credencial client …`
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Register a client; a confidential client's secret is printed once.
    Create(CreateClient),
    /// Change a client's name, redirect URIs, scopes or PKCE requirement,
    /// or give it a new secret.
    Update(UpdateClient),
    /// List the registered clients (never their secrets).
    List,
}

/// Fields of a new OAuth2 client.
#[derive(Debug, Args)]
pub struct CreateClient {
    /// Unique client id (1 to 100 of A-Z a-z 0-9 - . _ ~).
    #[arg(long)]
    pub client_id: String,
    /// Name shown on the consent page.
    #[arg(long)]
    pub name: String,
    /// A redirect URI, matched exactly; repeat for several.
    #[arg(long = "redirect-uri", value_name = "URI", required = true)]
    pub redirect_uris: Vec<String>,
    /// A public client (single-page or mobile app): no secret, PKCE required.
    #[arg(long)]
    pub public: bool,
    /// Require PKCE from this confidential client too.
    #[arg(long)]
    pub require_pkce: bool,
    /// Optional scopes to enable, space- or comma-separated
    /// (dados_publicos, cpf and email are always granted).
    #[arg(long, default_value = "")]
    pub scopes: String,
    /// Accept http:// redirect URIs on hosts other than loopback (testing only).
    #[arg(long)]
    pub allow_insecure_http: bool,
}

/// Changes to an OAuth2 client; what is not given stays as it is.
#[derive(Debug, Args)]
pub struct UpdateClient {
    /// The client to change.
    #[arg(long)]
    pub client_id: String,
    /// New name.
    #[arg(long)]
    pub name: Option<String>,
    /// Redirect URIs replacing the whole list; repeat for several.
    #[arg(long = "redirect-uri", value_name = "URI")]
    pub redirect_uris: Vec<String>,
    /// Optional scopes replacing the enabled ones ("" enables none).
    #[arg(long)]
    pub scopes: Option<String>,
    /// Whether this confidential client must use PKCE.
    #[arg(long, value_name = "true|false")]
    pub require_pkce: Option<bool>,
    /// Replace the secret with a new one, printed once (the old one stops working).
    #[arg(long)]
    pub rotate_secret: bool,
    /// Accept http:// redirect URIs on hosts other than loopback (testing only).
    #[arg(long)]
    pub allow_insecure_http: bool,
    /// Issue a new token for the user-management API (`/usuarios/`),
    /// printed once as the last line (the old one stops working).
    #[arg(long)]
    pub rotate_api_token: bool,
    /// The new API token's permissions, comma-separated
    /// (`users:read,users:create`; "" for none); default: the current ones.
    #[arg(long, value_name = "LIST", requires = "rotate_api_token")]
    pub api_permissions: Option<String>,
}

/// Longest client name accepted.
const MAX_CLIENT_NAME_CHARS: usize = 200;

/// Runs a `client` command.
pub(super) async fn run(settings: &Settings, command: ClientCommand) -> anyhow::Result<()> {
    match command {
        ClientCommand::Create(args) => create_client(settings, args).await,
        ClientCommand::Update(args) => update_client(settings, args).await,
        ClientCommand::List => list_clients(settings).await,
    }
}

async fn create_client(settings: &Settings, args: CreateClient) -> anyhow::Result<()> {
    let client_id = ClientId::parse(&args.client_id).context("--client-id")?;
    let name = client_name(&args.name)?;
    let redirect_uris = redirect_uris(&args.redirect_uris, args.allow_insecure_http)?;
    let enabled_scopes = optional_scopes(&args.scopes)?;
    let pool = pool(settings).await?;
    let secret = (!args.public).then(generate_client_secret);
    let secret_hash = match &secret {
        Some(secret) => Some(hasher(settings)?.hash(SecretString::from(secret.clone())).await?),
        None => None,
    };
    let client = OAuthClient {
        client_id,
        name,
        secret_hash,
        redirect_uris,
        confidential: !args.public,
        require_pkce: args.require_pkce,
        enabled_scopes,
    };
    let summary = client_summary(&client);
    match PgOAuthClientRepository::new(pool).create(client).await {
        Ok(()) => {}
        Err(RepositoryError::Conflict(_)) => {
            anyhow::bail!("a client with id {:?} already exists", args.client_id)
        }
        Err(e) => return Err(e.into()),
    }
    println!("created {summary}");
    if let Some(secret) = secret {
        print_secret_once(&secret);
    }
    Ok(())
}

async fn update_client(settings: &Settings, args: UpdateClient) -> anyhow::Result<()> {
    let client_id = ClientId::parse(&args.client_id).context("--client-id")?;
    let mut changes = OAuthClientUpdate {
        name: args.name.as_deref().map(client_name).transpose()?,
        redirect_uris: None,
        enabled_scopes: args.scopes.as_deref().map(optional_scopes).transpose()?,
        require_pkce: args.require_pkce,
        secret_hash: None,
    };
    if !args.redirect_uris.is_empty() {
        changes.redirect_uris = Some(redirect_uris(&args.redirect_uris, args.allow_insecure_http)?);
    }
    anyhow::ensure!(
        changes != OAuthClientUpdate::default() || args.rotate_secret || args.rotate_api_token,
        "nothing to update: give --name, --redirect-uri, --scopes, --require-pkce, --rotate-secret or \
         --rotate-api-token"
    );
    let api_permissions = args.api_permissions.as_deref().map(ApiPermissions::parse).transpose()?;
    let pool = pool(settings).await?;
    let repo = PgOAuthClientRepository::new(pool.clone());
    let unknown = || anyhow::anyhow!("no client with id {:?}", args.client_id);
    let mut secret = None;
    if args.rotate_secret {
        let current = repo.find(&client_id).await?.ok_or_else(unknown)?;
        anyhow::ensure!(current.confidential, "client {client_id} is public: it has no secret to rotate");
        let new_secret = generate_client_secret();
        changes.secret_hash = Some(hasher(settings)?.hash(SecretString::from(new_secret.clone())).await?);
        secret = Some(new_secret);
    }
    let updated = if changes == OAuthClientUpdate::default() {
        repo.find(&client_id).await?
    } else {
        repo.update(&client_id, changes).await?
    };
    let updated = updated.ok_or_else(unknown)?;
    println!("updated {}", client_summary(&updated));
    if let Some(secret) = secret {
        print_secret_once(&secret);
    }
    if args.rotate_api_token {
        rotate_api_token(pool, &client_id, api_permissions).await?;
    }
    Ok(())
}

/// Issues a new user-management API token for `client_id` with
/// `permissions` (default: the current ones) through the panel's service,
/// as the operator at the command line; prints it as the last line.
async fn rotate_api_token(
    pool: credencial_adapters_postgres::PgPool,
    client_id: &ClientId,
    permissions: Option<ApiPermissions>,
) -> anyhow::Result<()> {
    let service = ApiTokenService::new(std::sync::Arc::new(PgUserDirectory::new(pool)));
    let unknown = || anyhow::anyhow!("no client with id {:?}", client_id.as_str());
    let permissions = match permissions {
        Some(permissions) => permissions,
        None => service.state(client_id).await?.ok_or_else(unknown)?.permissions,
    };
    let actor = Actor::Cli { os_user: std::env::var("USER").unwrap_or_else(|_| "?".into()) };
    let token = service.issue(&actor, client_id, permissions).await?.ok_or_else(unknown)?;
    println!("api_permissions: {permissions}");
    println!("Store this API token now: it is shown only once and only its hash is kept. It is the next line:");
    println!("{}", token.expose_secret());
    Ok(())
}

async fn list_clients(settings: &Settings) -> anyhow::Result<()> {
    let clients = PgOAuthClientRepository::new(pool(settings).await?).list().await?;
    if clients.is_empty() {
        println!("no OAuth2 clients registered");
        return Ok(());
    }
    let header = ["CLIENT ID", "TYPE", "PKCE", "NAME", "SCOPES", "REDIRECT URIS"].map(str::to_owned);
    let rows: Vec<[String; 6]> = clients
        .iter()
        .map(|c| {
            [
                c.client_id.to_string(),
                client_type(c).to_owned(),
                pkce_rule(c).to_owned(),
                c.name.clone(),
                granted_scope_names(c),
                c.redirect_uris.join(" "),
            ]
        })
        .collect();
    let mut widths = [0usize; 6];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        println!("{}", line.trim_end());
    }
    Ok(())
}

fn client_name(raw: &str) -> anyhow::Result<String> {
    let name = raw.trim();
    anyhow::ensure!(!name.is_empty(), "--name must not be empty");
    anyhow::ensure!(
        name.chars().count() <= MAX_CLIENT_NAME_CHARS,
        "--name must have at most {MAX_CLIENT_NAME_CHARS} characters"
    );
    anyhow::ensure!(!name.chars().any(char::is_control), "--name must not contain control characters");
    Ok(name.to_owned())
}

/// Validates each URI for registration, keeping the first of duplicates.
fn redirect_uris(raw: &[String], allow_insecure_http: bool) -> anyhow::Result<Vec<String>> {
    let mut uris: Vec<String> = Vec::with_capacity(raw.len());
    for uri in raw {
        let uri = validate_redirect_uri(uri, allow_insecure_http).with_context(|| format!("--redirect-uri {uri:?}"))?;
        if !uris.contains(&uri) {
            uris.push(uri);
        }
    }
    Ok(uris)
}

/// Parses scope names strictly (an unknown name is an error naming it) and
/// keeps the optional ones: the required scopes are always granted anyway.
fn optional_scopes(raw: &str) -> anyhow::Result<ScopeSet> {
    let scopes = ScopeSet::parse_strict(&raw.replace(',', " ")).context("--scopes")?;
    Ok(scopes.iter().filter(|s| !s.is_required()).collect())
}

/// 32 bytes from the thread-local CSPRNG, base64url: 256 bits.
fn generate_client_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    random_token_text(&bytes)
}

fn print_secret_once(secret: &str) {
    println!("client_secret: {secret}");
    println!("Store this secret now: it is shown only once and only its hash is kept.");
}

fn client_type(client: &OAuthClient) -> &'static str {
    if client.confidential {
        "confidential"
    } else {
        "public"
    }
}

fn pkce_rule(client: &OAuthClient) -> &'static str {
    if client.policy().pkce_required() {
        "required"
    } else {
        "optional"
    }
}

/// The scopes a grant can carry: the enabled ones plus the required ones.
fn granted_scope_names(client: &OAuthClient) -> String {
    client.enabled_scopes.union(ScopeSet::required()).to_scope_string()
}

fn client_summary(client: &OAuthClient) -> String {
    format!(
        "{} client {} ({:?}); PKCE {}; scopes: {}; redirect URIs: {}",
        client_type(client),
        client.client_id,
        client.name,
        pkce_rule(client),
        granted_scope_names(client),
        client.redirect_uris.join(" "),
    )
}
