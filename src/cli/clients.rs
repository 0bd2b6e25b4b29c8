//! `credencial client …`: the OAuth2 clients (the administration panel's
//! twin: both call [`ClientAdminService`], which records every change in
//! the audit trail as done by the operating-system user at the CLI).

use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use credencial_application::admin::{ClientChanges, CreateOutcome, NewClient};
use credencial_application::{ApiAccessChange, ApiTokenService, ClientAdminService, ServiceError};
use credencial_domain::admin::client::optional_scopes;
use credencial_domain::admin::{
    ApiPermissions, BackchannelLogoutUri, ClientName, PostLogoutRedirectUris, RedirectUris,
};
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::ClientId;
use credencial_domain::ScopeSet;
use credencial_ports::OAuthClient;
use secrecy::{ExposeSecret, SecretString};

use super::{actor, storage};
use crate::settings::Settings;
use crate::startup::hasher;
use crate::storage::Storage;

/// `credencial client …`
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Register a client; a confidential client's secret is printed once.
    Create(CreateClient),
    /// Change a client's name, redirect URIs, scopes, PKCE, second-factor
    /// or gov.br level requirement, or give it a new secret.
    Update(UpdateClient),
    /// List the registered clients (never their secrets).
    List,
    /// Deactivate (false) or reactivate (true) a client: a deactivated one
    /// can neither start an authorization, nor redeem a code, nor refresh,
    /// and its access tokens are refused at the profile read.
    SetActive(SetActive),
}

/// Which client to (de)activate.
#[derive(Debug, Args)]
pub struct SetActive {
    /// The client to change.
    #[arg(long)]
    pub client_id: String,
    /// Whether the client may use the provider.
    #[arg(value_name = "true|false", action = clap::ArgAction::Set)]
    pub active: bool,
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
    /// Where OpenID Connect logout (/oauth/logout/) may send the browser
    /// afterwards, matched exactly; repeat for several.
    #[arg(long = "post-logout-redirect-uri", value_name = "URI")]
    pub post_logout_redirect_uris: Vec<String>,
    /// A public client (single-page or mobile app): no secret, PKCE required.
    #[arg(long)]
    pub public: bool,
    /// Require PKCE from this confidential client too.
    #[arg(long)]
    pub require_pkce: bool,
    /// The lowest gov.br reliability level the client's users must log in
    /// with (bronze, prata or ouro; none by default).
    #[arg(long, value_name = "bronze|prata|ouro|none", value_parser = parse_level)]
    pub minimum_govbr_level: Option<MinimumLevel>,
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
    /// Post-logout redirect URIs replacing the whole list; repeat for
    /// several.
    #[arg(long = "post-logout-redirect-uri", value_name = "URI")]
    pub post_logout_redirect_uris: Vec<String>,
    /// Remove every post-logout redirect URI.
    #[arg(long, conflicts_with = "post_logout_redirect_uris")]
    pub no_post_logout_redirect_uris: bool,
    /// Where the application is told that a session it received an ID
    /// token in ended (OpenID Connect Back-Channel Logout; https, or http
    /// on loopback); "" stops telling it.
    #[arg(long, value_name = "URI")]
    pub backchannel_logout_uri: Option<String>,
    /// Optional scopes replacing the enabled ones ("" enables none).
    #[arg(long)]
    pub scopes: Option<String>,
    /// Whether this confidential client must use PKCE.
    #[arg(long, value_name = "true|false")]
    pub require_pkce: Option<bool>,
    /// Whether the client's users must pass a second factor (an
    /// authenticator app) before a code is issued; audited.
    #[arg(long, value_name = "true|false")]
    pub requires_second_factor: Option<bool>,
    /// The lowest gov.br reliability level the client's users must log in
    /// with, or none: a session that is not a gov.br login at this level or
    /// above is sent through gov.br before a code is issued; audited.
    #[arg(long, value_name = "bronze|prata|ouro|none", value_parser = parse_level)]
    pub minimum_govbr_level: Option<MinimumLevel>,
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
    /// The application's API permissions, comma-separated
    /// (`users:read,users:create`; "" for none), for its new API token
    /// and its own tokens; with --rotate-api-token or
    /// --client-credentials only; default: the current ones.
    #[arg(long, value_name = "LIST")]
    pub api_permissions: Option<String>,
    /// Whether this confidential client may get tokens for itself with the
    /// `client_credentials` grant (to call `/usuarios/`); audited.
    #[arg(long, value_name = "true|false")]
    pub client_credentials: Option<bool>,
}

