//! The command line: `serve`, `demo`, `migrate`, `user create`,
//! `client create|update|list`.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use credencial_adapters_postgres::{
    connect, ensure_database_exists, migrate, PgOAuthClientRepository, PgPool, PgUserRepository,
};
use credencial_domain::oauth::{random_token_text, validate_redirect_uri, ClientId};
use credencial_domain::{ScopeSet, UserData, Username};
use credencial_ports::{
    NewUser, OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError, UserRepository,
};
use rand::RngCore;
use secrecy::SecretString;

use crate::settings::{Settings, SettingsError};
use crate::startup::{hasher, Application, Mode};
use crate::{demo, telemetry};

/// credencial: JWT token service, OAuth2 profile-data provider, client component.
#[derive(Debug, Parser)]
#[command(name = "credencial", version)]
pub struct Cli {
    /// TOML settings file (default: ./credencial.toml if present).
    #[arg(long, global = true, env = "CREDENCIAL_CONFIG")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve in production mode (keys and upstream must be configured).
    Serve,
    /// Create and migrate the database, seed the demo users, and serve on
    /// 127.0.0.1:8000 with a sandbox of the upstream user-data resource.
    Demo,
    /// Apply pending database migrations.
    Migrate,
    /// Manage users.
    User {
        /// The user command.
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage OAuth2 clients (the administration panel).
    Client {
        /// The client command.
        #[command(subcommand)]
        command: ClientCommand,
    },
}

/// `credencial user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user; the password is read from standard input (never echoed).
    Create(CreateUser),
}

/// Fields of a new user.
#[derive(Debug, Args)]
pub struct CreateUser {
    /// Unique login name.
    #[arg(long)]
    pub username: String,
    /// Public name.
    #[arg(long, default_value = "")]
    pub name: String,
    /// E-mail address.
    #[arg(long, default_value = "")]
    pub email: String,
    /// CPF (11 digits).
    #[arg(long)]
    pub cpf: Option<String>,
    /// Registration id at the institution.
    #[arg(long, default_value = "")]
    pub identificacao: String,
    /// Name the person goes by.
    #[arg(long, default_value = "")]
    pub nome_usual: String,
    /// Campus.
    #[arg(long, default_value = "")]
    pub campus: String,
    /// Kind of user (e.g. Servidor, Aluno).
    #[arg(long, default_value = "")]
    pub tipo_usuario: String,
    /// Create the account inactive (it cannot log in).
    #[arg(long)]
    pub inactive: bool,
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = Settings::load(cli.config.as_deref())?;
    // Held until the command ends: dropping it writes out the queued lines.
    let _log_writer = telemetry::init(&settings.log_format);
    match cli.command {
        Command::Serve => {
            let pool = pool(&settings).await?;
            Application::build(&settings, Mode::Serve, pool).await?.run_until_stopped().await?;
        }
        Command::Demo => {
            let created = ensure_database_exists(settings.database_url()).await?;
            if created {
                tracing::info!("created the database");
            }
            let pool = pool(&settings).await?;
            migrate(&pool).await?;
            let hasher = hasher(&settings)?;
            let seeded = demo::seed(&pool, &hasher).await?;
            tracing::info!(seeded, "demo users ready: ana / ana-demo-2026, bruno / bruno-demo-2026");
            let redirect_uri = demo::demo_redirect_uri(&settings.bind);
            demo::seed_client(&pool, &hasher, &redirect_uri).await?;
            tracing::info!(client_id = demo::DEMO_CLIENT_ID, %redirect_uri, "demo OAuth2 client ready");
            Application::build(&settings, Mode::Demo, pool).await?.run_until_stopped().await?;
        }
        Command::Migrate => {
            let pool = pool(&settings).await?;
            migrate(&pool).await?;
            println!("migrations applied");
        }
        Command::User { command: UserCommand::Create(args) } => create_user(&settings, args).await?,
        Command::Client { command } => run_client_command(&settings, command).await?,
    }
    Ok(())
}

async fn pool(settings: &Settings) -> anyhow::Result<PgPool> {
    connect(settings.database_url(), settings.database_max_connections, Duration::from_secs(5))
        .await
        .map_err(|e| SettingsError::about("database_url", e).into())
}

async fn create_user(settings: &Settings, args: CreateUser) -> anyhow::Result<()> {
    let username = Username::parse(&args.username).context("--username")?;
    if let Some(cpf) = &args.cpf {
        anyhow::ensure!(cpf.len() == 11 && cpf.bytes().all(|b| b.is_ascii_digit()), "--cpf must be 11 digits");
    }
    let password = read_password()?;
    anyhow::ensure!(!password.is_empty(), "the password must not be empty");
    let pool = pool(settings).await?;
    let password_hash = hasher(settings)?.hash(SecretString::from(password)).await?;
    let repo = PgUserRepository::new(pool);
    let new = NewUser {
        username,
        password_hash,
        is_active: !args.inactive,
        data: UserData {
            identificacao: args.identificacao,
            nome_usual: args.nome_usual,
            email: args.email,
            campus: args.campus,
            tipo_usuario: args.tipo_usuario,
        },
        name: args.name,
        cpf: args.cpf,
    };
    match repo.create(new).await {
        Ok(id) => {
            println!("created user {} with id {}", args.username, id.0);
            Ok(())
        }
        Err(RepositoryError::Conflict(_)) => anyhow::bail!("a user named {:?} already exists", args.username),
        Err(e) => Err(e.into()),
    }
}

/// The password from the terminal without echo, or the first line of
/// standard input when it is not a terminal (scripts, pipes).
fn read_password() -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let again = rpassword::prompt_password("Password (again): ")?;
        anyhow::ensure!(first == again, "the passwords do not match");
        Ok(first)
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }
}

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
}

/// Longest client name accepted.
const MAX_CLIENT_NAME_CHARS: usize = 200;

async fn run_client_command(settings: &Settings, command: ClientCommand) -> anyhow::Result<()> {
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
        changes != OAuthClientUpdate::default() || args.rotate_secret,
        "nothing to update: give --name, --redirect-uri, --scopes, --require-pkce or --rotate-secret"
    );
    let repo = PgOAuthClientRepository::new(pool(settings).await?);
    let unknown = || anyhow::anyhow!("no client with id {:?}", args.client_id);
    let mut secret = None;
    if args.rotate_secret {
        let current = repo.find(&client_id).await?.ok_or_else(unknown)?;
        anyhow::ensure!(current.confidential, "client {client_id} is public: it has no secret to rotate");
        let new_secret = generate_client_secret();
        changes.secret_hash = Some(hasher(settings)?.hash(SecretString::from(new_secret.clone())).await?);
        secret = Some(new_secret);
    }
    let updated = repo.update(&client_id, changes).await?.ok_or_else(unknown)?;
    println!("updated {}", client_summary(&updated));
    if let Some(secret) = secret {
        print_secret_once(&secret);
    }
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
