//! Every condition by which a request finds users is answered by searching
//! an index (`credencial_adapters_sqlite::user_lookups`): in the plan of
//! each (`EXPLAIN QUERY PLAN`), `users` is searched (`SEARCH users USING …
//! INDEX` or `… PRIMARY KEY`), never scanned whole (`SCAN users`, with or
//! without a covering index). A list given as JSON is scanned; that is the
//! list, not the table; so are the rows a capped count's subquery gave
//! (`SCAN matched`, `SCAN capped`). The panel's lists (the account search and the audit
//! trail, read by key) are checked the same way, and the search by words
//! is read in the index's order (no sort: it stops when the page is full).

use credencial_adapters_sqlite::testing::TestDatabase;
use credencial_adapters_sqlite::user_lookups::ALL;
use sqlx::{Connection, SqliteConnection};

/// The plan's details of `SELECT 1 FROM users WHERE condition`, with
/// `parameters` values bound (a JSON array where the condition reads one).
async fn plan(connection: &mut SqliteConnection, condition: &str, parameters: usize) -> Vec<String> {
    let sql = format!("EXPLAIN QUERY PLAN SELECT 1 FROM users WHERE {condition}");
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql);
    for _ in 0..parameters {
        query = if condition.contains("json_each") {
            query.bind(r#"["12345678909","98765432100"]"#)
        } else {
            query.bind("12345678909")
        };
    }
    let rows = query.fetch_all(&mut *connection).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.into_iter().map(|(_, _, _, detail)| detail).collect()
}

/// Whether every table `plan` reads is searched by an index: each `SCAN`
/// is of a JSON list or of a capped count's rows (`matched`, `capped`).
fn searches_users_by_index(plan: &[String]) -> bool {
    let reads: Vec<&String> = plan.iter().filter(|d| d.starts_with("SEARCH ") || d.starts_with("SCAN ")).collect();
    !reads.is_empty()
        && reads.iter().all(|d| {
            (d.starts_with("SEARCH ") && (d.contains(" INDEX ") || d.contains(" PRIMARY KEY ")))
                || d.starts_with("SCAN json_each")
                || d.as_str() == "SCAN matched"
                || d.as_str() == "SCAN capped"
        })
}

#[tokio::test]
async fn every_user_lookup_searches_an_index() {
    let db = TestDatabase::new().await;
    let mut connection = SqliteConnection::connect(&db.url).await.expect("connect");
    for (condition, parameters) in ALL {
        let plan = plan(&mut connection, condition, *parameters).await;
        assert!(searches_users_by_index(&plan), "{condition}: {plan:#?}");
    }
    // The check can fail: a condition no index serves scans the table, and
    // so does the e-mail key without the empty key ruled out (the partial
    // index leaves it out).
    for condition in ["lower(cpf) = ?1", "email_key = ?1"] {
        let plan = plan(&mut connection, condition, 1).await;
        assert!(!searches_users_by_index(&plan), "{condition}: {plan:#?}");
    }
}

/// The plan's details of `sql`, with `values` bound.
async fn statement_plan(connection: &mut SqliteConnection, sql: &str, values: &[Value<'_>]) -> Vec<String> {
    let explain = format!("EXPLAIN QUERY PLAN {sql}");
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&explain);
    for value in values {
        query = match value {
            Value::Text(text) => query.bind(text.to_string()),
            Value::Number(n) => query.bind(*n),
        };
    }
    let rows = query.fetch_all(&mut *connection).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.into_iter().map(|(_, _, _, detail)| detail).collect()
}

/// A bound value.
#[derive(Clone, Copy)]
enum Value<'a> {
    Text(&'a str),
    Number(i64),
}

#[tokio::test]
async fn the_panels_lists_are_read_by_key_through_an_index() {
    use credencial_adapters_sqlite::audit::list_statements;
    use credencial_adapters_sqlite::user_lookups::{search_statements, term_search_statements, BY_CPF};
    use credencial_domain::admin::AuditFilter;

    let db = TestDatabase::new().await;
    let mut connection = SqliteConnection::connect(&db.url).await.expect("connect");
    let mut statements: Vec<(String, Vec<Value>)> = Vec::new();
    // The account search: every account after a username; a text; a CPF.
    let (after, _) = search_statements("id", "TRUE", 0, true);
    statements.push((after, vec![Value::Text("ana"), Value::Number(21)]));
    let (page, count) = search_statements("id", BY_CPF, 1, true);
    statements.push((page, vec![Value::Text("52998224725"), Value::Text("ana"), Value::Number(21)]));
    statements.push((count, vec![Value::Text("52998224725"), Value::Number(1001)]));
    // By words: one range of the terms' key, in its order (no sort), and
    // each account by its key.
    let range = [Value::Text("maria sou"), Value::Text("maria sou\u{10ffff}")];
    for after in [false, true] {
        let (page, _) = term_search_statements("users.id", after);
        let mut values = range.to_vec();
        if after {
            values.extend([Value::Text("maria souza"), Value::Number(7)]);
        }
        values.push(Value::Number(21));
        let plan = statement_plan(&mut connection, &page, &values).await;
        assert!(!plan.iter().any(|d| d.contains("TEMP B-TREE")), "{page}: sorted: {plan:#?}");
        assert!(plan.iter().any(|d| d.starts_with("SEARCH t USING PRIMARY KEY")), "{page}: {plan:#?}");
        statements.push((page, values));
    }
    let (_, count) = term_search_statements("users.id", false);
    statements.push((count, [range.to_vec(), vec![Value::Number(4004)]].concat()));
    // The audit trail: older than an entry, by actor, by target, by both.
    let (older, _) = list_statements(&AuditFilter::default(), true);
    statements.push((older, vec![Value::Number(500), Value::Number(51)]));
    for (actor, target) in [(true, false), (false, true), (true, true)] {
        let filter = AuditFilter { actor: actor.then(|| "admin".into()), target: target.then(|| "ana".into()) };
        let names = usize::from(actor) + usize::from(target);
        let (page, count) = list_statements(&filter, true);
        let mut count_values: Vec<Value> = (0..names).map(|_| Value::Text("admin")).collect();
        count_values.push(Value::Number(1001));
        statements.push((count, count_values));
        let mut page_values: Vec<Value> = (0..names).map(|_| Value::Text("admin")).collect();
        page_values.extend([Value::Number(500), Value::Number(51)]);
        statements.push((page, page_values));
    }
    for (sql, values) in statements {
        let plan = statement_plan(&mut connection, &sql, &values).await;
        assert!(searches_users_by_index(&plan), "{sql}: {plan:#?}");
    }
}
