//! The command line: `serve`, `demo`, `migrate`, `user create`.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use credencial_adapters_postgres::{connect, ensure_database_exists, migrate, PgPool, PgUserRepository};
use credencial_domain::{UserData, Username};
use credencial_ports::{NewUser, RepositoryError, UserRepository};
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
            let seeded = demo::seed(&pool, &hasher(&settings)?).await?;
            tracing::info!(seeded, "demo users ready: ana / ana-demo-2026, bruno / bruno-demo-2026");
            Application::build(&settings, Mode::Demo, pool).await?.run_until_stopped().await?;
        }
        Command::Migrate => {
            let pool = pool(&settings).await?;
            migrate(&pool).await?;
            println!("migrations applied");
        }
        Command::User {
            command: UserCommand::Create(args),
        } => create_user(&settings, args).await?,
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
        anyhow::ensure!(
            cpf.len() == 11 && cpf.bytes().all(|b| b.is_ascii_digit()),
            "--cpf must be 11 digits"
        );
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
