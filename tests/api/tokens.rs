//! pair, refresh, verify over real HTTP.

use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_with, status_and_json, SECRET};

fn claims_of(token: &str) -> Value {
    let mut v = Validation::new(Algorithm::HS256);
    v.validate_exp = false;
    v.required_spec_claims.clear();
    decode::<Value>(token, &DecodingKey::from_secret(SECRET.as_bytes()), &v)
        .expect("signed with the configured secret")
        .claims
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

fn sign(claims: &Value) -> String {
    encode(&Header::new(Algorithm::HS256), claims, &EncodingKey::from_secret(SECRET.as_bytes())).expect("sign")
}

#[tokio::test]
async fn pair_returns_an_access_and_a_refresh_token_and_the_username() {
    let app = spawn_app().await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let (status, body) = status_and_json(
        app.post_json("/api/token/pair/", &json!({"username": "maria", "password": "pw-maria-1"})).await,
    )
    .await;
    assert_eq!(status, 200);
    let keys: Vec<_> = body.as_object().expect("object").keys().cloned().collect();
    assert_eq!(keys, ["access", "refresh", "username"]);
    assert_eq!(body["username"], "maria");
    let access = claims_of(body["access"].as_str().expect("access"));
    let refresh = claims_of(body["refresh"].as_str().expect("refresh"));
    assert_eq!(access["token_type"], "access");
    assert_eq!(refresh["token_type"], "refresh");
    assert_eq!(access["user_id"], id);
    assert_eq!(access["exp"].as_i64().expect("exp") - access["iat"].as_i64().expect("iat"), 300);
    assert_eq!(refresh["exp"].as_i64().expect("exp") - refresh["iat"].as_i64().expect("iat"), 86_400);
    assert_ne!(access["jti"], refresh["jti"]);
}

#[tokio::test]
async fn unknown_user_wrong_password_and_inactive_user_answer_the_same() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    app.add_user("zeca", "pw-zeca-1", false).await;
    let mut answers = Vec::new();
    for (u, p) in [
        ("maria", "wrong"),
        ("nobody", "pw-maria-1"),
        ("zeca", "pw-zeca-1"),
        ("MARIA", "pw-maria-1"),
        ("x".repeat(200).as_str(), "pw-maria-1"),
    ] {
        let r = app.post_json("/api/token/pair/", &json!({"username": u, "password": p})).await;
        let www = r.headers().get("www-authenticate").cloned();
        let status = r.status().as_u16();
        answers.push((status, r.text().await.expect("body"), www));
    }
    let expected = json!({
        "detail": "No active account found with the given credentials",
        "code": "authentication_failed"
    });
    for (status, body, _) in &answers {
        assert_eq!(*status, 401);
        assert_eq!(serde_json::from_str::<Value>(body).expect("json"), expected);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "byte-identical answers: {answers:?}");
}

#[tokio::test]
async fn refresh_rotates_and_replaying_a_rotated_token_revokes_its_whole_family() {
    // No grace window: a replay right after the rotation is a theft
    // (tests/api/revocation.rs has the window).
    let app = spawn_app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (_, first) = app.login("maria", "pw-maria-1").await;

    let (status, body) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": first})).await).await;
    assert_eq!(status, 200);
    let keys: Vec<_> = body.as_object().expect("object").keys().cloned().collect();
    assert_eq!(keys, ["access", "refresh"]);
    let second = body["refresh"].as_str().expect("refresh").to_owned();
    assert_ne!(second, first);
    assert_eq!(claims_of(body["access"].as_str().expect("access"))["token_type"], "access");

    let (status, body) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": first})).await).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], "token_not_valid");

    let (status, _) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": first})).await).await;
    assert_eq!(status, 401, "a rotated refresh token does not verify");

    // Two parties held `first`: the token it was rotated into is revoked
    // too, whoever holds it, and a new login starts a new family.
    let (status, body) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": second})).await).await;
    assert_eq!((status, &body), (401, &json!({"detail": "Token is blacklisted", "code": "token_not_valid"})));
    let (status, _) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": second})).await).await;
    assert_eq!(status, 401, "a revoked refresh token does not verify");
    let (_, fresh) = app.login("maria", "pw-maria-1").await;
    let (status, _) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": fresh})).await).await;
    assert_eq!(status, 200, "another login is another family");
}

#[tokio::test]
async fn refreshing_in_turn_never_revokes_anything() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (_, mut refresh) = app.login("maria", "pw-maria-1").await;
    for _ in 0..5 {
        let (status, body) =
            status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await).await;
        assert_eq!(status, 200, "{body}");
        refresh = body["refresh"].as_str().expect("refresh").to_owned();
    }
    let (status, _) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": refresh})).await).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn concurrent_refreshes_of_one_token_succeed_once() {
    // Without the grace window (with it, all get the same pair:
    // tests/api/revocation.rs).
    let app = spawn_app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (_, refresh) = app.login("maria", "pw-maria-1").await;
    let body = json!({"refresh": refresh});
    let calls = (0..8).map(|_| app.post_json("/api/token/refresh/", &body));
    let statuses: Vec<u16> =
        futures_util::future::join_all(calls).await.into_iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 7, "{statuses:?}");
}

