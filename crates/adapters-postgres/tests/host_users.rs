//! The host user record ([`PgHostUserStore`]) against a real PostgreSQL
//! (127.0.0.1:5432, or `TEST_DATABASE_URL`): every test gets a fresh,
//! migrated database with the default `host_users` table.

use std::io::Write;
use std::sync::{Arc, Mutex};

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::PgHostUserStore;
use credencial_domain::host_table::{check_columns, ColumnType, HostColumn, HostValue, TableShape, ValueKind};
use credencial_ports::{HostUserError, HostUserStore, UpsertOutcome};
use serde_json::json;
use sqlx::Executor;
use tracing_subscriber::fmt::MakeWriter;

fn text(s: &str) -> HostValue {
    HostValue::Text(s.to_owned())
}

fn date(s: &str) -> HostValue {
    HostValue::Date(s.to_owned())
}

fn values(pairs: &[(&str, HostValue)]) -> Vec<(String, HostValue)> {
    pairs.iter().map(|(c, v)| ((*c).to_owned(), v.clone())).collect()
}

/// What the demo mapping writes for one person.
fn demo_values() -> Vec<(String, HostValue)> {
    values(&[
        ("email", text("maria@example.org")),
        ("first_name", text("Maria")),
        ("last_name", text("das Graças Souza")),
        ("birth_date", date("1988-03-14")),
        ("mother_name", text("ANA SOUZA")),
        ("profile", HostValue::Json(json!({"dados_publicos": {"nome": "Maria das Graças Souza"}}))),
    ])
}

async fn setup() -> (TestDatabase, PgHostUserStore) {
    let db = TestDatabase::new().await;
    let store = PgHostUserStore::new(db.pool.clone());
    (db, store)
}

/// One column of a row, as text (NULL as `None`).
async fn read(db: &TestDatabase, table: &str, column: &str, id: i64) -> Option<String> {
    sqlx::query_scalar(&format!(r#"SELECT "{column}"::text FROM "{table}" WHERE id = $1"#))
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .expect("read column")
}

async fn count(db: &TestDatabase, table: &str) -> i64 {
    sqlx::query_scalar(&format!(r#"SELECT count(*) FROM "{table}""#)).fetch_one(&db.pool).await.expect("count")
}

fn column<'a>(shape: &'a TableShape, name: &str) -> &'a HostColumn {
    shape.column(name).unwrap_or_else(|| panic!("column {name}"))
}

/// Log lines written while the guard lives (this thread only).
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

// ---------------------------------------------------------------- describe

#[tokio::test]
async fn describe_reads_the_default_host_users_table() {
    let (_db, store) = setup().await;
    let shape = store.describe("host_users").await.expect("describe");
    assert_eq!(shape.table, "host_users");
    let names: Vec<&str> = shape.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "username",
            "email",
            "first_name",
            "last_name",
            "cpf",
            "birth_date",
            "mother_name",
            "city",
            "state",
            "profile",
            "is_active",
            "date_joined",
            "last_login"
        ]
    );
    let expect = [
        ("id", ColumnType::Integer, None, true),
        ("username", ColumnType::Text, Some(150), true),
        ("email", ColumnType::Text, Some(254), false),
        ("cpf", ColumnType::Text, Some(11), true),
        ("mother_name", ColumnType::Text, None, false),
        ("state", ColumnType::Text, Some(2), false),
        ("birth_date", ColumnType::Date, None, false),
        ("profile", ColumnType::Json, None, false),
        ("is_active", ColumnType::Boolean, None, false),
        ("date_joined", ColumnType::Timestamp, None, false),
        ("last_login", ColumnType::Timestamp, None, false),
    ];
    for (name, column_type, max_length, unique) in expect {
        let c = column(&shape, name);
        assert_eq!((&c.column_type, c.max_length, c.unique), (&column_type, max_length, unique), "{name}");
        assert!(!c.generated, "{name}");
    }
    assert_eq!(column(&shape, "profile").type_name, "jsonb");
    assert_eq!(column(&shape, "date_joined").type_name, "timestamptz");
    let required: Vec<&str> = shape.columns.iter().filter(|c| c.required).map(|c| c.name.as_str()).collect();
    assert_eq!(required, ["username"], "id, is_active and date_joined have defaults");
    assert!(shape.has_is_active());

    // The demo mapping passes the start-up check.
    let needs = [
        ("username", ValueKind::Text),
        ("first_name", ValueKind::Text),
        ("last_name", ValueKind::Text),
        ("birth_date", ValueKind::Date),
        ("mother_name", ValueKind::Text),
        ("profile", ValueKind::Json),
    ];
    assert_eq!(check_columns(&shape, &needs, "username"), Ok(()));
    let err = check_columns(&shape, &needs, "email").expect_err("email is not unique");
    assert!(err.contains("\"email\""), "{err}");
}

