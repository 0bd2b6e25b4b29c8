//! Reading a host user row back ([`PgHostUserRecords`]) against a real
//! PostgreSQL database with the default `host_users` table.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgHostUserRecords;
use credencial_ports::{HostUserError, HostUserRecords};

#[tokio::test]
async fn a_row_reads_back_column_by_column_in_table_order_with_nulls() {
    let db = TestDatabase::new().await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO host_users (username, first_name, birth_date, profile) \
         VALUES ('52998224725', 'Ana', '1988-03-14', '{\"cpf\": \"52998224725\"}') RETURNING id",
    )
    .fetch_one(&db.pool)
    .await
    .expect("insert");
    let records = PgHostUserRecords::new(db.pool.clone());
    let row = records.fetch("host_users", id).await.expect("fetch").expect("row");
    let names: Vec<&str> = row.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(&names[..5], ["id", "username", "email", "first_name", "last_name"]);
    let get = |name: &str| row.iter().find(|(c, _)| c == name).and_then(|(_, v)| v.clone());
    assert_eq!(get("username").as_deref(), Some("52998224725"));
    assert_eq!(get("email"), None, "NULL");
    assert_eq!(get("birth_date").as_deref(), Some("1988-03-14"));
    assert_eq!(get("profile").as_deref(), Some(r#"{"cpf": "52998224725"}"#));
    assert_eq!(get("is_active").as_deref(), Some("true"));
    assert_eq!(records.fetch("host_users", id + 1).await.expect("fetch"), None);
}

#[tokio::test]
async fn unknown_or_invalid_tables_are_refused() {
    let db = TestDatabase::new().await;
    let records = PgHostUserRecords::new(db.pool.clone());
    assert!(matches!(records.fetch("people", 1).await, Err(HostUserError::InvalidTable(_))));
    assert!(matches!(records.fetch("host_users\"; DROP", 1).await, Err(HostUserError::InvalidTable(_))));
}
