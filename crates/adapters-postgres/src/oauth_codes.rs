//! [`AuthorizationCodeStore`] on the `oauth_codes` table.

use async_trait::async_trait;
use credencial_domain::oauth::{ClientId, CodeChallenge, CodeGrant, CodeHash};
use credencial_ports::oauth::{grant_from_columns, GrantColumns};
use credencial_ports::{AuthorizationCodeStore, NewAuthorizationCode, RepositoryError};
use sqlx::PgPool;

use crate::error::to_repository_error;
use crate::expiry::{delete_expired, Expiring};

/// Authorization codes in PostgreSQL (hashes only), shared by every instance.
#[derive(Debug, Clone)]
pub struct PgAuthorizationCodeStore {
    pool: PgPool,
}

impl PgAuthorizationCodeStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl AuthorizationCodeStore for PgAuthorizationCodeStore {
    async fn store(&self, code: NewAuthorizationCode) -> Result<(), RepositoryError> {
        let grant = code.grant;
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        sqlx::query(
            "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, \
             redirect_uri_explicit, scope, code_challenge, expires_at, nonce, auth_time, acr, amr, sid) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8), $9, to_timestamp($10), $11, $12, $13)",
        )
        .bind(code.code_hash.as_bytes().as_slice())
        .bind(grant.client_id.as_str())
        .bind(grant.user_id.0)
        .bind(&grant.redirect_uri)
        .bind(grant.redirect_uri_explicit)
        .bind(grant.scopes.to_scope_string())
        .bind(grant.code_challenge.as_ref().map(CodeChallenge::as_str))
        .bind(grant.expires_at as f64)
        .bind(&grant.nonce)
        .bind(grant.auth_time.map(|t| t as f64))
        .bind(&grant.acr)
        .bind(&grant.amr)
        .bind(&grant.sid)
        .execute(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if let (Some(session), Some(sid)) = (code.session, &grant.sid) {
            // The session is locked against its end until this commits; one
            // ended meanwhile (its end waited for nothing) remembers nothing.
            let live = sqlx::query("SELECT 1 FROM sessions WHERE id = $1 FOR SHARE")
                .bind(session)
                .fetch_optional(&mut *tx)
                .await
                .map_err(to_repository_error)?;
            if live.is_none() {
                return tx.commit().await.map_err(to_repository_error);
            }
            sqlx::query(
                "INSERT INTO session_clients (session_id, client_id, sid) VALUES ($1, $2, $3) \
                 ON CONFLICT (session_id, client_id) DO UPDATE SET sid = EXCLUDED.sid",
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
        // One statement: under concurrent redemptions the row lock makes the
        // later ones re-check `used_at IS NULL` after the first commits, so
        // exactly one gets the row back, on any number of instances.
        let row = sqlx::query_as::<_, GrantColumns>(
            "UPDATE oauth_codes SET used_at = now() \
             WHERE code_hash = $1 AND client_id = $2 \
               AND used_at IS NULL AND expires_at > to_timestamp($3) \
             RETURNING client_id, user_id, redirect_uri, redirect_uri_explicit, scope, \
                       code_challenge, floor(extract(epoch FROM expires_at))::BIGINT AS expires_at, \
                       nonce, floor(extract(epoch FROM auth_time))::BIGINT AS auth_time, acr, amr, sid",
        )
        .bind(code_hash.as_bytes().as_slice())
        .bind(client_id.as_str())
        .bind(now as f64)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        row.map(grant_from_columns).transpose()
    }

    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        delete_expired(&self.pool, Expiring::AuthorizationCodes, before, limit).await
    }
}
