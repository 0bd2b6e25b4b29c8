//! The get-or-create of a login: created once, updated after, the inactive
//! rule, concurrent first logins, values of every class.

use credencial_domain::host_table::HostValue;
use credencial_ports::{HostUserError, UpsertOutcome};
use credencial_storage_contract::{contract, Backend, Engine};
use serde_json::json;

use super::{column, count, date, demo_values, read, read_json, refused, run, table, text, upsert, values};

contract!(
    first_login_creates_the_row_and_the_next_updates_it,
    a_column_skipped_or_given_nothing_keeps_its_old_value,
    an_inactive_host_user_is_refused_and_never_reactivated,
    a_custom_table_without_is_active_takes_timestamps_json_and_booleans,
    a_json_column_holds_only_json,
    thirty_two_concurrent_first_logins_of_one_person_leave_exactly_one_row,
    thirty_two_concurrent_first_logins_of_different_people_leave_one_row_each,
    sql_in_values_is_stored_literally,
);

async fn first_login_creates_the_row_and_the_next_updates_it<B: Backend>() {
    let b = B::fresh().await;
    let first = upsert(&b, "host_users", "username", text("maria"), &demo_values()).await.expect("create");
    assert!(first.created);
    assert_eq!(read(&b, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"));
    assert_eq!(read(&b, "host_users", "last_name", first.id).await.as_deref(), Some("das Graças Souza"));
    assert_eq!(read(&b, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-14"));
    assert_eq!(read(&b, "host_users", "is_active", first.id).await.as_deref(), Some("true"));
    assert_eq!(
        read_json(&b, "host_users", "profile", first.id).await,
        Some(json!({"dados_publicos": {"nome": "Maria das Graças Souza"}}))
    );

    let changed = [
        ("email", text("maria.souza@example.org")),
        ("birth_date", date("1988-03-15")),
        ("last_login", HostValue::Timestamp(1_700_000_000)),
    ];
    let second = upsert(&b, "host_users", "username", text("maria"), &changed).await.expect("update");
    assert_eq!(second, UpsertOutcome { id: first.id, created: false });
    assert_eq!(read(&b, "host_users", "email", first.id).await.as_deref(), Some("maria.souza@example.org"));
    assert_eq!(read(&b, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-15"));
    assert_eq!(read(&b, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"), "not in the update");
    let last_login = match B::ENGINE {
        Engine::Postgres => "SELECT extract(epoch FROM last_login)::bigint FROM host_users",
        Engine::Sqlite => "SELECT last_login FROM host_users",
    };
    assert_eq!(b.count(last_login).await, 1_700_000_000);

    let other = upsert(&b, "host_users", "username", text("joao"), &[]).await.expect("create joao");
    assert!(other.created);
    assert_ne!(other.id, first.id);
    assert_eq!(count(&b, "host_users").await, 2);
    let again = upsert(&b, "host_users", "username", text("joao"), &[]).await.expect("nothing to update");
    assert_eq!(again, UpsertOutcome { id: other.id, created: false });
}

async fn a_column_skipped_or_given_nothing_keeps_its_old_value<B: Backend>() {
    let b = B::fresh().await;
    let first = upsert(&b, "host_users", "username", text("maria"), &demo_values()).await.expect("create");
    // The map skipped email (scope unavailable) and split a name without a
    // space: last_name gets the empty string it was given.
    let later = [
        ("first_name", text("Maria")),
        ("last_name", text("")),
        ("profile", HostValue::Json(serde_json::Value::Null)),
        ("city", text("Natal")),
    ];
    let second = upsert(&b, "host_users", "username", text("maria"), &later).await.expect("update");
    assert!(!second.created);
    assert_eq!(read(&b, "host_users", "email", first.id).await.as_deref(), Some("maria@example.org"));
    assert_eq!(read(&b, "host_users", "last_name", first.id).await.as_deref(), Some(""));
    assert!(read(&b, "host_users", "profile", first.id).await.is_some(), "JSON null is nothing");
    assert_eq!(read(&b, "host_users", "birth_date", first.id).await.as_deref(), Some("1988-03-14"), "not mapped now");
    assert_eq!(read(&b, "host_users", "city", first.id).await.as_deref(), Some("Natal"));

    // An entry for the lookup column is ignored; of two entries the later wins.
    let twice = [("username", text("someone-else")), ("city", text("Mossoró")), ("city", text("Caicó"))];
    upsert(&b, "host_users", "username", text("maria"), &twice).await.expect("update");
    assert_eq!(read(&b, "host_users", "username", first.id).await.as_deref(), Some("maria"));
    assert_eq!(read(&b, "host_users", "city", first.id).await.as_deref(), Some("Caicó"));
}

async fn an_inactive_host_user_is_refused_and_never_reactivated<B: Backend>() {
    let b = B::fresh().await;
    let first = upsert(&b, "host_users", "username", text("maria"), &demo_values()).await.expect("create");
    b.execute(&format!("UPDATE host_users SET is_active = false WHERE id = {}", first.id)).await;

    let attempt = [("email", text("new@example.org")), ("first_name", text("Outra"))];
    let err = upsert(&b, "host_users", "username", text("maria"), &attempt).await.expect_err("inactive");
    assert_eq!(err, HostUserError::Inactive);
    assert_eq!(read(&b, "host_users", "is_active", first.id).await.as_deref(), Some("false"));
    assert_eq!(read(&b, "host_users", "email", first.id).await.as_deref(), Some("maria@example.org"), "unchanged");
    assert_eq!(read(&b, "host_users", "first_name", first.id).await.as_deref(), Some("Maria"), "unchanged");
    assert_eq!(count(&b, "host_users").await, 1);

    let err = upsert(&b, "host_users", "username", text("maria"), &[]).await.expect_err("still inactive");
    assert_eq!(err, HostUserError::Inactive);
    let err = upsert(&b, "host_users", "username", text("maria"), &[("is_active", HostValue::Bool(true))])
        .await
        .expect_err("is_active is not the mapping's to write");
    assert_eq!(err, HostUserError::UnknownColumn("is_active".to_owned()));
    assert_eq!(read(&b, "host_users", "is_active", first.id).await.as_deref(), Some("false"));
}

async fn a_custom_table_without_is_active_takes_timestamps_json_and_booleans<B: Backend>() {
    let b = B::fresh().await;
    run(
        &b,
        &["CREATE TABLE members (
               id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
               login    VARCHAR(40) NOT NULL CONSTRAINT members_login UNIQUE,
               seen_at  TIMESTAMP,
               seen_tz  TIMESTAMPTZ,
               verified BOOLEAN NOT NULL DEFAULT FALSE,
               extra    JSON
           )"],
        &["CREATE TABLE members (
               id       INTEGER PRIMARY KEY,
               login    VARCHAR(40) NOT NULL CONSTRAINT members_login UNIQUE,
               seen_at  DATETIME,
               seen_tz  TIMESTAMPTZ,
               verified BOOL NOT NULL DEFAULT FALSE,
               extra    JSON
           )"],
    )
    .await;
    let stamp = 1_700_000_000; // 2023-11-14T22:13:20Z
    let row = [
        ("seen_at", HostValue::Timestamp(stamp)),
        ("seen_tz", HostValue::Timestamp(stamp)),
        ("verified", HostValue::Bool(true)),
        ("extra", HostValue::Json(json!({"a": [1, "dois"]}))),
    ];
    let first = upsert(&b, "members", "login", text("ana"), &row).await.expect("create");
    assert!(first.created);
    let again = upsert(&b, "members", "login", text("ana"), &row).await.expect("update");
    assert_eq!(again, UpsertOutcome { id: first.id, created: false });
    let seen = match B::ENGINE {
        Engine::Postgres => {
            "SELECT extract(epoch FROM seen_at AT TIME ZONE 'UTC')::bigint + extract(epoch FROM seen_tz)::bigint \
             FROM members"
        }
        Engine::Sqlite => "SELECT seen_at + seen_tz FROM members",
    };
    assert_eq!(b.count(seen).await, 2 * stamp, "both hold the instant, a timestamp without zone in UTC");
    assert_eq!(b.count("SELECT count(*) FROM members WHERE verified").await, 1);
    assert_eq!(read(&b, "members", "verified", first.id).await.as_deref(), Some("true"));
    assert_eq!(read_json(&b, "members", "extra", first.id).await, Some(json!({"a": [1, "dois"]})));

    let off = upsert(&b, "members", "login", text("ana"), &[("verified", HostValue::Bool(false))]).await;
    assert_eq!(off, Ok(UpsertOutcome { id: first.id, created: false }), "no is_active: no inactive rule");
    assert_eq!(read(&b, "members", "verified", first.id).await.as_deref(), Some("false"));
}

async fn a_json_column_holds_only_json<B: Backend>() {
    let b = B::fresh().await;
    let document = json!({"nome": "Maria", "vínculos": [{"cnes": "123"}], "nada": null, "n": 1.5});
    let first = upsert(&b, "host_users", "username", text("maria"), &[("profile", HostValue::Json(document.clone()))])
        .await
        .expect("create");
    assert_eq!(read_json(&b, "host_users", "profile", first.id).await, Some(document.clone()));

    // Text is not JSON: the value is skipped and the document stays.
    let outcome = upsert(&b, "host_users", "username", text("maria"), &[("profile", text("not json"))]).await;
    assert_eq!(outcome, Ok(UpsertOutcome { id: first.id, created: false }));
    assert_eq!(read_json(&b, "host_users", "profile", first.id).await, Some(document));

    // The column itself refuses what is not JSON (PostgreSQL: jsonb;
    // SQLite: its json_valid check), whoever writes it.
    let sql = format!("UPDATE host_users SET profile = '{{\"unclosed\": ' WHERE id = {}", first.id);
    assert!(refused(&b, &sql).await, "invalid JSON stored");
    assert!(!refused(&b, &format!("UPDATE host_users SET profile = '[1, 2]' WHERE id = {}", first.id)).await);
    assert_eq!(read_json(&b, "host_users", "profile", first.id).await, Some(json!([1, 2])));
}

async fn thirty_two_concurrent_first_logins_of_one_person_leave_exactly_one_row<B: Backend>() {
    let b = B::fresh().await;
    let store = b.host_users();
    let logins = (0..32).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            let row = values(&[("email", text("maria@example.org")), ("city", text(&format!("city {i}")))]);
            store.upsert(&table("host_users"), &column("username"), text("maria"), row).await
        })
    });
    let outcomes: Vec<UpsertOutcome> =
        futures_util::future::join_all(logins).await.into_iter().map(|r| r.expect("task").expect("login")).collect();
    assert_eq!(outcomes.iter().filter(|o| o.created).count(), 1, "exactly one login created the row");
    assert!(outcomes.iter().all(|o| o.id == outcomes[0].id), "every login landed on the same row");
    assert_eq!(count(&b, "host_users").await, 1);
    let city = read(&b, "host_users", "city", outcomes[0].id).await.expect("city");
    assert!(city.starts_with("city "), "one of the logins wrote it last: {city}");
}

async fn thirty_two_concurrent_first_logins_of_different_people_leave_one_row_each<B: Backend>() {
    let b = B::fresh().await;
    let store = b.host_users();
    let logins = (0..32).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            let person = format!("person{i:02}");
            let row = values(&[("email", text(&format!("{person}@example.org"))), ("first_name", text(&person))]);
            (person.clone(), store.upsert(&table("host_users"), &column("username"), text(&person), row).await)
        })
    });
    let outcomes: Vec<(String, UpsertOutcome)> = futures_util::future::join_all(logins)
        .await
        .into_iter()
        .map(|r| {
            let (person, outcome) = r.expect("task");
            (person, outcome.expect("login"))
        })
        .collect();
    assert!(outcomes.iter().all(|(_, o)| o.created), "each login created its person");
    let mut ids: Vec<i64> = outcomes.iter().map(|(_, o)| o.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 32, "32 different rows");
    assert_eq!(count(&b, "host_users").await, 32);
    for (person, outcome) in &outcomes {
        assert_eq!(read(&b, "host_users", "username", outcome.id).await.as_deref(), Some(person.as_str()));
        assert_eq!(read(&b, "host_users", "first_name", outcome.id).await.as_deref(), Some(person.as_str()));
    }
}

