//! Account administration: search and view accounts, create them, let them
//! log in or not, set a password (the operator's, or a temporary one the
//! person must change), clear a tax-id validation, lift a login throttle,
//! and make an account staff. The panel (`/admin/usuarios/`) and the CLI
//! (`credencial user …`) both call this service.
//!
//! Every change appends an audit entry (never a password; a CPF masked),
//! stored in the same transaction as the change.

use std::sync::Arc;

use credencial_domain::admin::accounts::{temporary_password, LOGIN_HISTORY_DAYS, LOGIN_HISTORY_KEEP, RECENT_LOGINS};
use credencial_domain::admin::audit::SECRET_SET;
use credencial_domain::admin::{
    AccountFilter, AccountQuery, Actor, AuditAction, AuditTarget, KeysetPage, LoginRecord, NewAuditEntry, Tally,
};
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{check_new_password, AccountIdentifiers, Cpf, UserData, UserId, Username};
use credencial_ports::account::{GrantRepository, GrantSummary};
use credencial_ports::{
    AccessChange, AccountAdminStore, AccountRecord, Clock, LoginHistory, NewUser, RefreshTokenStore, RepositoryError,
    SecondFactorStore,
};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};

use super::{audit_entry, StaffService};
use crate::error::ServiceError;
use crate::hashing::PasswordHasher;
use crate::metrics::SessionEnd;
use crate::session::SessionService;
use credencial_domain::security_event::SecurityEventKind;

/// Largest page of [`AccountAdminService::search`].
pub const MAX_PAGE_SIZE: u32 = 500;

/// A new account, its fields already validated at the edge where they are
/// domain types.
pub struct NewAccount {
    /// The account's fields.
    pub fields: AccountFields,
    /// The password, checked against the password rules here.
    pub password: SecretString,
}

/// A new account's fields, without its password: with a chosen one they
/// are a [`NewAccount`]; alone, the service generates a temporary password,
/// shown once to whoever creates the account, that the person must change
/// at the first login (the panel's `/admin/usuarios/novo/` and `credencial
/// user create --temporary-password`).
pub struct AccountFields {
    /// Unique login name.
    pub username: Username,
    /// CPF with valid check digits, if known.
    pub cpf: Option<Cpf>,
    /// Public name.
    pub name: String,
    /// What the user-data resource returns for this user (its `email` is
    /// the account's e-mail).
    pub data: UserData,
    /// Whether the account may log in.
    pub is_active: bool,
    /// Whether the account may use the administration panel.
    pub is_staff: bool,
}

/// A field of a new account that another account already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakenField {
    /// The username.
    Username,
    /// The CPF.
    Cpf,
    /// The e-mail address (ignoring case).
    Email,
}

impl TakenField {
    /// The field the store's `Conflict` names (`username` when it names
    /// none it knows).
    fn from_conflict(field: &str) -> Self {
        match field {
            "cpf" => Self::Cpf,
            "email" => Self::Email,
            _ => Self::Username,
        }
    }
}

/// What creating an account with a temporary password did.
#[derive(Debug)]
pub enum TemporaryAccountOutcome {
    /// Created: its id and the password, to be shown once.
    Created {
        /// The new account's id.
        id: UserId,
        /// The temporary password (`revoked` is 0).
        password: TemporaryPassword,
    },
    /// Nothing written: another account holds this field.
    Taken(TakenField),
}

/// One page of a search, read by key.
#[derive(Debug)]
pub struct AccountPage {
    /// The accounts on this page, by username.
    pub accounts: Vec<AccountRecord>,
    /// The username to ask the next page after (`None`: this is the last).
    pub next: Option<String>,
    /// How many accounts the search selects in all (counted up to a bound).
    pub tally: Tally,
}

/// One account as its administration page shows it.
#[derive(Debug)]
pub struct AccountView {
    /// The account.
    pub account: AccountRecord,
    /// Its CPF, masked (`529.***.***-25`), if it has one.
    pub masked_cpf: Option<String>,
    /// The applications it authorized, most recently used first.
    pub grants: Vec<GrantSummary>,
    /// Its most recent logins, newest first.
    pub logins: Vec<LoginRecord>,
    /// Whether it has a second factor (an authenticator app or a passkey).
    pub second_factor: bool,
}

/// A temporary password just set: shown once to whoever set it.
#[derive(Debug)]
pub struct TemporaryPassword {
    /// The password (never logged, never stored in clear).
    pub password: SecretString,
    /// The account's username.
    pub username: String,
    /// How many refresh tokens were revoked.
    pub revoked: u64,
}

