//! [`MailStore`] on `mail_outbox` and `mail_links`.

use async_trait::async_trait;
use credencial_domain::mail::{LinkPurpose, OutgoingMail};
use credencial_domain::UserId;
use credencial_ports::mail::{known_kinds_sql, ClaimRow, FailedRow, LinkRow, MAX_LIVE_LINKS};
use credencial_ports::{
    AddressSwitch, ChangeRequest, ClaimedMail, Confirmation, FailedMail, FailedTry, MailStore, NewLink,
    RepositoryError, StoredLink, Switched,
};
use sqlx::PgPool;

use crate::error::to_repository_error;
use crate::user_lookups::ANOTHER_WITH_EMAIL_KEY;

/// The outbox and the mail links in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgMail {
    pool: PgPool,
}

impl PgMail {
    /// The store on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

const INSERT_MAIL: &str = "INSERT INTO mail_outbox (recipient, kind, subject, text_body, html_body, created_at, \
                           next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id";

/// Deletes an account's change requests: `$1` the account, `$2` the
/// change purpose (a newer request, or a cancellation).
const DELETE_CHANGES: &str = "DELETE FROM mail_links WHERE user_id = $1 AND purpose = $2";

/// `INSERT_MAIL` with `mail`'s values bound.
fn insert_mail<'q>(
    mail: &'q OutgoingMail,
    now: i64,
) -> sqlx::query::QueryScalar<'q, sqlx::Postgres, i64, sqlx::postgres::PgArguments> {
    sqlx::query_scalar(INSERT_MAIL)
        .bind(mail.to.as_str())
        .bind(mail.kind.code())
        .bind(&mail.subject)
        .bind(mail.text.as_str())
        .bind(mail.html.as_str())
        .bind(now)
}

