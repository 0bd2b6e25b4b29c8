//! `DataTransfer`, what `credencial export` and `import` run: the
//! description of the schema (`credencial_ports::TABLES`) against each
//! engine's own catalogue, so a migration that adds a column to one engine
//! and not to the description fails here; and a round trip through one
//! engine that keeps every kind of value (NULL bytes and JSON, booleans,
//! sealed blobs, millisecond windows, the id generators' high-water marks).
//! The e2e suite (tests/api/transfer.rs) moves a deployment between the two.

use credencial_domain::admin::{Actor, AuditAction, AuditTarget, NewAuditEntry};
use credencial_domain::oauth::ClientId;
use credencial_domain::throttle::ThrottleKey;
use credencial_domain::{Scope, ScopeSet, UserId, Username};
use credencial_ports::transfer::{count_all_rows, Dump};
use credencial_ports::{GraceRotation, NewRefreshToken, OAuthClient, RepositoryError, Snapshot, TABLES};
use credencial_storage_contract::{contract, Backend, Engine};
use serde_json::json;

contract!(
    the_transfer_describes_every_table_and_column_of_the_schema,
    a_dump_imported_into_an_empty_database_exports_the_same_and_keeps_the_id_generators,
    an_import_into_a_database_with_rows_is_a_conflict_and_writes_nothing,
    a_refused_row_rolls_the_whole_import_back,
    an_import_computes_the_e_mail_keys_and_names_accounts_that_would_share_one,
    an_export_announces_each_table_with_its_count_before_streaming_its_rows,
);

fn audit() -> NewAuditEntry {
    NewAuditEntry::new(Actor::Cli { os_user: "test".into() }, AuditAction::ClientCreate, AuditTarget::None)
}

fn token(jti: &str, user: UserId) -> NewRefreshToken {
    NewRefreshToken { jti: jti.into(), user_id: user, expires_at: 4_102_444_800 }
}

/// A database with a row of every kind of value: a client without an API
/// token (NULL bytes), a rotation inside the grace window (a sealed blob), a
/// failure window (milliseconds), a snapshot (JSON), a deleted user (a gap
/// under the id generator's high-water mark).
async fn filled<B: Backend>() -> (B, Dump) {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let gone = b.create_user("gone").await;
    b.execute(&format!("DELETE FROM users WHERE id = {}", gone.0)).await;
    let client = OAuthClient {
        client_id: ClientId::parse("portal").expect("id"),
        name: "Portal".into(),
        secret_hash: Some("pbkdf2_sha256$1000$salt$hash=".into()),
        redirect_uris: vec!["https://portal.example.gov.br/cb".into()],
        post_logout_redirect_uris: vec![],
        confidential: true,
        require_pkce: false,
        requires_second_factor: false,
        minimum_govbr_level: Some(credencial_domain::federation::ReliabilityLevel::Prata),
        enabled_scopes: ScopeSet::parse_strict("cnes").expect("scopes"),
        is_active: true,
        created_at: 0,
        backchannel_logout_uri: None,
    };
    b.clients().create(client, &audit()).await.expect("client");
    let tokens = b.refresh_tokens();
    tokens.record(token("first", ana), "first").await.expect("record");
    let grace =
        GraceRotation { sealed_successor: vec![0, 1, 2, 254, 255], at: 1_900_000_000, covered_since: 1_899_999_990 };
    tokens.rotate("first", ana, token("second", ana), Some(grace)).await.expect("rotate");
    let key = ThrottleKey::username(&Username::parse("ana").expect("username"));
    b.login_failures().record_failure(&[key], 1_900_000_000_123, 60_000).await.expect("failure");
    let payload = json!({"vinculos": [{"cnes": "2653818"}], "vazio": null});
    let snapshot = Snapshot { scope: Scope::Cnes, payload, fetched_at: 1_900_000_000, expires_at: 1_900_086_400 };
    b.snapshots().put(ana, snapshot).await.expect("snapshot");
    let level = credencial_domain::federation::Reliability {
        level: credencial_domain::federation::ReliabilityLevel::Ouro,
        seals: vec![credencial_domain::federation::Seal { id: "801".into(), updated_at: None }],
        read_at: 1_900_000_000,
    };
    let link = credencial_ports::NewProviderLink {
        provider: "govbr",
        subject: "52998224725",
        proves_cpf: true,
        reliability: Some(&level),
        now: 1_900_000_000,
    };
    b.federated_links().link(ana, link).await.expect("stored").expect("linked");
    let dump = b.transfer().export().await.expect("export");
    (b, dump)
}

