//! [`AuthorizationCodeStore`] on the `oauth_codes` table.

use async_trait::async_trait;
use credencial_domain::oauth::{ClientId, CodeChallenge, CodeGrant, CodeHash};
use credencial_ports::oauth::{grant_from_columns, GrantColumns};
use credencial_ports::{AuthorizationCodeStore, NewAuthorizationCode, RepositoryError};

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Authorization codes in the SQLite file (hashes only).
#[derive(Debug, Clone)]
pub struct SqliteAuthorizationCodeStore {
    db: SqliteDb,
}

impl SqliteAuthorizationCodeStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

#[async_trait]
impl AuthorizationCodeStore for SqliteAuthorizationCodeStore {
    async fn store(&self, code: NewAuthorizationCode) -> Result<(), RepositoryError> {
        let grant = code.grant;
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        sqlx::query(
            "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, \
             redirect_uri_explicit, scope, code_challenge, expires_at, nonce, auth_time, acr, amr, sid) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .bind(code.code_hash.as_bytes().as_slice())
        .bind(grant.client_id.as_str())
        .bind(grant.user_id.0)
        .bind(&grant.redirect_uri)
        .bind(grant.redirect_uri_explicit)
        .bind(grant.scopes.to_scope_string())
        .bind(grant.code_challenge.as_ref().map(CodeChallenge::as_str))
        .bind(grant.expires_at)
        .bind(&grant.nonce)
        .bind(grant.auth_time)
        .bind(&grant.acr)
        .bind(&grant.amr)
        .bind(&grant.sid)
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if let (Some(session), Some(sid)) = (code.session, &grant.sid) {
            // A session ended meanwhile remembers nothing.
            sqlx::query(
                "INSERT INTO session_clients (session_id, client_id, sid) \
                 SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1) \
                 ON CONFLICT (session_id, client_id) DO UPDATE SET sid = excluded.sid",
            )
            .bind(session)
            .bind(grant.client_id.as_str())
            .bind(sid)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        }
        tx.commit().await.map_err(to_repository_error)
    }

    async fn redeem(
        &self,
        code_hash: &CodeHash,
        client_id: &ClientId,
        now: i64,
    ) -> Result<Option<CodeGrant>, RepositoryError> {
        // One statement on the one writer connection: concurrent
        // redemptions run one after the other (other processes wait on the
        // file's write lock), and every one after the first finds
        // `used_at` set, so exactly one gets the row back.
        let row = sqlx::query_as::<_, GrantColumns>(
            "UPDATE oauth_codes SET used_at = unixepoch() \
             WHERE code_hash = ?1 AND client_id = ?2 AND used_at IS NULL AND expires_at > ?3 \
             RETURNING client_id, user_id, redirect_uri, redirect_uri_explicit, scope, \
                       code_challenge, expires_at, nonce, auth_time, acr, amr, sid",
        )
        .bind(code_hash.as_bytes().as_slice())
        .bind(client_id.as_str())
        .bind(now)
        .fetch_optional(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        row.map(grant_from_columns).transpose()
    }

    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "DELETE FROM oauth_codes WHERE rowid IN ( \
               SELECT rowid FROM oauth_codes WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}
