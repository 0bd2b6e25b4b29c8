//! The person's view of their remembered consent and of who read their data
//! ("Minha conta": `/conta/aplicativos/` and `/conta/acessos/`): the
//! authorized applications, revoking one, the access report, and the
//! access log's retention purge.

use std::fmt;
use std::sync::Arc;

use credencial_domain::account::{effective_scopes, AccessLogPage};
use credencial_domain::oauth::ClientId;
use credencial_domain::UserId;
use credencial_ports::account::{AccessLog, AccessLogRow, GrantRepository, GrantSummary};
use credencial_ports::Clock;

use crate::error::ServiceError;

/// Seconds in a day (the retention is set in days).
const DAY_SECS: i64 = 24 * 60 * 60;

/// One page of the access report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessReport {
    /// The entries of the page, newest first.
    pub entries: Vec<AccessLogRow>,
    /// Which page this is.
    pub page: AccessLogPage,
    /// How many pages the report has (at least 1, possibly empty).
    pub pages: u64,
    /// How many entries the report has in all.
    pub total: u64,
}

/// Authorized applications, revocation and the access report of one
/// person; the pages under `/conta/` call it with the logged-in user.
pub struct GrantService {
    grants: Arc<dyn GrantRepository>,
    log: Arc<dyn AccessLog>,
    clock: Arc<dyn Clock>,
    retention_days: u32,
}

impl fmt::Debug for GrantService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrantService").field("retention_days", &self.retention_days).finish_non_exhaustive()
    }
}

impl GrantService {
    /// A service over the stored grants and the access log; access-log
    /// entries older than `retention_days` days are purged.
    pub fn new(
        grants: Arc<dyn GrantRepository>,
        log: Arc<dyn AccessLog>,
        clock: Arc<dyn Clock>,
        retention_days: u32,
    ) -> Self {
        Self { grants, log, clock, retention_days }
    }

    /// How many days access-log entries are kept (`access_log_retention_days`).
    pub fn retention_days(&self) -> u32 {
        self.retention_days
    }

    /// The applications `user` authorized, most recently used first: each
    /// client's id and name, the scopes it may read (the required ones
    /// included), when the person first consented and when the grant was
    /// last used. Errors: `Storage`.
    pub async fn authorized_applications(&self, user: UserId) -> Result<Vec<GrantSummary>, ServiceError> {
        let mut grants = self.grants.list(user).await?;
        for grant in &mut grants {
            grant.scopes = effective_scopes(grant.scopes);
        }
        Ok(grants)
    }

    /// `user` revokes `client`: the grant is deleted and every refresh-token
    /// family the client holds for the person is revoked, together; from
    /// then on the client's access tokens for the person are refused at
    /// `POST /api/perfil/dados/` and its next authorization asks for
    /// consent again. `Ok(false)` when there was no grant (nothing to
    /// show as revoked; tokens are revoked anyway). Errors: `Storage` (and
    /// then nothing changed).
    pub async fn revoke(&self, user: UserId, client: &ClientId) -> Result<bool, ServiceError> {
        let revoked = self.grants.revoke(user, client).await?;
        if revoked {
            tracing::info!(user = user.0, client_id = %client, "grant revoked by the person");
        }
        Ok(revoked)
    }

    /// One page of the access report of `user` ("Quem acessou meus
    /// dados"): the answered profile reads, newest first, 50 a page, each
    /// with the client's name, the scopes answered, the time and the
    /// request id. A page past the end is empty. Errors: `Storage`.
    pub async fn access_report(&self, user: UserId, page: AccessLogPage) -> Result<AccessReport, ServiceError> {
        let (entries, total) = self.log.list(user, page).await?;
        Ok(AccessReport { entries, page, pages: AccessLogPage::count(total), total })
    }

    /// Deletes access-log entries older than the retention, at most `limit`
    /// rows (one batch of the [`crate::purge`] loop), and returns how many;
    /// the binary's purge calls it. Errors: `Storage`.
    pub async fn purge_access_log(&self, limit: u32) -> Result<u64, ServiceError> {
        let before = self.clock.now().saturating_sub(i64::from(self.retention_days) * DAY_SECS);
        Ok(self.log.purge_before(before, limit).await?)
    }
}
