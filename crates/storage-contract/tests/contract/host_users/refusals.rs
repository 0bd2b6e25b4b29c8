//! What the get-or-create refuses: values that do not fit (skipped, the
//! rest written), constraints of the table, required columns, and
//! configuration problems named by column.

use credencial_domain::host_table::HostValue;
use credencial_ports::HostUserError;
use credencial_storage_contract::{contract, Backend};
use serde_json::json;

use super::{count, date, demo_values, key, read, run, run_all, text, upsert, Captured};

contract!(
    a_value_that_does_not_fit_is_skipped_with_a_warning_naming_the_column_and_the_rest_is_written,
    a_value_refused_by_a_check_or_unique_constraint_is_skipped_and_the_rest_is_written,
    a_required_column_without_value_refuses_a_new_user_but_an_existing_one_logs_in,
    configuration_problems_and_unusable_lookups_are_reported_by_name,
    a_unique_index_dropped_after_the_shape_was_read_is_reported_and_the_shape_read_again,
);

async fn a_value_that_does_not_fit_is_skipped_with_a_warning_naming_the_column_and_the_rest_is_written<B: Backend>() {
    let b = B::fresh().await;
    let captured = Captured::default();
    let _guard = captured.install();
    let row = [
        ("birth_date", date("2026-13-45")),
        ("state", text("Rio Grande do Norte")),
        ("mother_name", text("ANA\0SOUZA")),
        ("first_name", HostValue::Json(json!({"x": 1}))),
        ("last_name", text("Souza")),
        ("city", text("Natal")),
    ];
    let outcome = upsert(&b, "host_users", "username", text("maria"), &row).await.expect("login goes on");
    assert!(outcome.created);
    for skipped in ["birth_date", "state", "mother_name", "first_name"] {
        assert_eq!(read(&b, "host_users", skipped, outcome.id).await, None, "{skipped}");
    }
    assert_eq!(read(&b, "host_users", "last_name", outcome.id).await.as_deref(), Some("Souza"));
    assert_eq!(read(&b, "host_users", "city", outcome.id).await.as_deref(), Some("Natal"));

    // Later, a bad date does not erase the good one.
    upsert(&b, "host_users", "username", text("maria"), &[("birth_date", date("1988-03-14"))]).await.expect("good");
    upsert(&b, "host_users", "username", text("maria"), &[("birth_date", date("1988-02-30"))]).await.expect("skipped");
    assert_eq!(read(&b, "host_users", "birth_date", outcome.id).await.as_deref(), Some("1988-03-14"));

    let logs = captured.text();
    for column in ["birth_date", "state", "mother_name", "first_name"] {
        assert!(logs.contains(&format!("column=\"{column}\"")), "{column} is named in:\n{logs}");
    }
    assert!(logs.contains("WARN"), "{logs}");
    for value in ["2026-13-45", "1988-02-30", "Rio Grande do Norte", "ANA"] {
        assert!(!logs.contains(value), "the log shows the value {value:?}:\n{logs}");
    }
}

async fn a_value_refused_by_a_check_or_unique_constraint_is_skipped_and_the_rest_is_written<B: Backend>() {
    let b = B::fresh().await;
    // A named check on cpf, an unnamed one on region.
    run(
        &b,
        &["CREATE TABLE people (
               id          BIGSERIAL PRIMARY KEY,
               username    VARCHAR(150) NOT NULL UNIQUE,
               cpf         CHAR(11) UNIQUE CONSTRAINT people_cpf_digits CHECK (cpf ~ '^[0-9]{11}$'),
               region      TEXT CHECK (region ~ '^[A-Z]{2}$'),
               city        TEXT,
               mother_name TEXT
           )"],
        &["CREATE TABLE people (
               id          INTEGER PRIMARY KEY,
               username    VARCHAR(150) NOT NULL UNIQUE,
               cpf         CHAR(11) UNIQUE CONSTRAINT people_cpf_digits
                               CHECK (length(cpf) = 11 AND cpf NOT GLOB '*[^0-9]*'),
               region      TEXT CHECK (region GLOB '[A-Z][A-Z]'),
               city        TEXT,
               mother_name TEXT
           )"],
    )
    .await;
    let captured = Captured::default();
    let _guard = captured.install();

    let row = [("cpf", text("123.456.78")), ("city", text("Natal")), ("region", text("RN"))];
    let maria = upsert(&b, "people", "username", text("maria"), &row).await.expect("check skipped");
    assert!(maria.created);
    assert_eq!(read(&b, "people", "cpf", maria.id).await, None);
    assert_eq!(read(&b, "people", "city", maria.id).await.as_deref(), Some("Natal"));
    assert_eq!(read(&b, "people", "region", maria.id).await.as_deref(), Some("RN"));

    let row = [("region", text("rn!")), ("mother_name", text("ANA"))];
    upsert(&b, "people", "username", text("maria"), &row).await.expect("unnamed check skipped");
    assert_eq!(read(&b, "people", "region", maria.id).await.as_deref(), Some("RN"), "old value kept");
    assert_eq!(read(&b, "people", "mother_name", maria.id).await.as_deref(), Some("ANA"));

    upsert(&b, "people", "username", text("maria"), &[("cpf", text("12345678901"))]).await.expect("good cpf");
    // Another person arriving with Maria's CPF: the CPF is skipped, not moved.
    let row = [("cpf", text("12345678901")), ("city", text("Caicó"))];
    let joao = upsert(&b, "people", "username", text("joao"), &row).await.expect("unique skipped");
    assert!(joao.created);
    assert_eq!(read(&b, "people", "cpf", joao.id).await, None);
    assert_eq!(read(&b, "people", "city", joao.id).await.as_deref(), Some("Caicó"));
    assert_eq!(read(&b, "people", "cpf", maria.id).await.as_deref(), Some("12345678901"));
    assert_eq!(count(&b, "people").await, 2);

    let logs = captured.text();
    assert!(logs.contains("column=\"cpf\"") && logs.contains("column=\"region\""), "{logs}");
    assert!(!logs.contains("123.456.78") && !logs.contains("12345678901") && !logs.contains("rn!"), "{logs}");

    // A lookup value the lookup column refuses cannot identify anyone.
    let err = upsert(&b, "people", "cpf", text("not-digits"), &[("username", text("ana"))]).await.expect_err("check");
    assert_eq!(err, HostUserError::UnusableLookup("cpf".to_owned()));
    assert_eq!(count(&b, "people").await, 2);
}

