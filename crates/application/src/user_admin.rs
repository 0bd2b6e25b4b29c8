//! Account administration for operators: create, list, (de)activate and
//! set a password. The CLI calls it; the rules (CPF check digits, password
//! rules, revoking a user's refresh tokens) live here once.

use std::sync::Arc;

use credencial_domain::{check_new_password, AccountIdentifiers, Cpf, UserData, UserId, Username};
use credencial_ports::{NewUser, RefreshTokenStore, RepositoryError, UserRepository, UserSummary};
use secrecy::{ExposeSecret, SecretString};

use crate::error::ServiceError;
use crate::hashing::PasswordHasher;

/// Largest page of [`UserAdminService::list`].
pub const MAX_PAGE_SIZE: u32 = 500;

/// A new account, its fields already validated at the edge where they are
/// domain types.
pub struct NewAccount {
    /// Unique login name.
    pub username: Username,
    /// The password, checked against the password rules here.
    pub password: SecretString,
    /// CPF with valid check digits, if known.
    pub cpf: Option<Cpf>,
    /// Public name.
    pub name: String,
    /// What the user-data resource returns for this user (its `email` is
    /// the account's e-mail).
    pub data: UserData,
    /// Whether the account may log in.
    pub is_active: bool,
}

/// One page of accounts.
#[derive(Debug)]
pub struct UserPage {
    /// The accounts on this page, by id.
    pub users: Vec<UserSummary>,
    /// This page's number (from 1).
    pub page: u32,
    /// How many pages there are (at least 1).
    pub pages: u64,
    /// How many accounts there are in all.
    pub total: u64,
}

/// Administration of accounts (the CLI's `user` commands).
pub struct UserAdminService {
    users: Arc<dyn UserRepository>,
    refresh_tokens: Arc<dyn RefreshTokenStore>,
    hasher: PasswordHasher,
}

impl std::fmt::Debug for UserAdminService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserAdminService").finish_non_exhaustive()
    }
}

impl UserAdminService {
    /// A service over the user and refresh-token stores, hashing on `hasher`.
    pub fn new(
        users: Arc<dyn UserRepository>,
        refresh_tokens: Arc<dyn RefreshTokenStore>,
        hasher: PasswordHasher,
    ) -> Self {
        Self { users, refresh_tokens, hasher }
    }

    /// Creates an account. Errors: `Invalid` for a password that breaks
    /// the rules or a username, CPF or e-mail already taken; `Storage`.
    pub async fn create(&self, account: NewAccount) -> Result<UserId, ServiceError> {
        let ids = AccountIdentifiers {
            username: account.username.as_str(),
            cpf: account.cpf.as_ref().map(Cpf::as_str).unwrap_or(""),
            email: &account.data.email,
            name: &account.name,
        };
        check_new_password(account.password.expose_secret(), ids).map_err(|e| ServiceError::Invalid(e.to_string()))?;
        let password_hash = self.hasher.hash(account.password).await?;
        let new = NewUser {
            username: account.username,
            password_hash,
            is_active: account.is_active,
            data: account.data,
            name: account.name,
            cpf: account.cpf.map(|c| c.as_str().to_owned()),
        };
        match self.users.create(new).await {
            Ok(id) => Ok(id),
            Err(RepositoryError::Conflict(_)) => {
                Err(ServiceError::Invalid("a user with this username, CPF or e-mail already exists".into()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Page `page` (from 1) of the accounts, `per_page` (1 to
    /// [`MAX_PAGE_SIZE`]) a page. Errors: `Invalid` for a page number or
    /// size out of range; `Storage`.
    pub async fn list(&self, page: u32, per_page: u32) -> Result<UserPage, ServiceError> {
        if page == 0 || per_page == 0 || per_page > MAX_PAGE_SIZE {
            return Err(ServiceError::Invalid(format!("pages start at 1 and hold 1 to {MAX_PAGE_SIZE} users")));
        }
        let offset = u64::from(page - 1) * u64::from(per_page);
        let (users, total) = self.users.list(offset, per_page).await?;
        let pages = total.div_ceil(u64::from(per_page)).max(1);
        Ok(UserPage { users, page, pages, total })
    }

    /// Lets the account log in or not; deactivating it also revokes every
    /// refresh token it holds (every family), so no session outlives it.
    /// Returns how many were revoked. Errors: `UnknownUser`; `Storage`.
    pub async fn set_active(&self, username: &Username, active: bool) -> Result<u64, ServiceError> {
        let user = self.find(username).await?;
        if !self.users.set_active(user.id, active).await? {
            return Err(ServiceError::UnknownUser);
        }
        if active {
            return Ok(0);
        }
        Ok(self.refresh_tokens.revoke_user(user.id).await?)
    }

    /// Sets a new password (checked against the rules, hashed off the async
    /// workers) and revokes every refresh token the account holds, so every
    /// session started with the old one must log in again. Returns how many
    /// were revoked. Errors: `Invalid` for a password that breaks the
    /// rules; `UnknownUser`; `Storage`.
    pub async fn set_password(&self, username: &Username, password: SecretString) -> Result<u64, ServiceError> {
        let user = self.find(username).await?;
        let ids = AccountIdentifiers {
            username: &user.username,
            cpf: user.cpf.as_deref().unwrap_or(""),
            email: &user.email,
            name: &user.name,
        };
        check_new_password(password.expose_secret(), ids).map_err(|e| ServiceError::Invalid(e.to_string()))?;
        let hash = self.hasher.hash(password).await?;
        if !self.users.set_password_hash(user.id, &hash).await? {
            return Err(ServiceError::UnknownUser);
        }
        Ok(self.refresh_tokens.revoke_user(user.id).await?)
    }

    async fn find(&self, username: &Username) -> Result<UserSummary, ServiceError> {
        self.users.find_summary(username).await?.ok_or(ServiceError::UnknownUser)
    }
}
