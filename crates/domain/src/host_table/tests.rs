//! The host table rules, on a shape like the default `host_users` table.

use super::*;
use serde_json::json;

pub(super) fn column(name: &str, column_type: ColumnType) -> HostColumn {
    HostColumn {
        name: name.to_owned(),
        type_name: column_type.to_string(),
        column_type,
        max_length: None,
        required: false,
        generated: false,
        unique: false,
    }
}

/// The shape of the default `host_users` table.
pub(super) fn host_users() -> TableShape {
    let mut id = column("id", ColumnType::Integer);
    id.unique = true;
    let mut username = column("username", ColumnType::Text);
    username.unique = true;
    username.required = true;
    username.max_length = Some(150);
    let mut cpf = column("cpf", ColumnType::Text);
    cpf.unique = true;
    cpf.max_length = Some(11);
    TableShape {
        table: TableName::parse("host_users").expect("table name"),
        columns: vec![
            id,
            username,
            column("first_name", ColumnType::Text),
            column("email", ColumnType::Text),
            cpf,
            column("birth_date", ColumnType::Date),
            column("profile", ColumnType::Json),
            column("is_active", ColumnType::Boolean),
            column("last_login", ColumnType::Timestamp),
            column("uuid", ColumnType::Other("uuid".to_owned())),
        ],
    }
}

#[test]
fn pg_type_names_map_to_classes() {
    assert_eq!(ColumnType::from_pg_type_name("varchar"), ColumnType::Text);
    assert_eq!(ColumnType::from_pg_type_name("bpchar"), ColumnType::Text);
    assert_eq!(ColumnType::from_pg_type_name("timestamptz"), ColumnType::Timestamp);
    assert_eq!(ColumnType::from_pg_type_name("jsonb"), ColumnType::Json);
    assert_eq!(ColumnType::from_pg_type_name("bool"), ColumnType::Boolean);
    assert_eq!(ColumnType::from_pg_type_name("int8"), ColumnType::Integer);
    assert_eq!(ColumnType::from_pg_type_name("uuid"), ColumnType::Other("uuid".to_owned()));
}

#[test]
fn sqlite_declared_types_map_to_classes() {
    let cases = [
        ("TEXT", ColumnType::Text),
        ("varchar(150)", ColumnType::Text),
        ("VARCHAR (254)", ColumnType::Text),
        ("CHAR(11)", ColumnType::Text),
        ("Character Varying(10)", ColumnType::Text),
        ("nvarchar(5)", ColumnType::Text),
        ("DATE", ColumnType::Date),
        ("BOOLEAN", ColumnType::Boolean),
        ("bool", ColumnType::Boolean),
        ("JSON", ColumnType::Json),
        ("JSONB", ColumnType::Json),
        ("TIMESTAMP", ColumnType::Timestamp),
        ("timestamptz", ColumnType::Timestamp),
        ("DATETIME", ColumnType::Timestamp),
        ("INTEGER", ColumnType::Integer),
        ("int", ColumnType::Integer),
        ("UNSIGNED  BIG INT", ColumnType::Integer),
        ("REAL", ColumnType::Other("real".to_owned())),
        ("NUMERIC(10, 2)", ColumnType::Other("numeric".to_owned())),
        ("BLOB", ColumnType::Other("blob".to_owned())),
        ("UUID", ColumnType::Other("uuid".to_owned())),
        ("", ColumnType::Other(String::new())),
        ("POINT", ColumnType::Other("point".to_owned())),
    ];
    for (declared, class) in cases {
        assert_eq!(ColumnType::from_sqlite_type_name(declared), class, "{declared}");
    }
    assert_eq!(sqlite_type_base("Unsigned  Big Int"), "unsigned big int");
    assert_eq!(sqlite_type_base("VARCHAR (150)"), "varchar");
    assert_eq!(sqlite_declared_length("VARCHAR(150)"), Some(150));
    assert_eq!(sqlite_declared_length("char( 2 )"), Some(2));
    assert_eq!(sqlite_declared_length("TEXT"), None);
    assert_eq!(sqlite_declared_length("NUMERIC(10)"), None, "not a text type");
    assert_eq!(sqlite_declared_length("VARCHAR(10, 2)"), None);
    assert_eq!(sqlite_declared_length("VARCHAR(0)"), None);
}

#[test]
fn a_date_fits_a_date_or_text_column_and_nothing_else_crosses_classes() {
    assert!(ValueKind::Date.fits(&ColumnType::Date));
    assert!(ValueKind::Date.fits(&ColumnType::Text));
    assert!(!ValueKind::Text.fits(&ColumnType::Date));
    assert!(!ValueKind::Json.fits(&ColumnType::Text));
    assert!(!ValueKind::Text.fits(&ColumnType::Json));
    assert!(!ValueKind::Text.fits(&ColumnType::Other("uuid".to_owned())));
    assert!(ValueKind::Boolean.fits(&ColumnType::Boolean));
    assert!(ValueKind::Timestamp.fits(&ColumnType::Timestamp));
}

#[test]
fn the_default_mapping_passes_the_start_up_check() {
    let needs = [
        ("username", ValueKind::Text),
        ("first_name", ValueKind::Text),
        ("birth_date", ValueKind::Date),
        ("profile", ValueKind::Json),
        ("email", ValueKind::Text),
    ];
    assert_eq!(check_columns(&host_users(), &needs, "username"), Ok(()));
    assert_eq!(check_columns(&host_users(), &[("username", ValueKind::Text)], "cpf"), Ok(()));
}

/// Mapped columns, lookup column, what the message must contain.
type Case = (&'static [(&'static str, ValueKind)], &'static str, &'static str);

