//! The client component's host user table ([`HostUserStore`],
//! [`HostUserRecords`]): describing it, the get-or-create of a login, and
//! reading a row back. Every test starts from the default `host_users`
//! table; a test's own table is created with each engine's DDL.
//!
//! [`HostUserStore`]: credencial_ports::HostUserStore
//! [`HostUserRecords`]: credencial_ports::HostUserRecords

mod describe;
mod options;
mod records;
mod refusals;
mod upsert;

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use credencial_domain::host_table::{ColumnName, HostValue, TableName};
use credencial_ports::{HostUserError, UpsertOutcome};
use credencial_storage_contract::{Backend, Engine};
use futures_util::FutureExt;
use serde_json::json;
use tracing_subscriber::fmt::MakeWriter;

fn table(name: &str) -> TableName {
    TableName::parse(name).expect("table name")
}

fn column(name: &str) -> ColumnName {
    ColumnName::parse(name).expect("column name")
}

fn text(s: &str) -> HostValue {
    HostValue::Text(s.to_owned())
}

fn date(s: &str) -> HostValue {
    HostValue::Date(s.to_owned())
}

fn values(pairs: &[(&str, HostValue)]) -> Vec<(ColumnName, HostValue)> {
    pairs.iter().map(|(c, v)| (column(c), v.clone())).collect()
}

/// What the demo mapping writes for one person.
fn demo_values() -> Vec<(&'static str, HostValue)> {
    vec![
        ("email", text("maria@example.org")),
        ("first_name", text("Maria")),
        ("last_name", text("das Graças Souza")),
        ("birth_date", date("1988-03-14")),
        ("mother_name", text("ANA SOUZA")),
        ("profile", HostValue::Json(json!({"dados_publicos": {"nome": "Maria das Graças Souza"}}))),
    ]
}

/// The get-or-create of the login whose `lookup` column holds `value`.
async fn upsert<B: Backend>(
    b: &B,
    table_name: &str,
    lookup: &str,
    value: HostValue,
    pairs: &[(&str, HostValue)],
) -> Result<UpsertOutcome, HostUserError> {
    b.host_users().upsert(&table(table_name), &column(lookup), value, values(pairs)).await
}

/// One column of the row `id`, in its text form, as the port reads it back
/// (NULL as `None`).
async fn read<B: Backend>(b: &B, table_name: &str, name: &str, id: i64) -> Option<String> {
    let row = b.host_user_records().fetch(&table(table_name), id).await.expect("fetch").expect("row");
    row.into_iter().find(|(c, _)| c == name).unwrap_or_else(|| panic!("column {name}")).1
}

/// A JSON column's value, parsed.
async fn read_json<B: Backend>(b: &B, table_name: &str, name: &str, id: i64) -> Option<serde_json::Value> {
    read(b, table_name, name, id).await.map(|t| serde_json::from_str(&t).expect("JSON text"))
}

async fn count<B: Backend>(b: &B, table_name: &str) -> i64 {
    b.count(&format!("SELECT count(*) FROM {table_name}")).await
}

/// The engine's integer key column (`id <key>`), for a test's own table.
fn key<B: Backend>() -> &'static str {
    match B::ENGINE {
        Engine::Postgres => "BIGSERIAL PRIMARY KEY",
        Engine::Sqlite => "INTEGER PRIMARY KEY",
    }
}

/// Runs each of `statements` (SQL both engines take).
async fn run_all<B: Backend>(b: &B, statements: &[&str]) {
    for sql in statements {
        b.execute(sql).await;
    }
}

/// Runs each statement of the engine's set-up SQL.
async fn run<B: Backend>(b: &B, postgres: &[&str], sqlite: &[&str]) {
    let statements = match B::ENGINE {
        Engine::Postgres => postgres,
        Engine::Sqlite => sqlite,
    };
    run_all(b, statements).await;
}

/// Whether the engine refuses `sql` (the backend's `execute` panics on an
/// error, with the engine's message on stderr).
async fn refused<B: Backend>(b: &B, sql: &str) -> bool {
    AssertUnwindSafe(b.execute(sql)).catch_unwind().await.is_err()
}

/// Log lines written while the guard lives (on the test's own thread,
/// where its body runs).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let subscriber = tracing_subscriber::fmt().with_ansi(false).with_writer(self.clone()).finish();
        tracing::subscriber::set_default(subscriber)
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("lock").clone()).expect("utf-8")
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
