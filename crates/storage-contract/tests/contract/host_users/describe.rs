//! Describing the host table, and the start-up check on what was described:
//! the same shape and the same messages on both engines.

use credencial_domain::host_table::{check_columns, ColumnType, HostColumn, TableShape, ValueKind};
use credencial_ports::HostUserError;
use credencial_storage_contract::{contract, Backend, Engine};

use super::{key, run_all, table};

contract!(
    describe_reads_the_default_host_users_table,
    describe_reads_a_custom_table_with_its_unique_indexes_and_odd_columns,
    a_view_or_a_missing_table_is_not_a_host_table,
    a_mismatch_between_the_map_and_the_table_stops_the_start_naming_the_column,
);

fn column<'a>(shape: &'a TableShape, name: &str) -> &'a HostColumn {
    shape.column(name).unwrap_or_else(|| panic!("column {name}"))
}

async fn describe_reads_the_default_host_users_table<B: Backend>() {
    let b = B::fresh().await;
    let shape = b.host_users().describe(&table("host_users")).await.expect("describe");
    assert_eq!(shape.table.as_str(), "host_users");
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
    let timestamp = match B::ENGINE {
        Engine::Postgres => "timestamptz",
        Engine::Sqlite => "timestamp",
    };
    assert_eq!(column(&shape, "date_joined").type_name, timestamp);
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
    assert_eq!(check_columns(&shape, &needs, "cpf"), Ok(()));
}

async fn describe_reads_a_custom_table_with_its_unique_indexes_and_odd_columns<B: Backend>() {
    let b = B::fresh().await;
    let create = format!(
        "CREATE TABLE app_people (
             id       {},
             login    VARCHAR(40) NOT NULL,
             nick     TEXT,
             code     TEXT,
             seen_at  TIMESTAMP,
             verified BOOLEAN NOT NULL DEFAULT FALSE,
             extra    JSON,
             amount   NUMERIC,
             token    UUID NOT NULL,
             slug     TEXT GENERATED ALWAYS AS (lower(login)) STORED,
             CONSTRAINT app_people_pair UNIQUE (nick, code)
         )",
        key::<B>()
    );
    run_all(
        &b,
        &[
            &create,
            "CREATE UNIQUE INDEX app_people_login ON app_people (login)",
            "CREATE UNIQUE INDEX app_people_nick ON app_people (lower(nick))",
            "CREATE UNIQUE INDEX app_people_code ON app_people (code) WHERE code IS NOT NULL",
        ],
    )
    .await;

    let shape = b.host_users().describe(&table("app_people")).await.expect("describe");
    let unique: Vec<&str> = shape.columns.iter().filter(|c| c.unique).map(|c| c.name.as_str()).collect();
    assert_eq!(unique, ["id", "login"], "expression, partial and multi-column indexes do not count");
    assert_eq!(column(&shape, "id").column_type, ColumnType::Integer);
    assert_eq!(column(&shape, "login").column_type, ColumnType::Text);
    assert_eq!(column(&shape, "login").max_length, Some(40));
    assert_eq!(column(&shape, "seen_at").column_type, ColumnType::Timestamp);
    assert_eq!(column(&shape, "verified").column_type, ColumnType::Boolean);
    assert_eq!(column(&shape, "extra").column_type, ColumnType::Json);
    assert_eq!(column(&shape, "amount").column_type, ColumnType::Other("numeric".to_owned()));
    assert_eq!(column(&shape, "token").column_type, ColumnType::Other("uuid".to_owned()));
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
}

async fn a_view_or_a_missing_table_is_not_a_host_table<B: Backend>() {
    let b = B::fresh().await;
    b.execute("CREATE VIEW host_users_view AS SELECT * FROM host_users").await;
    for (name, what) in [("host_users_view", "not a table"), ("no_such_table", "does not exist")] {
        match b.host_users().describe(&table(name)).await {
            Err(HostUserError::InvalidTable(message)) => assert!(message.contains(what), "{message}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Mapped columns, lookup column, the whole message.
type Case = (&'static [(&'static str, ValueKind)], &'static str, &'static str);

async fn a_mismatch_between_the_map_and_the_table_stops_the_start_naming_the_column<B: Backend>() {
    let b = B::fresh().await;
    let shape = b.host_users().describe(&table("host_users")).await.expect("describe");
    const USERNAME: (&str, ValueKind) = ("username", ValueKind::Text);
    // The same words on both engines.
    let cases: [Case; 6] = [
        (
            &[USERNAME, ("birth_date", ValueKind::Text)],
            "username",
            "column \"birth_date\" of table \"host_users\" is date; a text value needs a text column (text, varchar, char)",
        ),
        (
            &[USERNAME, ("profile", ValueKind::Text)],
            "username",
            "column \"profile\" of table \"host_users\" is json; a text value needs a text column (text, varchar, char)",
        ),
        (
            &[USERNAME, ("first_name", ValueKind::Json)],
            "username",
            "column \"first_name\" of table \"host_users\" is text; a json value needs a jsonb or json column",
        ),
        (&[USERNAME, ("nickname", ValueKind::Text)], "username", "column \"nickname\" does not exist in table \"host_users\""),
        (
            &[USERNAME],
            "email",
            "lookup column \"email\" of table \"host_users\" has no unique constraint or unique index of its own",
        ),
        (
            &[USERNAME, ("is_active", ValueKind::Boolean)],
            "username",
            "column \"is_active\" of table \"host_users\" cannot be mapped: it is not written by logins",
        ),
    ];
    for (needs, lookup, expected) in cases {
        assert_eq!(check_columns(&shape, needs, lookup), Err(expected.to_owned()));
    }

    let create =
        format!("CREATE TABLE odd (id {}, login TEXT NOT NULL UNIQUE, is_active TEXT, code TEXT NOT NULL)", key::<B>());
    b.execute(&create).await;
    let odd = b.host_users().describe(&table("odd")).await.expect("describe odd");
    assert_eq!(
        check_columns(&odd, &[("login", ValueKind::Text)], "login"),
        Err("column \"is_active\" of table \"odd\" is text; it must be boolean".to_owned())
    );
    let mut without_is_active = odd.clone();
    without_is_active.columns.retain(|c| c.name != "is_active");
    assert_eq!(
        check_columns(&without_is_active, &[("login", ValueKind::Text)], "login"),
        Err("column \"code\" of table \"odd\" is NOT NULL without a default and is not mapped; \
             a new host user could not be created"
            .to_owned())
    );
}