#[test]
fn start_up_check_names_the_column_that_does_not_fit() {
    let shape = host_users();
    let cases: [Case; 9] = [
        (&[("username", ValueKind::Text), ("nickname", ValueKind::Text)], "username", "\"nickname\" does not exist"),
        (&[("username", ValueKind::Text), ("birth_date", ValueKind::Text)], "username", "\"birth_date\""),
        (&[("username", ValueKind::Text), ("first_name", ValueKind::Json)], "username", "\"first_name\""),
        (&[("username", ValueKind::Text), ("profile", ValueKind::Text)], "username", "\"profile\""),
        (&[("username", ValueKind::Text), ("uuid", ValueKind::Text)], "username", "\"uuid\" of table"),
        (&[("username", ValueKind::Text)], "email", "lookup column \"email\""),
        (&[("username", ValueKind::Text)], "nope", "lookup column \"nope\" does not exist"),
        (&[("username", ValueKind::Text), ("is_active", ValueKind::Boolean)], "username", "\"is_active\""),
        (&[("username", ValueKind::Text), ("Bad Name", ValueKind::Text)], "username", "\"Bad Name\" is not a valid"),
    ];
    for (needs, lookup, expected) in cases {
        let err = check_columns(&shape, needs, lookup).expect_err(expected);
        assert!(err.contains(expected), "{err} should contain {expected}");
        assert!(err.contains("host_users") || err.contains("not a valid"), "{err}");
    }
}

#[test]
fn a_required_column_left_unmapped_stops_the_start() {
    let shape = host_users();
    let err = check_columns(&shape, &[("email", ValueKind::Text)], "cpf").expect_err("username is required");
    assert!(err.contains("\"username\"") && err.contains("NOT NULL"), "{err}");
}

#[test]
fn a_table_without_integer_id_or_with_odd_is_active_is_refused() {
    let mut shape = host_users();
    shape.columns.retain(|c| c.name != "id");
    assert!(check_columns(&shape, &[], "username").expect_err("no id").contains("\"id\""));

    let mut shape = host_users();
    if let Some(c) = shape.columns.iter_mut().find(|c| c.name == "is_active") {
        c.column_type = ColumnType::Text;
    }
    assert!(!shape.has_is_active());
    assert!(check_columns(&shape, &[], "username").expect_err("text is_active").contains("\"is_active\""));
}

fn date_as_text() -> HostColumn {
    column("birth_text", ColumnType::Text)
}

#[test]
fn values_are_checked_against_their_column() {
    let mut short = column("state", ColumnType::Text);
    short.max_length = Some(2);
    assert_eq!(check_value(&short, &HostValue::Text("RN".to_owned())), Ok(()));
    assert_eq!(check_value(&short, &HostValue::Text("São".to_owned())), Err(ValueProblem::TooLong { max_length: 2 }));
    assert_eq!(check_value(&short, &HostValue::Text("Ão".to_owned())), Ok(()), "characters, not bytes");
    assert_eq!(check_value(&short, &HostValue::Text(String::new())), Ok(()), "an empty string is a value");
    assert_eq!(check_value(&date_as_text(), &HostValue::Date(String::new())), Err(ValueProblem::NotADate));
    assert_eq!(check_value(&short, &HostValue::Text("a\0".to_owned())), Err(ValueProblem::NulCharacter));

    let date = column("birth_date", ColumnType::Date);
    assert_eq!(check_value(&date, &HostValue::Date("1988-03-14".to_owned())), Ok(()));
    assert_eq!(check_value(&date, &HostValue::Date("2026-13-45".to_owned())), Err(ValueProblem::NotADate));
    assert_eq!(check_value(&date, &HostValue::Date("2023-02-29".to_owned())), Err(ValueProblem::NotADate));
    assert!(matches!(
        check_value(&date, &HostValue::Text("1988-03-14".to_owned())),
        Err(ValueProblem::WrongKind { kind: ValueKind::Text, .. })
    ));
    let text = column("birth_text", ColumnType::Text);
    assert_eq!(check_value(&text, &HostValue::Date("1988-03-14".to_owned())), Ok(()));
    assert_eq!(check_value(&text, &HostValue::Date("14/03/1988".to_owned())), Err(ValueProblem::NotADate));

    let json = column("profile", ColumnType::Json);
    assert_eq!(check_value(&json, &HostValue::Json(json!({"a": [1, "x"]}))), Ok(()));
    assert_eq!(check_value(&json, &HostValue::Json(json!(null))), Err(ValueProblem::Nothing));
    assert_eq!(check_value(&json, &HostValue::Json(json!({"a": ["x\u{0}"]}))), Err(ValueProblem::NulCharacter));
    assert_eq!(check_value(&json, &HostValue::Json(json!({"k\u{0}": 1}))), Err(ValueProblem::NulCharacter));

    let ts = column("last_login", ColumnType::Timestamp);
    assert_eq!(check_value(&ts, &HostValue::Timestamp(1_700_000_000)), Ok(()));
    assert_eq!(check_value(&ts, &HostValue::Timestamp(i64::MAX)), Err(ValueProblem::OutOfRange));
    let flag = column("flag", ColumnType::Boolean);
    assert_eq!(check_value(&flag, &HostValue::Bool(false)), Ok(()));
}

#[test]
fn debug_and_problems_never_show_the_value() {
    let value = HostValue::Text("MARIA DAS GRACAS".to_owned());
    assert!(!format!("{value:?}").contains("MARIA"));
    let mut short = column("state", ColumnType::Text);
    short.max_length = Some(2);
    let problem = check_value(&short, &value).expect_err("too long");
    assert!(!problem.to_string().contains("MARIA"));
}
