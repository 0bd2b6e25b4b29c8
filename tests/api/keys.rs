//! Key management over real HTTP: `kid` on every token, the published key
//! set at `/.well-known/jwks.json`, a rotation that logs nobody out, and
//! `credencial keys generate`.

use std::os::unix::fs::PermissionsExt;

use credencial_domain::jwt::PublicKey;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};

use crate::cli::credencial;
use crate::helpers::{spawn_app_with, status_and_json, TestApp, TEST_KEYS};

fn kid_of(pem_file: &str) -> String {
    PublicKey::from_pem(&std::fs::read(format!("{TEST_KEYS}/{pem_file}")).expect("key file")).expect("key").kid().into()
}

fn header(token: &str) -> jsonwebtoken::Header {
    jsonwebtoken::decode_header(token).expect("header")
}

async fn key_set(app: &TestApp) -> (reqwest::header::HeaderMap, Value) {
    let r = app.client.get(format!("{}/.well-known/jwks.json", app.address)).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    let headers = r.headers().clone();
    (headers, r.json().await.expect("JSON"))
}

fn kids(set: &Value) -> Vec<String> {
    set["keys"].as_array().expect("keys").iter().map(|k| k["kid"].as_str().expect("kid").to_owned()).collect()
}

/// An app signing its own tokens with the RSA pair `current`
/// (`rsa`/`rsa_other`), optionally on the database of `on`, with previous
/// public keys.
async fn rs256_app(current: &str, previous: &[&str], on: Option<&TestApp>) -> TestApp {
    let db_url = on.map(|a| a.db.url.clone());
    let (current, previous) = (current.to_owned(), previous.iter().map(|p| format!("{TEST_KEYS}/{p}")).collect());
    spawn_app_with(move |s| {
        s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::RS256;
        s.tokens.jwt_secret = None;
        s.tokens.jwt_private_key_file = Some(format!("{TEST_KEYS}/{current}_private.pem").into());
        s.tokens.jwt_public_key_file = Some(format!("{TEST_KEYS}/{current}_public.pem").into());
        s.tokens.jwt_previous_public_key_files = previous;
        if let Some(url) = db_url {
            s.storage.database_url = url.into();
        }
    })
    .await
}

#[tokio::test]
async fn the_key_set_publishes_the_provider_key_only_while_the_service_signs_with_hs256() {
    let app = spawn_app_with(|_| {}).await;
    let (headers, set) = key_set(&app).await;
    // The HS256 secret is never published; the ID-token key is.
    assert_eq!(kids(&set), vec![kid_of("rsa_public.pem")]);
    let key = &set["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["alg"].as_str(), key["use"].as_str()),
        (Some("RSA"), Some("RS256"), Some("sig"))
    );
    for private_member in ["d", "p", "q", "dp", "dq", "qi", "k"] {
        assert!(key.get(private_member).is_none(), "no {private_member} in a published key");
    }
    let cache = headers.get("cache-control").expect("cache-control").to_str().expect("text");
    assert!(cache.contains("public") && cache.contains("max-age="), "{cache}");
    // The service's own HS256 tokens still name their key.
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    let kid = header(&access).kid.expect("a kid");
    assert!(kid.starts_with("hs256-") && !kids(&set).contains(&kid));
}

#[tokio::test]
async fn without_a_provider_key_serve_publishes_no_key_at_all() {
    let app = spawn_app_with(|s| s.tokens.oidc_signing_key_file = None).await;
    let (_, set) = key_set(&app).await;
    assert_eq!(set, json!({"keys": []}));
}

