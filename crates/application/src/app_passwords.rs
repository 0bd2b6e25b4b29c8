//! Application passwords (issue 43): made by the person at
//! `/conta/seguranca/` (the current password asked again; the new one
//! shown once), listed with their last use, revoked; and checked at
//! `POST /api/token/pair/` only, for their own account only, under the
//! same brute-force limits as a password
//! ([`credencial_domain::app_password`] says what they look like and why
//! a fast hash is enough).
//!
//! Making and revoking one is recorded in the person's security activity,
//! and so told by mail. A refresh family opened with one carries its id;
//! every refresh of that family asks [`AppPasswordService::is_live`], so
//! that a revocation ends it.

use std::fmt;
use std::sync::Arc;

use credencial_domain::app_password::{self, NameError, MAX_PER_ACCOUNT};
use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::throttle::{ClientAddress, Subject};
use credencial_domain::{Redacted, UserId, Username};
use credencial_ports::{AppPasswordRecord, AppPasswordStore, Clock, NewAppPassword};
use secrecy::SecretString;

use crate::credentials::{AuthenticatedUser, CredentialCheck};
use crate::error::ServiceError;
use crate::security_log::SecurityLog;
use crate::session::Origin;

/// What asking for a new application password came to.
#[derive(Debug)]
pub enum Creation {
    /// Made: shown once, never again.
    Created {
        /// Its id.
        id: i64,
        /// Its name, as stored.
        name: String,
        /// The password itself.
        password: Redacted<String>,
    },
    /// The name breaks the rule (nothing was checked or stored).
    BadName(NameError),
    /// The current password did not match (counted as a wrong password).
    WrongPassword,
    /// The account already has [`MAX_PER_ACCOUNT`].
    LimitReached,
}

/// The application password use cases.
pub struct AppPasswordService {
    store: Arc<dyn AppPasswordStore>,
    credentials: Arc<CredentialCheck>,
    clock: Arc<dyn Clock>,
    security: Option<Arc<SecurityLog>>,
}

impl fmt::Debug for AppPasswordService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppPasswordService").finish_non_exhaustive()
    }
}

impl AppPasswordService {
    /// Application passwords in `store`, checked under `credentials'`
    /// limits.
    pub fn new(store: Arc<dyn AppPasswordStore>, credentials: Arc<CredentialCheck>, clock: Arc<dyn Clock>) -> Self {
        Self { store, credentials, clock, security: None }
    }

    /// The same service, recording every creation and revocation in the
    /// person's security activity (and so telling them by mail).
    pub fn with_security_log(mut self, log: Arc<SecurityLog>) -> Self {
        self.security = Some(log);
        self
    }

    async fn record(
        &self,
        user: UserId,
        kind: SecurityEventKind,
        name: &str,
        origin: Option<&Origin>,
    ) -> Result<(), ServiceError> {
        match &self.security {
            Some(log) => log.record(user, kind, name, origin).await,
            None => Ok(()),
        }
    }

    /// `user`'s application passwords, oldest first. Errors: `Storage`.
    pub async fn list(&self, user: UserId) -> Result<Vec<AppPasswordRecord>, ServiceError> {
        Ok(self.store.app_passwords(user, MAX_PER_ACCOUNT).await?)
    }

    /// Makes an application password named `name` for `user`, who types
    /// their current `password` again (checked under the login form's
    /// limits for the account and the origin's address). Recorded in the
    /// security activity before it is stored (a change that cannot be
    /// recorded is not made). Errors: `Throttled`; `UnknownUser`;
    /// `Storage`, `Internal`.
    pub async fn create(
        &self,
        user: UserId,
        password: SecretString,
        name: &str,
        origin: &Origin,
    ) -> Result<Creation, ServiceError> {
        let name = match app_password::parse_name(name) {
            Ok(name) => name,
            Err(e) => return Ok(Creation::BadName(e)),
        };
        if !self.credentials.check_password_of(user, password, origin.address).await? {
            return Ok(Creation::WrongPassword);
        }
        if self.store.app_passwords(user, MAX_PER_ACCOUNT).await?.len() >= MAX_PER_ACCOUNT as usize {
            return Ok(Creation::LimitReached);
        }
        let password = app_password::generate();
        let hash =
            app_password::hash(&password).ok_or_else(|| ServiceError::Internal("application password shape".into()))?;
        self.record(user, SecurityEventKind::AppPasswordCreated, &name, Some(origin)).await?;
        let new = NewAppPassword { user, name: name.clone(), hash, now: self.clock.now() };
        match self.store.create_app_password(&new, MAX_PER_ACCOUNT).await? {
            Some(id) => {
                tracing::info!(user = user.0, id, "application password created");
                Ok(Creation::Created { id, name, password })
            }
            None => Ok(Creation::LimitReached),
        }
    }

