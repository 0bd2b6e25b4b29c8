//! The real binary's OAuth2 client administration: `client create`,
//! `client update` and `client list`.

use std::process::Output;

use crate::helpers::TestDatabase;
use credencial_domain::federation::ReliabilityLevel;
use credencial_domain::oauth::ClientId;
use credencial_domain::{DjangoPbkdf2, ScopeSet};
use credencial_ports::OAuthClient;

fn credencial(db_url: &str, args: &[&str]) -> Output {
    crate::cli::credencial(db_url, args, "")
}

/// Runs the command, asserts it succeeded and returns its standard output.
fn ok(db_url: &str, args: &[&str]) -> String {
    let out = credencial(db_url, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs the command, asserts it failed and returns its standard error.
fn fails(db_url: &str, args: &[&str]) -> String {
    let out = credencial(db_url, args);
    assert!(!out.status.success(), "{args:?} succeeded: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The client secret: the last line of standard output, right after the
/// line that announces it, and printed nowhere else.
fn printed_secret(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    let notice = lines.iter().position(|l| l.starts_with("Store this client secret now")).expect("announced");
    assert_eq!(notice + 2, lines.len(), "the secret is the last line: {stdout}");
    let secret = lines[notice + 1];
    assert!(secret.len() >= 32 && !secret.contains(' '), "a bare secret: {secret:?}");
    assert_eq!(stdout.matches(secret).count(), 1, "printed exactly once: {stdout}");
    secret.to_owned()
}

async fn stored(db: &TestDatabase, id: &str) -> Option<OAuthClient> {
    db.storage().clients.find(&ClientId::parse(id).expect("valid id")).await.expect("query")
}

async fn count_clients(db: &TestDatabase) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM oauth_clients").fetch_one(&db.pool).await.expect("count")
}

fn verifies(hash: &str, secret: &str) -> bool {
    DjangoPbkdf2::parse(hash).expect("Django format").verify(secret)
}

#[tokio::test]
async fn creating_a_confidential_client_prints_its_secret_once_and_stores_only_a_hash() {
    let db = TestDatabase::new().await;
    let out = ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "portal",
            "--name",
            "Portal do Servidor",
            "--redirect-uri",
            "https://portal.example.gov.br/callback",
            "--redirect-uri",
            "http://localhost:8080/cb",
            "--scopes",
            "receita_federal cnes cpf",
        ],
    );
    let secret = printed_secret(&out);
    assert_eq!(secret.len(), 43, "32 random bytes, base64url");
    assert!(secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{secret}");

    let client = stored(&db, "portal").await.expect("stored");
    assert_eq!(client.name, "Portal do Servidor");
    assert!(client.confidential);
    assert!(!client.require_pkce);
    assert_eq!(client.redirect_uris, ["https://portal.example.gov.br/callback", "http://localhost:8080/cb"]);
    assert_eq!(
        client.enabled_scopes.to_scope_string(),
        "receita_federal cnes",
        "required scopes are not stored: they are always granted"
    );
    let hash = client.secret_hash.expect("hash stored");
    assert!(hash.starts_with("pbkdf2_sha256$1000$"), "{hash}");
    assert!(!hash.contains(&secret));
    assert!(verifies(&hash, &secret));
    assert!(!verifies(&hash, &secret.to_uppercase()));

    let listed = ok(&db.url, &["client", "list"]);
    assert!(!listed.contains(&secret), "list never shows the secret");
    assert!(!listed.contains("pbkdf2"), "nor its hash");
}

#[tokio::test]
async fn creating_a_public_client_prints_no_secret_and_requires_pkce() {
    let db = TestDatabase::new().await;
    let out = ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "spa",
            "--name",
            "App",
            "--redirect-uri",
            "https://spa.example.gov.br/",
            "--public",
        ],
    );
    assert!(!out.contains("client secret"), "{out}");
    assert!(out.contains("public client spa"), "{out}");
    let client = stored(&db, "spa").await.expect("stored");
    assert!(!client.confidential);
    assert_eq!(client.secret_hash, None);
    assert_eq!(client.enabled_scopes, ScopeSet::empty());
    assert!(client.policy().pkce_required());
}