/// A `--minimum-govbr-level`: a level, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinimumLevel(pub Option<ReliabilityLevel>);

/// `bronze`, `prata`, `ouro` (or gov.br's `silver`, `gold`), or `none`.
fn parse_level(raw: &str) -> Result<MinimumLevel, String> {
    if matches!(raw.trim().to_ascii_lowercase().as_str(), "none" | "nenhum") {
        return Ok(MinimumLevel(None));
    }
    ReliabilityLevel::from_name(raw)
        .map(|level| MinimumLevel(Some(level)))
        .ok_or_else(|| format!("{raw:?} is not a gov.br level: give bronze, prata, ouro or none"))
}

/// Runs a `client` command.
pub(super) async fn run(settings: &Settings, command: ClientCommand) -> anyhow::Result<()> {
    match command {
        ClientCommand::Create(args) => create_client(settings, args).await,
        ClientCommand::Update(args) => update_client(settings, args).await,
        ClientCommand::List => list_clients(settings).await,
        ClientCommand::SetActive(args) => set_active(settings, args).await,
    }
}

/// The use cases, over the configured database.
async fn service(settings: &Settings) -> anyhow::Result<ClientAdminService> {
    service_on(settings, &storage(settings).await?)
}

fn service_on(settings: &Settings, storage: &Storage) -> anyhow::Result<ClientAdminService> {
    Ok(ClientAdminService::new(Arc::clone(&storage.clients), hasher(settings)?))
}

async fn create_client(settings: &Settings, args: CreateClient) -> anyhow::Result<()> {
    let new = NewClient {
        client_id: ClientId::parse(&args.client_id).context("--client-id")?,
        name: client_name(&args.name)?,
        redirect_uris: redirect_uris(&args.redirect_uris, args.allow_insecure_http)?,
        post_logout_redirect_uris: post_logout_uris(&args.post_logout_redirect_uris, args.allow_insecure_http)?,
        confidential: !args.public,
        require_pkce: args.require_pkce,
        minimum_govbr_level: args.minimum_govbr_level.and_then(|level| level.0),
        scopes: optional_scopes(&args.scopes).context("--scopes")?,
    };
    match service(settings).await?.create(&actor(), new).await.map_err(service_error)? {
        CreateOutcome::Created { client, secret } => {
            println!("created {}", client_summary(&client));
            if let Some(secret) = secret {
                print_secret_once(&secret);
            }
            Ok(())
        }
        CreateOutcome::IdTaken => anyhow::bail!("a client with id {:?} already exists", args.client_id),
    }
}

