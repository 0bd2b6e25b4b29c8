//! The one credential check: a username (or CPF) and a password, a client
//! secret, a login session's password stamp — against the user store, on
//! the hashing threads, under the brute-force limits. `pair`, every login
//! form, the OAuth2 token endpoint's client authentication and the
//! account pages that ask for the current password all check through it.

use std::fmt;
use std::sync::Arc;

use credencial_domain::throttle::{ClientAddress, Subject};
use credencial_domain::{Cpf, PasswordStamp, UserId, Username};
use credencial_ports::{UserCredentials, UserRepository};
use secrecy::SecretString;

use crate::error::ServiceError;
use crate::hashing::PasswordHasher;
use crate::throttle::LoginThrottle;

/// A user whose username and password were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthenticatedUser {
    /// Primary key.
    pub id: UserId,
    /// The username as stored.
    pub username: String,
    /// The password was set by an administrator and must be changed
    /// before the account is used.
    pub must_change_password: bool,
}

/// Checks credentials against the user store, off the async workers and
/// under the brute-force limits.
#[derive(Clone)]
pub struct CredentialCheck {
    users: Arc<dyn UserRepository>,
    hasher: PasswordHasher,
    throttle: LoginThrottle,
}

impl fmt::Debug for CredentialCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialCheck").field("throttle", &self.throttle).finish_non_exhaustive()
    }
}

impl CredentialCheck {
    /// A check over the user store, the hashing threads and the limits.
    pub fn new(users: Arc<dyn UserRepository>, hasher: PasswordHasher, throttle: LoginThrottle) -> Self {
        Self { users, hasher, throttle }
    }

    /// The brute-force limits.
    pub fn throttle(&self) -> &LoginThrottle {
        &self.throttle
    }

    /// The hashing threads (for the use cases that set passwords).
    pub fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// Whether `secret` matches a client's stored `hash` and the client may
    /// use a secret at all (`eligible`), for the OAuth2 endpoints: on the
    /// same hashing slots and under the same limits as passwords, so that
    /// the address limit holds across `pair` and `/oauth/token/`.
    /// Errors: as [`LoginThrottle::verify`].
    pub async fn check_client_secret(
        &self,
        from: Option<ClientAddress>,
        hash: Option<String>,
        secret: SecretString,
        eligible: bool,
    ) -> Result<bool, ServiceError> {
        self.throttle.verify(&self.hasher, Subject::ClientSecret, from, hash, secret, eligible).await
    }

    /// Checks a username (or a CPF, with or without punctuation) and a
    /// password (on the hashing threads) sent from `from`. Unknown users,
    /// wrong passwords and inactive accounts all answer
    /// `InvalidCredentials` after the same hashing work (one look-up either
    /// way), and count as failures against the account (one count whether
    /// its username or its CPF, punctuated or not, named it), or against
    /// the login typed when it named none (a CPF by its digits), and
    /// against the address; while either is limited, every attempt answers
    /// `Throttled` without hashing.
    pub async fn check_credentials(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<AuthenticatedUser, ServiceError> {
        Ok(self.check_login(username, password, from).await?.0)
    }

    /// [`check_credentials`](Self::check_credentials), with the stamp of
    /// the password hash the check passed against (what a login session
    /// carries).
    pub async fn check_login(
        &self,
        username: &str,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<(AuthenticatedUser, PasswordStamp), ServiceError> {
        // Text that is a CPF finds the account by CPF (unless a username is
        // exactly that text). A username that cannot exist (empty, too
        // long, control characters such as NUL, which PostgreSQL refuses in
        // text) is never looked up, but costs the same hashing work as any
        // other miss.
        let found = self.find_login(username).await?;
        // The failures count per account, under its username, whichever
        // identifier named it; a login that named none counts under what
        // was typed (a CPF by its digits), in the same form. A stored
        // username that no login could type (white space, from an import)
        // counts under the identifier typed.
        let account_name = found.as_ref().and_then(|c| Username::parse(&c.username).ok());
        let subject = account_name.as_ref().map_or(Subject::Unknown(username), Subject::Account);
        let (hash, account) = match found {
            Some(c) => (Some(c.password_hash.expose().clone()), Some(c)),
            None => (None, None),
        };
        let eligible = account.as_ref().is_some_and(|a| a.is_active);
        let valid = self.throttle.verify(&self.hasher, subject, from, hash, password, eligible).await?;
        match account {
            Some(a) if valid => {
                let stamp = PasswordStamp::of(&a.password_hash);
                let user =
                    AuthenticatedUser { id: a.id, username: a.username, must_change_password: a.must_change_password };
                Ok((user, stamp))
            }
            _ => Err(ServiceError::InvalidCredentials),
        }
    }

    /// The account a login's `username` names: by CPF when the text is
    /// one (unless a username is exactly that text), else by username. A
    /// username that cannot exist (empty, too long, control characters
    /// such as NUL, which PostgreSQL refuses in text) is never looked up.
    /// Errors: `Storage`.
    pub(crate) async fn find_login(&self, username: &str) -> Result<Option<UserCredentials>, ServiceError> {
        let cpf = Cpf::parse(username).ok();
        Ok(match (&cpf, Username::parse(username)) {
            (Some(cpf), _) => self.users.find_credentials_for_cpf(cpf, username).await?,
            (None, Ok(valid)) => self.users.find_credentials(valid.as_str()).await?,
            (None, Err(_)) => None,
        })
    }

    /// Whether `password` is the password of the active account `user`
    /// (re-authentication before a sensitive change), under the login
    /// form's limits for the account and `from`. Errors: `Throttled`;
    /// `UnknownUser` for an account that is gone or inactive; `Storage`,
    /// `Internal`.
    pub async fn check_password_of(
        &self,
        user: UserId,
        password: SecretString,
        from: Option<ClientAddress>,
    ) -> Result<bool, ServiceError> {
        let credentials =
            self.users.find_credentials_by_id(user).await?.filter(|c| c.is_active).ok_or(ServiceError::UnknownUser)?;
        let name = Username::parse(&credentials.username).ok();
        let subject = name.as_ref().map_or(Subject::Unknown(&credentials.username), Subject::Account);
        let stored = Some(credentials.password_hash.into_inner());
        self.throttle.verify(&self.hasher, subject, from, stored, password, true).await
    }

    /// Whether the account `user` has a password a login accepts (an
    /// account made by a login through gov.br, or pre-registered, has
    /// none). Errors: `UnknownUser`; `Storage`.
    pub async fn has_usable_password(&self, user: UserId) -> Result<bool, ServiceError> {
        let found = self.users.find_credentials_by_id(user).await?.ok_or(ServiceError::UnknownUser)?;
        Ok(!credencial_domain::admin::directory::is_unusable_password(&found.password_hash))
    }

    /// The username of the active account `user` (the key its failures
    /// count under). Errors: `UnknownUser`; `Storage`.
    pub async fn username_of(&self, user: UserId) -> Result<String, ServiceError> {
        let found = self.users.find_credentials_by_id(user).await?.filter(|c| c.is_active);
        Ok(found.ok_or(ServiceError::UnknownUser)?.username)
    }

    /// Whether the user with `id` exists and is active. Errors: `Storage`.
    pub async fn is_active_user(&self, id: UserId) -> Result<bool, ServiceError> {
        Ok(self.users.find_active_user_data(id).await?.is_some())
    }
}
