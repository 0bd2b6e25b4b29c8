//! Reading one host user record back, column by column (the client
//! component's "my record" page). Writing it is [`crate::HostUserStore`].

use async_trait::async_trait;
use credencial_domain::host_table::TableName;

use crate::host_users::HostUserError;

/// One column of a host user row: its name and its value as text (`None`
/// for SQL `NULL`).
pub type RecordColumn = (String, Option<String>);

/// Reads host user rows.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HostUserRecords: Send + Sync + 'static {
    /// Every column of the row of `table` whose `id` is `id`, in table
    /// order, each value in PostgreSQL's text form (on SQLite too: a
    /// boolean reads `true`/`false`, a timestamp
    /// `YYYY-MM-DDTHH:MM:SS+00:00`); `None` when there is no such row.
    /// Errors: `InvalidTable` when the table does not exist; `Unexpected`
    /// when storage fails.
    async fn fetch(&self, table: &TableName, id: i64) -> Result<Option<Vec<RecordColumn>>, HostUserError>;
}
