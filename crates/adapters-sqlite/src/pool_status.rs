//! [`PoolStatus`] of both pools (the writer and the readers) counted as
//! one: their own counters, no query.

use credencial_ports::{PoolConnections, PoolStatus};
use sqlx::SqlitePool;

use crate::SqliteDb;

/// The state of the SQLite file's connections, for the metrics.
#[derive(Debug, Clone)]
pub struct SqlitePoolStatus {
    db: SqliteDb,
}

impl SqlitePoolStatus {
    /// The status of `db`'s pools.
    pub fn new(db: SqliteDb) -> Self {
        Self { db }
    }
}

fn connections(pool: &SqlitePool) -> PoolConnections {
    // `size` counts every open connection, idle ones included.
    PoolConnections::of(pool.size(), pool.num_idle(), pool.options().get_max_connections())
}

impl PoolStatus for SqlitePoolStatus {
    fn connections(&self) -> PoolConnections {
        connections(self.db.writer()) + connections(self.db.readers())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Waits (5 s at most) until `in_use` connections are checked out: a
    /// connection goes back to its pool on a task of sqlx's.
    async fn until_in_use(status: &SqlitePoolStatus, in_use: u32) {
        let back = async {
            while status.connections().in_use != in_use {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), back).await.unwrap_or_else(|_| panic!("never {in_use} in use"));
    }

    #[tokio::test]
    async fn the_writer_and_the_readers_count_together() {
        let file = crate::testing::TestDatabase::with_readers(3).await;
        let db = file.db.clone();
        let status = SqlitePoolStatus::new(db.clone());
        assert_eq!(status.connections().max, 4, "one writer and three readers");
        // The migration's connection goes back to its pool in the background.
        until_in_use(&status, 0).await;
        assert_eq!(status.connections().in_use, 0);

        let writer = db.writer().acquire().await.expect("the writer");
        let reader = db.readers().acquire().await.expect("a reader");
        assert_eq!(status.connections().in_use, 2);
        drop(writer);
        until_in_use(&status, 1).await;
        assert!(status.connections().idle >= 1, "{:?}", status.connections());
        drop(reader);
        until_in_use(&status, 0).await;
        assert!(status.connections().idle >= 2, "{:?}", status.connections());
    }
}
