//! The command line: `serve`, `demo`, `migrate`,
//! `user create|list|set-active|set-password`, `client create|update|list`,
//! `completions`, `man`.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand};
use credencial_adapters_postgres::{
    connect, ensure_database_exists, migrate, PgOAuthClientRepository, PgPool, PgRefreshTokenStore, PgUserRepository,
};
use credencial_application::{NewAccount, ServiceError, UserAdminService};
use credencial_domain::oauth::{random_token_text, validate_redirect_uri, ClientId};
use credencial_domain::{Cpf, ScopeSet, UserData, Username};
use credencial_ports::{OAuthClient, OAuthClientRepository, OAuthClientUpdate, RepositoryError};
use rand::RngCore;
use secrecy::SecretString;

use crate::settings::Settings;
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
    /// Print a shell completion script (e.g. `credencial completions bash >
    /// /etc/bash_completion.d/credencial`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page in roff (e.g. `credencial man > credencial.1`).
    Man,
}

/// `credencial user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user; the password is read from standard input (never echoed).
    Create(CreateUser),
    /// List the users, a page at a time (CPFs masked).
    List {
        /// Page number, from 1.
        #[arg(long, default_value_t = 1)]
        page: u32,
        /// Users per page (1 to 500).
        #[arg(long, default_value_t = 50)]
        per_page: u32,
    },
    /// Let a user log in (`true`) or not (`false`: every refresh token of the
    /// user is revoked too).
    SetActive {
        /// The user's username.
        #[arg(long)]
        username: String,
        /// `true` or `false`.
        #[arg(action = clap::ArgAction::Set, value_parser = clap::value_parser!(bool))]
        active: bool,
    },
    /// Set a user's password, read from standard input (never echoed); every
    /// refresh token of the user is revoked.
    SetPassword {
        /// The user's username.
        #[arg(long)]
        username: String,
    },
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
    // Neither reads settings: they work before anything is configured.
    match cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "credencial", &mut std::io::stdout());
            return Ok(());
        }
        Command::Man => {
            clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
            return Ok(());
        }
        _ => {}
    }
    // Every setting is checked, and every problem reported, before
    // anything is written.
    let mode = match cli.command {
        Command::Serve => Some(Mode::Serve),
        Command::Demo => Some(Mode::Demo),
        _ => None,
    };
    let settings = Settings::load_for(cli.config.as_deref(), mode)?;
    telemetry::init(&settings.log_format);
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
        Command::User { command } => run_user_command(&settings, command).await?,
        Command::Client { command } => run_client_command(&settings, command).await?,
        Command::Completions { .. } | Command::Man => {}
    }
    Ok(())
}

/// The pool; an unreachable database is reported at once with its address
/// and the driver's root cause.
async fn pool(settings: &Settings) -> anyhow::Result<PgPool> {
    Ok(connect(settings.database_url(), settings.database_max_connections, Duration::from_secs(5)).await?)
}

/// The account administration service on the configured database.
async fn user_admin(settings: &Settings) -> anyhow::Result<UserAdminService> {
    let pool = pool(settings).await?;
    Ok(UserAdminService::new(
        Arc::new(PgUserRepository::new(pool.clone())),
        Arc::new(PgRefreshTokenStore::new(pool)),
        hasher(settings)?,
    ))
}

async fn run_user_command(settings: &Settings, command: UserCommand) -> anyhow::Result<()> {
    match command {
        UserCommand::Create(args) => create_user(settings, args).await,
        UserCommand::List { page, per_page } => list_users(settings, page, per_page).await,
        UserCommand::SetActive { username, active } => {
            let username = Username::parse(&username).context("--username")?;
            let revoked = user_admin(settings).await?.set_active(&username, active).await.map_err(user_error)?;
            let state = if active { "active" } else { "inactive" };
            println!("user {} is now {state}; {revoked} refresh token(s) revoked", username.as_str());
            Ok(())
        }
        UserCommand::SetPassword { username } => {
            let username = Username::parse(&username).context("--username")?;
            let password = read_password()?;
            let service = user_admin(settings).await?;
            let revoked = service.set_password(&username, SecretString::from(password)).await.map_err(user_error)?;
            println!("password of {} changed; {revoked} refresh token(s) revoked", username.as_str());
            Ok(())
        }
    }
}

/// A use case's refusal as the operator reads it.
fn user_error(e: ServiceError) -> anyhow::Error {
    match e {
        ServiceError::UnknownUser => anyhow::anyhow!("no such user"),
        other => other.into(),
    }
}

async fn create_user(settings: &Settings, args: CreateUser) -> anyhow::Result<()> {
    let username = Username::parse(&args.username).context("--username")?;
    let cpf = args.cpf.as_deref().map(Cpf::parse).transpose().context("--cpf")?;
    let password = read_password()?;
    let account = NewAccount {
        username,
        password: SecretString::from(password),
        cpf,
        name: args.name,
        data: UserData {
            identificacao: args.identificacao,
            nome_usual: args.nome_usual,
            email: args.email,
            campus: args.campus,
            tipo_usuario: args.tipo_usuario,
        },
        is_active: !args.inactive,
    };
    let id = user_admin(settings).await?.create(account).await.map_err(user_error)?;
    println!("created user {} with id {}", args.username, id.0);
    Ok(())
}

async fn list_users(settings: &Settings, page: u32, per_page: u32) -> anyhow::Result<()> {
    let listed = user_admin(settings).await?.list(page, per_page).await.map_err(user_error)?;
    println!("{:>8}  {:<24} {:<8} {:<16} {:<32} NAME", "ID", "USERNAME", "ACTIVE", "CPF", "E-MAIL");
    for u in &listed.users {
        let cpf = u.cpf.as_deref().and_then(|c| Cpf::parse(c).ok()).map(|c| c.masked()).unwrap_or_else(|| "-".into());
        let active = if u.is_active { "yes" } else { "no" };
        println!("{:>8}  {:<24} {active:<8} {cpf:<16} {:<32} {}", u.id.0, u.username, u.email, u.name);
    }
    println!("page {} of {} ({} users)", listed.page, listed.pages, listed.total);
    Ok(())
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
