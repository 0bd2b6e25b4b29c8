//! [`RefreshTokenStore`] on the `refresh_tokens` table.

use async_trait::async_trait;
use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;
use credencial_ports::{GraceRotation, NewRefreshToken, RefreshTokenStore, RepositoryError, Rotation, TokenRevocation};
use sqlx::PgPool;

use crate::error::to_repository_error;
use crate::expiry::{delete_expired, Expiring};

/// Refresh-token state in PostgreSQL, shared by every instance.
#[derive(Debug, Clone)]
pub struct PgRefreshTokenStore {
    pool: PgPool,
}

impl PgRefreshTokenStore {
    /// A store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl RefreshTokenStore for PgRefreshTokenStore {
    async fn record(&self, token: NewRefreshToken, family: &str) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES ($1, $2, to_timestamp($3), $4)",
        )
        .bind(&token.jti)
        .bind(token.user_id.0)
        .bind(token.expires_at as f64)
        .bind(family)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn record_login(&self, token: NewRefreshToken, family: &str, via: LoginVia) -> Result<(), RepositoryError> {
        // One statement (one round trip, one implicit transaction): the
        // token and the login are stored together or not at all.
        sqlx::query(
            "WITH login AS (INSERT INTO user_logins (user_id, via) VALUES ($2, $5)) \
             INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES ($1, $2, to_timestamp($3), $4)",
        )
        .bind(&token.jti)
        .bind(token.user_id.0)
        .bind(token.expires_at as f64)
        .bind(family)
        .bind(via.code())
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn rotate(
        &self,
        old_jti: &str,
        user_id: UserId,
        new: NewRefreshToken,
        grace: Option<GraceRotation>,
    ) -> Result<Rotation, RepositoryError> {
        // One statement, so one snapshot: of two concurrent rotations of the
        // same token the second finds rotated_at set after the first commits
        // (the row lock makes it re-check) and inserts nothing. `prior` reads
        // the old row as the statement's snapshot has it, before `old`
        // changes it: already rotated there means a replay (a concurrent
        // rotation that committed meanwhile is not in the snapshot: see
        // below). A revoked token (not rotated) is refused too, with no
        // replay. `repeat` is the sealed pair of a replay inside the grace
        // window whose successor is still current.
        let (covered_since, at, sealed) = match &grace {
            Some(g) => (Some(g.covered_since as f64), Some(g.at as f64), Some(g.sealed_successor.as_slice())),
            None => (None, None, None),
        };
        type Outcome = (Option<String>, Option<String>, Option<Vec<u8>>, bool);
        let (inserted, replayed_family, repeat, rotated_here): Outcome = sqlx::query_as(
            "WITH prior AS ( \
                     SELECT family, successor_jti, successor_sealed, rotated_at FROM refresh_tokens \
                     WHERE jti = $1 AND user_id = $2 AND rotated_at IS NOT NULL AND NOT revoked), \
                 repeat AS ( \
                     SELECT p.successor_sealed FROM prior p \
                     JOIN refresh_tokens s ON s.jti = p.successor_jti AND s.rotated_at IS NULL \
                     WHERE p.successor_sealed IS NOT NULL AND p.rotated_at >= to_timestamp($5)), \
                 old AS ( \
                     UPDATE refresh_tokens \
                     SET rotated_at = coalesce(to_timestamp($6), now()), successor_jti = $3, successor_sealed = $7 \
                     WHERE jti = $1 AND user_id = $2 AND rotated_at IS NULL \
                     RETURNING user_id, family), \
                 issued AS ( \
                     INSERT INTO refresh_tokens (jti, user_id, expires_at, family) \
                     SELECT $3, old.user_id, to_timestamp($4), old.family \
                     FROM old JOIN users u ON u.id = old.user_id AND u.is_active \
                     RETURNING jti) \
                 SELECT (SELECT jti FROM issued), (SELECT family FROM prior), (SELECT successor_sealed FROM repeat), \
                        EXISTS (SELECT 1 FROM old)",
        )
        .bind(old_jti)
        .bind(user_id.0)
        .bind(&new.jti)
        .bind(new.expires_at as f64)
        .bind(covered_since)
        .bind(at)
        .bind(sealed)
        .fetch_one(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(match (inserted, replayed_family, repeat) {
            (Some(_), _, _) => Rotation::Rotated,
            // The user is inactive: the token was rotated, nothing issued.
            (None, _, _) if rotated_here => Rotation::Refused,
            (None, Some(_), Some(sealed)) => Rotation::Repeated { sealed },
            (None, Some(family), None) => Rotation::Replayed { family },
            // Not rotated and not rotated before, as the snapshot saw it: an
            // unknown or revoked token, or the loser of a race with a
            // concurrent rotation that committed while this statement waited
            // for the row. With a window, a second look (a new snapshot)
            // tells the race apart, so that both tabs get the same pair.
            (None, None, _) if grace.is_some() => {
                self.after_concurrent_rotation(old_jti, user_id, covered_since).await?
            }
            (None, None, _) => Rotation::Refused,
        })
    }

    async fn revoke_token(&self, jti: &str, user_id: UserId) -> Result<TokenRevocation, RepositoryError> {
        // One statement: the token's state as found, and its family's
        // current tokens revoked (for a current or a rotated token; a
        // revoked token's family has no current token left).
        let found: Option<(bool, bool)> = sqlx::query_as(
            "WITH target AS ( \
                 SELECT family, rotated_at IS NULL AS current, revoked FROM refresh_tokens \
                 WHERE jti = $1 AND user_id = $2), \
             ended AS ( \
                 UPDATE refresh_tokens r SET rotated_at = now(), revoked = TRUE \
                 FROM target t WHERE r.family = t.family AND r.rotated_at IS NULL AND NOT t.revoked \
                 RETURNING r.jti) \
             SELECT current, revoked FROM target, (SELECT count(*) FROM ended) AS n",
        )
        .bind(jti)
        .bind(user_id.0)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(match found {
            None => TokenRevocation::Unknown,
            Some((true, _)) => TokenRevocation::Revoked,
            Some((false, true)) => TokenRevocation::WasRevoked,
            Some((false, false)) => TokenRevocation::WasRotated,
        })
    }

    async fn forget_sealed(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        // Through `refresh_tokens_sealed_idx` (rotated_at, partial on the
        // sealed rows), at most `limit` rows per statement.
        let done = sqlx::query(
            "UPDATE refresh_tokens SET successor_sealed = NULL WHERE ctid = ANY(ARRAY( \
               SELECT ctid FROM refresh_tokens \
               WHERE successor_sealed IS NOT NULL AND rotated_at < to_timestamp($1) \
               ORDER BY rotated_at LIMIT $2))",
        )
        .bind(before as f64)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn revoke_family(&self, family: &str) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = now(), revoked = TRUE WHERE family = $1 AND rotated_at IS NULL",
        )
        .bind(family)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn revoke_user(&self, user: UserId) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = now(), revoked = TRUE WHERE user_id = $1 AND rotated_at IS NULL",
        )
        .bind(user.0)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn is_current(&self, jti: &str) -> Result<bool, RepositoryError> {
        let found: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM refresh_tokens WHERE jti = $1 AND rotated_at IS NULL")
                .bind(jti)
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        Ok(found.is_some())
    }

    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        delete_expired(&self.pool, Expiring::RefreshTokens, before, limit).await
    }
}

impl PgRefreshTokenStore {
    /// What a rotation that found `old_jti` neither current nor rotated in
    /// its snapshot finds now: a rotation that committed meanwhile (within
    /// the window since `covered_since`, successor current: `Repeated`;
    /// otherwise `Replayed`), or nothing (`Refused`).
    async fn after_concurrent_rotation(
        &self,
        old_jti: &str,
        user_id: UserId,
        covered_since: Option<f64>,
    ) -> Result<Rotation, RepositoryError> {
        let found: Option<(String, Option<Vec<u8>>)> = sqlx::query_as(
            "SELECT p.family, \
                    (SELECT p.successor_sealed FROM refresh_tokens s \
                     WHERE s.jti = p.successor_jti AND s.rotated_at IS NULL AND p.rotated_at >= to_timestamp($3)) \
             FROM refresh_tokens p WHERE p.jti = $1 AND p.user_id = $2 AND p.rotated_at IS NOT NULL AND NOT p.revoked",
        )
        .bind(old_jti)
        .bind(user_id.0)
        .bind(covered_since)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(match found {
            Some((_, Some(sealed))) => Rotation::Repeated { sealed },
            Some((family, None)) => Rotation::Replayed { family },
            None => Rotation::Refused,
        })
    }
}