async fn sql_in_values_is_stored_literally<B: Backend>() {
    let b = B::fresh().await;
    let nasty = [
        "maria'); DROP TABLE host_users; --",
        "' OR '1'='1",
        "Robert\"; DELETE FROM host_users; --",
        "$1 $$ \\ %s ?1 ?",
    ];
    upsert(&b, "host_users", "username", text("bystander"), &[]).await.expect("bystander");
    for (i, value) in nasty.iter().enumerate() {
        let row = [
            ("first_name", text(value)),
            ("mother_name", text(value)),
            ("birth_date", date(value)),
            ("profile", HostValue::Json(json!({ "x": value, (*value): [value] }))),
        ];
        let outcome = upsert(&b, "host_users", "username", text(value), &row).await.expect("stored");
        assert!(outcome.created, "{i}: no other row matched");
        assert_eq!(read(&b, "host_users", "username", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&b, "host_users", "first_name", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&b, "host_users", "mother_name", outcome.id).await.as_deref(), Some(*value));
        assert_eq!(read(&b, "host_users", "birth_date", outcome.id).await, None, "not a date");
        assert_eq!(
            read_json(&b, "host_users", "profile", outcome.id).await,
            Some(json!({ "x": value, (*value): [value] }))
        );
    }
    assert_eq!(count(&b, "host_users").await, 1 + nasty.len() as i64);
}