async fn a_dump_imported_into_an_empty_database_exports_the_same_and_keeps_the_id_generators<B: Backend>() {
    let (_source, dump) = filled::<B>().await;
    let rows = |name: &str| dump.tables.iter().find(|(t, _)| t.name == name).map(|(_, r)| r.clone()).expect(name);
    let client = &rows("oauth_clients")[0];
    assert_eq!((client["api_token_hash"].clone(), client["confidential"].clone()), (json!(null), json!(true)));
    let rotated = rows("refresh_tokens").into_iter().find(|r| r["jti"] == "first").expect("the rotated token");
    assert_eq!(rotated["successor_sealed"], "000102feff");
    assert_eq!(rows("login_failures")[0]["window_start"], 1_900_000_000_123_i64);
    assert_eq!(rows("scope_snapshots")[0]["payload"]["vazio"], json!(null));
    let link = &rows("federated_links")[0];
    assert_eq!((link["proves_cpf"].clone(), link["level"].clone()), (json!(true), json!("ouro")));
    assert_eq!(dump.id_high_water["users"], 2, "the deleted user's id is remembered");

    let target = B::fresh().await;
    target.transfer().import(&dump).await.expect("import");
    assert_eq!(target.transfer().export().await.expect("export again"), dump);
    // The next user gets an id no user ever had.
    let next = target.create_user("bia").await;
    assert_eq!(next.0, 3);
    // What was moved works: the rotated token's successor is current, and
    // the link opens its account with its level.
    assert!(target.refresh_tokens().is_current("second").await.expect("current"));
    let links = target.federated_links().links_of(UserId(1)).await.expect("links");
    assert_eq!(links.iter().map(|l| (l.provider.as_str(), l.proves_cpf)).collect::<Vec<_>>(), [("govbr", true)]);
    assert_eq!(
        links[0].reliability.as_ref().map(|r| r.level),
        Some(credencial_domain::federation::ReliabilityLevel::Ouro)
    );
    // The account search's terms, not moved, are written again with the accounts.
    let query = credencial_domain::admin::AccountQuery::parse("full an");
    let (found, _) = target.account_admin().search(&query, None, 5).await.expect("search");
    assert_eq!(found.into_iter().map(|(_, a)| a.username).collect::<Vec<_>>(), ["ana"]);
}

async fn an_import_into_a_database_with_rows_is_a_conflict_and_writes_nothing<B: Backend>() {
    let (_source, dump) = filled::<B>().await;
    let busy = B::fresh().await;
    busy.create_user("zeca").await;
    let refused = busy.transfer().import(&dump).await;
    assert!(
        matches!(&refused, Err(RepositoryError::Conflict(why)) if why.contains("not empty (1 rows)")),
        "{refused:?}"
    );
    assert_eq!(busy.count("SELECT count(*) FROM users").await, 1);
    assert_eq!(busy.count("SELECT count(*) FROM oauth_clients").await, 0);
}

async fn a_refused_row_rolls_the_whole_import_back<B: Backend>() {
    let (_source, mut dump) = filled::<B>().await;
    // A second row with the first client's id: refused by the primary key,
    // after every user and the first client were written.
    let clients = dump.tables.iter_mut().find(|(t, _)| t.name == "oauth_clients").expect("clients");
    let copy = clients.1[0].clone();
    clients.1.push(copy);
    let target = B::fresh().await;
    let refused = target.transfer().import(&dump).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(target.count(&count_all_rows()).await, 0, "nothing was kept");
}