async fn update_client(settings: &Settings, args: UpdateClient) -> anyhow::Result<()> {
    let client_id = ClientId::parse(&args.client_id).context("--client-id")?;
    let mut changes = ClientChanges {
        name: args.name.as_deref().map(client_name).transpose()?,
        redirect_uris: None,
        post_logout_redirect_uris: None,
        scopes: args.scopes.as_deref().map(|s| optional_scopes(s).context("--scopes")).transpose()?,
        require_pkce: args.require_pkce,
        requires_second_factor: args.requires_second_factor,
        minimum_govbr_level: args.minimum_govbr_level.map(|level| level.0),
        rotate_secret: args.rotate_secret,
        active: None,
        backchannel_logout_uri: args
            .backchannel_logout_uri
            .as_deref()
            .map(|raw| backchannel_logout_uri(raw, args.allow_insecure_http))
            .transpose()?,
    };
    if !args.redirect_uris.is_empty() {
        changes.redirect_uris = Some(redirect_uris(&args.redirect_uris, args.allow_insecure_http)?);
    }
    if !args.post_logout_redirect_uris.is_empty() || args.no_post_logout_redirect_uris {
        changes.post_logout_redirect_uris =
            Some(post_logout_uris(&args.post_logout_redirect_uris, args.allow_insecure_http)?);
    }
    anyhow::ensure!(
        !changes.is_empty() || args.rotate_api_token || args.client_credentials.is_some(),
        "nothing to update: give --name, --redirect-uri, --post-logout-redirect-uri, \
         --no-post-logout-redirect-uris, --scopes, --require-pkce, --requires-second-factor, \
         --minimum-govbr-level, --backchannel-logout-uri, --rotate-secret, --client-credentials \
         or --rotate-api-token"
    );
    anyhow::ensure!(
        args.api_permissions.is_none() || args.rotate_api_token || args.client_credentials.is_some(),
        "--api-permissions goes with --rotate-api-token or --client-credentials"
    );
    let api_permissions = args.api_permissions.as_deref().map(ApiPermissions::parse).transpose()?;
    let storage = storage(settings).await?;
    // The grant first: its refusal (a public client) comes before anything
    // else is written.
    if let Some(allowed) = args.client_credentials {
        set_api_access(&storage, &client_id, api_permissions, allowed).await?;
    }
    if !changes.is_empty() {
        let service = service_on(settings, &storage)?;
        let changed = service.change(&actor(), &client_id, changes).await.map_err(service_error)?;
        let changed = changed.ok_or_else(|| anyhow::anyhow!("no client with id {:?}", args.client_id))?;
        println!("updated {}", client_summary(&changed.client));
        if let Some(secret) = changed.secret {
            print_secret_once(&secret);
        }
    }
    if args.rotate_api_token {
        rotate_api_token(&storage, &client_id, api_permissions).await?;
    }
    Ok(())
}

/// Sets whether `client_id` may use `client_credentials`, with
/// `permissions` (default: the current ones), through the panel's service,
/// as the operator at the command line.
async fn set_api_access(
    storage: &Storage,
    client_id: &ClientId,
    permissions: Option<ApiPermissions>,
    allowed: bool,
) -> anyhow::Result<()> {
    let service = ApiTokenService::new(Arc::clone(&storage.directory));
    let permissions = permissions_or_current(&service, client_id, permissions).await?;
    match service.set_access(&actor(), client_id, permissions, allowed).await? {
        ApiAccessChange::Saved => {
            println!("client_credentials: {}; api_permissions: {permissions}", if allowed { "allowed" } else { "off" });
            Ok(())
        }
        ApiAccessChange::UnknownClient => Err(unknown_client(client_id)),
        ApiAccessChange::PublicClient => {
            anyhow::bail!(
                "client {:?} is public: only a confidential client may use client_credentials",
                client_id.as_str()
            )
        }
    }
}

/// The API permissions given on the command line, or else the ones
/// `client_id` has. Errors: no such client; storage.
async fn permissions_or_current(
    service: &ApiTokenService,
    client_id: &ClientId,
    given: Option<ApiPermissions>,
) -> anyhow::Result<ApiPermissions> {
    match given {
        Some(permissions) => Ok(permissions),
        None => Ok(service.state(client_id).await?.ok_or_else(|| unknown_client(client_id))?.permissions),
    }
}

/// The error for a client id no application has.
fn unknown_client(client_id: &ClientId) -> anyhow::Error {
    anyhow::anyhow!("no client with id {:?}", client_id.as_str())
}

/// Issues a new user-management API token for `client_id` with
/// `permissions` (default: the current ones) through the panel's service,
/// as the operator at the command line; prints it as the last line.
async fn rotate_api_token(
    storage: &Storage,
    client_id: &ClientId,
    permissions: Option<ApiPermissions>,
) -> anyhow::Result<()> {
    let service = ApiTokenService::new(Arc::clone(&storage.directory));
    let permissions = permissions_or_current(&service, client_id, permissions).await?;
    let token = service.issue(&actor(), client_id, permissions).await?.ok_or_else(|| unknown_client(client_id))?;
    println!("api_permissions: {permissions}");
    println!("Store this API token now: it is shown only once and only its hash is kept. It is the next line:");
    println!("{}", token.expose_secret());
    Ok(())
}