#[tokio::test]
async fn invalid_input_is_refused_with_a_clear_message_and_nothing_is_written() {
    let db = TestDatabase::new().await;
    let uri = "https://a.example/cb";
    let cases: [([&str; 4], &[&str], &str); 8] = [
        (["portal", "Portal", "--redirect-uri", uri], &["--scopes", "cnes openid"], "openid"),
        (["portal", "Portal", "--redirect-uri", "http://portal.example.gov.br/cb"], &[], "https"),
        (["portal", "Portal", "--redirect-uri", "https://a.example/cb#x"], &[], "fragment"),
        (["portal", "Portal", "--redirect-uri", "/callback"], &[], "absolute"),
        (["portal", "Portal", "--redirect-uri", "https://a.example/cb\tx"], &[], "whitespace"),
        (["portal", "  ", "--redirect-uri", uri], &[], "--name must not be empty"),
        (["portal", "Portal", "--scopes", "cnes"], &[], "--redirect-uri"),
        (["a b", "Portal", "--redirect-uri", uri], &[], "client id"),
    ];
    for ([id, name, flag, value], extra, needle) in cases {
        let mut args = vec!["client", "create", "--client-id", id, "--name", name, flag, value];
        args.extend_from_slice(extra);
        let err = fails(&db.url, &args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(count_clients(&db).await, 0);
}

#[tokio::test]
async fn http_redirect_uris_are_accepted_for_other_hosts_only_when_explicitly_allowed() {
    let db = TestDatabase::new().await;
    ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "staging",
            "--name",
            "Staging",
            "--redirect-uri",
            "http://staging.intranet/cb",
            "--allow-insecure-http",
        ],
    );
    let client = stored(&db, "staging").await.expect("stored");
    assert_eq!(client.redirect_uris, ["http://staging.intranet/cb"]);
}

#[tokio::test]
async fn a_taken_client_id_is_refused() {
    let db = TestDatabase::new().await;
    let args =
        ["client", "create", "--client-id", "portal", "--name", "Portal", "--redirect-uri", "https://a.example/cb"];
    ok(&db.url, &args);
    let before = stored(&db, "portal").await.expect("stored");
    let err = fails(&db.url, &args);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(stored(&db, "portal").await, Some(before), "first untouched");
}

#[tokio::test]
async fn update_replaces_redirect_uris_and_scopes_and_sets_require_pkce() {
    let db = TestDatabase::new().await;
    ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "portal",
            "--name",
            "Portal",
            "--redirect-uri",
            "https://a.example/cb",
            "--redirect-uri",
            "https://b.example/cb",
            "--scopes",
            "cnes",
        ],
    );
    let before = stored(&db, "portal").await.expect("stored");

    let out = ok(
        &db.url,
        &[
            "client",
            "update",
            "--client-id",
            "portal",
            "--redirect-uri",
            "https://c.example/cb",
            "--scopes",
            "cursos_cdp,formacao_academica",
            "--require-pkce",
            "true",
        ],
    );
    assert!(!out.contains("client secret"), "no new secret unless asked: {out}");
    let after = stored(&db, "portal").await.expect("stored");
    assert_eq!(after.redirect_uris, ["https://c.example/cb"], "list replaced");
    assert_eq!(after.enabled_scopes.to_scope_string(), "formacao_academica cursos_cdp");
    assert!(after.require_pkce);
    assert_eq!(after.secret_hash, before.secret_hash, "secret unchanged");
    assert_eq!(after.name, "Portal");

    ok(&db.url, &["client", "update", "--client-id", "portal", "--require-pkce", "false", "--scopes", ""]);
    let last = stored(&db, "portal").await.expect("stored");
    assert!(!last.require_pkce);
    assert_eq!(last.enabled_scopes, ScopeSet::empty());
    assert_eq!(last.redirect_uris, ["https://c.example/cb"], "not given, not changed");
}

#[tokio::test]
async fn rotating_the_secret_prints_a_new_one_and_the_old_one_stops_working() {
    let db = TestDatabase::new().await;
    let created = ok(
        &db.url,
        &["client", "create", "--client-id", "portal", "--name", "Portal", "--redirect-uri", "https://a.example/cb"],
    );
    let old = printed_secret(&created);
    let rotated = ok(&db.url, &["client", "update", "--client-id", "portal", "--rotate-secret"]);
    let new = printed_secret(&rotated);
    assert_ne!(old, new);
    let hash = stored(&db, "portal").await.expect("stored").secret_hash.expect("hash");
    assert!(verifies(&hash, &new));
    assert!(!verifies(&hash, &old));
}