#[tokio::test]
async fn describe_reads_a_custom_table_with_its_unique_index_and_odd_columns() {
    let (db, store) = setup().await;
    db.pool
        .execute(
            "CREATE DOMAIN short_tag AS VARCHAR(5) CHECK (VALUE <> 'x');
             CREATE TABLE app_people (
                 id       SERIAL PRIMARY KEY,
                 login    VARCHAR(40) NOT NULL,
                 nick     TEXT,
                 code     TEXT,
                 seen_at  TIMESTAMP,
                 verified BOOLEAN NOT NULL DEFAULT FALSE,
                 extra    JSON,
                 tag      short_tag,
                 amount   NUMERIC,
                 token    UUID NOT NULL,
                 slug     TEXT GENERATED ALWAYS AS (lower(login)) STORED
             );
             CREATE UNIQUE INDEX app_people_login ON app_people (login);
             CREATE UNIQUE INDEX app_people_nick ON app_people (lower(nick));
             CREATE UNIQUE INDEX app_people_code ON app_people (code) WHERE code IS NOT NULL;
             ALTER TABLE app_people ADD CONSTRAINT app_people_pair UNIQUE (nick, code);
             CREATE VIEW app_people_view AS SELECT * FROM app_people;",
        )
        .await
        .expect("create custom table");

    let shape = store.describe("app_people").await.expect("describe");
    let unique: Vec<&str> = shape.columns.iter().filter(|c| c.unique).map(|c| c.name.as_str()).collect();
    assert_eq!(unique, ["id", "login"], "expression, partial and multi-column indexes do not count");
    assert_eq!(column(&shape, "login").column_type, ColumnType::Text);
    assert_eq!(column(&shape, "login").max_length, Some(40));
    assert_eq!(column(&shape, "seen_at").column_type, ColumnType::Timestamp);
    assert_eq!(column(&shape, "seen_at").type_name, "timestamp");
    assert_eq!(column(&shape, "verified").column_type, ColumnType::Boolean);
    assert_eq!(column(&shape, "extra").column_type, ColumnType::Json);
    assert_eq!(column(&shape, "extra").type_name, "json");
    assert_eq!(column(&shape, "tag").column_type, ColumnType::Text, "a domain has its base type's class");
    assert_eq!(column(&shape, "tag").max_length, Some(5));
    assert_eq!(column(&shape, "amount").column_type, ColumnType::Other("numeric".to_owned()));
    assert!(column(&shape, "slug").generated);
    let required: Vec<&str> = shape.columns.iter().filter(|c| c.required).map(|c| c.name.as_str()).collect();
    assert_eq!(required, ["login", "token"]);
    assert!(!shape.has_is_active());

    let err = check_columns(&shape, &[("login", ValueKind::Text), ("nick", ValueKind::Text)], "login")
        .expect_err("token is required and unmapped");
    assert!(err.contains("\"token\""), "{err}");
    let err = check_columns(&shape, &[("amount", ValueKind::Text)], "login").expect_err("numeric");
    assert!(err.contains("\"amount\""), "{err}");
    let err = check_columns(&shape, &[], "code").expect_err("partial unique index");
    assert!(err.contains("\"code\""), "{err}");
    let err = check_columns(&shape, &[("slug", ValueKind::Text)], "login").expect_err("generated");
    assert!(err.contains("\"slug\""), "{err}");

    for (table, what) in [("app_people_view", "not a table"), ("no_such_table", "does not exist")] {
        match store.describe(table).await {
            Err(HostUserError::InvalidTable(message)) => assert!(message.contains(what), "{message}"),
            other => panic!("{table}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_custom_table_without_is_active_takes_timestamps_json_and_booleans() {
    let (db, store) = setup().await;
    db.pool
        .execute(
            "CREATE TABLE members (
                 id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                 login    VARCHAR(40) NOT NULL CONSTRAINT members_login UNIQUE,
                 seen_at  TIMESTAMP,
                 seen_tz  TIMESTAMPTZ,
                 verified BOOLEAN NOT NULL DEFAULT FALSE,
                 extra    JSON
             )",
        )
        .await
        .expect("create members");
    let stamp = 1_700_000_000; // 2023-11-14T22:13:20Z
    let row = values(&[
        ("seen_at", HostValue::Timestamp(stamp)),
        ("seen_tz", HostValue::Timestamp(stamp)),
        ("verified", HostValue::Bool(true)),
        ("extra", HostValue::Json(json!({"a": [1, "dois"]}))),
    ]);
    let first = store.upsert("members", "login", text("ana"), row.clone()).await.expect("create");
    assert!(first.created);
    let again = store.upsert("members", "login", text("ana"), row).await.expect("update");
    assert_eq!(again, UpsertOutcome { id: first.id, created: false });
    let (seen_at, seen_tz, verified, extra): (String, i64, bool, String) = sqlx::query_as(
        "SELECT seen_at::text, extract(epoch FROM seen_tz)::bigint, verified, extra::text FROM members WHERE id = $1",
    )
    .bind(first.id)
    .fetch_one(&db.pool)
    .await
    .expect("read member");
    assert_eq!(seen_at, "2023-11-14 22:13:20", "a timestamp without zone holds UTC");
    assert_eq!(seen_tz, stamp);
    assert!(verified);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&extra).expect("json"), json!({"a": [1, "dois"]}));
}

