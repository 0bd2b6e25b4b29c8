//! Planning the get-or-create on the default `host_users` shape.

use serde_json::json;

use super::*;
use crate::host_table::tests::{column, host_users};
use crate::host_table::ColumnType;

fn name(s: &str) -> ColumnName {
    ColumnName::parse(s).expect("column name")
}

fn text(s: &str) -> HostValue {
    HostValue::Text(s.to_owned())
}

fn values(pairs: &[(&str, HostValue)]) -> Vec<(ColumnName, HostValue)> {
    pairs.iter().map(|(c, v)| (name(c), v.clone())).collect()
}

fn plan<'s>(
    shape: &'s TableShape,
    lookup: &str,
    value: HostValue,
    pairs: &[(&str, HostValue)],
) -> Result<(UpsertPlan<'s>, Vec<SkippedValue>), PlanError> {
    UpsertPlan::new(shape, &name(lookup), value, values(pairs))
}

fn written(plan: &UpsertPlan<'_>) -> Vec<(usize, String)> {
    plan.parameters().map(|(n, p)| (n, p.column.name.clone())).collect()
}

#[test]
fn the_lookup_comes_first_then_one_entry_per_column_the_later_winning() {
    let shape = host_users();
    let pairs = [
        ("username", text("someone-else")),
        ("email", text("a@example.org")),
        ("first_name", text("Ana")),
        ("email", text("b@example.org")),
    ];
    let (plan, skipped) = plan(&shape, "username", text("ana"), &pairs).expect("plan");
    assert!(skipped.is_empty());
    assert_eq!(plan.table().as_str(), "host_users");
    assert_eq!(written(&plan), [(1, "username".to_owned()), (2, "email".to_owned()), (3, "first_name".to_owned())]);
    assert_eq!(plan.lookup().param, HostParam::Text("ana".to_owned()), "the lookup value, not the map's entry");
    assert_eq!(plan.values()[0].param, HostParam::Text("b@example.org".to_owned()), "the later entry wins");
    let numbered: Vec<usize> = plan.numbered_values().map(|(n, _)| n).collect();
    assert_eq!(numbered, [2, 3]);
    assert_eq!(plan.updated_columns(), ["email", "first_name"]);
    assert!(plan.guards_is_active());
}

#[test]
fn without_values_the_update_sets_the_lookup_column_to_itself() {
    let shape = host_users();
    let (plan, _) = plan(&shape, "username", text("ana"), &[]).expect("plan");
    assert_eq!(plan.updated_columns(), ["username"]);
    assert_eq!(plan.numbered_values().count(), 0);
}