#[tokio::test]
async fn a_key_rotation_keeps_every_session_and_new_tokens_use_the_new_key() {
    let before = rs256_app("rsa", &[], None).await;
    before.add_user("maria", "pw-maria-1", true).await;
    let (old_access, old_refresh) = before.login("maria", "pw-maria-1").await;
    assert_eq!(header(&old_access).kid, Some(kid_of("rsa_public.pem")));

    // The operator rotates: a new current key, the old one listed as previous.
    let after = rs256_app("rsa_other", &["rsa_public.pem"], Some(&before)).await;
    let (status, _) = status_and_json(after.post_json("/api/token/verify/", &json!({"token": old_access})).await).await;
    assert_eq!(status, 200, "an access token of the previous key still verifies");
    let (status, body) =
        status_and_json(after.post_json("/api/token/refresh/", &json!({"refresh": old_refresh})).await).await;
    assert_eq!(status, 200, "a refresh token of the previous key still refreshes: {body}");
    let new_access = body["access"].as_str().expect("access");
    assert_eq!(header(new_access).kid, Some(kid_of("rsa_other_public.pem")));
    assert_eq!(header(new_access).alg, Algorithm::RS256);

    // Both keys are published, the current first, and each verifies the
    // tokens that name it.
    let (_, set) = key_set(&after).await;
    let published = kids(&set);
    assert_eq!(&published[..2], &[kid_of("rsa_other_public.pem"), kid_of("rsa_public.pem")]);
    for token in [old_access.as_str(), new_access] {
        let kid = header(token).kid.expect("kid");
        let jwk = set["keys"].as_array().expect("keys").iter().find(|k| k["kid"] == kid.as_str()).expect("published");
        let key = DecodingKey::from_jwk(&serde_json::from_value(jwk.clone()).expect("a JWK")).expect("usable");
        let mut validation = Validation::new(Algorithm::RS256);
        validation.required_spec_claims.clear();
        jsonwebtoken::decode::<Value>(token, &key, &validation).expect("verifies with its published key");
    }

    // Once the previous key is dropped, its tokens are over.
    let dropped = rs256_app("rsa_other", &[], Some(&before)).await;
    let (status, _) =
        status_and_json(dropped.post_json("/api/token/verify/", &json!({"token": old_access})).await).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn es256_tokens_name_their_key_and_the_key_set_holds_the_p256_key() {
    let app = spawn_app_with(|s| {
        s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::ES256;
        s.tokens.jwt_secret = None;
        s.tokens.jwt_private_key_file = Some(format!("{TEST_KEYS}/ec_private.pem").into());
        s.tokens.jwt_public_key_file = Some(format!("{TEST_KEYS}/ec_public.pem").into());
    })
    .await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    assert_eq!(header(&access).kid, Some(kid_of("ec_public.pem")));
    let (_, set) = key_set(&app).await;
    let ec = set["keys"].as_array().expect("keys").iter().find(|k| k["kty"] == "EC").expect("the EC key");
    assert_eq!((ec["crv"].as_str(), ec["alg"].as_str()), (Some("P-256"), Some("ES256")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_generate_writes_a_private_file_only_its_owner_reads_and_never_overwrites() {
    let dir = std::env::temp_dir().join(format!("credencial-keys-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.to_str().expect("utf-8 path");
    let run = |alg: &str| {
        credencial("postgres://unused", &["keys", "generate", "--alg", alg, "--out", out, "--name", "k"], "")
    };
    let done = run("ES256");
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let private = dir.join("k-private.pem");
    let public = std::fs::read(dir.join("k-public.pem")).expect("public file");
    assert_eq!(std::fs::metadata(&private).expect("private file").permissions().mode() & 0o777, 0o600);
    let kid = PublicKey::from_pem(&public).expect("a P-256 public key").kid().to_owned();
    assert!(String::from_utf8_lossy(&done.stdout).contains(&kid), "the key id is printed");
    let first = std::fs::read(&private).expect("read");

    let again = run("ES256");
    assert!(!again.status.success(), "an existing key file is not overwritten");
    assert_eq!(std::fs::read(&private).expect("read"), first);
    let hs = credencial("postgres://unused", &["keys", "generate", "--alg", "HS256", "--out", out], "");
    assert!(!hs.status.success() && String::from_utf8_lossy(&hs.stderr).contains("RS256 or ES256"));

    // The pair serves as the provider's key.
    let path = private.clone();
    let app = spawn_app_with(move |s| {
        s.tokens.oidc_signing_algorithm = credencial_domain::JwtAlgorithm::ES256;
        s.tokens.oidc_signing_key_file = Some(path);
    })
    .await;
    let (_, set) = key_set(&app).await;
    assert_eq!(kids(&set), vec![kid]);
    std::fs::remove_dir_all(&dir).expect("clean up");
}
