//! Every condition by which a request finds users is answered with an
//! index (`credencial_adapters_postgres::user_lookups`): the plan of each,
//! with sequential scans priced out (`enable_seqscan = off`, so that the
//! planner takes an index whenever one can serve, however small the test
//! table) and as a generic plan (what a prepared statement gets after a few
//! runs), has no sequential scan, and every index it reads is searched by
//! the condition (`Index Cond`), not read whole and filtered.

use credencial_adapters_postgres::testing::TestDatabase;
use credencial_adapters_postgres::user_lookups::{Parameter, ALL};
use serde_json::Value;
use sqlx::{Connection, Executor, PgConnection};

/// The generic plan of `SELECT 1 FROM users WHERE condition` (the plan a
/// prepared statement gets after a few runs, which cannot count on the
/// parameters' values), its parameters typed as the stores bind them (JSON).
async fn plan(connection: &mut PgConnection, condition: &str, parameters: &[Parameter]) -> Value {
    let (types, values): (Vec<&str>, Vec<&str>) = parameters
        .iter()
        .map(|p| match p {
            Parameter::Text => ("text", "'12345678909'"),
            Parameter::TextArray => ("text[]", "ARRAY['12345678909', '98765432100']"),
        })
        .unzip();
    let prepare = format!("PREPARE lookup ({}) AS SELECT 1 FROM users WHERE {condition}", types.join(", "));
    connection.execute(prepare.as_str()).await.unwrap_or_else(|e| panic!("{prepare}: {e}"));
    let explain = format!("EXPLAIN (FORMAT JSON) EXECUTE lookup ({})", values.join(", "));
    let plan = sqlx::query_scalar::<_, Value>(&explain)
        .fetch_one(&mut *connection)
        .await
        .unwrap_or_else(|e| panic!("{explain}: {e}"));
    connection.execute("DEALLOCATE lookup").await.expect("deallocate");
    plan
}

/// Whether every scan of `plan` is an index searched by its condition:
/// no sequential scan, at least one index scan, and each with its
/// `Index Cond`.
fn searches_indexes_only(plan: &Value) -> bool {
    fn nodes<'a>(node: &'a Value, all: &mut Vec<&'a Value>) {
        all.push(node);
        for child in node["Plans"].as_array().into_iter().flatten() {
            nodes(child, all);
        }
    }
    let mut all = Vec::new();
    nodes(&plan[0]["Plan"], &mut all);
    let types: Vec<&str> = all.iter().filter_map(|n| n["Node Type"].as_str()).collect();
    let index_scans: Vec<&&Value> =
        all.iter().filter(|n| n["Node Type"].as_str().is_some_and(|t| t.contains("Index"))).collect();
    !types.contains(&"Seq Scan") && !index_scans.is_empty() && index_scans.iter().all(|n| n.get("Index Cond").is_some())
}

#[tokio::test]
async fn every_user_lookup_uses_an_index() {
    let db = TestDatabase::new().await;
    let mut connection = PgConnection::connect(&db.url).await.expect("connect");
    connection.execute("SET enable_seqscan = off").await.expect("set");
    connection.execute("SET plan_cache_mode = force_generic_plan").await.expect("set");
    for (condition, parameters) in ALL {
        let plan = plan(&mut connection, condition, parameters).await;
        assert!(searches_indexes_only(&plan), "{condition}:\n{plan:#}");
    }
    // The check can fail: the CPF compared as text, as before the cast,
    // reads the whole index (or table) and filters it; so does the e-mail
    // key without the empty key ruled out, in a generic plan.
    for condition in ["cpf = $1", "email_key = $1"] {
        let plan = plan(&mut connection, condition, &[Parameter::Text]).await;
        assert!(!searches_indexes_only(&plan), "{condition}:\n{plan:#}");
    }
}

