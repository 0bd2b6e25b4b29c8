//! Group commit of the access log: the rows of concurrent profile reads
//! appended by one statement, one transaction and one WAL flush for the
//! group.
//!
//! PostgreSQL runs with `synchronous_commit` on: a commit returns once its
//! WAL is flushed, so an answered read's row survives a power cut. A commit
//! per read also takes, per row, the foreign key's share lock on the user's
//! row (a multixact when reads of one person overlap) and a commit record.
//! Here one task takes every entry waiting when it is free (at most
//! [`MAX_GROUP`]) and appends them in one statement, which also checks, per
//! entry, that the grant still covers its scopes and the user is active;
//! each caller hears whether its own entry was written only once the
//! statement has committed. A statement that fails appends each entry of
//! the group alone, so that one entry the table refuses fails only its own
//! read.

use std::sync::{Arc, OnceLock};

use credencial_ports::account::AccessLogEntry;
use credencial_ports::stored::scope_names;
use credencial_ports::RepositoryError;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

use crate::error::to_repository_error;

/// The most entries one statement appends.
pub const MAX_GROUP: usize = 256;

/// How many entries may queue before a caller waits to queue its own.
const QUEUE: usize = 4 * MAX_GROUP;

/// Whether the grant of user `{user}` to client `{client}` covers the scope
/// names `{scopes}` (a `TEXT[]`). The required scopes count as granted
/// whether or not they are stored.
pub fn grant_covers(user: &str, client: &str, scopes: &str) -> String {
    let required: Vec<String> =
        credencial_domain::ScopeSet::required().iter().map(|s| format!("'{}'", s.name())).collect();
    format!(
        "EXISTS (SELECT 1 FROM oauth_grants g WHERE g.user_id = {user} AND g.client_id = {client} \
           AND {scopes} <@ (g.scopes || ARRAY[{}]::TEXT[]))",
        required.join(", ")
    )
}

/// [`grant_covers`], and the user is active: the condition of every
/// access-log append (the client read's own, the group's, and an entry's
/// alone).
pub fn may_append(user: &str, client: &str, scopes: &str) -> String {
    format!(
        "{} AND EXISTS (SELECT 1 FROM users a WHERE a.id = {user} AND a.is_active)",
        grant_covers(user, client, scopes)
    )
}

/// The group's statement, on arrays of the entries' fields (`$1` users,
/// `$2` clients, `$3` scope names joined by spaces, `$4` Unix seconds, `$5`
/// request ids): appends the entries whose grant still covers them for an
/// active user, in one snapshot, and answers their positions (from 1).
static APPEND_GROUP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH e AS ( \
           SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[]) WITH ORDINALITY \
             AS e(user_id, client_id, scopes, at, request_id, n)), \
         allowed AS MATERIALIZED ( \
           SELECT e.* FROM e \
           WHERE {}), \
         appended AS ( \
           INSERT INTO access_log (user_id, client_id, scopes, accessed_at, request_id) \
           SELECT user_id, client_id, string_to_array(scopes, ' '), to_timestamp(at), request_id \
           FROM allowed ORDER BY n) \
         SELECT n FROM allowed",
        may_append("e.user_id", "e.client_id", "string_to_array(e.scopes, ' ')")
    )
});

/// The one-row form of [`APPEND_GROUP`]: a group that failed appends each
/// entry alone with it.
static APPEND_ONE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("{} WHERE {}", crate::account::ACCESS_LOG_APPEND, may_append("$1", "$2", "$3::TEXT[]"))
});

/// An entry waiting for its group, and where its answer goes.
type Queued = (AccessLogEntry, oneshot::Sender<Result<bool, RepositoryError>>);

/// The handle on the group appender of one pool: cheap to clone. The task
/// starts with the first entry and ends when the last handle is dropped.
#[derive(Debug, Clone)]
pub struct AccessLogGroup {
    pool: PgPool,
    queue: Arc<OnceLock<mpsc::Sender<Queued>>>,
}

impl AccessLogGroup {
    /// The appender on `pool`.
    pub fn new(pool: PgPool) -> Self {
        Self { pool, queue: Arc::new(OnceLock::new()) }
    }

    /// Appends `entry` in the next group if, when the group is written,
    /// the user is active and the grant covers the entry's scopes; answers
    /// whether it was written, once it is durable.
    pub async fn append_if_granted(&self, entry: AccessLogEntry) -> Result<bool, RepositoryError> {
        let queue = self.queue.get_or_init(|| {
            let (queue, entries) = mpsc::channel(QUEUE);
            tokio::spawn(append_groups(self.pool.clone(), entries));
            queue
        });
        let (reply, answer) = oneshot::channel();
        queue.send((entry, reply)).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> RepositoryError {
    RepositoryError::Unexpected("the access-log group appender has stopped".into())
}

/// The appender: takes every queued entry (up to [`MAX_GROUP`]) and
/// appends them as one group, until every handle is gone.
async fn append_groups(pool: PgPool, mut entries: mpsc::Receiver<Queued>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while entries.recv_many(&mut group, MAX_GROUP).await > 0 {
        match append_group(&pool, &group).await {
            Ok(written) => {
                for (n, (_, reply)) in group.drain(..).enumerate() {
                    let _ = reply.send(Ok(written.binary_search(&(n as i64 + 1)).is_ok()));
                }
            }
            Err(_) => {
                // One entry may be what the table refuses: each alone.
                for (entry, reply) in group.drain(..) {
                    let _ = reply.send(append_one(&pool, &entry).await);
                }
            }
        }
    }
}

/// Appends `group` by [`APPEND_GROUP`]; the positions written, sorted.
async fn append_group(pool: &PgPool, group: &[Queued]) -> Result<Vec<i64>, RepositoryError> {
    let column = |f: fn(&AccessLogEntry) -> String| group.iter().map(|(e, _)| f(e)).collect::<Vec<_>>();
    let mut written: Vec<i64> = sqlx::query_scalar(&APPEND_GROUP)
        .bind(group.iter().map(|(e, _)| e.user.0).collect::<Vec<_>>())
        .bind(column(|e| e.client.as_str().to_owned()))
        .bind(column(|e| scope_names(e.scopes).join(" ")))
        .bind(group.iter().map(|(e, _)| e.at).collect::<Vec<_>>())
        .bind(column(|e| e.request_id.clone()))
        .fetch_all(pool)
        .await
        .map_err(to_repository_error)?;
    written.sort_unstable();
    Ok(written)
}

/// Appends `entry` alone by [`APPEND_ONE`]; whether it was written.
async fn append_one(pool: &PgPool, entry: &AccessLogEntry) -> Result<bool, RepositoryError> {
    let done = sqlx::query(&APPEND_ONE)
        .bind(entry.user.0)
        .bind(entry.client.as_str())
        .bind(scope_names(entry.scopes))
        .bind(entry.at)
        .bind(&entry.request_id)
        .execute(pool)
        .await
        .map_err(to_repository_error)?;
    Ok(done.rows_affected() == 1)
}
