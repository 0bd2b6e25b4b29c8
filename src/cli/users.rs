//! `credencial user …`: account administration through
//! [`AccountAdminService`], the panel's use cases, as the operator
//! (`$USER`) the audit trail names.

use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use credencial_application::admin::accounts::{masked, MAX_PAGE_SIZE};
use credencial_application::admin::{
    AccountAdminPorts, AccountFields, AccountView, TakenField, TemporaryAccountOutcome,
};
use credencial_application::{
    AccountAdminService, CredentialCheck, LoginThrottle, NewAccount, ServiceError, SessionService, StaffService,
};
use credencial_domain::admin::accounts::ACCOUNT_PAGE_SIZE;
use credencial_domain::admin::{AccountQuery, Actor};
use credencial_domain::session::SessionLimits;
use credencial_domain::{Cpf, UserData, UserId, Username};
use credencial_ports::SystemClock;
use secrecy::{ExposeSecret, SecretString};

use super::{actor, storage};
use crate::settings::Settings;
use crate::startup::hasher;

/// `credencial user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user; the password is read from standard input (never
    /// echoed), or, with `--temporary-password`, generated and printed once
    /// as the last line (to be changed at the first login).
    Create(CreateUser),
    /// List the users, a page at a time (CPFs masked).
    List {
        /// Only the users after this username (the previous page's last):
        /// the next page.
        #[arg(long)]
        after: Option<String>,
        /// Users per page (1 to 500).
        #[arg(long, default_value_t = 50)]
        per_page: u32,
    },
    /// Search users by name, username, CPF (digits or formatted) or e-mail,
    /// a page of 20 at a time (CPFs masked), as the panel does.
    Search {
        /// What to look for: the start of the name or of any of its words
        /// (`souza` finds "Maria Souza Lima", `maria sou` too), of the
        /// username or of the e-mail; a whole CPF or e-mail exactly.
        query: String,
        /// Only the users after this place (the one the previous page
        /// printed): the next page.
        #[arg(long)]
        after: Option<String>,
    },
    /// Show one user: own data (CPF masked), validation, staff, authorized
    /// applications, last logins.
    Show {
        /// The user's username.
        #[arg(long)]
        username: String,
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
    /// Give a user access to the administration panel (`true`) or take it
    /// away (`false`).
    SetStaff {
        /// The user's username.
        #[arg(long)]
        username: String,
        /// `true` or `false`.
        #[arg(action = clap::ArgAction::Set, value_parser = clap::value_parser!(bool))]
        staff: bool,
    },
    /// Clear a user's tax-id validation (`receita_federal` is no longer
    /// answered until the person validates again).
    ClearValidation {
        /// The user's username.
        #[arg(long)]
        username: String,
    },
    /// Remove a user's second factors (authenticator app, passkeys and
    /// recovery codes: a lost phone) and end the user's sessions; recorded
    /// in the audit trail.
    ResetSecondFactor {
        /// The user's username.
        #[arg(long)]
        username: String,
    },
    /// End every browser session of a user at once (a lost or stolen
    /// device); recorded in the audit trail.
    EndSessions {
        /// The user's username.
        #[arg(long)]
        username: String,
    },
    /// Forget the failed logins counted against a user's username (and
    /// CPF), so that it may log in again at once.
    LiftThrottle {
        /// The user's username.
        #[arg(long)]
        username: String,
    },
    /// Set a generated temporary password, printed once as the last line;
    /// the user must change it at the next login. Every refresh token of
    /// the user is revoked.
    TemporaryPassword {
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
    /// Give the account access to the administration panel (`/admin/`).
    #[arg(long)]
    pub staff: bool,
    /// Generate a temporary password instead of reading one (as the panel's
    /// `/admin/usuarios/novo/`): printed once as the last line; the person
    /// must change it at the first login.
    #[arg(long)]
    pub temporary_password: bool,
}

/// The account administration service on the configured database.
async fn accounts(settings: &Settings) -> anyhow::Result<AccountAdminService> {
    let storage = storage(settings).await?;
    let staff = StaffService::new(Arc::clone(&storage.users), Arc::clone(&storage.audit));
    let clock: Arc<SystemClock> = Arc::new(SystemClock);
    let hasher = hasher(settings)?;
    // The commands end sessions; they log no one in (the credential check
    // is the service's, with its limits, for completeness).
    let throttle =
        LoginThrottle::new(Arc::clone(&storage.login_failures), clock.clone(), settings.login.throttle_policy());
    let credentials = CredentialCheck::new(Arc::clone(&storage.users), hasher.clone(), throttle);
    let limits = SessionLimits {
        idle_secs: settings.login.session_idle_secs,
        absolute_secs: settings.login.session_absolute_secs,
    };
    let sessions = SessionService::new(Arc::clone(&storage.sessions), Arc::new(credentials), clock.clone(), limits);
    let ports = AccountAdminPorts {
        store: Arc::clone(&storage.account_admin),
        logins: Arc::clone(&storage.login_history),
        grants: Arc::clone(&storage.grants),
        refresh_tokens: Arc::clone(&storage.refresh_tokens),
        clock,
        sessions: Arc::new(sessions),
        second_factors: Arc::clone(&storage.second_factors),
    };
    Ok(AccountAdminService::new(ports, Arc::new(staff), hasher))
}

/// The account named `--username` and the service.
async fn target(settings: &Settings, username: &str) -> anyhow::Result<(AccountAdminService, Username, UserId)> {
    let username = Username::parse(username).context("--username")?;
    let service = accounts(settings).await?;
    let id = service.id_of(&username).await.map_err(user_error)?;
    Ok((service, username, id))
}

/// Runs a `user` command.
pub(super) async fn run(settings: &Settings, command: UserCommand) -> anyhow::Result<()> {
    let actor = actor();
    match command {
        UserCommand::Create(args) => create_user(settings, &actor, args).await,
        UserCommand::List { after, per_page } => {
            anyhow::ensure!((1..=MAX_PAGE_SIZE).contains(&per_page), "pages hold 1 to {MAX_PAGE_SIZE} users");
            list_users(settings, &AccountQuery::default(), after.as_deref(), per_page).await
        }
        UserCommand::Search { query, after } => {
            list_users(settings, &AccountQuery::parse(&query), after.as_deref(), ACCOUNT_PAGE_SIZE).await
        }
        UserCommand::Show { username } => {
            let (service, _, id) = target(settings, &username).await?;
            show_user(&service.view(id).await.map_err(user_error)?);
            Ok(())
        }
        UserCommand::SetActive { username, active } => {
            let (service, username, id) = target(settings, &username).await?;
            let revoked = service.set_active(&actor, id, active).await.map_err(user_error)?;
            let state = if active { "active" } else { "inactive" };
            println!("user {username} is now {state}; {revoked} refresh token(s) revoked");
            Ok(())
        }
        UserCommand::SetPassword { username } => {
            let (service, username, id) = target(settings, &username).await?;
            let password = read_password()?;
            let revoked = service.set_password(&actor, id, SecretString::from(password)).await.map_err(user_error)?;
            println!("password of {username} changed; {revoked} refresh token(s) revoked");
            Ok(())
        }
        UserCommand::SetStaff { username, staff } => {
            let (service, username, id) = target(settings, &username).await?;
            service.set_staff(&actor, id, staff).await.map_err(user_error)?;
            let state = if staff { "is now staff (may use /admin/)" } else { "is no longer staff" };
            println!("user {username} {state}");
            Ok(())
        }
        UserCommand::ClearValidation { username } => {
            let (service, username, id) = target(settings, &username).await?;
            service.clear_validation(&actor, id).await.map_err(user_error)?;
            println!("tax-id validation of {username} cleared");
            Ok(())
        }
        UserCommand::ResetSecondFactor { username } => {
            let (service, username, id) = target(settings, &username).await?;
            match service.reset_second_factors(&actor, id).await.map_err(user_error)? {
                true => println!("second factor of {username} removed; its sessions ended"),
                false => println!("{username} had no second factor; its sessions ended"),
            }
            Ok(())
        }
        UserCommand::EndSessions { username } => {
            let (service, username, id) = target(settings, &username).await?;
            let ended = service.end_sessions(&actor, id).await.map_err(user_error)?;
            println!("{ended} session(s) of {username} ended");
            Ok(())
        }
        UserCommand::LiftThrottle { username } => {
            let (service, username, id) = target(settings, &username).await?;
            let lifted = service.lift_throttle(&actor, id).await.map_err(user_error)?;
            if lifted {
                println!("failed logins of {username} forgotten: it may log in again");
            } else {
                println!("{username} had no failed logins counted");
            }
            Ok(())
        }
        UserCommand::TemporaryPassword { username } => {
            let (service, username, id) = target(settings, &username).await?;
            let set = service.temporary_password(&actor, id).await.map_err(user_error)?;
            println!(
                "temporary password of {username} set; {} refresh token(s) revoked; it must be changed at the next \
                 login. The password (shown only now):",
                set.revoked
            );
            println!("{}", set.password.expose_secret());
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

async fn create_user(settings: &Settings, actor: &Actor, args: CreateUser) -> anyhow::Result<()> {
    let fields = AccountFields {
        username: Username::parse(&args.username).context("--username")?,
        cpf: args.cpf.as_deref().map(Cpf::parse).transpose().context("--cpf")?,
        name: args.name,
        data: UserData {
            identificacao: args.identificacao,
            nome_usual: args.nome_usual,
            email: args.email,
            campus: args.campus,
            tipo_usuario: args.tipo_usuario,
        },
        is_active: !args.inactive,
        is_staff: args.staff,
    };
    if args.temporary_password {
        return create_with_temporary_password(settings, actor, fields).await;
    }
    let account = NewAccount { fields, password: SecretString::from(read_password()?) };
    let id = accounts(settings).await?.create(actor, account).await.map_err(user_error)?;
    println!("created user {} with id {}", args.username, id.0);
    Ok(())
}

/// `user create --temporary-password`: the panel's account creation.
async fn create_with_temporary_password(
    settings: &Settings,
    actor: &Actor,
    account: AccountFields,
) -> anyhow::Result<()> {
    let outcome = accounts(settings).await?.create_with_temporary_password(actor, account).await.map_err(user_error)?;
    match outcome {
        TemporaryAccountOutcome::Created { id, password } => {
            println!(
                "created user {} with id {}; it must change the password at the first login. The temporary \
                 password (shown only now):",
                password.username, id.0
            );
            println!("{}", password.password.expose_secret());
            Ok(())
        }
        TemporaryAccountOutcome::Taken(field) => {
            let field = match field {
                TakenField::Username => "username",
                TakenField::Cpf => "CPF",
                TakenField::Email => "e-mail",
            };
            anyhow::bail!("a user with this {field} already exists")
        }
    }
}

async fn list_users(
    settings: &Settings,
    query: &AccountQuery,
    after: Option<&str>,
    per_page: u32,
) -> anyhow::Result<()> {
    let listed = accounts(settings).await?.search(query, after, per_page).await.map_err(user_error)?;
    println!("{:>8}  {:<24} {:<8} {:<6} {:<16} {:<32} NAME", "ID", "USERNAME", "ACTIVE", "STAFF", "CPF", "E-MAIL");
    for u in &listed.accounts {
        let cpf = masked(u.cpf.as_deref()).unwrap_or_else(|| "-".into());
        let active = if u.is_active { "yes" } else { "no" };
        let staff = if u.is_staff { "yes" } else { "no" };
        println!("{:>8}  {:<24} {active:<8} {staff:<6} {cpf:<16} {:<32} {}", u.id.0, u.username, u.email, u.name);
    }
    let next = listed.next.map(|last| format!("--after {}", shell_quoted(&last)));
    println!("{}", super::pager_line(listed.tally, "users", next));
    Ok(())
}

/// `value` as one shell word: as it is when it holds only characters no
/// shell reads specially, else in single quotes (a search's place holds
/// the matched words and may hold anything a name holds).
fn shell_quoted(value: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !value.is_empty() && value.chars().all(plain) {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

fn show_user(view: &AccountView) {
    let a = &view.account;
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    println!("id:                   {}", a.id.0);
    println!("username:             {}", a.username);
    println!("name:                 {}", a.name);
    println!("e-mail:               {}", a.email);
    println!("cpf:                  {}", view.masked_cpf.as_deref().unwrap_or("-"));
    println!("active:               {}", yes_no(a.is_active));
    println!("staff:                {}", yes_no(a.is_staff));
    println!("tax-id validated:     {}", yes_no(a.tax_id_validated));
    println!("must change password: {}", yes_no(a.must_change_password));
    println!("authorized applications:");
    if view.grants.is_empty() {
        println!("  (none)");
    }
    for g in &view.grants {
        let scopes: Vec<&str> = g.scopes.iter().map(|s| s.name()).collect();
        println!("  {} ({}): {}", g.client_name, g.client_id, scopes.join(" "));
    }
    println!("last logins (Unix time, via):");
    if view.logins.is_empty() {
        println!("  (none)");
    }
    for l in &view.logins {
        println!("  {} {}", l.at, l.via.code());
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

#[cfg(test)]
mod tests {
    use super::shell_quoted;

    #[test]
    fn a_place_is_printed_as_one_shell_word() {
        assert_eq!(shell_quoted("maria.souza12"), "maria.souza12");
        assert_eq!(shell_quoted("maria souza~12"), "'maria souza~12'");
        assert_eq!(shell_quoted("d'ávila~3"), "'d'\\''ávila~3'");
        assert_eq!(shell_quoted(""), "''");
    }
}
