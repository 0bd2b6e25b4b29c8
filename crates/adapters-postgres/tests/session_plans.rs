//! Every statement a request or the purge runs on the tables of browser
//! sessions, passkeys, WebAuthn ceremonies, security events and mail is answered
//! with an index: with sequential scans priced out (`enable_seqscan = off`,
//! so that the planner takes an index whenever one can serve, however small
//! the test table), the plan has no sequential scan and searches an index
//! by the condition (`Index Cond`).

use credencial_adapters_postgres::testing::TestDatabase;
use serde_json::Value;
use sqlx::{Connection, Executor, PgConnection};

/// Statements as the stores write them, with literals for parameters.
const STATEMENTS: &[&str] = &[
    "SELECT id FROM sessions WHERE token_hash = '\\x00'::bytea",
    "SELECT id FROM sessions WHERE user_id = 1 ORDER BY id",
    "SELECT id FROM sessions WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10",
    "SELECT id FROM passkeys WHERE credential_id = '\\x00'::bytea",
    "SELECT id FROM passkeys WHERE user_id = 1 ORDER BY id LIMIT 10",
    "SELECT state FROM webauthn_ceremonies WHERE id_hash = '\\x00'::bytea AND expires_at > 5",
    "SELECT id_hash FROM webauthn_ceremonies WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10",
    "SELECT at FROM security_events WHERE user_id = 1 ORDER BY id DESC LIMIT 30",
    "SELECT id FROM security_events WHERE at < 5 ORDER BY at LIMIT 10",
    "SELECT id FROM mail_outbox WHERE next_attempt_at <= 5 ORDER BY next_attempt_at LIMIT 20",
    "SELECT id FROM mail_outbox WHERE sent_at < 5 ORDER BY sent_at LIMIT 10",
    "SELECT id FROM mail_outbox WHERE failed_at IS NOT NULL AND id < 9 ORDER BY id DESC LIMIT 50",
    "UPDATE mail_outbox SET next_attempt_at = 1 WHERE id = 1",
    "SELECT user_id FROM mail_links WHERE token_hash = '\\x00'::bytea",
    "SELECT issued_at FROM mail_links WHERE user_id = 1 AND purpose = 'p' AND issued_at > 5 LIMIT 1",
    "DELETE FROM mail_links WHERE user_id = 1 AND purpose = 'p'",
    "SELECT token_hash FROM mail_links WHERE expires_at <= 5 ORDER BY expires_at LIMIT 10",
];

fn nodes<'a>(node: &'a Value, all: &mut Vec<&'a Value>) {
    all.push(node);
    for child in node["Plans"].as_array().into_iter().flatten() {
        nodes(child, all);
    }
}

#[tokio::test]
async fn every_session_passkey_ceremony_and_event_statement_uses_an_index() {
    let db = TestDatabase::new().await;
    let mut connection = PgConnection::connect(&db.url).await.expect("connect");
    connection.execute("SET enable_seqscan = off").await.expect("set");
    for statement in STATEMENTS {
        let explain = format!("EXPLAIN (FORMAT JSON) {statement}");
        let plan: Value =
            sqlx::query_scalar(&explain).fetch_one(&mut connection).await.unwrap_or_else(|e| panic!("{explain}: {e}"));
        let mut all = Vec::new();
        nodes(&plan[0]["Plan"], &mut all);
        let types: Vec<&str> = all.iter().filter_map(|n| n["Node Type"].as_str()).collect();
        let index_scans: Vec<&&Value> =
            all.iter().filter(|n| n["Node Type"].as_str().is_some_and(|t| t.contains("Index"))).collect();
        assert!(
            !types.contains(&"Seq Scan")
                && !index_scans.is_empty()
                && index_scans.iter().all(|n| n.get("Index Cond").is_some()),
            "{statement}: {plan:#}"
        );
    }
}