/// The generic plan of `sql`, its parameters of `types` given `values`.
async fn statement_plan(connection: &mut PgConnection, sql: &str, types: &[&str], values: &[&str]) -> Value {
    let prepare = format!("PREPARE listed ({}) AS {sql}", types.join(", "));
    connection.execute(prepare.as_str()).await.unwrap_or_else(|e| panic!("{prepare}: {e}"));
    let explain = format!("EXPLAIN (FORMAT JSON) EXECUTE listed ({})", values.join(", "));
    let plan = sqlx::query_scalar::<_, Value>(&explain)
        .fetch_one(&mut *connection)
        .await
        .unwrap_or_else(|e| panic!("{explain}: {e}"));
    connection.execute("DEALLOCATE listed").await.expect("deallocate");
    plan
}

#[tokio::test]
async fn the_panels_lists_are_read_by_key_through_an_index() {
    use credencial_adapters_postgres::audit::list_statements;
    use credencial_adapters_postgres::user_lookups::{search_statements, term_search_statements, BY_CPF};
    use credencial_domain::admin::AuditFilter;

    let db = TestDatabase::new().await;
    let mut connection = PgConnection::connect(&db.url).await.expect("connect");
    connection.execute("SET enable_seqscan = off").await.expect("set");
    connection.execute("SET plan_cache_mode = force_generic_plan").await.expect("set");
    let name = |actor: bool, target: bool| AuditFilter {
        actor: actor.then(|| "admin".to_owned()),
        target: target.then(|| "ana".to_owned()),
    };
    // (statement, parameter types, values)
    let mut statements: Vec<(String, Vec<&str>, Vec<&str>)> = Vec::new();
    // The account search: every account after a username; a text; a CPF.
    let (after, _) = search_statements("id, username", "TRUE", 0, true);
    statements.push((after, vec!["text", "bigint"], vec!["'ana'", "21"]));
    let (page, count) = search_statements("id, username", BY_CPF, 1, true);
    statements.push((page, vec!["text", "text", "bigint"], vec!["'52998224725'", "'ana'", "21"]));
    statements.push((count, vec!["text", "bigint"], vec!["'52998224725'", "1001"]));
    // By words: one range of the terms' key, in its order (no sort), and
    // each account by its key.
    let range = ["'maria sou'", "'maria sou' || chr(1114111)"];
    for after in [false, true] {
        let (page, _) = term_search_statements("users.id", after);
        let (mut types, mut values) = (vec!["text", "text"], range.to_vec());
        if after {
            types.extend(["text", "bigint"]);
            values.extend(["'maria souza'", "7"]);
        }
        types.push("bigint");
        values.push("21");
        let plan = statement_plan(&mut connection, &page, &types, &values).await;
        assert!(!plan.to_string().contains("\"Sort\""), "{page}: sorted:\n{plan:#}");
        assert!(plan.to_string().contains("user_search_terms_pkey"), "{page}:\n{plan:#}");
        statements.push((page, types, values));
    }
    let (_, count) = term_search_statements("users.id", false);
    statements.push((count, vec!["text", "text", "bigint"], [range.to_vec(), vec!["4004"]].concat()));
    // The audit trail: older than an entry, by actor, by target, by both.
    let (older, _) = list_statements(&AuditFilter::default(), true);
    statements.push((older, vec!["bigint", "bigint"], vec!["500", "51"]));
    for (actor, target) in [(true, false), (false, true), (true, true)] {
        let names = usize::from(actor) + usize::from(target);
        let (page, count) = list_statements(&name(actor, target), true);
        let mut types = vec!["text"; names];
        let mut values = vec!["'admin'"; names];
        statements.push((count, [types.clone(), vec!["bigint"]].concat(), [values.clone(), vec!["1001"]].concat()));
        types.extend(["bigint", "bigint"]);
        values.extend(["500", "51"]);
        statements.push((page, types, values));
    }
    for (sql, types, values) in statements {
        let plan = statement_plan(&mut connection, &sql, &types, &values).await;
        assert!(searches_indexes_only(&plan), "{sql}:\n{plan:#}");
    }
}