/// The ports behind [`AccountAdminService`].
pub struct AccountAdminPorts {
    /// Accounts and their audited changes.
    pub store: Arc<dyn AccountAdminStore>,
    /// Recent logins.
    pub logins: Arc<dyn LoginHistory>,
    /// Authorized applications.
    pub grants: Arc<dyn GrantRepository>,
    /// Refresh tokens (revoked on deactivation and on a new password).
    pub refresh_tokens: Arc<dyn RefreshTokenStore>,
    /// The time (the login history's purge).
    pub clock: Arc<dyn Clock>,
    /// Browser sessions (ended on deactivation, on a new password and by
    /// staff's "end all").
    pub sessions: Arc<SessionService>,
    /// Second factors (shown on the account's page; reset by staff).
    pub second_factors: Arc<dyn SecondFactorStore>,
}

/// Administration of accounts, for the panel and the CLI.
pub struct AccountAdminService {
    store: Arc<dyn AccountAdminStore>,
    logins: Arc<dyn LoginHistory>,
    grants: Arc<dyn GrantRepository>,
    refresh_tokens: Arc<dyn RefreshTokenStore>,
    staff: Arc<StaffService>,
    hasher: PasswordHasher,
    clock: Arc<dyn Clock>,
    sessions: Arc<SessionService>,
    second_factors: Arc<dyn SecondFactorStore>,
}

impl std::fmt::Debug for AccountAdminService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountAdminService").finish_non_exhaustive()
    }
}

impl AccountAdminService {
    /// A service over `ports`, making staff through `staff`, hashing on
    /// `hasher`.
    pub fn new(ports: AccountAdminPorts, staff: Arc<StaffService>, hasher: PasswordHasher) -> Self {
        let AccountAdminPorts { store, logins, grants, refresh_tokens, clock, sessions, second_factors } = ports;
        Self { store, logins, grants, refresh_tokens, staff, hasher, clock, sessions, second_factors }
    }

    /// The page of the accounts `query` selects that follow the place
    /// `after` in its order (from the first without it), `per_page` (1 to
    /// [`MAX_PAGE_SIZE`]) a page: by username, or by matching term for a
    /// search by words (an account once on a page, at its first place; a
    /// later page may show it again at a later one). Errors: `Invalid` for a page
    /// size out of range; `Storage`.
    pub async fn search(
        &self,
        query: &AccountQuery,
        after: Option<&str>,
        per_page: u32,
    ) -> Result<AccountPage, ServiceError> {
        if per_page == 0 || per_page > MAX_PAGE_SIZE {
            return Err(ServiceError::Invalid(format!("a page holds 1 to {MAX_PAGE_SIZE} accounts")));
        }
        // An account can be found at several places of a search by words
        // (its name and its username both match): rows are read for three
        // places an account, and each account shown once, at its first.
        let places = match query.filter() {
            AccountFilter::Words(_) => PLACES_PER_ACCOUNT,
            _ => 1,
        };
        let fetch = KeysetPage::new(per_page).fetch().saturating_mul(places);
        let (rows, counted) = self.store.search(query, after, fetch).await?;
        let (accounts, next) = distinct_accounts(rows, per_page, fetch);
        Ok(AccountPage { accounts, next, tally: Tally::from_capped(counted) })
    }

    /// The id of the account named `username`. Errors: `UnknownUser`;
    /// `Storage`.
    pub async fn id_of(&self, username: &Username) -> Result<UserId, ServiceError> {
        Ok(self.store.find_by_username(username).await?.ok_or(ServiceError::UnknownUser)?.id)
    }

    /// The account `id` with its authorized applications and recent logins.
    /// Errors: `UnknownUser`; `Storage`.
    pub async fn view(&self, id: UserId) -> Result<AccountView, ServiceError> {
        let account = self.find(id).await?;
        let (grants, logins) =
            futures_util::future::try_join(self.grants.list(id), self.logins.recent(id, RECENT_LOGINS)).await?;
        let masked_cpf = masked(account.cpf.as_deref());
        let second_factor = self.second_factors.has_factor(id).await?;
        Ok(AccountView { account, masked_cpf, grants, logins, second_factor })
    }

