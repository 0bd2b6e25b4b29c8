//! The client component's options at the storage: values written only when
//! the row is created, logins that may not create a row, and `last_login`
//! set on every login.

use credencial_domain::host_table::{HostWrite, WriteOn};
use credencial_ports::{HostUserError, UpsertOutcome};
use credencial_storage_contract::{contract, Backend, Engine};

use super::{column, read, table, text};

contract!(
    values_of_creation_go_into_a_new_row_only_and_last_login_is_set_on_every_login,
    a_login_that_may_not_create_updates_an_existing_row_and_creates_none,
);

fn write(name: &str, value: credencial_domain::host_table::HostValue, on: WriteOn) -> HostWrite {
    HostWrite { column: column(name), value, on }
}

async fn login<B: Backend>(b: &B, writes: Vec<HostWrite>, creates: bool) -> Result<UpsertOutcome, HostUserError> {
    b.host_users().write_login(&table("host_users"), &column("username"), text("maria"), writes, creates).await
}

async fn seconds<B: Backend>(b: &B, name: &str) -> i64 {
    let sql = match B::ENGINE {
        Engine::Postgres => format!("SELECT extract(epoch FROM {name})::bigint FROM host_users"),
        Engine::Sqlite => format!("SELECT {name} FROM host_users"),
    };
    b.count(&sql).await
}

fn at(now: i64) -> Vec<HostWrite> {
    use credencial_domain::host_table::HostValue::Timestamp;
    vec![
        write("first_name", text("Maria"), WriteOn::Creation),
        write("email", text(&format!("maria{now}@example.org")), WriteOn::EveryLogin),
        write("last_login", Timestamp(now), WriteOn::EveryLogin),
        write("date_joined", Timestamp(now), WriteOn::Creation),
    ]
}

async fn values_of_creation_go_into_a_new_row_only_and_last_login_is_set_on_every_login<B: Backend>() {
    let b = B::fresh().await;
    let first = login(&b, at(1_700_000_000), true).await.expect("created");
    assert!(first.created);
    assert_eq!(seconds(&b, "last_login").await, 1_700_000_000);
    assert_eq!(seconds(&b, "date_joined").await, 1_700_000_000);
    // Someone edits the name in the host application; the next login keeps
    // the edit (written on creation only) and refreshes the rest.
    b.execute("UPDATE host_users SET first_name = 'Maria Editada'").await;
    let mut later = at(1_700_086_400);
    later[0] = write("first_name", text("Maria do Perfil"), WriteOn::Creation);
    let second = login(&b, later, true).await.expect("updated");
    assert_eq!(second, UpsertOutcome { id: first.id, created: false });
    assert_eq!(read(&b, "host_users", "first_name", first.id).await.as_deref(), Some("Maria Editada"));
    assert_eq!(read(&b, "host_users", "email", first.id).await.as_deref(), Some("maria1700086400@example.org"));
    assert_eq!(seconds(&b, "last_login").await, 1_700_086_400, "last_login follows every login");
    assert_eq!(seconds(&b, "date_joined").await, 1_700_000_000, "date_joined stays the creation's");
    // Only values of creation: the row is still returned, unchanged.
    let only = login(&b, vec![write("first_name", text("X"), WriteOn::Creation)], true).await.expect("found");
    assert_eq!(only, UpsertOutcome { id: first.id, created: false });
    assert_eq!(read(&b, "host_users", "first_name", first.id).await.as_deref(), Some("Maria Editada"));
}

async fn a_login_that_may_not_create_updates_an_existing_row_and_creates_none<B: Backend>() {
    let b = B::fresh().await;
    assert_eq!(login(&b, at(1_700_000_000), false).await, Err(HostUserError::NotRegistered));
    assert_eq!(b.count("SELECT count(*) FROM host_users").await, 0, "nothing written");
    b.execute("INSERT INTO host_users (username, first_name) VALUES ('maria', 'Maria da Casa')").await;
    let found = login(&b, at(1_700_000_000), false).await.expect("updated");
    assert!(!found.created);
    assert_eq!(read(&b, "host_users", "first_name", found.id).await.as_deref(), Some("Maria da Casa"));
    assert_eq!(seconds(&b, "last_login").await, 1_700_000_000);
    b.execute("UPDATE host_users SET is_active = FALSE").await;
    assert_eq!(login(&b, at(1_700_000_100), false).await, Err(HostUserError::Inactive));
    assert_eq!(seconds(&b, "last_login").await, 1_700_000_000, "an inactive row is left alone");
}