#[tokio::test]
async fn a_token_rotated_on_one_instance_is_refused_by_another() {
    let first = spawn_app_with(|s| s.tokens.refresh_grace_secs = 0).await;
    first.add_user("maria", "pw-maria-1", true).await;
    let db_url = first.db.url.clone();
    let second = spawn_app_with(|s| {
        s.storage.database_url = db_url.into();
        s.tokens.refresh_grace_secs = 0;
    })
    .await;
    let (_, refresh) = first.login("maria", "pw-maria-1").await;

    let r = first.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await;
    assert_eq!(r.status(), 200);
    let r = second.post_json("/api/token/refresh/", &json!({"refresh": refresh})).await;
    assert_eq!(r.status(), 401, "the other instance sees the rotation");

    // And the other instance does serve the same users and tokens.
    let (_, fresh) = second.login("maria", "pw-maria-1").await;
    let r = first.post_json("/api/token/refresh/", &json!({"refresh": fresh})).await;
    assert_eq!(r.status(), 200, "a token issued by one instance is refreshed by the other");
}

#[tokio::test]
async fn verify_accepts_valid_tokens_with_an_empty_object() {
    let app = spawn_app().await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (access, refresh) = app.login("maria", "pw-maria-1").await;
    for token in [access, refresh] {
        let (status, body) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": token})).await).await;
        assert_eq!((status, body), (200, json!({})));
    }
}

#[tokio::test]
async fn verify_refuses_bad_tokens() {
    let app = spawn_app().await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    let t = now();
    let base = json!({"token_type": "access", "iat": t, "exp": t + 300, "jti": "x1", "user_id": id});
    let with = |k: &str, v: Value| {
        let mut c = base.clone();
        c[k] = v;
        sign(&c)
    };
    let parts: Vec<&str> = access.split('.').collect();
    let tampered_payload = {
        use base64::Engine;
        let mut claims = claims_of(&access);
        claims["user_id"] = json!(id + 1);
        let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
        format!("{}.{p}.{}", parts[0], parts[2])
    };
    let none_alg = {
        use base64::Engine;
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!("{}.{}.", e.encode(r#"{"alg":"none","typ":"JWT"}"#), e.encode(base.to_string()))
    };
    let cases = [
        ("expired", with("exp", json!(t - 1))),
        ("not yet valid (iat)", with("iat", json!(t + 3600))),
        ("not yet valid (nbf)", with("nbf", json!(t + 3600))),
        ("wrong token_type", with("token_type", json!("id"))),
        ("no user_id", {
            let mut c = base.clone();
            c.as_object_mut().expect("object").remove("user_id");
            sign(&c)
        }),
        (
            "other secret",
            encode(
                &Header::new(Algorithm::HS256),
                &base,
                &EncodingKey::from_secret(b"another-secret-another-secret-xx"),
            )
            .expect("sign"),
        ),
        (
            "HS512",
            encode(&Header::new(Algorithm::HS512), &base, &EncodingKey::from_secret(SECRET.as_bytes())).expect("sign"),
        ),
        ("alg none", none_alg),
        ("tampered payload", tampered_payload),
        ("truncated", access[..access.len() - 5].to_owned()),
        ("no signature", format!("{}.{}", parts[0], parts[1])),
        ("garbage", "abc".to_owned()),
    ];
    for (what, token) in cases {
        let (status, body) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": token})).await).await;
        assert_eq!(status, 401, "{what}");
        assert_eq!(body["code"], "token_not_valid", "{what}");
    }
}

#[tokio::test]
async fn refresh_refuses_an_access_token_and_an_expired_refresh_token() {
    let app = spawn_app().await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    let (status, body) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": access})).await).await;
    assert_eq!((status, body["detail"].as_str()), (401, Some("Token has wrong type")));

    let t = now();
    let expired = sign(&json!({"token_type": "refresh", "iat": t - 100, "exp": t - 10, "jti": "old", "user_id": id}));
    let (status, body) =
        status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": expired})).await).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")));
}

