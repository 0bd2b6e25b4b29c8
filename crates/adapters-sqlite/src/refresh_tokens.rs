//! [`RefreshTokenStore`] on the `refresh_tokens` table.
//!
//! What PostgreSQL does in one statement (a rotation, a revocation with
//! its family, a login with its token) is one `BEGIN IMMEDIATE` write
//! transaction here — for the hot paths' writes (a login, a rotation), a
//! savepoint of the group committer's transaction ([`crate::group_commit`]):
//! it reads and writes with the file's write lock held, so no other writer
//! (in this process, queued on the one writer connection, or in another,
//! waiting on the lock) comes in between.

use async_trait::async_trait;
use credencial_domain::admin::LoginVia;
use credencial_domain::UserId;
use credencial_ports::{GraceRotation, NewRefreshToken, RefreshTokenStore, RepositoryError, Rotation, TokenRevocation};
use sqlx::SqliteConnection;

use crate::error::to_repository_error;
use crate::SqliteDb;

/// Refresh-token state in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteRefreshTokenStore {
    db: SqliteDb,
}

impl SqliteRefreshTokenStore {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

const INSERT: &str = "INSERT INTO refresh_tokens (jti, user_id, expires_at, family) VALUES (?1, ?2, ?3, ?4)";

/// Records `token` as the current token of `family`, on `conn`.
async fn insert(conn: &mut SqliteConnection, token: &NewRefreshToken, family: &str) -> Result<(), RepositoryError> {
    sqlx::query(INSERT)
        .bind(&token.jti)
        .bind(token.user_id.0)
        .bind(token.expires_at)
        .bind(family)
        .execute(conn)
        .await
        .map_err(to_repository_error)?;
    Ok(())
}

/// A token's row as a rotation reads it.
#[derive(sqlx::FromRow)]
struct Prior {
    family: String,
    rotated_at: Option<i64>,
    revoked: bool,
    successor_jti: Option<String>,
    successor_sealed: Option<Vec<u8>>,
}

#[async_trait]
impl RefreshTokenStore for SqliteRefreshTokenStore {
    async fn record(&self, token: NewRefreshToken, family: &str) -> Result<(), RepositoryError> {
        let family = family.to_owned();
        self.db.group().run(Box::new(move |conn| Box::pin(async move { insert(conn, &token, &family).await }))).await
    }

    async fn record_login(&self, token: NewRefreshToken, family: &str, via: LoginVia) -> Result<(), RepositoryError> {
        // One write of a group: the token and the login are stored together
        // or not at all.
        let family = family.to_owned();
        self.db
            .group()
            .run(Box::new(move |conn| {
                Box::pin(async move {
                    sqlx::query("INSERT INTO user_logins (user_id, via) VALUES (?1, ?2)")
                        .bind(token.user_id.0)
                        .bind(via.code())
                        .execute(&mut *conn)
                        .await
                        .map_err(to_repository_error)?;
                    insert(conn, &token, &family).await
                })
            }))
            .await
    }

    async fn rotate(
        &self,
        old_jti: &str,
        user_id: UserId,
        new: NewRefreshToken,
        grace: Option<GraceRotation>,
    ) -> Result<Rotation, RepositoryError> {
        let old_jti = old_jti.to_owned();
        self.db
            .group()
            .run(Box::new(move |conn| Box::pin(async move { rotate_on(conn, &old_jti, user_id, new, grace).await })))
            .await
    }

    async fn revoke_token(&self, jti: &str, user_id: UserId) -> Result<TokenRevocation, RepositoryError> {
        // One transaction: the token's state as found, and its family's
        // current tokens revoked (for a current or a rotated token; a
        // revoked token's family has no current token left).
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let found: Option<(String, bool, bool)> = sqlx::query_as(
            "SELECT family, rotated_at IS NULL, revoked FROM refresh_tokens WHERE jti = ?1 AND user_id = ?2",
        )
        .bind(jti)
        .bind(user_id.0)
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let Some((family, current, revoked)) = found else {
            return Ok(TokenRevocation::Unknown);
        };
        if revoked {
            return Ok(TokenRevocation::WasRevoked);
        }
        revoke_family_on(&mut tx, &family).await?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(if current { TokenRevocation::Revoked } else { TokenRevocation::WasRotated })
    }

