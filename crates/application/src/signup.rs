//! Sign-up (`/conta/cadastro/`): a person creates their own account and
//! is signed in.
//!
//! A sign-up answers whether a CPF, an e-mail address or a username is
//! taken, which is what someone enumerating CPFs wants to know; so it runs
//! under the login form's per-address limit: a limited address is refused
//! before any work, every sign-up costs one password hash (taken or not,
//! the same work), and an attempt that finds a value taken counts as a
//! failure of its address. The limit is checked again once the attempt
//! holds a hashing slot, and the failure is recorded before the slot is
//! released, as at the login form, so a burst gets no more than one attempt
//! per slot past the limit.

use std::sync::Arc;

use credencial_domain::account::{FieldErrors, Registration, UniqueField};
use credencial_domain::session::AuthMethod;
use credencial_ports::{Registered, UserRepository};
use secrecy::SecretString;

use crate::error::ServiceError;
use crate::session::{Origin, SessionService, SignedSession};
use crate::tokens::TokenService;

/// How a sign-up ended (its failures are `Err`).
#[derive(Debug)]
pub enum SignupOutcome {
    /// The account was created and this session opened for it.
    SignedIn(SignedSession),
    /// Nothing was created: these fields hold values of another account.
    Taken(FieldErrors),
}

/// The sign-up use case.
pub struct SignupService {
    users: Arc<dyn UserRepository>,
    tokens: Arc<TokenService>,
    sessions: Arc<SessionService>,
}

impl std::fmt::Debug for SignupService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignupService").finish_non_exhaustive()
    }
}

impl SignupService {
    /// A service storing accounts in `users`, hashing and limiting through
    /// `tokens` (its hashing threads and brute-force limits) and opening
    /// sessions through `sessions`.
    pub fn new(users: Arc<dyn UserRepository>, tokens: Arc<TokenService>, sessions: Arc<SessionService>) -> Self {
        Self { users, tokens, sessions }
    }

    /// Creates the account of `registration` (its fields, the password
    /// rules included, were checked at the edge) with `password`, sent from
    /// `origin`, and opens a session for it. Errors: `Throttled` while the
    /// address is limited (nothing is hashed or stored); `Storage`,
    /// `Internal`.
    pub async fn sign_up(
        &self,
        registration: Registration,
        password: SecretString,
        origin: &Origin,
    ) -> Result<SignupOutcome, ServiceError> {
        let from = origin.address;
        let throttle = self.tokens.throttle();
        let hasher = self.tokens.credentials().hasher();
        throttle.check_address(from).await?;
        let slot = hasher.slot().await?;
        // Failures recorded while this attempt waited for its slot count.
        throttle.check_address(from).await?;
        let hash = hasher.hash_in(&slot, password).await?;
        let outcome = match self.users.register(&registration, &hash).await? {
            Registered::Created(id) => {
                drop(slot);
                tracing::info!(user = id.0, "account created at the sign-up page");
                SignupOutcome::SignedIn(self.sessions.open(id, &[AuthMethod::Password], origin).await?)
            }
            Registered::Taken(fields) => {
                throttle.record_address_failure(from).await?;
                drop(slot);
                let names: Vec<&str> = fields.iter().map(|f| f.field()).collect();
                tracing::info!(taken = ?names, "sign-up refused: a value belongs to another account");
                SignupOutcome::Taken(UniqueField::errors(&fields))
            }
        };
        Ok(outcome)
    }
}