async fn the_transfer_describes_every_table_and_column_of_the_schema<B: Backend>() {
    let b = B::fresh().await;
    let tables = match B::ENGINE {
        Engine::Postgres => {
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_sqlx_migrations'"
        }
        Engine::Sqlite => {
            // Tables only (not a virtual table's shadow tables), of both
            // files (the access log has its own).
            "SELECT count(*) FROM pragma_table_list WHERE schema IN ('main', 'access') AND type = 'table' \
             AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'"
        }
    };
    let kept = (TABLES.len() + credencial_ports::transfer::NOT_TRANSFERRED.len()) as i64;
    assert_eq!(b.count(tables).await, kept, "every table of the schema is transferred or named as left out");
    for table in TABLES {
        let columns = match B::ENGINE {
            Engine::Postgres => format!(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '{}'",
                table.name
            ),
            Engine::Sqlite => format!("SELECT count(*) FROM pragma_table_info('{}')", table.name),
        };
        assert_eq!(b.count(&columns).await, table.columns.len() as i64, "the columns of {}", table.name);
        for (column, _) in table.columns {
            // Fails (panics with the engine's message) if the column is not there.
            b.count(&format!("SELECT count({column}) FROM {}", table.name)).await;
        }
    }
}

async fn an_import_computes_the_e_mail_keys_and_names_accounts_that_would_share_one<B: Backend>() {
    let (_source, dump) = filled::<B>().await;
    // A dump of a release before the key: no `email_key`, and (SQLite's
    // lower() folds ASCII only) two addresses that differ in case only.
    let mut older = dump.clone();
    let users = users_of(&mut older);
    for row in users.iter_mut() {
        row.remove("email_key");
    }
    let mut twin = users[0].clone();
    twin.insert("id".into(), json!(7));
    twin.insert("username".into(), json!("ana2"));
    twin.insert("email".into(), json!("\u{c1}NA@example.gov.br"));
    users[0].insert("email".into(), json!("\u{e1}na@example.gov.br"));
    users.push(twin);
    let target = B::fresh().await;
    let refused = target.transfer().import(&older).await;
    let Err(RepositoryError::Conflict(why)) = &refused else { panic!("{refused:?}") };
    assert!(
        why.contains("\u{e1}na@example.gov.br: account 1 \"ana\" <\u{e1}na@example.gov.br>, account 7 \"ana2\" <\u{c1}NA@example.gov.br>"),
        "{why}"
    );
    assert_eq!(target.count(&count_all_rows()).await, 0, "nothing was written");

    // Without the twin, the keys are computed and the account is found by
    // its address in another case.
    users_of(&mut older).pop();
    target.transfer().import(&older).await.expect("import");
    assert_eq!(target.count("SELECT count(*) FROM users WHERE email_key = '\u{e1}na@example.gov.br'").await, 1);
}

fn users_of(dump: &mut Dump) -> &mut Vec<credencial_ports::transfer::Row> {
    &mut dump.tables.iter_mut().find(|(t, _)| t.name == "users").expect("users").1
}

/// A sink that keeps only what a file would need to check: the announced
/// counts, the tables in the order they came, and the rows seen of each.
#[derive(Default)]
struct Tally {
    announced: Vec<(&'static str, u64)>,
    started: Vec<(&'static str, u64)>,
    seen: Vec<u64>,
}

impl credencial_ports::transfer::ExportSink for Tally {
    fn begin(
        &mut self,
        counts: &[(credencial_ports::TableSpec, u64)],
        _: &std::collections::BTreeMap<String, i64>,
    ) -> Result<(), RepositoryError> {
        assert!(self.started.is_empty(), "begin comes first");
        self.announced = counts.iter().map(|(t, n)| (t.name, *n)).collect();
        Ok(())
    }

    fn table(&mut self, table: &credencial_ports::TableSpec, rows: u64) -> Result<(), RepositoryError> {
        self.started.push((table.name, rows));
        self.seen.push(0);
        Ok(())
    }

    fn row(&mut self, _: credencial_ports::transfer::Row) -> Result<(), RepositoryError> {
        *self.seen.last_mut().expect("a row after its table") += 1;
        Ok(())
    }
}

async fn an_export_announces_each_table_with_its_count_before_streaming_its_rows<B: Backend>() {
    let (b, _) = filled::<B>().await;
    let mut tally = Tally::default();
    b.transfer().export_to(&mut tally).await.expect("export");
    let order: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    assert_eq!(tally.started.iter().map(|(t, _)| *t).collect::<Vec<_>>(), order, "every table, in schema order");
    assert_eq!(tally.announced, tally.started, "the header's counts are each table's");
    let streamed: Vec<u64> = tally.started.iter().map(|(_, n)| *n).collect();
    assert_eq!(tally.seen, streamed, "as many rows as announced");
    assert!(tally.seen.iter().sum::<u64>() > 5, "{:?}", tally.started);
}