    /// Creates an account as `actor`. Errors: `Invalid` for a password
    /// that breaks the rules or a username, CPF or e-mail already taken;
    /// `Storage`.
    pub async fn create(&self, actor: &Actor, account: NewAccount) -> Result<UserId, ServiceError> {
        let NewAccount { fields, password } = account;
        let ids = AccountIdentifiers {
            username: fields.username.as_str(),
            cpf: fields.cpf.as_ref().map(Cpf::as_str).unwrap_or(""),
            email: &fields.data.email,
            name: &fields.name,
        };
        check_new_password(password.expose_secret(), ids).map_err(|e| ServiceError::Invalid(e.to_string()))?;
        let password_hash = self.hasher.hash(password).await?;
        let (new, staff, entry) = prepared(actor, fields, password_hash, false);
        match self.store.create(new, staff, false, &entry).await {
            Ok(id) => Ok(id),
            Err(RepositoryError::Conflict(_)) => {
                Err(ServiceError::Invalid("a user with this username, CPF or e-mail already exists".into()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Creates an account as `actor` with a generated temporary password
    /// (answered once, stored hashed, never recorded) that must be changed
    /// at the first login; the account and its audit entry (`UserCreate`,
    /// CPF masked) are one write. A taken username, CPF or e-mail is
    /// [`TemporaryAccountOutcome::Taken`], nothing written. Errors:
    /// `Storage`.
    pub async fn create_with_temporary_password(
        &self,
        actor: &Actor,
        account: AccountFields,
    ) -> Result<TemporaryAccountOutcome, ServiceError> {
        let password = generated_password();
        let password_hash = self.hasher.hash(SecretString::from(password.clone())).await?;
        let username = account.username.to_string();
        let (new, staff, entry) = prepared(actor, account, password_hash, true);
        match self.store.create(new, staff, true, &entry).await {
            Ok(id) => Ok(TemporaryAccountOutcome::Created {
                id,
                password: TemporaryPassword { password: SecretString::from(password), username, revoked: 0 },
            }),
            Err(RepositoryError::Conflict(field)) => {
                Ok(TemporaryAccountOutcome::Taken(TakenField::from_conflict(&field)))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Lets the account `id` log in (`true`) or not, as `actor`.
    /// Deactivating also revokes every refresh token it holds (every
    /// family) and ends its sessions: its access tokens are refused at once
    /// by the routes that read the account, and no refresh or session
    /// outlives it. Returns how many
    /// refresh tokens were revoked. Errors: `Invalid` when a staff user
    /// deactivates their own account; `LastStaff` when deactivating the
    /// last active staff account (checked atomically by the storage);
    /// `UnknownUser`; `Storage`.
    pub async fn set_active(&self, actor: &Actor, id: UserId, active: bool) -> Result<u64, ServiceError> {
        if !active && actor.user_id() == Some(id) {
            return Err(ServiceError::Invalid("você não pode desativar a sua própria conta".into()));
        }
        let account = self.find(id).await?;
        let action = if active { AuditAction::UserReactivate } else { AuditAction::UserDeactivate };
        let entry = audit_entry(actor, action, AuditTarget::User(account.username.clone()))
            .with("is_active", active.to_string());
        match self.store.set_active(id, active, &entry).await? {
            AccessChange::Changed => {}
            AccessChange::NotFound => return Err(ServiceError::UnknownUser),
            AccessChange::LastStaff => return Err(ServiceError::LastStaff),
        }
        if active {
            return Ok(0);
        }
        let revoked = self.refresh_tokens.revoke_user(id).await?;
        self.sessions.end_all(id, None, SessionEnd::Staff).await?;
        self.sessions.record_event(id, SecurityEventKind::AccountDeactivated, "", None).await?;
        tracing::info!(user = id.0, revoked, "account deactivated by an administrator");
        Ok(revoked)
    }

    /// Sets a password chosen by `actor` (an operator at the CLI), checked
    /// against the rules and hashed off the async workers, and revokes
    /// every refresh token of the account. Returns how many were revoked.
    /// Errors: `Invalid` for a password that breaks the rules;
    /// `UnknownUser`; `Storage`.
    pub async fn set_password(&self, actor: &Actor, id: UserId, password: SecretString) -> Result<u64, ServiceError> {
        let account = self.find(id).await?;
        let ids = AccountIdentifiers {
            username: &account.username,
            cpf: account.cpf.as_deref().unwrap_or(""),
            email: &account.email,
            name: &account.name,
        };
        check_new_password(password.expose_secret(), ids).map_err(|e| ServiceError::Invalid(e.to_string()))?;
        let hash = self.hasher.hash(password).await?;
        let entry = audit_entry(actor, AuditAction::UserPassword, AuditTarget::User(account.username))
            .with("password", SECRET_SET);
        self.store_password(id, &hash, false, &entry).await
    }

    /// Sets a generated temporary password, as `actor`: the account must
    /// change it at its next login (the web pages send it to
    /// `/conta/senha/`, the token pair is refused until then), and every
    /// refresh token it holds is revoked. The password is answered once,
    /// to be handed to the person; only its hash is stored. Errors:
    /// `UnknownUser`; `Storage`.
    pub async fn temporary_password(&self, actor: &Actor, id: UserId) -> Result<TemporaryPassword, ServiceError> {
        let account = self.find(id).await?;
        let password = generated_password();
        let hash = self.hasher.hash(SecretString::from(password.clone())).await?;
        let entry = audit_entry(actor, AuditAction::UserTemporaryPassword, AuditTarget::User(account.username.clone()))
            .with("password", SECRET_SET)
            .with("must_change_password", "true");
        let revoked = self.store_password(id, &hash, true, &entry).await?;
        Ok(TemporaryPassword { password: SecretString::from(password), username: account.username, revoked })
    }

    /// Clears the tax-id validation of `id`, as `actor`: the profile read
    /// answers `receita_federal` as for an account never validated, and
    /// the person may change the CPF and validate again. Errors:
    /// `UnknownUser`; `Storage`.
    pub async fn clear_validation(&self, actor: &Actor, id: UserId) -> Result<(), ServiceError> {
        let account = self.find(id).await?;
        let entry = audit_entry(actor, AuditAction::UserClearValidation, AuditTarget::User(account.username))
            .with("receita_validated", "false");
        if !self.store.clear_validation(id, &entry).await? {
            return Err(ServiceError::UnknownUser);
        }
        Ok(())
    }

    /// Forgets the failed logins counted against the account (under its
    /// username, whichever identifier named it; and under its CPF, where
    /// failures typed as the CPF while it named no account, or before the
    /// count was per account, are), as `actor`, so that it may log in
    /// again at once. The limits of the
    /// addresses the failures came from stay. Returns whether a count was
    /// forgotten. Errors: `UnknownUser`; `Storage`.
    pub async fn lift_throttle(&self, actor: &Actor, id: UserId) -> Result<bool, ServiceError> {
        let account = self.find(id).await?;
        let keys: Vec<ThrottleKey> = [Some(account.username.as_str()), account.cpf.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|name| Username::parse(name).ok())
            .map(|name| ThrottleKey::username(&name))
            .collect();
        let entry = audit_entry(actor, AuditAction::UserLiftThrottle, AuditTarget::User(account.username));
        Ok(self.store.lift_throttle(&keys, &entry).await?)
    }

    /// Ends every browser session of the account `id`, as `actor` (a lost
    /// or stolen device): the entry is appended to the audit trail first (a
    /// trail that cannot be written fails the request and ends nothing).
    /// Returns how many ended. Errors: `UnknownUser`; `Storage`.
    pub async fn end_sessions(&self, actor: &Actor, id: UserId) -> Result<u64, ServiceError> {
        let account = self.find(id).await?;
        let entry = audit_entry(actor, AuditAction::UserEndSessions, AuditTarget::User(account.username));
        self.staff.record(&entry).await?;
        let ended = self.sessions.end_all(id, None, SessionEnd::Staff).await?;
        tracing::info!(user = id.0, ended, "sessions ended by an administrator");
        Ok(ended)
    }

    /// Removes every second factor of the account `id` (its authenticator
    /// app, passkeys and recovery codes: a lost phone), as `actor`, and ends its
    /// sessions; the entry is appended to the audit trail first. Returns
    /// whether there was a factor. Errors: `UnknownUser`; `Storage`.
    pub async fn reset_second_factors(&self, actor: &Actor, id: UserId) -> Result<bool, ServiceError> {
        let account = self.find(id).await?;
        let entry = audit_entry(actor, AuditAction::UserResetSecondFactor, AuditTarget::User(account.username));
        self.staff.record(&entry).await?;
        self.sessions.record_event(id, SecurityEventKind::FactorsReset, "", None).await?;
        let removed = self.second_factors.remove_all(id).await?;
        self.sessions.end_all(id, None, SessionEnd::Staff).await?;
        tracing::info!(user = id.0, removed, "second factors reset by an administrator; sessions ended");
        Ok(removed)
    }

    /// Makes the account `id` staff or not, as `actor`. Errors: `Invalid`
    /// when a staff user takes the flag from their own account;
    /// `LastStaff` when taking it from the last active staff account;
    /// `UnknownUser`; `Storage`.
    pub async fn set_staff(&self, actor: &Actor, id: UserId, staff: bool) -> Result<(), ServiceError> {
        if !staff && actor.user_id() == Some(id) {
            return Err(ServiceError::Invalid("você não pode retirar o seu próprio acesso à administração".into()));
        }
        let account = self.find(id).await?;
        let username = Username::parse(&account.username).map_err(|_| ServiceError::UnknownUser)?;
        self.staff.set_staff(actor, &username, staff).await
    }

    /// Deletes logins older than [`LOGIN_HISTORY_DAYS`], then those beyond
    /// the [`LOGIN_HISTORY_KEEP`] newest of each account, at most `limit`
    /// rows (one batch of the [`crate::purge`] loop), and returns how many;
    /// the binary's purge calls it. Errors: `Storage`.
    pub async fn purge_login_history(&self, limit: u32) -> Result<u64, ServiceError> {
        let before = self.clock.now().saturating_sub(LOGIN_HISTORY_DAYS * 86_400);
        Ok(self.logins.purge(before, LOGIN_HISTORY_KEEP, limit).await?)
    }

    async fn store_password(
        &self,
        id: UserId,
        hash: &str,
        temporary: bool,
        entry: &NewAuditEntry,
    ) -> Result<u64, ServiceError> {
        self.sessions.record_event(id, SecurityEventKind::PasswordReset, "", None).await?;
        // Sessions end before the new hash is stored and again after it
        // (one opened with the old password in between).
        self.sessions.end_all(id, None, SessionEnd::PasswordChange).await?;
        if !self.store.set_password(id, hash, temporary, entry).await? {
            return Err(ServiceError::UnknownUser);
        }
        // From here the old password is over; so is every refresh token.
        self.sessions.end_all(id, None, SessionEnd::PasswordChange).await?;
        Ok(self.refresh_tokens.revoke_user(id).await?)
    }

    /// The account `id`, without its applications, logins or factors.
    /// Errors: `UnknownUser`; `Storage`.
    pub async fn find(&self, id: UserId) -> Result<AccountRecord, ServiceError> {
        self.store.find(id).await?.ok_or(ServiceError::UnknownUser)
    }
}

/// A temporary password from the system's random source.
fn generated_password() -> String {
    let mut rng = rand::thread_rng();
    temporary_password(|| {
        let mut byte = [0u8; 1];
        rng.fill_bytes(&mut byte);
        byte[0]
    })
}

/// A stored CPF, masked; `None` when there is none (or it is not a valid one).
pub fn masked(cpf: Option<&str>) -> Option<String> {
    cpf.and_then(|c| Cpf::parse(c).ok()).map(|c| c.masked())
}

/// The account to store from `fields` with `password_hash`, whether it is
/// staff, and its `UserCreate` audit entry (CPF masked, never the password;
/// `must_change_password` when `temporary`).
fn prepared(
    actor: &Actor,
    fields: AccountFields,
    password_hash: String,
    temporary: bool,
) -> (NewUser, bool, NewAuditEntry) {
    let mut entry = audit_entry(actor, AuditAction::UserCreate, AuditTarget::User(fields.username.to_string()))
        .with("name", fields.name.as_str())
        .with("email", fields.data.email.as_str())
        .with("cpf", fields.cpf.as_ref().map(Cpf::masked).unwrap_or_default())
        .with("is_active", fields.is_active.to_string())
        .with("is_staff", fields.is_staff.to_string())
        .with("password", SECRET_SET);
    if temporary {
        entry = entry.with("must_change_password", "true");
    }
    let new = NewUser {
        username: fields.username,
        password_hash,
        is_active: fields.is_active,
        data: fields.data,
        name: fields.name,
        cpf: fields.cpf,
    };
    (new, fields.is_staff, entry)
}

/// Places of one account a search page reads rows for (a search by words
/// finds an account by its name's words, its username and its address).
const PLACES_PER_ACCOUNT: u32 = 3;

/// The first `per_page` distinct accounts of `rows` (read with a limit of
/// `fetch`), in order, and the place the next page starts after: that of
/// the last row read before the next account when one follows, or when the
/// rows ran out but more may follow (`fetch` rows read); none at the end
/// of the list. Rows skipped as another place of a shown account are
/// before that place, so the next page does not show them again.
fn distinct_accounts(
    rows: Vec<(String, AccountRecord)>,
    per_page: u32,
    fetch: u32,
) -> (Vec<AccountRecord>, Option<String>) {
    let per_page = usize::try_from(per_page).unwrap_or(usize::MAX);
    let full_window = rows.len() >= usize::try_from(fetch).unwrap_or(usize::MAX);
    let mut seen = std::collections::HashSet::new();
    let mut accounts = Vec::with_capacity(per_page);
    let mut last_read = None;
    for (place, account) in rows {
        if seen.contains(&account.id) {
            last_read = Some(place);
            continue;
        }
        if accounts.len() == per_page {
            return (accounts, last_read);
        }
        seen.insert(account.id);
        last_read = Some(place);
        accounts.push(account);
    }
    (accounts, if full_window { last_read } else { None })
}
