//! Password hashing off the async workers, on a bounded number of threads.
//!
//! PBKDF2 with hundreds of thousands of iterations costs a noticeable slice
//! of a core. Running it on a request worker would stall every other request
//! on that worker; running unbounded would let a burst of logins starve the
//! workers of CPU. So each hash runs on tokio's blocking pool, and a
//! semaphore caps how many run at once.

use std::sync::Arc;

use credencial_domain::DjangoPbkdf2;
use rand::distributions::{Alphanumeric, DistString};
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ServiceError;
use crate::metrics::Metrics;
use crate::request_context;

/// Length of generated salts (Django uses 22 alphanumerics).
const SALT_LEN: usize = 22;

/// One of the hasher's slots, held while a hash runs: at most `threads`
/// exist at once. The brute-force limits check a key again while holding
/// one, so a burst cannot get more guesses past the limit than there are
/// slots.
#[derive(Debug)]
pub struct HashSlot {
    _permit: OwnedSemaphorePermit,
}

/// Hashes and verifies passwords on a bounded set of blocking threads.
#[derive(Debug, Clone)]
pub struct PasswordHasher {
    permits: Arc<Semaphore>,
    iterations: u32,
    dummy: Arc<DjangoPbkdf2>,
    metrics: Metrics,
}

impl PasswordHasher {
    /// A hasher running at most `threads` hashes at once and writing new
    /// hashes with `iterations`.
    pub fn new(threads: usize, iterations: u32) -> Result<Self, ServiceError> {
        let dummy = DjangoPbkdf2::derive("credencial-dummy", "credencialDummySalt", iterations)
            .map_err(|e| ServiceError::Internal(format!("password iterations: {e}")))?;
        Ok(Self {
            permits: Arc::new(Semaphore::new(threads.max(1))),
            iterations,
            dummy: Arc::new(dummy),
            metrics: Metrics::disabled(),
        })
    }

    /// The same hasher, counting the checks that wait for a slot in
    /// `metrics` (the hashing queue's length).
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Whether `password` matches the stored `encoded` hash. A hash in an
    /// unsupported format, or `None` for an unknown user, costs the same as
    /// a wrong password and answers `false`. Errors: `Internal` when the
    /// hashing pool fails (never reported as a wrong password).
    pub async fn verify(&self, encoded: Option<String>, password: SecretString) -> Result<bool, ServiceError> {
        let slot = self.slot().await?;
        self.verify_in(&slot, encoded, password).await
    }

    /// Waits for a free hashing slot.
    pub async fn slot(&self) -> Result<HashSlot, ServiceError> {
        if let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() {
            return Ok(HashSlot { _permit: permit });
        }
        // In the queue until a slot is granted or the request goes away.
        let _queued = self.metrics.hashing_queued();
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| ServiceError::Internal("hashing pool closed".into()))?;
        Ok(HashSlot { _permit: permit })
    }

    /// [`verify`](Self::verify) in a slot the caller already holds.
    pub async fn verify_in(
        &self,
        _slot: &HashSlot,
        encoded: Option<String>,
        password: SecretString,
    ) -> Result<bool, ServiceError> {
        let dummy = Arc::clone(&self.dummy);
        Self::run_in_slot(move || {
            let parsed = encoded.as_deref().map(DjangoPbkdf2::parse);
            match parsed {
                Some(Ok(hash)) => hash.verify(password.expose_secret()),
                Some(Err(_)) | None => {
                    // Same work, answer discarded: unknown users and
                    // unusable hashes must not be faster than a mismatch.
                    let _ = dummy.verify(password.expose_secret());
                    false
                }
            }
        })
        .await
    }

    /// A new Django-format hash of `password` with a random salt.
    pub async fn hash(&self, password: SecretString) -> Result<String, ServiceError> {
        let slot = self.slot().await?;
        self.hash_in(&slot, password).await
    }

    /// [`hash`](Self::hash) in a slot the caller already holds.
    pub async fn hash_in(&self, _slot: &HashSlot, password: SecretString) -> Result<String, ServiceError> {
        let iterations = self.iterations;
        Self::run_in_slot(move || {
            let salt = Alphanumeric.sample_string(&mut rand::thread_rng(), SALT_LEN);
            DjangoPbkdf2::derive(password.expose_secret(), &salt, iterations)
                .map(|h| h.encode())
                .map_err(|e| ServiceError::Internal(e.to_string()))
        })
        .await?
    }

    /// Runs `work` on the blocking pool, as part of the current request (so
    /// that what it logs carries the request's id).
    async fn run_in_slot<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ServiceError> {
        tokio::task::spawn_blocking(request_context::carried_fn(work))
            .await
            .map_err(|e| ServiceError::Internal(format!("hashing task failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_unknown_users_never_do() {
        let h = PasswordHasher::new(2, 1_000).expect("hasher");
        let stored = h.hash("s3cret".to_owned().into()).await.expect("hash");
        assert!(stored.starts_with("pbkdf2_sha256$1000$"));
        assert!(h.verify(Some(stored.clone()), "s3cret".to_owned().into()).await.expect("pool"));
        assert!(!h.verify(Some(stored), "S3cret".to_owned().into()).await.expect("pool"));
        assert!(!h.verify(None, "credencial-dummy".to_owned().into()).await.expect("pool"));
        assert!(!h.verify(Some("md5$x$y".into()), "x".to_owned().into()).await.expect("pool"));
    }

    #[tokio::test]
    async fn two_hashes_of_one_password_differ_by_salt() {
        let h = PasswordHasher::new(1, 1_000).expect("hasher");
        let a = h.hash("pw".to_owned().into()).await.expect("hash");
        let b = h.hash("pw".to_owned().into()).await.expect("hash");
        assert_ne!(a, b);
    }
}