    async fn forget_sealed(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        // Through `refresh_tokens_sealed_idx` (rotated_at, partial on the
        // sealed rows), at most `limit` rows per statement.
        let done = sqlx::query(
            "UPDATE refresh_tokens SET successor_sealed = NULL WHERE rowid IN ( \
               SELECT rowid FROM refresh_tokens \
               WHERE successor_sealed IS NOT NULL AND rotated_at < ?1 ORDER BY rotated_at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn revoke_family(&self, family: &str) -> Result<u64, RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        revoke_family_on(&mut conn, family).await
    }

    async fn is_current(&self, jti: &str) -> Result<bool, RepositoryError> {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM refresh_tokens WHERE jti = ?1 AND rotated_at IS NULL")
                .bind(jti)
                .fetch_optional(self.db.readers())
                .await
                .map_err(to_repository_error)?;
        Ok(found.is_some())
    }

    async fn revoke_user(&self, user: UserId) -> Result<u64, RepositoryError> {
        let done = sqlx::query(
            "UPDATE refresh_tokens SET rotated_at = unixepoch(), revoked = 1 WHERE user_id = ?1 AND rotated_at IS NULL",
        )
        .bind(user.0)
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn purge_expired(&self, before: i64, limit: u32) -> Result<u64, RepositoryError> {
        // One bounded statement: the single writer is free between batches.
        let done = sqlx::query(
            "DELETE FROM refresh_tokens WHERE rowid IN ( \
               SELECT rowid FROM refresh_tokens WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2)",
        )
        .bind(before)
        .bind(i64::from(limit))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }
}

/// Rotates `old_jti` of `user_id` to `new` on `conn`, inside a write
/// transaction (a savepoint of a group): the old token's state is read with
/// the write lock held, so of concurrent rotations of one token the first
/// rotates it and every later one finds it rotated (with a window: the
/// first one's sealed pair). Nothing is written unless the old token is
/// current.
async fn rotate_on(
    conn: &mut SqliteConnection,
    old_jti: &str,
    user_id: UserId,
    new: NewRefreshToken,
    grace: Option<GraceRotation>,
) -> Result<Rotation, RepositoryError> {
    let prior: Option<Prior> = sqlx::query_as(
        "SELECT family, rotated_at, revoked, successor_jti, successor_sealed FROM refresh_tokens \
             WHERE jti = ?1 AND user_id = ?2",
    )
    .bind(old_jti)
    .bind(user_id.0)
    .fetch_optional(&mut *conn)
    .await
    .map_err(to_repository_error)?;
    let Some(prior) = prior else {
        // Unknown, or another user's.
        return Ok(Rotation::Refused);
    };
    if prior.revoked {
        // Revoked, not rotated: refused, and no replay (its family has
        // no current token left to revoke).
        return Ok(Rotation::Refused);
    }
    if let Some(rotated_at) = prior.rotated_at {
        return replay(conn, prior, rotated_at, grace.as_ref()).await;
    }
    let (at, sealed) = match &grace {
        Some(g) => (Some(g.at), Some(g.sealed_successor.as_slice())),
        None => (None, None),
    };
    sqlx::query(
        "UPDATE refresh_tokens SET rotated_at = coalesce(?2, unixepoch()), successor_jti = ?3, \
             successor_sealed = ?4 WHERE jti = ?1",
    )
    .bind(old_jti)
    .bind(at)
    .bind(&new.jti)
    .bind(sealed)
    .execute(&mut *conn)
    .await
    .map_err(to_repository_error)?;
    let active: Option<bool> = sqlx::query_scalar("SELECT is_active FROM users WHERE id = ?1")
        .bind(user_id.0)
        .fetch_optional(&mut *conn)
        .await
        .map_err(to_repository_error)?;
    let outcome = if active == Some(true) {
        insert(conn, &NewRefreshToken { user_id, ..new }, &prior.family).await?;
        Rotation::Rotated
    } else {
        // The user is inactive: the token is rotated, nothing issued.
        Rotation::Refused
    };
    Ok(outcome)
}

/// Revokes the current tokens of `family`, on `conn`, and returns how many.
async fn revoke_family_on(conn: &mut SqliteConnection, family: &str) -> Result<u64, RepositoryError> {
    let done = sqlx::query(
        "UPDATE refresh_tokens SET rotated_at = unixepoch(), revoked = 1 WHERE family = ?1 AND rotated_at IS NULL",
    )
    .bind(family)
    .execute(conn)
    .await
    .map_err(to_repository_error)?;
    Ok(done.rows_affected())
}

/// The answer to a rotation of a token that `prior` shows rotated at
/// `rotated_at` (and not revoked): the sealed pair of that rotation when
/// `grace` covers it and its successor is still current (`Repeated`),
/// otherwise a replay of its family. Writes nothing.
async fn replay(
    conn: &mut SqliteConnection,
    prior: Prior,
    rotated_at: i64,
    grace: Option<&GraceRotation>,
) -> Result<Rotation, RepositoryError> {
    let covered = grace.is_some_and(|g| rotated_at >= g.covered_since);
    if let (true, Some(successor), Some(sealed)) = (covered, &prior.successor_jti, prior.successor_sealed) {
        let successor_current: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM refresh_tokens WHERE jti = ?1 AND rotated_at IS NULL")
                .bind(successor)
                .fetch_optional(conn)
                .await
                .map_err(to_repository_error)?;
        if successor_current.is_some() {
            return Ok(Rotation::Repeated { sealed });
        }
    }
    Ok(Rotation::Replayed { family: prior.family })
}