#[test]
fn values_become_parameters_of_their_kind() {
    let shape = host_users();
    let pairs = [
        ("birth_date", HostValue::Date("1988-03-14".to_owned())),
        ("profile", HostValue::Json(json!({"a": [1]}))),
        ("last_login", HostValue::Timestamp(1_700_000_000)),
    ];
    let (plan, _) = plan(&shape, "username", text("ana"), &pairs).expect("plan");
    let params: Vec<&HostParam> = plan.values().iter().map(|v| &v.param).collect();
    assert_eq!(
        params,
        [
            &HostParam::Text("1988-03-14".to_owned()),
            &HostParam::Text(r#"{"a":[1]}"#.to_owned()),
            &HostParam::Integer(1_700_000_000)
        ]
    );
    assert_eq!(HostParam::from(HostValue::Bool(true)), HostParam::Bool(true));
    assert!(!format!("{:?}", plan.values()[0].param).contains("1988"), "Debug hides the value");
}

#[test]
fn values_that_do_not_fit_are_left_out_and_named() {
    let shape = host_users();
    let pairs = [
        ("birth_date", HostValue::Date("2026-13-45".to_owned())),
        ("cpf", text("123456789012")),
        ("first_name", HostValue::Json(json!({"x": 1}))),
        ("profile", HostValue::Json(serde_json::Value::Null)),
        ("email", text("ana@example.org")),
    ];
    let (plan, skipped) = plan(&shape, "username", text("ana"), &pairs).expect("plan");
    assert_eq!(written(&plan), [(1, "username".to_owned()), (2, "email".to_owned())]);
    let problems: Vec<(&str, &ValueProblem)> = skipped.iter().map(|s| (s.column.as_str(), &s.problem)).collect();
    assert_eq!(problems[0], ("birth_date", &ValueProblem::NotADate));
    assert_eq!(problems[1], ("cpf", &ValueProblem::TooLong { max_length: 11 }));
    assert!(matches!(problems[2], ("first_name", ValueProblem::WrongKind { .. })));
    assert_eq!(problems[3], ("profile", &ValueProblem::Nothing));
}

#[test]
fn columns_the_table_lacks_or_logins_cannot_write_stop_the_login() {
    let mut shape = host_users();
    let mut slug = column("slug", ColumnType::Text);
    slug.generated = true;
    shape.columns.push(slug);
    for bad in ["nickname", "id", "is_active", "slug"] {
        let err = plan(&shape, "username", text("ana"), &[(bad, text("x"))]).expect_err(bad);
        assert_eq!(err, PlanError::UnknownColumn(bad.to_owned()));
        let err = plan(&shape, bad, text("ana"), &[]).expect_err(bad);
        assert_eq!(err, PlanError::UnknownColumn(bad.to_owned()));
    }
}

#[test]
fn the_lookup_column_must_be_unique_and_the_table_keyed_by_an_integer_id() {
    let shape = host_users();
    let err = plan(&shape, "email", text("a@example.org"), &[]).expect_err("not unique");
    assert!(matches!(&err, PlanError::InvalidTable(m) if m.contains("\"email\"") && m.contains("unique")), "{err}");

    let mut no_id = host_users();
    no_id.columns.retain(|c| c.name != "id");
    let err = plan(&no_id, "username", text("ana"), &[]).expect_err("no id");
    assert!(matches!(&err, PlanError::InvalidTable(m) if m.contains("\"id\"")), "{err}");
}

#[test]
fn a_blank_or_unfit_lookup_value_identifies_nobody() {
    let shape = host_users();
    for value in [text(""), text("   "), text(&"m".repeat(151)), HostValue::Json(json!("ana")), text("a\0b")] {
        let err = plan(&shape, "username", value, &[]).expect_err("unusable");
        assert_eq!(err, PlanError::UnusableLookup("username".to_owned()));
    }
}

fn constraint(columns: &[&str]) -> Refusal {
    Refusal::Constraint {
        constraint: "host_users_check".to_owned(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
    }
}

#[test]
fn a_refused_constraint_drops_its_columns_value_and_the_attempt_runs_again() {
    let shape = host_users();
    let pairs = [("cpf", text("12345678901")), ("email", text("a@example.org"))];
    let (mut plan, _) = plan(&shape, "username", text("ana"), &pairs).expect("plan");
    let (next, dropped) = plan.next_attempt(&Attempt::Upsert, constraint(&["cpf"])).expect("retry");
    assert_eq!((next, dropped), (Attempt::Upsert, vec!["cpf".to_owned()]));
    assert_eq!(written(&plan), [(1, "username".to_owned()), (2, "email".to_owned())], "renumbered");

    let update = Attempt::Update { missing: Some("full_name".to_owned()) };
    let (next, dropped) = plan.next_attempt(&update, constraint(&["email"])).expect("retry");
    assert_eq!((next, dropped), (update, vec!["email".to_owned()]));
}

#[test]
fn a_constraint_on_the_lookup_or_on_no_column_written_ends_the_login() {
    let shape = host_users();
    let (mut plan, _) = plan(&shape, "cpf", text("1234"), &[("email", text("a@example.org"))]).expect("plan");
    let err = plan.next_attempt(&Attempt::Upsert, constraint(&["cpf"])).expect_err("lookup refused");
    assert_eq!(err, PlanError::UnusableLookup("cpf".to_owned()));
    let err = plan.next_attempt(&Attempt::Upsert, constraint(&[])).expect_err("several columns");
    assert!(matches!(&err, PlanError::Inconsistent(m) if m.contains("host_users_check")), "{err}");
    let err = plan.next_attempt(&Attempt::Upsert, constraint(&["first_name"])).expect_err("not written");
    assert!(matches!(err, PlanError::Inconsistent(_)));
    assert_eq!(plan.values().len(), 1, "nothing dropped");
}

#[test]
fn a_missing_required_value_turns_the_upsert_into_an_update_once() {
    let shape = host_users();
    let (mut plan, _) = plan(&shape, "username", text("ana"), &[]).expect("plan");
    let (next, dropped) =
        plan.next_attempt(&Attempt::Upsert, Refusal::NotNull("full_name".to_owned())).expect("update");
    assert_eq!(next, Attempt::Update { missing: Some("full_name".to_owned()) });
    assert!(dropped.is_empty());
    let err = plan.next_attempt(&next, Refusal::NotNull("full_name".to_owned())).expect_err("twice");
    assert!(matches!(err, PlanError::Inconsistent(_)));

    assert_eq!(plan.not_updated(None, Some("full_name")), PlanError::MissingRequired("full_name".to_owned()));
    assert_eq!(plan.not_updated(Some(false), Some("full_name")), PlanError::Inactive);
    assert!(matches!(plan.not_updated(Some(true), Some("full_name")), PlanError::Inconsistent(_)));
}

#[test]
fn no_row_back_means_inactive_only_where_the_table_has_is_active() {
    let shape = host_users();
    let (plan, _) = plan(&shape, "username", text("ana"), &[]).expect("plan");
    assert_eq!(plan.no_row_returned(), PlanError::Inactive);

    let mut without = host_users();
    without.columns.retain(|c| c.name != "is_active");
    let (plan, _) = UpsertPlan::new(&without, &name("username"), text("ana"), Vec::new()).expect("plan");
    assert!(!plan.guards_is_active());
    assert!(matches!(plan.no_row_returned(), PlanError::Inconsistent(_)));
}

#[test]
fn values_of_creation_are_inserted_but_never_updated_and_a_plan_that_may_not_create_only_updates() {
    use super::super::{HostWrite, WriteOn};
    let shape = host_users();
    let column = |name: &str| ColumnName::parse(name).expect("name");
    let writes = vec![
        HostWrite { column: column("email"), value: text("a@example.org"), on: WriteOn::Creation },
        HostWrite { column: column("first_name"), value: text("Ana"), on: WriteOn::EveryLogin },
    ];
    let (plan, _) =
        UpsertPlan::for_writes(&shape, &column("username"), text("ana"), writes.clone(), true).expect("plan");
    assert_eq!(plan.first_attempt(), Attempt::Upsert);
    assert_eq!(plan.values().len(), 2, "a new row gets both");
    assert_eq!(plan.updated_columns(), ["first_name"], "an existing row only the refreshed one");
    let numbered: Vec<(usize, &str)> = plan.update_parameters().map(|(n, v)| (n, v.column.name.as_str())).collect();
    assert_eq!(numbered, [(1, "username"), (2, "first_name")], "numbered without the creation value");

    let (existing_only, _) =
        UpsertPlan::for_writes(&shape, &column("username"), text("ana"), writes, false).expect("plan");
    assert_eq!(existing_only.first_attempt(), Attempt::Update { missing: None });
    assert_eq!(existing_only.not_updated(None, None), PlanError::NotRegistered);
    assert_eq!(existing_only.not_updated(Some(false), None), PlanError::Inactive);
    let creation_only =
        vec![HostWrite { column: column("email"), value: text("a@example.org"), on: WriteOn::Creation }];
    let (plan, _) =
        UpsertPlan::for_writes(&shape, &column("username"), text("ana"), creation_only, true).expect("plan");
    assert_eq!(plan.updated_columns(), ["username"], "nothing refreshed: the lookup column to itself");
}
