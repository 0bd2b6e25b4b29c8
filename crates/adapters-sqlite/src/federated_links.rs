//! [`FederatedLinkStore`] on `federated_links`.

use async_trait::async_trait;
use credencial_domain::federation::{Candidate, Found};
use credencial_domain::{Cpf, EmailKey, UserId};
use credencial_ports::federation::{candidate, link_record, seals_text, CandidateColumns, LinkColumns, LINK_COLUMNS};
use credencial_ports::{
    FederatedLinkStore, LinkConflict, LinkRecord, NewProviderLink, NewUser, RepositoryError, Unlinked,
};
use sqlx::SqliteConnection;

use crate::error::to_repository_error;
use crate::user_lookups::{BY_CPF, BY_EMAIL_KEY, BY_PROVIDER_LINK};
use crate::users::{insert_user, InsertFlags};
use crate::SqliteDb;

/// An account as a brokered login finds it, by `condition` (one of
/// [`crate::user_lookups`]'s, each searched by an index): its id, whether
/// it is active, and whether its CPF is proven (by the tax authority, or by
/// a gov.br link whose subject is that very CPF, found by the links'
/// index on the account), and whether its address was confirmed: the
/// columns of [`CandidateColumns`].
fn candidate_by(condition: &str) -> String {
    format!(
        "SELECT id, is_active, (receita_validated OR EXISTS (\
           SELECT 1 FROM federated_links p \
           WHERE p.user_id = users.id AND p.proves_cpf AND p.subject = users.cpf)), email_verified \
         FROM users WHERE {condition}"
    )
}

/// The accounts' links to upstream providers in the SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteFederatedLinks {
    db: SqliteDb,
}

impl SqliteFederatedLinks {
    /// The store on `db`.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }

    /// The account `condition` finds with `binds`.
    async fn candidate(&self, condition: &str, binds: &[&str]) -> Result<Option<Candidate>, RepositoryError> {
        let sql = candidate_by(condition);
        let mut query = sqlx::query_as::<_, CandidateColumns>(&sql);
        for value in binds {
            query = query.bind(*value);
        }
        let row = query.fetch_optional(self.db.readers()).await.map_err(to_repository_error)?;
        Ok(row.map(candidate))
    }
}

/// Inserts `link` of `user` on `conn`.
async fn insert_link(conn: &mut SqliteConnection, user: UserId, link: &NewProviderLink<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO federated_links (provider, subject, user_id, linked_at, proves_cpf, level, seals, level_read_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .bind(link.provider)
    .bind(link.subject)
    .bind(user.0)
    .bind(link.now)
    .bind(link.proves_cpf)
    .bind(link.reliability.map(|r| r.level.name()))
    .bind(seals_text(link.reliability))
    .bind(link.reliability.map(|r| r.read_at))
    .execute(&mut *conn)
    .await
    .map(|_| ())
}

#[async_trait]
impl FederatedLinkStore for SqliteFederatedLinks {
    async fn find<'a>(
        &self,
        provider: &str,
        subject: &str,
        cpf: Option<&'a Cpf>,
        email_key: Option<&'a EmailKey>,
    ) -> Result<Found, RepositoryError> {
        let linked = self.candidate(BY_PROVIDER_LINK, &[provider, subject]).await?;
        let by_cpf = match cpf {
            Some(cpf) => self.candidate(BY_CPF, &[cpf.as_str()]).await?,
            None => None,
        };
        let by_email = match email_key.filter(|key| !key.is_empty()) {
            Some(key) => self.candidate(BY_EMAIL_KEY, &[key.as_str()]).await?,
            None => None,
        };
        Ok(Found { linked, by_cpf, by_email })
    }

    async fn link<'a>(
        &self,
        user: UserId,
        link: NewProviderLink<'a>,
    ) -> Result<Result<(), LinkConflict>, RepositoryError> {
        let mut conn = self.db.writer().acquire().await.map_err(to_repository_error)?;
        match insert_link(&mut conn, user, &link).await {
            Ok(()) => Ok(Ok(())),
            Err(e) => conflict(e).map(Err),
        }
    }

    async fn create_linked<'a>(
        &self,
        user: NewUser,
        link: NewProviderLink<'a>,
    ) -> Result<Result<UserId, LinkConflict>, RepositoryError> {
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let created = match insert_user(&mut tx, &user, InsertFlags::default()).await {
            Ok(id) => insert_link(&mut tx, id, &link).await.map(|()| id),
            Err(e) => Err(e),
        };
        match created {
            Ok(id) => {
                tx.commit().await.map_err(to_repository_error)?;
                Ok(Ok(id))
            }
            // Dropping the transaction rolls it back.
            Err(e) => conflict(e).map(Err),
        }
    }

    async fn record_level<'a>(
        &self,
        provider: &str,
        subject: &str,
        reliability: Option<&'a credencial_domain::federation::Reliability>,
    ) -> Result<bool, RepositoryError> {
        let done = sqlx::query(
            "UPDATE federated_links SET level = ?3, seals = ?4, level_read_at = ?5 WHERE provider = ?1 AND subject = ?2",
        )
        .bind(provider)
        .bind(subject)
        .bind(reliability.map(|r| r.level.name()))
        .bind(seals_text(reliability))
        .bind(reliability.map(|r| r.read_at))
        .execute(self.db.writer())
        .await
        .map_err(to_repository_error)?;
        Ok(done.rows_affected() == 1)
    }

    async fn links_of(&self, user: UserId) -> Result<Vec<LinkRecord>, RepositoryError> {
        let sql = format!("SELECT {LINK_COLUMNS} FROM federated_links WHERE user_id = ?1 ORDER BY provider");
        let rows = sqlx::query_as::<_, LinkColumns>(&sql)
            .bind(user.0)
            .fetch_all(self.db.readers())
            .await
            .map_err(to_repository_error)?;
        rows.into_iter().map(link_record).collect()
    }

    async fn unlink(&self, user: UserId, provider: &str, last_may_go: bool) -> Result<Unlinked, RepositoryError> {
        // The one writer serializes concurrent unlinks.
        let mut tx = self.db.begin_write().await.map_err(to_repository_error)?;
        let (links, mine): (i64, bool) =
            sqlx::query_as("SELECT count(*), COALESCE(max(provider = ?2), 0) FROM federated_links WHERE user_id = ?1")
                .bind(user.0)
                .bind(provider)
                .fetch_one(&mut *tx)
                .await
                .map_err(to_repository_error)?;
        let rule = Unlinked::rule(links, mine, last_may_go);
        if rule == Unlinked::Removed {
            sqlx::query("DELETE FROM federated_links WHERE user_id = ?1 AND provider = ?2")
                .bind(user.0)
                .bind(provider)
                .execute(&mut *tx)
                .await
                .map_err(to_repository_error)?;
            tx.commit().await.map_err(to_repository_error)?;
        }
        Ok(rule)
    }
}

/// The conflict a unique constraint's refusal `e` names; any other error
/// as the store's.
fn conflict(e: sqlx::Error) -> Result<LinkConflict, RepositoryError> {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => Ok(LinkConflict::from_constraint(db.message())),
        _ => Err(to_repository_error(e)),
    }
}