#[tokio::test]
async fn a_refresh_token_we_never_issued_is_refused_even_if_well_signed() {
    let app = spawn_app().await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let t = now();
    let forged =
        sign(&json!({"token_type": "refresh", "iat": t, "exp": t + 100, "jti": "never-issued", "user_id": id}));
    let (status, _) = status_and_json(app.post_json("/api/token/refresh/", &json!({"refresh": forged})).await).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn rs256_tokens_are_issued_and_hs256_over_the_public_key_is_refused() {
    let keys = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/domain/tests/keys");
    let app = spawn_app_with(|s| {
        s.tokens.jwt_algorithm = credencial_domain::JwtAlgorithm::RS256;
        s.tokens.jwt_secret = None;
        s.tokens.jwt_private_key_file = Some(format!("{keys}/rsa_private.pem").into());
        s.tokens.jwt_public_key_file = Some(format!("{keys}/rsa_public.pem").into());
    })
    .await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let (access, _) = app.login("maria", "pw-maria-1").await;
    assert_eq!(jsonwebtoken::decode_header(&access).expect("header").alg, Algorithm::RS256);
    let (status, _) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": access})).await).await;
    assert_eq!(status, 200);

    let public_pem = std::fs::read(format!("{keys}/rsa_public.pem")).expect("public key");
    let t = now();
    let confused = encode(
        &Header::new(Algorithm::HS256),
        &json!({"token_type": "access", "iat": t, "exp": t + 300, "jti": "c", "user_id": id}),
        &EncodingKey::from_secret(&public_pem),
    )
    .expect("sign");
    let (status, _) = status_and_json(app.post_json("/api/token/verify/", &json!({"token": confused})).await).await;
    assert_eq!(status, 401, "HS256 signed with the RSA public key must be refused");
}

#[tokio::test]
async fn the_sub_application_can_be_mounted_under_another_prefix() {
    let app = spawn_app_with(|s| s.server.token_prefix = "/auth/jwt".into()).await;
    app.add_user("maria", "pw-maria-1", true).await;
    let r = app.post_json("/auth/jwt/pair/", &json!({"username": "maria", "password": "pw-maria-1"})).await;
    assert_eq!(r.status(), 200);
    let r = app.post_json("/api/token/pair/", &json!({"username": "maria", "password": "pw-maria-1"})).await;
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn the_token_routes_hide_no_other_route_under_their_prefix() {
    // The token scope is tried before every other route (docs/performance.md,
    // 2026-11-27); under a prefix the account pages use, it still claims its
    // own paths only.
    let app = spawn_app_with(|s| s.server.token_prefix = "/conta/".into()).await;
    app.add_user("maria", "pw-maria-1", true).await;
    let (status, body) =
        status_and_json(app.post_json("/conta/pair/", &json!({"username": "maria", "password": "pw-maria-1"})).await)
            .await;
    assert_eq!(status, 200);
    let access = body["access"].as_str().expect("access");
    let page = app.client.get(format!("{}/conta/entrar/", app.address)).send().await.expect("request sent");
    assert_eq!(page.status(), 200, "the account's login page");
    assert!(page.text().await.expect("body").contains("<form"), "an HTML form");
    // The path as the router reads it: percent-encoded characters re-quoted.
    for path in ["/conta/verify/", "/conta/verify", "/conta/verif%79/"] {
        let (status, _) = status_and_json(app.post_json(path, &json!({"token": access})).await).await;
        assert_eq!(status, 200, "{path}");
    }
    let (status, body) = status_and_json(app.post_json("/conta/nada/", &json!({})).await).await;
    assert_eq!((status, body["detail"].is_string()), (404, true), "{body}");
    let r = app.client.get(format!("{}/conta/verify/", app.address)).send().await.expect("request sent");
    assert_eq!(r.status(), 405, "the token route's own answer to another method");
}

#[tokio::test]
async fn every_shape_of_a_client_applications_token_is_the_wrong_type_at_verify_and_refresh() {
    let app = spawn_app().await;
    let id = app.add_user("maria", "pw-maria-1", true).await;
    let t = now();
    // As issued, an old OAuth2 token (client_id alone), an audience alone,
    // and RFC 7519's array forms of the audience.
    let lanes = [
        json!({"aud": "portal", "client_id": "portal"}),
        json!({"client_id": "portal"}),
        json!({"aud": "portal"}),
        json!({"aud": ["portal"], "client_id": "portal"}),
        json!({"aud": ["portal", "other"]}),
    ];
    for lane in lanes {
        for (route, field, token_type) in [
            ("/api/token/verify/", "token", "access"),
            ("/api/token/verify/", "token", "refresh"),
            ("/api/token/refresh/", "refresh", "refresh"),
        ] {
            let mut claims = json!({"token_type": token_type, "iat": t, "exp": t + 300, "jti": format!("j{t}"),
                                    "user_id": id, "scope": "dados_publicos cpf email"});
            claims.as_object_mut().expect("object").extend(lane.as_object().expect("object").clone());
            let (status, body) = status_and_json(app.post_json(route, &json!({ field: sign(&claims) })).await).await;
            assert_eq!(
                (status, body["detail"].as_str(), body["code"].as_str()),
                (401, Some("Token has wrong type"), Some("token_not_valid")),
                "{route} {token_type} {lane}"
            );
        }
    }
}
