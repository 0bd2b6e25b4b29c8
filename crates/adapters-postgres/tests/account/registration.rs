//! The migration that makes e-mail addresses unique (PostgreSQL's own
//! history; sign-up itself is in the storage contract,
//! crates/storage-contract).

use std::borrow::Cow;

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::MIGRATOR;
use sqlx::migrate::Migrator;
use sqlx::Connection;

#[tokio::test]
async fn the_unique_e_mail_migration_stops_on_shared_addresses_and_names_the_query_that_lists_them() {
    let db = TestDatabase::new_unmigrated().await;
    let before: Vec<_> = MIGRATOR.iter().filter(|m| m.version < 20261125000020).cloned().collect();
    Migrator { migrations: Cow::Owned(before), ..Migrator::DEFAULT }.run(&db.pool).await.expect("older migrations");
    for (name, email) in [("a", "Shared@x.gov.br"), ("b", "shared@X.gov.br"), ("c", ""), ("d", "")] {
        sqlx::query("INSERT INTO users (username, password, email) VALUES ($1, 'h', $2)")
            .bind(name)
            .bind(email)
            .execute(&db.pool)
            .await
            .expect("user");
    }
    // One connection for both runs: sqlx's migration lock is a session
    // advisory lock that a failed run leaves held on its connection, so a
    // second run on another pooled connection would wait for it forever.
    let mut conn = db.pool.acquire().await.expect("connection");
    let e = MIGRATOR.run(&mut *conn).await.expect_err("refused").to_string();
    assert!(e.contains("1 address(es) are shared by more than one account"), "{e}");
    assert!(e.contains("SELECT lower(email), array_agg(username) FROM users"), "{e}");
    sqlx::query("UPDATE users SET email = 'b@x.gov.br' WHERE username = 'b'").execute(&db.pool).await.expect("fix");
    // Closing the connection frees the lock; the later migrations need the
    // e-mail keys that `migrate` computes between them.
    conn.detach().close().await.expect("close");
    credencial_adapters_postgres::migrate(&db.pool).await.expect("runs once the addresses are resolved");
}