// ---------------------------------------------------------------- get-or-create

#[tokio::test]
async fn first_login_creates_the_row_and_the_next_updates_it() {
    let (db, store) = setup().await;
    let first = store.upsert("host_users", "username", text("maria"), demo_values()).await.expect("create");
    assert!(first.created);
    assert_eq!(read(&db, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"));
    assert_eq!(read(&db, "host_users", "last_name", first.id).await.as_deref(), Some("das Graças Souza"));
    assert_eq!(read(&db, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-14"));
    assert_eq!(read(&db, "host_users", "is_active", first.id).await.as_deref(), Some("true"));
    let profile = read(&db, "host_users", "profile", first.id).await.expect("profile");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&profile).expect("json"),
        json!({"dados_publicos": {"nome": "Maria das Graças Souza"}})
    );

    let changed = values(&[
        ("email", text("maria.souza@example.org")),
        ("birth_date", date("1988-03-15")),
        ("last_login", HostValue::Timestamp(1_700_000_000)),
    ]);
    let second = store.upsert("host_users", "username", text("maria"), changed).await.expect("update");
    assert_eq!(second, UpsertOutcome { id: first.id, created: false });
    assert_eq!(read(&db, "host_users", "email", first.id).await.as_deref(), Some("maria.souza@example.org"));
    assert_eq!(read(&db, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-15"));
    assert_eq!(read(&db, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"), "not in the update");
    let last_login: i64 = sqlx::query_scalar("SELECT extract(epoch FROM last_login)::bigint FROM host_users")
        .fetch_one(&db.pool)
        .await
        .expect("last_login");
    assert_eq!(last_login, 1_700_000_000);

    let other = store.upsert("host_users", "username", text("joao"), Vec::new()).await.expect("create joao");
    assert!(other.created);
    assert_ne!(other.id, first.id);
    assert_eq!(count(&db, "host_users").await, 2);
    let again = store.upsert("host_users", "username", text("joao"), Vec::new()).await.expect("nothing to update");
    assert_eq!(again, UpsertOutcome { id: other.id, created: false });
}

#[tokio::test]
async fn a_column_skipped_or_given_nothing_keeps_its_old_value() {
    let (db, store) = setup().await;
    let first = store.upsert("host_users", "username", text("maria"), demo_values()).await.expect("create");
    // The map skipped email (scope unavailable) and split a name without a
    // space: last_name gets the empty string it was given.
    let later = values(&[
        ("first_name", text("Maria")),
        ("last_name", text("")),
        ("profile", HostValue::Json(serde_json::Value::Null)),
        ("city", text("Natal")),
    ]);
    let second = store.upsert("host_users", "username", text("maria"), later).await.expect("update");
    assert!(!second.created);
    assert_eq!(read(&db, "host_users", "email", first.id).await.as_deref(), Some("maria@example.org"));
    assert_eq!(read(&db, "host_users", "last_name", first.id).await.as_deref(), Some(""));
    assert!(read(&db, "host_users", "profile", first.id).await.is_some(), "JSON null is nothing");
    assert_eq!(read(&db, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-14"), "not mapped now");
    assert_eq!(read(&db, "host_users", "city", first.id).await.as_deref(), Some("Natal"));

    // An entry for the lookup column is ignored; of two entries the later wins.
    let twice = values(&[("username", text("someone-else")), ("city", text("Mossoró")), ("city", text("Caicó"))]);
    store.upsert("host_users", "username", text("maria"), twice).await.expect("update");
    assert_eq!(read(&db, "host_users", "username", first.id).await.as_deref(), Some("maria"));
    assert_eq!(read(&db, "host_users", "city", first.id).await.as_deref(), Some("Caicó"));
}

#[tokio::test]
async fn an_inactive_host_user_is_refused_and_never_reactivated() {
    let (db, store) = setup().await;
    let first = store.upsert("host_users", "username", text("maria"), demo_values()).await.expect("create");
    sqlx::query("UPDATE host_users SET is_active = false WHERE id = $1")
        .bind(first.id)
        .execute(&db.pool)
        .await
        .expect("deactivate");

    let attempt = values(&[("email", text("new@example.org")), ("first_name", text("Outra"))]);
    let err = store.upsert("host_users", "username", text("maria"), attempt).await.expect_err("inactive");
    assert_eq!(err, HostUserError::Inactive);
    assert_eq!(read(&db, "host_users", "is_active", first.id).await.as_deref(), Some("false"));
    assert_eq!(read(&db, "host_users", "email", first.id).await.as_deref(), Some("maria@example.org"), "unchanged");
    assert_eq!(read(&db, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"), "unchanged");
    assert_eq!(count(&db, "host_users").await, 1);

    let err = store.upsert("host_users", "username", text("maria"), Vec::new()).await.expect_err("still inactive");
    assert_eq!(err, HostUserError::Inactive);
    let err = store
        .upsert("host_users", "username", text("maria"), values(&[("is_active", HostValue::Bool(true))]))
        .await
        .expect_err("is_active is not the mapping's to write");
    assert_eq!(err, HostUserError::UnknownColumn("is_active".to_owned()));
    assert_eq!(read(&db, "host_users", "is_active", first.id).await.as_deref(), Some("false"));
}

#[tokio::test]
async fn a_value_that_does_not_fit_is_skipped_with_a_warning_naming_the_column_and_the_rest_is_written() {
    let (db, store) = setup().await;
    let captured = Captured::default();
    let _guard = captured.install();
    let row = values(&[
        ("birth_date", date("2026-13-45")),
        ("state", text("Rio Grande do Norte")),
        ("mother_name", text("ANA\0SOUZA")),
        ("first_name", HostValue::Json(json!({"x": 1}))),
        ("last_name", text("Souza")),
        ("city", text("Natal")),
    ]);
    let outcome = store.upsert("host_users", "username", text("maria"), row).await.expect("login goes on");
    assert!(outcome.created);
    for skipped in ["birth_date", "state", "mother_name", "first_name"] {
        assert_eq!(read(&db, "host_users", skipped, outcome.id).await, None, "{skipped}");
    }
    assert_eq!(read(&db, "host_users", "last_name", outcome.id).await.as_deref(), Some("Souza"));
    assert_eq!(read(&db, "host_users", "city", outcome.id).await.as_deref(), Some("Natal"));

    // Later, a bad date does not erase the good one.
    store
        .upsert("host_users", "username", text("maria"), values(&[("birth_date", date("1988-03-14"))]))
        .await
        .expect("good date");
    store
        .upsert("host_users", "username", text("maria"), values(&[("birth_date", date("1988-02-30"))]))
        .await
        .expect("bad date skipped");
    assert_eq!(read(&db, "host_users", "birth_date", outcome.id).await.as_deref(), Some("1988-03-14"));

    let logs = captured.text();
    for column in ["birth_date", "state", "mother_name", "first_name"] {
        assert!(logs.contains(&format!("column=\"{column}\"")), "{column} is named in:\n{logs}");
    }
    assert!(logs.contains("WARN"), "{logs}");
    for value in ["2026-13-45", "1988-02-30", "Rio Grande do Norte", "ANA"] {
        assert!(!logs.contains(value), "the log shows the value {value:?}:\n{logs}");
    }
}

#[tokio::test]
async fn a_value_refused_by_a_check_or_unique_constraint_is_skipped_and_the_rest_is_written() {
    let (db, store) = setup().await;
    db.pool
        .execute(
            "ALTER TABLE host_users ADD CONSTRAINT host_users_cpf_digits CHECK (cpf ~ '^[0-9]{11}$');
             CREATE DOMAIN two_letters AS TEXT CHECK (VALUE ~ '^[A-Z]{2}$');
             ALTER TABLE host_users ADD COLUMN region two_letters, ADD COLUMN origin two_letters;",
        )
        .await
        .expect("add check and domain columns");
    let captured = Captured::default();
    let _guard = captured.install();

    let row = values(&[("cpf", text("123.456.78")), ("city", text("Natal")), ("region", text("RN"))]);
    let maria = store.upsert("host_users", "username", text("maria"), row).await.expect("check skipped");
    assert_eq!(read(&db, "host_users", "cpf", maria.id).await, None);
    assert_eq!(read(&db, "host_users", "city", maria.id).await.as_deref(), Some("Natal"));
    assert_eq!(read(&db, "host_users", "region", maria.id).await.as_deref(), Some("RN"));

    // A domain's own check: the columns of that domain are skipped.
    let row = values(&[("region", text("rn!")), ("mother_name", text("ANA"))]);
    store.upsert("host_users", "username", text("maria"), row).await.expect("domain check skipped");
    assert_eq!(read(&db, "host_users", "region", maria.id).await.as_deref(), Some("RN"), "old value kept");
    assert_eq!(read(&db, "host_users", "mother_name", maria.id).await.as_deref(), Some("ANA"));

    store
        .upsert("host_users", "username", text("maria"), values(&[("cpf", text("12345678901"))]))
        .await
        .expect("good cpf");
    // Another person arriving with Maria's CPF: the CPF is skipped, not moved.
    let row = values(&[("cpf", text("12345678901")), ("city", text("Caicó"))]);
    let joao = store.upsert("host_users", "username", text("joao"), row).await.expect("unique skipped");
    assert!(joao.created);
    assert_eq!(read(&db, "host_users", "cpf", joao.id).await, None);
    assert_eq!(read(&db, "host_users", "city", joao.id).await.as_deref(), Some("Caicó"));
    assert_eq!(read(&db, "host_users", "cpf", maria.id).await.as_deref(), Some("12345678901"));

    let logs = captured.text();
    assert!(logs.contains("column=\"cpf\"") && logs.contains("column=\"region\""), "{logs}");
    assert!(!logs.contains("123.456.78") && !logs.contains("12345678901") && !logs.contains("rn!"), "{logs}");

    // A lookup value the lookup column refuses cannot identify anyone.
    let row = values(&[("username", text("ana"))]);
    let err = store.upsert("host_users", "cpf", text("not-digits"), row).await.expect_err("check on lookup");
    assert_eq!(err, HostUserError::UnusableLookup("cpf".to_owned()));
}

#[tokio::test]
async fn a_required_column_without_value_refuses_a_new_user_but_an_existing_one_logs_in() {
    let (db, store) = setup().await;
    db.pool
        .execute(
            "CREATE TABLE accounts (
                 id        BIGSERIAL PRIMARY KEY,
                 email     TEXT NOT NULL UNIQUE,
                 full_name TEXT NOT NULL,
                 city      TEXT,
                 is_active BOOLEAN NOT NULL DEFAULT TRUE
             );
             INSERT INTO accounts (email, full_name) VALUES ('old@example.org', 'Old Name');
             INSERT INTO accounts (email, full_name, is_active) VALUES ('off@example.org', 'Off', false);",
        )
        .await
        .expect("create accounts");

    let err = store
        .upsert("accounts", "email", text("new@example.org"), values(&[("city", text("Natal"))]))
        .await
        .expect_err("full_name missing");
    assert_eq!(err, HostUserError::MissingRequired("full_name".to_owned()));
    assert_eq!(count(&db, "accounts").await, 2);

    let outcome = store
        .upsert("accounts", "email", text("old@example.org"), values(&[("city", text("Natal"))]))
        .await
        .expect("existing user updated");
    assert!(!outcome.created);
    assert_eq!(read(&db, "accounts", "city", outcome.id).await.as_deref(), Some("Natal"));
    assert_eq!(read(&db, "accounts", "full_name", outcome.id).await.as_deref(), Some("Old Name"));

    let err = store
        .upsert("accounts", "email", text("off@example.org"), values(&[("city", text("Natal"))]))
        .await
        .expect_err("inactive");
    assert_eq!(err, HostUserError::Inactive);
    let city: Option<String> = sqlx::query_scalar("SELECT city FROM accounts WHERE email = 'off@example.org'")
        .fetch_one(&db.pool)
        .await
        .expect("city");
    assert_eq!(city, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_concurrent_first_logins_of_one_person_leave_exactly_one_row() {
    let (db, store) = setup().await;
    let logins = (0..32).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            let row = values(&[("email", text("maria@example.org")), ("city", text(&format!("city {i}")))]);
            store.upsert("host_users", "username", text("maria"), row).await
        })
    });
    let outcomes: Vec<UpsertOutcome> =
        futures_util::future::join_all(logins).await.into_iter().map(|r| r.expect("task").expect("login")).collect();
    assert_eq!(outcomes.iter().filter(|o| o.created).count(), 1, "exactly one login created the row");
    assert!(outcomes.iter().all(|o| o.id == outcomes[0].id), "every login landed on the same row");
    assert_eq!(count(&db, "host_users").await, 1);
}

// ---------------------------------------------------------------- names and values

#[tokio::test]
async fn sql_in_values_is_stored_literally() {
    let (db, store) = setup().await;
    let nasty =
        ["maria'); DROP TABLE host_users; --", "' OR '1'='1", "Robert\"; DELETE FROM host_users; --", "$1 $$ \\ %s"];
    store.upsert("host_users", "username", text("bystander"), Vec::new()).await.expect("bystander");
    for (i, value) in nasty.iter().enumerate() {
        let row = values(&[
            ("first_name", text(value)),
            ("mother_name", text(value)),
            ("birth_date", date(value)),
            ("profile", HostValue::Json(json!({ "x": value, (*value): [value] }))),
        ]);
        let outcome = store.upsert("host_users", "username", text(value), row).await.expect("stored");
        assert!(outcome.created, "{i}: no other row matched");
        assert_eq!(read(&db, "host_users", "username", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&db, "host_users", "first_name", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&db, "host_users", "mother_name", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&db, "host_users", "birth_date", outcome.id).await, None, "not a date");
        let profile = read(&db, "host_users", "profile", outcome.id).await.expect("profile");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&profile).expect("json"),
            json!({ "x": value, (*value): [value] })
        );
    }
    assert_eq!(count(&db, "host_users").await, 1 + nasty.len() as i64);
}

#[tokio::test]
async fn invalid_names_are_refused_before_any_sql_runs() {
    // Nothing listens on port 1: any statement would fail as Unexpected.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(std::time::Duration::from_secs(2))
        .connect_lazy("postgres://nobody@127.0.0.1:1/nothing")
        .expect("lazy pool");
    let store = PgHostUserStore::new(pool);
    for table in ["Host_Users", "host_users; DROP TABLE users", "public.host_users", "\"host_users\"", ""] {
        assert!(matches!(store.describe(table).await, Err(HostUserError::InvalidTable(_))), "{table}");
        assert!(
            matches!(
                store.upsert(table, "username", text("maria"), Vec::new()).await,
                Err(HostUserError::InvalidTable(_))
            ),
            "{table}"
        );
    }
    for column in ["User", "first name", "x\" = 'y', \"is_active", "a".repeat(64).as_str()] {
        let err = store.upsert("host_users", column, text("maria"), Vec::new()).await.expect_err("lookup");
        assert_eq!(err, HostUserError::UnknownColumn(column.to_owned()));
        let err = store
            .upsert("host_users", "username", text("maria"), values(&[(column, text("v"))]))
            .await
            .expect_err("value");
        assert_eq!(err, HostUserError::UnknownColumn(column.to_owned()));
    }
    // A valid name does reach the database (and fails there).
    assert!(matches!(store.describe("host_users").await, Err(HostUserError::Unexpected(_))));
}

#[tokio::test]
async fn configuration_problems_and_unusable_lookups_are_reported_by_name() {
    let (db, store) = setup().await;
    let err = store.upsert("no_such_table", "username", text("maria"), Vec::new()).await.expect_err("no table");
    assert!(matches!(err, HostUserError::InvalidTable(_)), "{err:?}");
    let err = store.upsert("host_users", "nickname", text("maria"), Vec::new()).await.expect_err("no column");
    assert_eq!(err, HostUserError::UnknownColumn("nickname".to_owned()));
    let err = store
        .upsert("host_users", "username", text("maria"), values(&[("nickname", text("m"))]))
        .await
        .expect_err("no column");
    assert_eq!(err, HostUserError::UnknownColumn("nickname".to_owned()));
    let err =
        store.upsert("host_users", "username", text("maria"), values(&[("id", text("1"))])).await.expect_err("id");
    assert_eq!(err, HostUserError::UnknownColumn("id".to_owned()));
    let err = store.upsert("host_users", "email", text("m@example.org"), Vec::new()).await.expect_err("not unique");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("\"email\"")), "{err:?}");

    for lookup in [text(""), text("   "), text(&"m".repeat(151)), HostValue::Json(json!("maria")), text("a\0b")] {
        let err = store.upsert("host_users", "username", lookup, Vec::new()).await.expect_err("unusable lookup");
        assert_eq!(err, HostUserError::UnusableLookup("username".to_owned()));
    }
    assert_eq!(count(&db, "host_users").await, 0, "nothing was written");

    // A unique index dropped after the shape was read: a clear error, and
    // the next call reads the shape again.
    store.upsert("host_users", "cpf", text("12345678901"), values(&[("username", text("x"))])).await.expect("by cpf");
    db.pool.execute("ALTER TABLE host_users DROP CONSTRAINT host_users_cpf_key").await.expect("drop unique");
    let err = store.upsert("host_users", "cpf", text("12345678901"), Vec::new()).await.expect_err("no arbiter");
    assert!(matches!(err, HostUserError::InvalidTable(_)), "{err:?}");
    let err = store.upsert("host_users", "cpf", text("12345678901"), Vec::new()).await.expect_err("re-described");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("no unique constraint")), "{err:?}");
}
