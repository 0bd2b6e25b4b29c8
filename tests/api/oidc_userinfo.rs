//! `GET`/`POST /oauth/userinfo/` over real HTTP: the claims of the granted
//! scopes, the access report entry of every answer, and every refusal in
//! RFC 6750's terms (no token, a first-party token, an expired or forged
//! one, one without `openid`, a revoked grant, a read that cannot be
//! logged).

use credencial_domain::{Claims, TokenType};
use reqwest::header::{CACHE_CONTROL, WWW_AUTHENTICATE};
use serde_json::{json, Value};

use crate::helpers::{status_and_json, TestApp};
use crate::oidc::{oidc_app, signed_in};

const USERINFO: &str = "/oauth/userinfo/";

/// GET with the token in the header; status, `WWW-Authenticate` and body.
async fn userinfo_get(app: &TestApp, token: Option<&str>) -> (u16, Option<String>, Value) {
    let mut request = app.client.get(format!("{}{USERINFO}", app.address));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    answer(request.send().await.expect("sent")).await
}

async fn answer(r: reqwest::Response) -> (u16, Option<String>, Value) {
    let challenge = r.headers().get(WWW_AUTHENTICATE).map(|v| v.to_str().expect("ascii").to_owned());
    let (status, body) = status_and_json(r).await;
    (status, challenge, body)
}

pub(crate) async fn log_rows(app: &TestApp) -> Vec<(String, Vec<String>)> {
    let rows: Vec<(String, String)> =
        sqlx::query_as(&format!("SELECT client_id, {} FROM access_log ORDER BY id", app.db.json_array("scopes")))
            .fetch_all(&app.db.pool)
            .await
            .expect("access log");
    rows.into_iter().map(|(client, scopes)| (client, crate::database::json_list(&scopes))).collect()
}

/// An access token of portal for ana, as the provider signs them, with
/// `scope` and `exp` (a token the provider never issued, to test the rules).
fn crafted_token(ana: i64, scope: &str, exp: i64) -> String {
    let claims = Claims {
        scope: Some(scope.into()),
        client_id: Some("portal".into()),
        aud: Some("portal".into()),
        exp,
        ..Claims::new(TokenType::ClientAccess, ana, exp - 300, 300)
    };
    crate::helpers::client_token_codec().encode_claims(&claims).expect("signed")
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64
}

#[tokio::test]
async fn userinfo_answers_the_claims_of_the_granted_scopes_never_cached_and_logged() {
    let (app, ana) = oidc_app(|_| {}).await;
    sqlx::query("UPDATE users SET cpf = '52998224725', avatar = 'https://example.gov.br/ana.png' WHERE id = $1")
        .bind(ana)
        .execute(&app.db.pool)
        .await
        .expect("profile data");
    let (_, tokens) = signed_in(&app, "openid profile email cnes").await;
    let access = tokens["access_token"].as_str().expect("access");

    let r = app.client.get(format!("{}{USERINFO}", app.address)).bearer_auth(access).send().await.expect("sent");
    assert_eq!(r.headers().get(CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    let (status, _, claims) = answer(r).await;
    assert_eq!(status, 200, "{claims}");
    assert_eq!(
        claims,
        json!({
            "sub": ana.to_string(),
            "name": "Full ana",
            "preferred_username": "ana",
            "picture": "https://example.gov.br/ana.png",
            "email": "ana@example.gov.br",
            "email_verified": false,
            "cpf": "52998224725",
        })
    );
    // POST, with the token in the header or in the form body, answers the same.
    let r = app.client.post(format!("{}{USERINFO}", app.address)).bearer_auth(access).send().await.expect("sent");
    assert_eq!(answer(r).await.2, claims);
    let body = [("access_token", access)];
    let r = app.client.post(format!("{}{USERINFO}", app.address)).form(&body).send().await.expect("sent");
    assert_eq!(answer(r).await.2, claims);
    // Each answered read is in the person's access report, with what it
    // read (the first: the ID token's address).
    let mut rows = log_rows(&app).await;
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows.remove(0), ("portal".to_owned(), vec!["email".to_owned()]));
    for (client, scopes) in rows {
        assert_eq!((client.as_str(), scopes), ("portal", vec!["cpf".into(), "dados_publicos".into(), "email".into()]));
    }
    // Once the person confirmed the address, the answer says so.
    sqlx::query("UPDATE users SET email_verified = TRUE WHERE id = $1")
        .bind(ana)
        .execute(&app.db.pool)
        .await
        .expect("set");
    let r = app.client.get(format!("{}{USERINFO}", app.address)).bearer_auth(access).send().await.expect("sent");
    assert_eq!(answer(r).await.2["email_verified"], true);
}

#[tokio::test]
async fn userinfo_refuses_what_is_no_openid_access_token_of_an_application() {
    let (app, ana) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid").await;
    let access = tokens["access_token"].as_str().expect("access");

    let (status, challenge, body) = userinfo_get(&app, None).await;
    assert_eq!((status, challenge.as_deref()), (401, Some(r#"Bearer realm="credencial""#)), "no token: no error code");
    assert_eq!(body["error"], "invalid_token");

    let (first_party, _) = app.login("ana", "ana-password").await;
    let expired = crafted_token(ana, "openid dados_publicos cpf email", now() - 10);
    let forged = format!("{}x", &access[..access.len() - 1]);
    let id_token = tokens["id_token"].as_str().expect("id_token");
    for (what, token) in
        [("first-party", first_party.as_str()), ("expired", &expired), ("forged", &forged), ("ID token", id_token)]
    {
        let (status, challenge, body) = userinfo_get(&app, Some(token)).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_token")), "{what}: {body}");
        assert!(challenge.is_some_and(|c| c.contains(r#"error="invalid_token""#)), "{what}");
    }

    let without_openid = crafted_token(ana, "dados_publicos cpf email", now() + 300);
    let (status, challenge, body) = userinfo_get(&app, Some(&without_openid)).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("insufficient_scope")), "{body}");
    let challenge = challenge.expect("challenge");
    assert!(challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="openid""#));

    let twice = app
        .client
        .post(format!("{}{USERINFO}", app.address))
        .bearer_auth(access)
        .form(&[("access_token", access)])
        .send()
        .await
        .expect("sent");
    let (status, _, body) = answer(twice).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_request")));
    let in_query = app.client.get(format!("{}{USERINFO}?access_token={access}", app.address)).send().await;
    assert_eq!(in_query.expect("sent").status(), 401, "never from the query");
    let rows = log_rows(&app).await;
    assert_eq!(
        rows,
        [("portal".to_owned(), vec!["email".to_owned()])],
        "nothing answered, nothing logged but the ID token's read"
    );

    // Revoking the grant refuses the application's tokens at once.
    sqlx::query("DELETE FROM oauth_grants").execute(&app.db.pool).await.expect("revoke");
    let (status, _, body) = userinfo_get(&app, Some(access)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_token")));
}

#[tokio::test]
async fn a_userinfo_read_that_cannot_be_logged_answers_nothing() {
    let (app, _) = oidc_app(|_| {}).await;
    let (_, tokens) = signed_in(&app, "openid").await;
    sqlx::query("DROP TABLE access_log").execute(&app.db.pool).await.expect("drop");
    let (status, _, body) = userinfo_get(&app, tokens["access_token"].as_str()).await;
    assert_eq!((status, body["error"].as_str()), (503, Some("temporarily_unavailable")), "{body}");
    assert!(body.get("sub").is_none());
}