/// Writes `link` and the `mail` that carries it, issued at `now`, in `tx`.
async fn insert_link(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    link: &NewLink,
    mail: &OutgoingMail,
    now: i64,
) -> Result<(), RepositoryError> {
    sqlx::query(
        "INSERT INTO mail_links (token_hash, user_id, purpose, stamp, issued_at, expires_at, email) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&link.token_hash[..])
    .bind(link.user.0)
    .bind(link.state.purpose.code())
    .bind(&link.state.stamp)
    .bind(now)
    .bind(link.state.expires_at)
    .bind(&link.state.email)
    .execute(&mut **tx)
    .await
    .map_err(to_repository_error)?;
    insert_mail(mail, now).fetch_one(&mut **tx).await.map_err(to_repository_error)?;
    Ok(())
}

/// Locks `user`'s row in `tx` against another link issuer (across
/// instances) until the transaction ends.
async fn lock_account(tx: &mut sqlx::Transaction<'_, sqlx::Postgres>, user: UserId) -> Result<(), RepositoryError> {
    sqlx::query("SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE")
        .bind(user.0)
        .fetch_optional(&mut **tx)
        .await
        .map_err(to_repository_error)?;
    Ok(())
}

#[async_trait]
impl MailStore for PgMail {
    async fn enqueue(&self, mail: &OutgoingMail, now: i64) -> Result<i64, RepositoryError> {
        insert_mail(mail, now).fetch_one(&self.pool).await.map_err(to_repository_error)
    }

    async fn issue_link(
        &self,
        link: &NewLink,
        mail: &OutgoingMail,
        now: i64,
        quiet_secs: i64,
    ) -> Result<bool, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // One issuer at a time per account: the limits hold across instances.
        lock_account(&mut tx, link.user).await?;
        let (recent, live): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(CASE WHEN issued_at > $3 THEN 1 ELSE 0 END), 0), COUNT(*) FROM mail_links \
             WHERE user_id = $1 AND purpose = $2 AND expires_at > $4",
        )
        .bind(link.user.0)
        .bind(link.state.purpose.code())
        .bind(now - quiet_secs)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if recent > 0 || live >= MAX_LIVE_LINKS {
            return Ok(false);
        }
        insert_link(&mut tx, link, mail, now).await?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(true)
    }

    async fn find_link(&self, token_hash: &[u8; 32]) -> Result<Option<StoredLink>, RepositoryError> {
        let row: Option<LinkRow> =
            sqlx::query_as("SELECT user_id, purpose, stamp, expires_at, email FROM mail_links WHERE token_hash = $1")
                .bind(&token_hash[..])
                .fetch_optional(&self.pool)
                .await
                .map_err(to_repository_error)?;
        Ok(row.and_then(StoredLink::from_row))
    }

    async fn take_link(
        &self,
        token_hash: &[u8; 32],
        purpose: LinkPurpose,
    ) -> Result<Option<StoredLink>, RepositoryError> {
        let row: Option<LinkRow> = sqlx::query_as(
            "DELETE FROM mail_links WHERE token_hash = $1 AND purpose = $2 \
             RETURNING user_id, purpose, stamp, expires_at, email",
        )
        .bind(&token_hash[..])
        .bind(purpose.code())
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(row.and_then(StoredLink::from_row))
    }

    async fn confirm_email(&self, token_hash: &[u8; 32], now: i64) -> Result<Confirmation, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let taken: Option<(i64, String)> = sqlx::query_as(
            "DELETE FROM mail_links WHERE token_hash = $1 AND purpose = $2 AND expires_at > $3 \
             RETURNING user_id, email",
        )
        .bind(&token_hash[..])
        .bind(LinkPurpose::EmailConfirm.code())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        let Some((user, email)) = taken else { return Ok(Confirmation::NoLink) };
        let done = sqlx::query("UPDATE users SET email_verified = TRUE WHERE id = $1 AND email = $2 AND email <> ''")
            .bind(user)
            .bind(&email)
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(if done.rows_affected() == 1 {
            Confirmation::Confirmed(UserId(user))
        } else {
            Confirmation::AddressChanged(UserId(user))
        })
    }

    async fn email_verified(&self, user: UserId) -> Result<bool, RepositoryError> {
        let verified: Option<bool> = sqlx::query_scalar("SELECT email_verified FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(verified.unwrap_or(false))
    }

    async fn forget_links(&self, user: UserId) -> Result<u64, RepositoryError> {
        let done = sqlx::query("DELETE FROM mail_links WHERE user_id = $1")
            .bind(user.0)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn request_change(
        &self,
        link: &NewLink,
        email_key: &str,
        mail: &OutgoingMail,
        now: i64,
        quiet_secs: i64,
    ) -> Result<ChangeRequest, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        // One request at a time per account (across instances).
        lock_account(&mut tx, link.user).await?;
        let (taken, recent): (bool, bool) = sqlx::query_as(&format!(
            "SELECT EXISTS (SELECT 1 FROM users WHERE {ANOTHER_WITH_EMAIL_KEY}), \
                    EXISTS (SELECT 1 FROM mail_links WHERE user_id = $2 AND purpose = $3 AND issued_at > $4)"
        ))
        .bind(email_key)
        .bind(link.user.0)
        .bind(LinkPurpose::EmailChange.code())
        .bind(now - quiet_secs)
        .fetch_one(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if taken {
            return Ok(ChangeRequest::Taken);
        }
        if recent {
            return Ok(ChangeRequest::TooSoon);
        }
        sqlx::query(DELETE_CHANGES)
            .bind(link.user.0)
            .bind(LinkPurpose::EmailChange.code())
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        insert_link(&mut tx, link, mail, now).await?;
        tx.commit().await.map_err(to_repository_error)?;
        Ok(ChangeRequest::Sent)
    }

    async fn pending_change(&self, user: UserId, now: i64) -> Result<Option<String>, RepositoryError> {
        sqlx::query_scalar(
            "SELECT email FROM mail_links WHERE user_id = $1 AND purpose = $2 AND expires_at > $3 \
             ORDER BY issued_at DESC LIMIT 1",
        )
        .bind(user.0)
        .bind(LinkPurpose::EmailChange.code())
        .bind(now)
        .fetch_optional(&self.pool)
        .await
        .map_err(to_repository_error)
    }

    async fn cancel_change(&self, user: UserId) -> Result<u64, RepositoryError> {
        let done = sqlx::query(DELETE_CHANGES)
            .bind(user.0)
            .bind(LinkPurpose::EmailChange.code())
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(done.rows_affected())
    }

    async fn switch_address(&self, switch: &AddressSwitch) -> Result<Switched, RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(to_repository_error)?;
        let taken: Option<i64> = sqlx::query_scalar(
            "DELETE FROM mail_links WHERE token_hash = $1 AND purpose = $2 AND user_id = $3 AND email = $4 \
             AND expires_at > $5 RETURNING user_id",
        )
        .bind(&switch.token_hash[..])
        .bind(switch.purpose.code())
        .bind(switch.user.0)
        .bind(&switch.email)
        .bind(switch.now)
        .fetch_optional(&mut *tx)
        .await
        .map_err(to_repository_error)?;
        if taken.is_none() {
            return Ok(Switched::NoLink);
        }
        // A change applies only to the address it was asked from.
        let expected = switch.undo.as_ref().map(|(old, _, _)| old.as_str());
        let done = sqlx::query(
            "UPDATE users SET email = $2, email_key = $3, email_verified = TRUE \
             WHERE id = $1 AND is_active AND ($4 IS NULL OR email = $4)",
        )
        .bind(switch.user.0)
        .bind(&switch.email)
        .bind(&switch.email_key)
        .bind(expected)
        .execute(&mut *tx)
        .await;
        match done {
            Ok(done) if done.rows_affected() == 1 => {}
            Ok(_) => return Ok(Switched::NoLink),
            Err(e) if matches!(&e, sqlx::Error::Database(db) if db.is_unique_violation()) => {
                return Ok(Switched::Taken)
            }
            Err(e) => return Err(to_repository_error(e)),
        }
        // Links mailed to the old address die; a change keeps the links
        // that undo earlier changes (whoever changed the address must not
        // be able to kill them by changing it again).
        sqlx::query("DELETE FROM mail_links WHERE user_id = $1 AND ($2 OR purpose <> $3)")
            .bind(switch.user.0)
            .bind(switch.undo.is_none())
            .bind(LinkPurpose::EmailUndo.code())
            .execute(&mut *tx)
            .await
            .map_err(to_repository_error)?;
        if let Some((_, link, mail)) = &switch.undo {
            insert_link(&mut tx, link, mail, switch.now).await?;
        }
        tx.commit().await.map_err(to_repository_error)?;
        Ok(Switched::Switched)
    }

    async fn claim(&self, now: i64, lease_until: i64, limit: u32) -> Result<Vec<ClaimedMail>, RepositoryError> {
        // Rows another sender is claiming are skipped, not waited for.
        let sql = format!(
            "UPDATE mail_outbox SET next_attempt_at = $2 WHERE id IN ( \
               SELECT id FROM mail_outbox WHERE next_attempt_at <= $1 AND kind IN ({}) \
               ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED) \
             RETURNING id, recipient, kind, subject, text_body, html_body, attempts, created_at, next_attempt_at",
            known_kinds_sql()
        );
        let rows: Vec<ClaimRow> = sqlx::query_as(&sql)
            .bind(now)
            .bind(lease_until)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(ClaimedMail::from_row).collect())
    }

    async fn postpone(&self, id: i64, lease: i64, at: i64) -> Result<(), RepositoryError> {
        sqlx::query("UPDATE mail_outbox SET next_attempt_at = $3 WHERE id = $1 AND next_attempt_at = $2")
            .bind(id)
            .bind(lease)
            .bind(at)
            .execute(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(())
    }

    async fn mark_sent(&self, id: i64, lease: i64, now: i64) -> Result<(), RepositoryError> {
        sqlx::query(
            "UPDATE mail_outbox SET sent_at = $3, next_attempt_at = NULL, text_body = '', html_body = '' \
             WHERE id = $1 AND next_attempt_at = $2",
        )
        .bind(id)
        .bind(lease)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn mark_failed(&self, f: &FailedTry) -> Result<(), RepositoryError> {
        sqlx::query(
            "UPDATE mail_outbox SET attempts = attempts + $4::INTEGER, last_error = $3, next_attempt_at = $5, \
             failed_at = CASE WHEN $5::BIGINT IS NULL THEN $7 END, \
             text_body = CASE WHEN $6::BOOLEAN THEN '' ELSE text_body END, \
             html_body = CASE WHEN $6::BOOLEAN THEN '' ELSE html_body END \
             WHERE id = $1 AND next_attempt_at = $2",
        )
        .bind(f.id)
        .bind(f.lease)
        .bind(&f.error)
        .bind(i32::from(f.refused))
        .bind(f.retry_at)
        .bind(f.forget_body)
        .bind(f.now)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(())
    }

    async fn failed(&self, before: Option<i64>, limit: u32) -> Result<Vec<FailedMail>, RepositoryError> {
        let rows: Vec<FailedRow> = sqlx::query_as(
            "SELECT id, recipient, kind, created_at, failed_at, attempts, last_error FROM mail_outbox \
             WHERE failed_at IS NOT NULL AND id < $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(rows.into_iter().filter_map(FailedMail::from_row).collect())
    }

    async fn retry(&self, id: i64, now: i64) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE mail_outbox SET next_attempt_at = $2, created_at = $2, failed_at = NULL, attempts = 0 \
             WHERE id = $1 AND failed_at IS NOT NULL AND text_body <> ''",
        )
        .bind(id)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn waiting(&self) -> Result<u64, RepositoryError> {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM mail_outbox WHERE next_attempt_at IS NOT NULL")
            .fetch_one(&self.pool)
            .await
            .map_err(to_repository_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn purge(&self, sent_before: i64, now: i64, limit: u32) -> Result<u64, RepositoryError> {
        let mail = sqlx::query(
            "DELETE FROM mail_outbox WHERE id IN ( \
               SELECT id FROM mail_outbox WHERE sent_at < $1 ORDER BY sent_at LIMIT $2)",
        )
        .bind(sent_before)
        .bind(i64::from(limit))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?
        .rows_affected();
        let left = u64::from(limit).saturating_sub(mail);
        if left == 0 {
            return Ok(mail);
        }
        let links = sqlx::query(
            "DELETE FROM mail_links WHERE token_hash IN ( \
               SELECT token_hash FROM mail_links WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)",
        )
        .bind(now)
        .bind(i64::try_from(left).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await
        .map_err(to_repository_error)?
        .rows_affected();
        Ok(mail + links)
    }
}