async fn a_required_column_without_value_refuses_a_new_user_but_an_existing_one_logs_in<B: Backend>() {
    let b = B::fresh().await;
    let create = format!(
        "CREATE TABLE accounts (
             id        {},
             email     TEXT NOT NULL UNIQUE,
             full_name TEXT NOT NULL,
             city      TEXT,
             is_active BOOLEAN NOT NULL DEFAULT TRUE
         )",
        key::<B>()
    );
    run_all(
        &b,
        &[
            &create,
            "INSERT INTO accounts (email, full_name) VALUES ('old@example.org', 'Old Name')",
            "INSERT INTO accounts (email, full_name, is_active) VALUES ('off@example.org', 'Off', false)",
        ],
    )
    .await;

    let err = upsert(&b, "accounts", "email", text("new@example.org"), &[("city", text("Natal"))])
        .await
        .expect_err("full_name missing");
    assert_eq!(err, HostUserError::MissingRequired("full_name".to_owned()));
    assert_eq!(count(&b, "accounts").await, 2);

    let outcome = upsert(&b, "accounts", "email", text("old@example.org"), &[("city", text("Natal"))])
        .await
        .expect("existing user updated");
    assert!(!outcome.created);
    assert_eq!(read(&b, "accounts", "city", outcome.id).await.as_deref(), Some("Natal"));
    assert_eq!(read(&b, "accounts", "full_name", outcome.id).await.as_deref(), Some("Old Name"));

    let err = upsert(&b, "accounts", "email", text("off@example.org"), &[("city", text("Natal"))])
        .await
        .expect_err("inactive");
    assert_eq!(err, HostUserError::Inactive);
    assert_eq!(b.count("SELECT count(*) FROM accounts WHERE email = 'off@example.org' AND city IS NULL").await, 1);
}

async fn configuration_problems_and_unusable_lookups_are_reported_by_name<B: Backend>() {
    let b = B::fresh().await;
    let err = upsert(&b, "no_such_table", "username", text("maria"), &[]).await.expect_err("no table");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("does not exist")), "{err:?}");
    let err = upsert(&b, "host_users", "nickname", text("maria"), &[]).await.expect_err("no column");
    assert_eq!(err, HostUserError::UnknownColumn("nickname".to_owned()));
    let err = upsert(&b, "host_users", "username", text("maria"), &[("nickname", text("m"))]).await.expect_err("no");
    assert_eq!(err, HostUserError::UnknownColumn("nickname".to_owned()));
    let err = upsert(&b, "host_users", "username", text("maria"), &[("id", text("1"))]).await.expect_err("id");
    assert_eq!(err, HostUserError::UnknownColumn("id".to_owned()));
    let err = upsert(&b, "host_users", "email", text("m@example.org"), &[]).await.expect_err("not unique");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("\"email\"")), "{err:?}");

    for lookup in [text(""), text("   "), text(&"m".repeat(151)), HostValue::Json(json!("maria")), text("a\0b")] {
        let err = upsert(&b, "host_users", "username", lookup, &demo_values()).await.expect_err("unusable lookup");
        assert_eq!(err, HostUserError::UnusableLookup("username".to_owned()));
    }
    assert_eq!(count(&b, "host_users").await, 0, "nothing was written");
}

async fn a_unique_index_dropped_after_the_shape_was_read_is_reported_and_the_shape_read_again<B: Backend>() {
    let b = B::fresh().await;
    let create = format!("CREATE TABLE registry (id {}, username TEXT NOT NULL UNIQUE, cpf TEXT)", key::<B>());
    run_all(&b, &[&create, "CREATE UNIQUE INDEX registry_cpf ON registry (cpf)"]).await;
    upsert(&b, "registry", "cpf", text("12345678901"), &[("username", text("x"))]).await.expect("by cpf");
    b.execute("DROP INDEX registry_cpf").await;
    let err = upsert(&b, "registry", "cpf", text("12345678901"), &[]).await.expect_err("no arbiter");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("\"cpf\"")), "{err:?}");
    let err = upsert(&b, "registry", "cpf", text("12345678901"), &[]).await.expect_err("read again");
    assert!(matches!(&err, HostUserError::InvalidTable(m) if m.contains("no unique constraint")), "{err:?}");
    assert_eq!(count(&b, "registry").await, 1);
}