#[tokio::test]
async fn update_refuses_unknown_clients_public_secrets_bad_values_and_empty_changes() {
    let db = TestDatabase::new().await;
    ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "spa",
            "--name",
            "App",
            "--redirect-uri",
            "https://spa.example/",
            "--public",
        ],
    );
    let before = stored(&db, "spa").await.expect("stored");
    let cases: [(&[&str], &str); 6] = [
        (&["--client-id", "nobody", "--require-pkce", "true"], "no client"),
        (&["--client-id", "nobody", "--rotate-secret"], "no client"),
        (&["--client-id", "spa", "--rotate-secret"], "public"),
        (&["--client-id", "spa", "--scopes", "cnes bogus"], "bogus"),
        (&["--client-id", "spa", "--redirect-uri", "http://evil.example/"], "https"),
        (&["--client-id", "spa"], "nothing to update"),
    ];
    for (extra, needle) in cases {
        let args: Vec<&str> = ["client", "update"].iter().chain(extra).copied().collect();
        let err = fails(&db.url, &args);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
    assert_eq!(stored(&db, "spa").await, Some(before), "nothing changed");
}

#[tokio::test]
async fn list_shows_a_table_of_clients_without_secrets() {
    let db = TestDatabase::new().await;
    assert!(ok(&db.url, &["client", "list"]).contains("no OAuth2 clients registered"));
    let portal = ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "portal",
            "--name",
            "Portal do Servidor",
            "--redirect-uri",
            "https://portal.example.gov.br/callback",
            "--scopes",
            "cnes",
            "--require-pkce",
        ],
    );
    let secret = printed_secret(&portal);
    ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "app-movel",
            "--name",
            "App",
            "--redirect-uri",
            "http://127.0.0.1:9000/cb",
            "--public",
        ],
    );

    let listed = ok(&db.url, &["client", "list"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 3, "{listed}");
    assert!(lines[0].starts_with("CLIENT ID") && lines[0].contains("REDIRECT URIS"), "{listed}");
    let columns = |line: &str| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let app = columns(lines[1]);
    assert_eq!(&app[..3], ["app-movel", "public", "required"], "{listed}");
    assert!(lines[1].ends_with("http://127.0.0.1:9000/cb"), "{listed}");
    assert!(lines[1].contains("dados_publicos cpf email"), "{listed}");
    let portal_row = columns(lines[2]);
    assert_eq!(&portal_row[..3], ["portal", "confidential", "required"], "{listed}");
    assert!(lines[2].contains("Portal do Servidor"), "{listed}");
    assert!(lines[2].contains("dados_publicos cpf email cnes"), "{listed}");
    let header_pos = lines[0].find("REDIRECT URIS").expect("column");
    assert_eq!(lines[2].find("https://").expect("uri"), header_pos, "columns align");
    assert!(!listed.contains(&secret));
    assert!(!listed.contains("pbkdf2"));
}

