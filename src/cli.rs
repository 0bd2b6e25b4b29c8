//! The command line: `serve`, `demo`, `migrate`, `export`, `import`,
//! `user create|list|search|show|set-active|set-password|set-staff|…`, `client create|update|list|set-active`,
//! `audit list`, `keys generate`, `completions`, `man`.

mod audit;
mod clients;
mod keys;
mod transfer;
mod users;

use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, Parser, Subcommand};
use credencial_domain::admin::{Actor, Tally};

use crate::settings::Settings;
use crate::startup::{hasher, Application, Mode};
use crate::storage::{lock_instance, Database, Storage};
use crate::{demo, telemetry};
pub use audit::AuditCommand;
pub use clients::{ClientCommand, CreateClient, UpdateClient};
pub use keys::KeysCommand;
pub use users::{CreateUser, UserCommand};

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
    /// Write every table of the database as JSON lines (to move a
    /// deployment between SQLite and PostgreSQL; secrets stay hashed, the
    /// file holds personal data).
    Export {
        /// A new file to write (mode 0600; never overwritten); standard
        /// output if not given.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Read an export into the database, which must be migrated and empty
    /// (one transaction: everything or nothing).
    Import {
        /// The export to read; standard input if not given.
        #[arg(long = "in")]
        input: Option<PathBuf>,
    },
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
    /// Read the audit trail (who changed what, when), as `/admin/auditoria/`.
    Audit {
        /// The audit command.
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Make signing keys (`keys generate --alg ES256`); reads no settings.
    Keys {
        /// The keys command.
        #[command(subcommand)]
        command: KeysCommand,
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
        Command::Keys { command } => return keys::run(command),
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
    // The service logs to standard output; every other command to standard
    // error, its standard output holding only its data (a secret, when it
    // prints one, as the last line). Held until the command ends: dropping
    // it writes out the queued lines.
    let _log_writer = match mode {
        Some(_) => Some(telemetry::init(settings.server.log_format.name())),
        None => {
            telemetry::init_for_command(settings.server.log_format.name());
            None
        }
    };
    match cli.command {
        Command::Serve => {
            // Held while serving: a second instance on one SQLite file is refused.
            let _instance = lock_instance(settings.database_url())?;
            let storage = storage(&settings).await?;
            Application::build(&settings, Mode::Serve, storage).await?.run_until_stopped().await?;
        }
        Command::Demo => {
            // The port first: a taken one is reported before anything is written.
            let listener = crate::startup::listen(&settings)?;
            let _instance = lock_instance(settings.database_url())?;
            let storage = migrated_storage(&settings).await?;
            let hasher = hasher(&settings)?;
            let seeded = demo::seed(&storage, &hasher).await?;
            tracing::info!(seeded, "demo users ready: ana / ana-demo-2026, bruno / bruno-demo-2026; staff (/admin/): admin / admin-demo-2026");
            let redirect_uri = demo::demo_redirect_uri(&settings.server.bind);
            demo::seed_client(&storage, &hasher, &redirect_uri).await?;
            tracing::info!(client_id = demo::DEMO_CLIENT_ID, %redirect_uri, "demo OAuth2 client ready");
            demo::seed_oidc_client(&storage, &hasher).await?;
            tracing::info!(
                client_id = demo::DEMO_OIDC_CLIENT_ID,
                client_secret = demo::DEMO_OIDC_CLIENT_SECRET,
                redirect_uri = demo::DEMO_OIDC_REDIRECT_URI,
                post_logout_redirect_uri = demo::DEMO_OIDC_POST_LOGOUT_URI,
                "demo OpenID Connect client ready (a demo secret, printed on purpose)"
            );
            Application::build_on(&settings, Mode::Demo, storage, listener).await?.run_until_stopped().await?;
        }
        Command::Migrate => {
            // Not under a serving instance of the same SQLite file.
            let _instance = lock_instance(settings.database_url())?;
            migrated_storage(&settings).await?;
            println!("migrations applied");
        }
        Command::Export { out } => {
            let rows = transfer::export(&settings, out.as_deref()).await?;
            eprintln!("exported {rows} rows");
        }
        Command::Import { input } => {
            let _instance = lock_instance(settings.database_url())?;
            let rows = transfer::import(&settings, input.as_ref()).await?;
            println!("imported {rows} rows");
        }
        Command::User { command } => users::run(&settings, command).await?,
        Command::Client { command } => clients::run(&settings, command).await?,
        Command::Audit { command } => audit::run(&settings, command).await?,
        Command::Completions { .. } | Command::Man | Command::Keys { .. } => {}
    }
    Ok(())
}

/// Every storage port on the configured database; an unreachable server
/// (with its address and the driver's root cause) or an unopenable file is
/// reported at once.
pub(crate) async fn storage(settings: &Settings) -> anyhow::Result<Storage> {
    Storage::connect(settings.database_url(), settings.storage.database_max_connections, Duration::from_secs(5)).await
}

/// The configured database, created if missing (the SQLite file with mode
/// 0600, or the PostgreSQL database) and migrated: what `demo` and
/// `migrate` start from.
async fn migrated_storage(settings: &Settings) -> anyhow::Result<Storage> {
    if Database::create_if_missing(settings.database_url()).await? {
        tracing::info!("created the database");
    }
    let storage = storage(settings).await?;
    storage.database.migrate().await?;
    Ok(storage)
}

/// Who the audit trail names for a change made from the command line
/// (`Actor::Cli`): the operating-system user (`$USER`), or `?` when unknown.
fn actor() -> Actor {
    let os_user = std::env::var("USER").ok().filter(|u| !u.trim().is_empty()).unwrap_or_else(|| "?".to_owned());
    Actor::Cli { os_user }
}

/// The line under a listed page: how many the filter selects (counted up to
/// a bound) and the option that asks the next page, as `option`.
fn pager_line(tally: Tally, noun: &str, next: Option<String>) -> String {
    let count = match tally {
        Tally::Exactly(n) => format!("{n} {noun}"),
        Tally::MoreThan(n) => format!("more than {n} {noun}"),
    };
    match next {
        Some(option) => format!("{count}; next page: {option}"),
        None => format!("{count}; no more pages"),
    }
}
