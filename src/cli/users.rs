//! `credencial user …`: account administration through [`UserAdminService`].

use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use credencial_adapters_postgres::{PgRefreshTokenStore, PgUserRepository};
use credencial_application::{NewAccount, ServiceError, UserAdminService};
use credencial_domain::{Cpf, UserData, Username};
use secrecy::SecretString;

use super::pool;
use crate::settings::Settings;
use crate::startup::hasher;

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

/// The account administration service on the configured database.
async fn user_admin(settings: &Settings) -> anyhow::Result<UserAdminService> {
    let pool = pool(settings).await?;
    Ok(UserAdminService::new(
        Arc::new(PgUserRepository::new(pool.clone())),
        Arc::new(PgRefreshTokenStore::new(pool)),
        hasher(settings)?,
    ))
}

/// Runs a `user` command.
pub(super) async fn run(settings: &Settings, command: UserCommand) -> anyhow::Result<()> {
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