#[tokio::test]
async fn set_active_deactivates_and_reactivates_and_every_change_is_audited_as_the_cli() {
    let db = TestDatabase::new().await;
    ok(
        &db.url,
        &["client", "create", "--client-id", "portal", "--name", "Portal", "--redirect-uri", "https://a.example/cb"],
    );
    let off = ok(&db.url, &["client", "set-active", "--client-id", "portal", "false"]);
    assert!(off.contains("client portal is now inactive"), "{off}");
    assert!(!stored(&db, "portal").await.expect("stored").is_active);
    let listed = ok(&db.url, &["client", "list"]);
    assert!(listed.lines().nth(1).is_some_and(|l| l.contains(" no ")), "{listed}");
    let on = ok(&db.url, &["client", "set-active", "--client-id", "portal", "true"]);
    assert!(on.contains("client portal is now active"), "{on}");
    assert!(stored(&db, "portal").await.expect("stored").is_active);
    let rotated = ok(&db.url, &["client", "update", "--client-id", "portal", "--rotate-secret", "--scopes", "cnes"]);
    let secret = printed_secret(&rotated);
    let err = fails(&db.url, &["client", "set-active", "--client-id", "nobody", "false"]);
    assert!(err.contains("no client"), "{err}");

    let rows: Vec<(String, String, String, String, String)> =
        sqlx::query_as("SELECT actor_kind, actor, action, target, CAST(changes AS TEXT) FROM audit_log ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .expect("trail");
    let rows: Vec<(String, String, String, String, serde_json::Value)> = rows
        .into_iter()
        .map(|(k, a, ac, t, c)| (k, a, ac, t, serde_json::from_str(&c).expect("changes are JSON")))
        .collect();
    let actions: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(actions, ["client.create", "client.deactivate", "client.reactivate", "client.update"]);
    assert!(rows.iter().all(|r| r.0 == "cli" && r.3 == "portal"), "{rows:?}");
    let text = serde_json::to_string(&rows.iter().map(|r| &r.4).collect::<Vec<_>>()).expect("json");
    assert!(text.contains("[definido]") && !text.contains(&secret), "{text}");
}

#[tokio::test]
async fn post_logout_redirect_uris_are_set_replaced_emptied_and_audited() {
    let db = TestDatabase::new().await;
    let out = ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "rp",
            "--name",
            "RP",
            "--redirect-uri",
            "https://rp.example.gov.br/cb",
            "--post-logout-redirect-uri",
            "https://rp.example.gov.br/saiu",
        ],
    );
    assert!(out.contains("post-logout redirect URIs: https://rp.example.gov.br/saiu"), "{out}");
    assert_eq!(stored(&db, "rp").await.expect("stored").post_logout_redirect_uris, ["https://rp.example.gov.br/saiu"]);

    let two = ["https://rp.example.gov.br/a", "https://rp.example.gov.br/b"];
    let mut args = vec!["client", "update", "--client-id", "rp"];
    for uri in two {
        args.extend(["--post-logout-redirect-uri", uri]);
    }
    ok(&db.url, &args);
    let client = stored(&db, "rp").await.expect("stored");
    assert_eq!(client.post_logout_redirect_uris, two);
    assert_eq!(client.redirect_uris, ["https://rp.example.gov.br/cb"], "the redirect URIs stay");

    let err =
        fails(&db.url, &["client", "update", "--client-id", "rp", "--post-logout-redirect-uri", "http://x.example/"]);
    assert!(err.contains("--post-logout-redirect-uri") && err.contains("https"), "{err}");
    ok(&db.url, &["client", "update", "--client-id", "rp", "--no-post-logout-redirect-uris"]);
    assert!(stored(&db, "rp").await.expect("stored").post_logout_redirect_uris.is_empty());

    // `changes` holds [field, value] pairs.
    let changes: Vec<String> = sqlx::query_scalar("SELECT CAST(changes AS TEXT) FROM audit_log ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("audit trail");
    let audited: Vec<String> = changes
        .iter()
        .flat_map(|c| serde_json::from_str::<Vec<(String, String)>>(c).expect("[field, value] pairs"))
        .filter(|(field, _)| field == "post_logout_redirect_uris")
        .map(|(_, value)| value)
        .collect();
    assert_eq!(
        audited,
        ["https://rp.example.gov.br/saiu", "https://rp.example.gov.br/a https://rp.example.gov.br/b", ""],
        "create, replace and empty, each in its entry"
    );
}

#[tokio::test]
async fn a_minimum_govbr_level_is_set_at_creation_changed_removed_and_audited() {
    let db = TestDatabase::new().await;
    let created = ok(
        &db.url,
        &[
            "client",
            "create",
            "--client-id",
            "portal",
            "--name",
            "Portal",
            "--redirect-uri",
            "https://a.example/cb",
            "--minimum-govbr-level",
            "prata",
        ],
    );
    assert!(created.contains("minimum gov.br level: prata"), "{created}");
    assert_eq!(stored(&db, "portal").await.expect("stored").minimum_govbr_level, Some(ReliabilityLevel::Prata));

    let raised = ok(&db.url, &["client", "update", "--client-id", "portal", "--minimum-govbr-level", "ouro"]);
    assert!(raised.contains("minimum gov.br level: ouro"), "{raised}");
    ok(&db.url, &["client", "update", "--client-id", "portal", "--name", "Portal 2"]);
    assert_eq!(
        stored(&db, "portal").await.expect("stored").minimum_govbr_level,
        Some(ReliabilityLevel::Ouro),
        "not given, not changed"
    );
    let removed = ok(&db.url, &["client", "update", "--client-id", "portal", "--minimum-govbr-level", "none"]);
    assert!(!removed.contains("minimum gov.br level"), "{removed}");
    assert_eq!(stored(&db, "portal").await.expect("stored").minimum_govbr_level, None);

    let before = stored(&db, "portal").await;
    let err = fails(&db.url, &["client", "update", "--client-id", "portal", "--minimum-govbr-level", "platina"]);
    assert!(err.contains("--minimum-govbr-level") && err.contains("bronze, prata, ouro or none"), "{err}");
    assert_eq!(stored(&db, "portal").await, before, "nothing changed");

    // `changes` holds [field, value] pairs.
    let changes: Vec<String> = sqlx::query_scalar("SELECT CAST(changes AS TEXT) FROM audit_log ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("audit trail");
    let audited: Vec<String> = changes
        .iter()
        .flat_map(|c| serde_json::from_str::<Vec<(String, String)>>(c).expect("[field, value] pairs"))
        .filter(|(field, _)| field == "minimum_govbr_level")
        .map(|(_, value)| value)
        .collect();
    assert_eq!(audited, ["prata", "ouro", "nenhum"], "create, raise and remove, each in its entry");
}