    /// Revokes `user`'s application password `id` (another person's id
    /// revokes nothing): whether there was one. The refresh families it
    /// started end at their next refresh. Errors: `Storage`.
    pub async fn revoke(&self, user: UserId, id: i64, origin: Option<&Origin>) -> Result<bool, ServiceError> {
        match self.store.revoke_app_password(user, id).await? {
            Some(name) => {
                tracing::info!(user = user.0, id, "application password revoked");
                self.record(user, SecurityEventKind::AppPasswordRevoked, &name, origin).await?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Checks a login at `pair` with an application password: `username`
    /// (or a CPF) names the account, `typed` must be one of that account's
    /// application passwords. Under the same limits as a password: refused
    /// with `Throttled` while the account or `from` is limited; a wrong
    /// one counts as a wrong password; an unknown or inactive account
    /// costs the same look-up and answers the same `InvalidCredentials`.
    /// A right one records its last use (in the same statement that finds
    /// it) and forgets the account's failures. The account and the
    /// password's id. Errors: `Throttled`, `InvalidCredentials`;
    /// `Storage`.
    pub async fn login(
        &self,
        username: &str,
        typed: &SecretString,
        from: Option<ClientAddress>,
    ) -> Result<(AuthenticatedUser, i64), ServiceError> {
        use secrecy::ExposeSecret;
        let found = self.credentials.find_login(username).await?;
        let account_name = found.as_ref().and_then(|c| Username::parse(&c.username).ok());
        let subject = account_name.as_ref().map_or(Subject::Unknown(username), Subject::Account);
        let throttle = self.credentials.throttle();
        throttle.check_subject(subject, from).await?;
        // An unknown or inactive account is looked up under an id no
        // account has: the same statement, nothing found.
        let owner = found.as_ref().filter(|c| c.is_active).map_or(UserId(0), |c| c.id);
        let used = match app_password::hash(typed.expose_secret()) {
            Some(hash) => self.store.use_app_password(owner, &hash, self.clock.now()).await?,
            None => None,
        };
        match (found, used) {
            (Some(account), Some(id)) if account.is_active => {
                throttle.record_success(subject).await;
                let user = AuthenticatedUser {
                    id: account.id,
                    username: account.username,
                    must_change_password: account.must_change_password,
                };
                Ok((user, id))
            }
            _ => {
                throttle.record_failure(subject, from).await?;
                Err(ServiceError::InvalidCredentials)
            }
        }
    }

    /// Whether `user`'s application password `id` is still there (a
    /// refresh of a family it started goes on only then). Errors:
    /// `Storage`.
    pub async fn is_live(&self, user: UserId, id: i64) -> Result<bool, ServiceError> {
        Ok(self.store.app_password_exists(user, id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::PasswordHasher;
    use crate::throttle::LoginThrottle;
    use credencial_ports::{MockAppPasswordStore, MockClock, MockUserRepository, UserCredentials};
    use mockall::predicate::{always, eq};

    const NOW: i64 = 1_800_000_000;

    fn hasher() -> PasswordHasher {
        PasswordHasher::new(1, 1_000).expect("hasher")
    }

    fn clock() -> Arc<dyn Clock> {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        clock.expect_now_millis().return_const(NOW * 1000);
        Arc::new(clock)
    }

    fn service(users: MockUserRepository, store: MockAppPasswordStore) -> AppPasswordService {
        let credentials = CredentialCheck::new(Arc::new(users), hasher(), LoginThrottle::default());
        AppPasswordService::new(Arc::new(store), Arc::new(credentials), clock())
    }

    fn credentials(id: i64, active: bool) -> UserCredentials {
        UserCredentials {
            id: UserId(id),
            username: "ana".into(),
            password_hash: Redacted("pbkdf2_sha256$1$s$h".into()),
            is_active: active,
            must_change_password: false,
        }
    }

    fn origin() -> Origin {
        Origin { address: None, user_agent: None }
    }

    const SHAPED: &str = "credapp-abcde-fghjk-mnpqr-stuvw-xyzab-cdefg";

    #[tokio::test]
    async fn a_login_finds_the_password_of_that_account_only_and_touches_it() {
        let mut users = MockUserRepository::new();
        users.expect_find_credentials().with(eq("ana")).returning(|_| Ok(Some(credentials(7, true))));
        let mut store = MockAppPasswordStore::new();
        let hash = app_password::hash(SHAPED).expect("shape");
        store
            .expect_use_app_password()
            .with(eq(UserId(7)), eq(hash), eq(NOW))
            .times(1)
            .returning(|_, _, _| Ok(Some(3)));
        let (user, id) = service(users, store).login("ana", &SecretString::from(SHAPED), None).await.expect("in");
        assert_eq!((user.id, id), (UserId(7), 3));
    }

    #[tokio::test]
    async fn an_unknown_or_inactive_account_costs_the_same_look_up_and_is_refused_alike() {
        for found in [None, Some(credentials(7, false))] {
            let mut users = MockUserRepository::new();
            users.expect_find_credentials().returning(move |_| Ok(found.clone()));
            let mut store = MockAppPasswordStore::new();
            // Looked up under an id no account has; even a hit is refused.
            store
                .expect_use_app_password()
                .with(eq(UserId(0)), always(), always())
                .times(1)
                .returning(|_, _, _| Ok(None));
            let err = service(users, store).login("ana", &SecretString::from(SHAPED), None).await.expect_err("out");
            assert!(matches!(err, ServiceError::InvalidCredentials), "{err:?}");
        }
    }

    #[tokio::test]
    async fn a_wrong_password_is_refused() {
        let mut users = MockUserRepository::new();
        users.expect_find_credentials().returning(|_| Ok(Some(credentials(7, true))));
        let mut store = MockAppPasswordStore::new();
        store.expect_use_app_password().times(1).returning(|_, _, _| Ok(None));
        let err = service(users, store).login("ana", &SecretString::from(SHAPED), None).await.expect_err("out");
        assert!(matches!(err, ServiceError::InvalidCredentials), "{err:?}");
    }

    #[tokio::test]
    async fn creation_checks_the_name_before_the_password_and_stores_only_a_hash() {
        let users = MockUserRepository::new();
        let mut store = MockAppPasswordStore::new();
        store.expect_create_app_password().times(0);
        let service = service(users, store);
        let created = service.create(UserId(7), SecretString::from("x"), &"a".repeat(61), &origin()).await;
        assert!(matches!(created, Ok(Creation::BadName(NameError::TooLong))), "{created:?}");
    }

    #[tokio::test]
    async fn a_wrong_current_password_makes_nothing() {
        let stored = hasher().hash(SecretString::from("right")).await.expect("hash");
        let mut users = MockUserRepository::new();
        users.expect_find_credentials_by_id().returning(move |_| {
            Ok(Some(UserCredentials { password_hash: Redacted(stored.clone()), ..credentials(7, true) }))
        });
        let mut store = MockAppPasswordStore::new();
        store.expect_create_app_password().times(0);
        let created = service(users, store).create(UserId(7), SecretString::from("wrong"), "SUAP", &origin()).await;
        assert!(matches!(created, Ok(Creation::WrongPassword)), "{created:?}");
    }

    #[tokio::test]
    async fn a_revocation_of_another_persons_id_revokes_nothing() {
        let users = MockUserRepository::new();
        let mut store = MockAppPasswordStore::new();
        store.expect_revoke_app_password().with(eq(UserId(7)), eq(3)).returning(|_, _| Ok(None));
        assert!(!service(users, store).revoke(UserId(7), 3, None).await.expect("revoke"));
    }
}
