//! What only PostgreSQL's catalogue and types give the host user table
//! ([`PgHostUserStore`]): domains, `json` beside `jsonb`, `timestamp`
//! without a zone. The port's behaviour on both engines is the storage
//! contract suite's (`crates/storage-contract`, `host_users`).

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgHostUserStore;
use credencial_domain::host_table::{ColumnName, ColumnType, HostValue, TableName};
use credencial_ports::HostUserStore;
use serde_json::json;
use sqlx::Executor;

fn table(name: &str) -> TableName {
    TableName::parse(name).expect("table name")
}

fn values(pairs: &[(&str, HostValue)]) -> Vec<(ColumnName, HostValue)> {
    pairs.iter().map(|(c, v)| (ColumnName::parse(c).expect("column"), v.clone())).collect()
}

fn text(s: &str) -> HostValue {
    HostValue::Text(s.to_owned())
}

async fn read(db: &TestDatabase, column: &str, id: i64) -> Option<String> {
    sqlx::query_scalar(&format!(r#"SELECT "{column}"::text FROM host_users WHERE id = $1"#))
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .expect("read column")
}

#[tokio::test]
async fn a_domain_has_its_base_types_class_and_its_own_check_skips_its_columns() {
    let db = TestDatabase::new().await;
    db.pool
        .execute(
            "CREATE DOMAIN short_tag AS VARCHAR(5) CHECK (VALUE <> 'x');
             CREATE DOMAIN two_letters AS TEXT CHECK (VALUE ~ '^[A-Z]{2}$');
             ALTER TABLE host_users ADD COLUMN tag short_tag, ADD COLUMN region two_letters,
                                    ADD COLUMN origin two_letters;",
        )
        .await
        .expect("add domain columns");
    let store = PgHostUserStore::new(db.pool.clone());
    let shape = store.describe(&table("host_users")).await.expect("describe");
    let tag = shape.column("tag").expect("tag");
    assert_eq!((&tag.column_type, tag.max_length), (&ColumnType::Text, Some(5)), "the base type's class and length");

    let username = ColumnName::parse("username").expect("column");
    let row = values(&[("region", text("RN")), ("origin", text("PB"))]);
    let maria = store.upsert(&table("host_users"), &username, text("maria"), row).await.expect("create");
    // A domain's own check: every column of that domain is skipped.
    let row = values(&[("region", text("rn!")), ("origin", text("CE")), ("mother_name", text("ANA"))]);
    store.upsert(&table("host_users"), &username, text("maria"), row).await.expect("domain check skipped");
    assert_eq!(read(&db, "region", maria.id).await.as_deref(), Some("RN"), "old value kept");
    assert_eq!(read(&db, "origin", maria.id).await.as_deref(), Some("PB"), "same domain: skipped too");
    assert_eq!(read(&db, "mother_name", maria.id).await.as_deref(), Some("ANA"));
}

#[tokio::test]
async fn json_and_timestamp_without_zone_get_their_own_casts() {
    let db = TestDatabase::new().await;
    db.pool
        .execute("ALTER TABLE host_users ADD COLUMN seen_at TIMESTAMP, ADD COLUMN extra JSON")
        .await
        .expect("add columns");
    let store = PgHostUserStore::new(db.pool.clone());
    let shape = store.describe(&table("host_users")).await.expect("describe");
    let type_names: Vec<(&str, &str)> = ["profile", "extra", "date_joined", "seen_at", "state"]
        .map(|c| (c, shape.column(c).expect(c).type_name.as_str()))
        .to_vec();
    assert_eq!(
        type_names,
        [
            ("profile", "jsonb"),
            ("extra", "json"),
            ("date_joined", "timestamptz"),
            ("seen_at", "timestamp"),
            ("state", "bpchar")
        ]
    );
    let row =
        values(&[("seen_at", HostValue::Timestamp(1_700_000_000)), ("extra", HostValue::Json(json!({"a": [1, 2]})))]);
    let username = ColumnName::parse("username").expect("column");
    let outcome = store.upsert(&table("host_users"), &username, text("ana"), row).await.expect("create");
    assert_eq!(read(&db, "seen_at", outcome.id).await.as_deref(), Some("2023-11-14 22:13:20"), "UTC");
    assert_eq!(read(&db, "extra", outcome.id).await.as_deref(), Some(r#"{"a":[1,2]}"#), "json keeps the text");
}