async fn set_active(settings: &Settings, args: SetActive) -> anyhow::Result<()> {
    let client_id = ClientId::parse(&args.client_id).context("--client-id")?;
    let changes = ClientChanges { active: Some(args.active), ..ClientChanges::default() };
    let changed = service(settings).await?.change(&actor(), &client_id, changes).await.map_err(service_error)?;
    let changed = changed.ok_or_else(|| anyhow::anyhow!("no client with id {:?}", args.client_id))?;
    let state = if changed.client.is_active { "active" } else { "inactive" };
    println!("client {} is now {state}", changed.client.client_id);
    Ok(())
}

async fn list_clients(settings: &Settings) -> anyhow::Result<()> {
    let clients = service(settings).await?.list().await.map_err(service_error)?;
    if clients.is_empty() {
        println!("no OAuth2 clients registered");
        return Ok(());
    }
    let header = ["CLIENT ID", "TYPE", "PKCE", "ACTIVE", "NAME", "SCOPES", "REDIRECT URIS"].map(str::to_owned);
    let rows: Vec<[String; 7]> = clients
        .iter()
        .map(|c| {
            [
                c.client_id.to_string(),
                client_type(c).to_owned(),
                pkce_rule(c).to_owned(),
                if c.is_active { "yes" } else { "no" }.to_owned(),
                c.name.clone(),
                granted_scope_names(c),
                c.redirect_uris.join(" "),
            ]
        })
        .collect();
    let mut widths = [0usize; 7];
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

fn client_name(raw: &str) -> anyhow::Result<ClientName> {
    ClientName::parse(raw).map_err(|e| anyhow::anyhow!("--name {e}"))
}

fn redirect_uris(raw: &[String], allow_insecure_http: bool) -> anyhow::Result<RedirectUris> {
    RedirectUris::parse(raw.iter().map(String::as_str), allow_insecure_http)
        .map_err(|e| anyhow::anyhow!("--redirect-uri {e}"))
}

fn post_logout_uris(raw: &[String], allow_insecure_http: bool) -> anyhow::Result<PostLogoutRedirectUris> {
    PostLogoutRedirectUris::parse(raw.iter().map(String::as_str), allow_insecure_http)
        .map_err(|e| anyhow::anyhow!("--post-logout-redirect-uri {e}"))
}

/// A `--backchannel-logout-uri`: a URI, or none for "".
fn backchannel_logout_uri(raw: &str, allow_insecure_http: bool) -> anyhow::Result<Option<BackchannelLogoutUri>> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    BackchannelLogoutUri::parse(raw, allow_insecure_http)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--backchannel-logout-uri {e}"))
}

/// A use case's refusal as the CLI reports it.
fn service_error(e: ServiceError) -> anyhow::Error {
    anyhow::anyhow!(e)
}

/// Prints a new client secret as the last line so far of standard output,
/// after the line that says what it is (a `--rotate-api-token` in the same
/// command prints its token after it, as the very last line).
fn print_secret_once(secret: &SecretString) {
    println!("Store this client secret now: it is shown only once and only its hash is kept. It is the next line:");
    println!("{}", secret.expose_secret());
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
    let mut summary = format!(
        "{} client {} ({:?}); PKCE {}; scopes: {}; redirect URIs: {}",
        client_type(client),
        client.client_id,
        client.name,
        pkce_rule(client),
        granted_scope_names(client),
        client.redirect_uris.join(" "),
    );
    if let Some(level) = client.minimum_govbr_level {
        summary.push_str(&format!("; minimum gov.br level: {level}"));
    }
    if !client.post_logout_redirect_uris.is_empty() {
        summary.push_str(&format!("; post-logout redirect URIs: {}", client.post_logout_redirect_uris.join(" ")));
    }
    if let Some(uri) = &client.backchannel_logout_uri {
        summary.push_str(&format!("; back-channel logout URI: {uri}"));
    }
    summary
}
