//! Every statement a request or the purge runs on the tables of browser
//! sessions, passkeys, WebAuthn ceremonies, security events and mail searches an
//! index (`EXPLAIN QUERY PLAN`: `SEARCH <table> …`), never scans the table.

use credencial_adapters_sqlite::testing::TestDatabase;
use sqlx::{Connection, SqliteConnection};

/// Statements as the stores write them, with literals for parameters.
const STATEMENTS: &[(&str, &str)] = &[
    ("sessions", "SELECT id FROM sessions WHERE token_hash = x'00'"),
    ("sessions", "SELECT id FROM sessions WHERE user_id = 1 ORDER BY id"),
    ("sessions", "SELECT id FROM sessions WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10"),
    ("passkeys", "SELECT id FROM passkeys WHERE credential_id = x'00'"),
    ("passkeys", "SELECT id FROM passkeys WHERE user_id = 1 ORDER BY id LIMIT 10"),
    ("passkeys", "SELECT count(*) FROM passkeys WHERE user_id = 1"),
    ("webauthn_ceremonies", "SELECT state FROM webauthn_ceremonies WHERE id_hash = x'00' AND expires_at > 5"),
    (
        "webauthn_ceremonies",
        "SELECT id_hash FROM webauthn_ceremonies WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10",
    ),
    ("security_events", "SELECT at FROM security_events WHERE user_id = 1 ORDER BY id DESC LIMIT 30"),
    ("security_events", "SELECT id FROM security_events WHERE at < 5 ORDER BY at LIMIT 10"),
    ("mail_outbox", "SELECT id FROM mail_outbox WHERE next_attempt_at <= 5 ORDER BY next_attempt_at LIMIT 20"),
    ("mail_outbox", "SELECT id FROM mail_outbox WHERE sent_at < 5 ORDER BY sent_at LIMIT 10"),
    ("mail_outbox", "SELECT id FROM mail_outbox WHERE failed_at IS NOT NULL AND id < 9 ORDER BY id DESC LIMIT 50"),
    ("mail_outbox", "UPDATE mail_outbox SET next_attempt_at = 1 WHERE id = 1"),
    ("mail_links", "SELECT user_id FROM mail_links WHERE token_hash = x'00'"),
    ("mail_links", "SELECT issued_at FROM mail_links WHERE user_id = 1 AND purpose = 'p' AND issued_at > 5 LIMIT 1"),
    ("mail_links", "DELETE FROM mail_links WHERE user_id = 1 AND purpose = 'p'"),
    ("mail_links", "SELECT token_hash FROM mail_links WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10"),
];

#[tokio::test]
async fn every_session_passkey_ceremony_and_event_statement_searches_an_index() {
    let db = TestDatabase::new().await;
    let mut connection = SqliteConnection::connect(&db.url).await.expect("connect");
    for (table, statement) in STATEMENTS {
        let rows = sqlx::query_as::<_, (i64, i64, i64, String)>(&format!("EXPLAIN QUERY PLAN {statement}"))
            .fetch_all(&mut connection)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
        let plan: Vec<String> = rows.into_iter().map(|(_, _, _, detail)| detail).collect();
        let on_table: Vec<&String> = plan.iter().filter(|d| d.contains(&format!(" {table}"))).collect();
        assert!(
            !on_table.is_empty() && on_table.iter().all(|d| d.starts_with(&format!("SEARCH {table}"))),
            "{statement}: {plan:#?}"
        );
    }
}
