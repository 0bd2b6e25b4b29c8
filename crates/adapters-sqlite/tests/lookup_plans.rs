//! Every condition by which a request finds users is answered by searching
//! an index (`credencial_adapters_sqlite::user_lookups`): in the plan of
//! each (`EXPLAIN QUERY PLAN`), `users` is searched (`SEARCH users USING …
//! INDEX`), never scanned whole (`SCAN users`, with or without a covering
//! index). A list given as JSON is scanned; that is the list, not the table.

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

/// Whether `users` is only searched by an index in `plan`.
fn searches_users_by_index(plan: &[String]) -> bool {
    let on_users: Vec<&String> = plan.iter().filter(|d| d.contains(" users")).collect();
    !on_users.is_empty() && on_users.iter().all(|d| d.starts_with("SEARCH users USING") && d.contains("INDEX"))
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
