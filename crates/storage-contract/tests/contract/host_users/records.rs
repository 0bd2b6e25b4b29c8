//! Reading a host user row back ([`HostUserRecords`]): column by column, in
//! table order, in the same text form on both engines.
//!
//! [`HostUserRecords`]: credencial_ports::HostUserRecords

use credencial_ports::HostUserError;
use credencial_storage_contract::{contract, Backend};

use super::table;

contract!(a_row_reads_back_column_by_column_in_table_order_with_nulls, a_missing_row_or_table_reads_as_such);

async fn a_row_reads_back_column_by_column_in_table_order_with_nulls<B: Backend>() {
    let b = B::fresh().await;
    b.execute(
        "INSERT INTO host_users (username, first_name, birth_date, profile) \
         VALUES ('52998224725', 'Ana', '1988-03-14', '{\"cpf\": \"52998224725\"}')",
    )
    .await;
    let id = b.count("SELECT id FROM host_users WHERE username = '52998224725'").await;
    let row = b.host_user_records().fetch(&table("host_users"), id).await.expect("fetch").expect("row");
    let names: Vec<&str> = row.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(&names[..5], ["id", "username", "email", "first_name", "last_name"]);
    assert_eq!(names.len(), 14);
    let get = |name: &str| row.iter().find(|(c, _)| c == name).and_then(|(_, v)| v.clone());
    assert_eq!(get("id"), Some(id.to_string()));
    assert_eq!(get("username").as_deref(), Some("52998224725"));
    assert_eq!(get("email"), None, "NULL");
    assert_eq!(get("birth_date").as_deref(), Some("1988-03-14"));
    assert_eq!(get("profile").as_deref(), Some(r#"{"cpf": "52998224725"}"#));
    assert_eq!(get("is_active").as_deref(), Some("true"));
    let joined = get("date_joined").expect("date_joined");
    let bytes = joined.as_bytes();
    assert!(
        bytes.len() >= 19 && bytes[4] == b'-' && bytes[7] == b'-' && bytes[10] == b'T' && bytes[13] == b':',
        "an instant reads as an ISO date and time: {joined}"
    );
    assert_eq!(get("last_login"), None);
}

async fn a_missing_row_or_table_reads_as_such<B: Backend>() {
    let b = B::fresh().await;
    let records = b.host_user_records();
    assert_eq!(records.fetch(&table("host_users"), 1).await.expect("fetch"), None);
    assert!(matches!(records.fetch(&table("people"), 1).await, Err(HostUserError::InvalidTable(_))));
}
