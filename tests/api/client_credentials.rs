//! The `client_credentials` grant over real HTTP: a confidential client the
//! panel or the CLI allowed gets a token for itself (`client_secret_basic`
//! and `_post`), calls `/usuarios/` with it beside the static API tokens,
//! introspects it as itself; the token is refused everywhere a person is
//! expected, and every refusal of the grant has its RFC 6749 code.

use credencial_application::ApiTokenService;
use credencial_domain::admin::{Actor, ApiPermissions};
use credencial_domain::oauth::ClientId;
use reqwest::header::{AUTHORIZATION, CACHE_CONTROL};
use serde_json::{json, Value};

use crate::helpers::{status_and_json, TestApp};
use crate::oauth::{app, claims, store_portal_code, token_request, PORTAL_SECRET, PORTAL_URI};
use crate::user_directory::api_token;

const JOANA_CPF: &str = "52998224725";

/// Sets `portal`'s API permissions and whether it may use the grant, as
/// the CLI does.
async fn allow(app: &TestApp, permissions: &str, allowed: bool) {
    let service = ApiTokenService::new(app.db.storage().directory);
    let actor = Actor::Cli { os_user: "test".into() };
    let permissions = ApiPermissions::parse(permissions).expect("permissions");
    let client = ClientId::parse("portal").expect("id");
    service.set_access(&actor, &client, permissions, allowed).await.expect("saved");
}

/// `portal`'s token request for itself, authenticated with HTTP Basic.
async fn machine_token(app: &TestApp, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut form = vec![("grant_type", "client_credentials")];
    form.extend_from_slice(extra);
    status_and_json(token_request(app, Some(("portal", PORTAL_SECRET)), &form).await).await
}

async fn access_of(app: &TestApp) -> String {
    let (status, body) = machine_token(app, &[]).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().expect("access").to_owned()
}

async fn usuarios(app: &TestApp, method: reqwest::Method, path: &str, authorization: &str) -> (u16, Value) {
    let mut request = app.client.request(method.clone(), format!("{}{path}", app.address));
    request = request.header(AUTHORIZATION, authorization);
    if method == reqwest::Method::POST {
        request = request.form(&[
            ("cpf", "529.982.247-25"),
            ("email", "joana@example.org"),
            ("nome", "Joana Silva"),
            ("genero", "F"),
            ("data_de_nascimento", "1990-04-12"),
        ]);
    }
    status_and_json(request.send().await.expect("sent")).await
}

/// A person's OAuth2 access token at `portal` (a code stored and
/// exchanged).
async fn person_access_token(app: &TestApp, user: i64) -> String {
    let now = jsonwebtoken::get_current_timestamp() as i64;
    store_portal_code(app, user, "code-of-ana-for-portal", now + 60).await;
    let form = [("grant_type", "authorization_code"), ("code", "code-of-ana-for-portal"), ("redirect_uri", PORTAL_URI)];
    let (status, body) = status_and_json(token_request(app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(claims(body["access_token"].as_str().expect("access"))["token_type"], "oauth_access");
    body["access_token"].as_str().expect("access").to_owned()
}

fn error_of(body: &Value) -> &str {
    body["error"].as_str().unwrap_or_else(|| panic!("no error in {body}"))
}

#[tokio::test]
async fn an_allowed_client_gets_a_token_for_itself_with_basic_and_post_and_no_refresh_token() {
    let (app, _) = app().await;
    allow(&app, "users:read,users:create", true).await;
    let r = token_request(&app, Some(("portal", PORTAL_SECRET)), &[("grant_type", "client_credentials")]).await;
    assert_eq!(r.headers().get(CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    let (status, body) = status_and_json(r).await;
    assert_eq!(status, 200, "{body}");
    let mut keys: Vec<&str> = body.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["access_token", "expires_in", "scope", "token_type"], "no refresh token, no ID token");
    assert_eq!((body["token_type"].as_str(), body["expires_in"].as_i64()), (Some("Bearer"), Some(300)));
    assert_eq!(body["scope"], "users:read users:create");
    let access = body["access_token"].as_str().expect("access");
    let c = claims(access);
    assert_eq!(
        (c["token_type"].as_str(), c["sub"].as_str(), c["client_id"].as_str(), c["aud"].as_str()),
        (Some("oauth_machine"), Some("portal"), Some("portal"), Some("portal"))
    );
    assert!(c.get("user_id").is_none(), "no person, not even a sentinel: {c}");
    let header = jsonwebtoken::decode_header(access).expect("header");
    assert_eq!(header.typ.as_deref(), Some("at+jwt"), "RFC 9068 §2.1");

    // client_secret_post, narrowed to one permission.
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", "portal"),
        ("client_secret", PORTAL_SECRET),
        ("scope", "users:read"),
    ];
    let (status, body) = status_and_json(token_request(&app, None, &form).await).await;
    assert_eq!((status, body["scope"].as_str()), (200, Some("users:read")), "{body}");
    assert_eq!(claims(body["access_token"].as_str().expect("access"))["scope"], "users:read");
}

#[tokio::test]
async fn with_openid_connect_on_a_machine_token_passes_a_resource_server_s_rfc_9068_checks() {
    let (app, _) = crate::oidc::oidc_app(|_| {}).await;
    allow(&app, "users:read", true).await;
    let access = access_of(&app).await;
    let keys = crate::oidc::published_keys(&app).await;
    let issuer = crate::oidc::discovery(&app).await["issuer"].as_str().expect("issuer").to_owned();
    // Before, the token had no iss: the validation refused it.
    let c = crate::oidc::validated_access_token(&access, &keys, &issuer, "portal");
    assert_eq!(
        (c["iss"].as_str(), c["sub"].as_str()),
        (Some(crate::oidc::ISSUER), Some("portal")),
        "the client is the subject"
    );
    assert!(c.get("user_id").is_none(), "{c}");
    let (status, _) =
        usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &format!("Bearer {access}")).await;
    assert_eq!(status, 404, "the resource still takes the token (and finds nobody)");
}

#[tokio::test]
async fn the_grant_is_refused_to_clients_not_allowed_it_public_clients_wrong_secrets_and_foreign_scopes() {
    let (app, _) = app().await;
    // Off by default.
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"), "{body}");
    // A public client cannot prove who it is.
    let form = [("grant_type", "client_credentials"), ("client_id", "spa")];
    let (status, body) = status_and_json(token_request(&app, None, &form).await).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"), "{body}");
    allow(&app, "users:read", true).await;
    // A wrong secret is the token endpoint's usual 401.
    let r = token_request(&app, Some(("portal", "wrong")), &[("grant_type", "client_credentials")]).await;
    let (status, body) = status_and_json(r).await;
    assert_eq!((status, error_of(&body)), (401, "invalid_client"));
    // A permission the client lacks, a profile scope, an unknown name.
    for scope in ["users:create", "users:read users:create", "cpf", "openid", "users:delete"] {
        let (status, body) = machine_token(&app, &[("scope", scope)]).await;
        assert_eq!((status, error_of(&body)), (400, "invalid_scope"), "{scope}: {body}");
    }
    // A client without any permission gets no token that can do nothing.
    allow(&app, "", true).await;
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_scope"), "{body}");
    // A deactivated client is an unknown one.
    allow(&app, "users:read", true).await;
    sqlx::query("UPDATE oauth_clients SET is_active = FALSE WHERE client_id = 'portal'")
        .execute(&app.db.pool)
        .await
        .expect("deactivate");
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (401, "invalid_client"), "{body}");
}

#[tokio::test]
async fn usuarios_accepts_the_clients_own_token_beside_the_static_one_until_the_panel_takes_it_away() {
    let (app, _) = app().await;
    allow(&app, "users:read,users:create", true).await;
    let access = access_of(&app).await;
    let bearer = format!("Bearer {access}");
    let (status, created) = usuarios(&app, reqwest::Method::POST, "/usuarios/", &bearer).await;
    assert_eq!((status, created["username"].as_str()), (201, Some(JOANA_CPF)), "{created}");
    let (status, read) = usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &bearer).await;
    assert_eq!((status, read["nome"].as_str()), (200, Some("Joana Silva")), "{read}");
    // The audit trail names the application as the actor.
    let actor: String =
        sqlx::query_scalar("SELECT actor FROM audit_log WHERE action = 'api.user_read' ORDER BY id DESC LIMIT 1")
            .fetch_one(&app.db.pool)
            .await
            .expect("audited");
    assert!(actor.contains("portal"), "{actor}");
    // The static token of the same application keeps working.
    let token = api_token(&app, "portal", "users:read").await;
    let (status, _) =
        usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &format!("Token {token}")).await;
    assert_eq!(status, 200);

    // A token narrowed to users:read cannot pre-register.
    let (_, narrow) = machine_token(&app, &[("scope", "users:read")]).await;
    let narrow = format!("Bearer {}", narrow["access_token"].as_str().expect("access"));
    let (status, body) = usuarios(&app, reqwest::Method::POST, "/usuarios/", &narrow).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("permission_denied")), "{body}");

    // A permission taken away refuses at once what the token held of it...
    allow(&app, "users:read", true).await;
    let (status, body) = usuarios(&app, reqwest::Method::POST, "/usuarios/", &bearer).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("permission_denied")), "{body}");
    let (status, _) = usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &bearer).await;
    assert_eq!(status, 200, "what it still has works");
    // ... and the grant turned off refuses the token itself.
    allow(&app, "users:read", false).await;
    let (status, body) = usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &bearer).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("authentication_failed")), "{body}");
}

#[tokio::test]
async fn usuarios_refuses_a_persons_token_a_forged_and_an_expired_bearer() {
    let (app, ana) = app().await;
    allow(&app, "users:read", true).await;
    // A person's OAuth2 access token (oauth_access) is no machine token.
    let person = person_access_token(&app, ana).await;
    // A machine token signed with the shared first-party secret (which any
    // SUAP-side API holds) is forged: client tokens are signed with the
    // provider's key pair.
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let forged_claims = json!({"token_type": "oauth_machine", "sub": "portal", "client_id": "portal",
                               "aud": "portal", "scope": "users:read", "iat": now, "exp": now + 300, "jti": "f"});
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.typ = Some("at+jwt".into());
    let forged = jsonwebtoken::encode(
        &header,
        &forged_claims,
        &jsonwebtoken::EncodingKey::from_secret(crate::helpers::SECRET.as_bytes()),
    )
    .expect("signed");
    // A machine token signed with the provider's own key, expired a minute
    // ago (past any leeway).
    let expired = crate::helpers::client_token_codec()
        .encode_claims(&credencial_domain::Claims::machine("portal", "users:read".into(), now - 3_600, 3_000))
        .expect("signed");
    let fresh = crate::helpers::client_token_codec()
        .encode_claims(&credencial_domain::Claims::machine("portal", "users:read".into(), now, 300))
        .expect("signed");
    let (status, _) =
        usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &format!("Bearer {fresh}")).await;
    assert_eq!(status, 404, "the same key's unexpired token is accepted (no such user yet)");
    for token in [person.as_str(), forged.as_str(), expired.as_str(), "not-a-jwt", ""] {
        let (status, body) =
            usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &format!("Bearer {token}")).await;
        assert_eq!((status, body["code"].as_str()), (403, Some("authentication_failed")), "{token}: {body}");
    }
}

#[tokio::test]
async fn a_machine_token_is_refused_everywhere_a_person_is_expected() {
    let (app, _) = app().await;
    allow(&app, "users:read", true).await;
    let access = access_of(&app).await;
    // simplejwt's routes.
    for (route, field) in [("/api/token/verify/", "token"), ("/api/token/refresh/", "refresh")] {
        let (status, body) = status_and_json(app.post_json(route, &json!({ field: access })).await).await;
        assert_eq!((status, body["code"].as_str()), (401, Some("token_not_valid")), "{route}: {body}");
    }
    // The consume route, the profile read and userinfo.
    for (method, route) in [
        (reqwest::Method::GET, "/api/token/user-info/"),
        (reqwest::Method::GET, "/api/token/rh/eu/"),
        (reqwest::Method::POST, "/api/perfil/dados/"),
        (reqwest::Method::GET, "/oauth/userinfo/"),
    ] {
        let r = app.client.request(method, format!("{}{route}", app.address)).bearer_auth(&access).send().await;
        let status = r.expect("sent").status().as_u16();
        assert_eq!(status, 401, "{route}");
    }
    assert_eq!(app.upstream.received_requests().await.map_or(0, |r| r.len()), 0, "nothing forwarded upstream");
    // The OAuth2 refresh grant: it is no refresh token.
    let form = [("grant_type", "refresh_token"), ("refresh_token", access.as_str())];
    let (status, body) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!((status, error_of(&body)), (400, "invalid_grant"), "{body}");
}

#[tokio::test]
async fn a_machine_token_introspects_as_its_client_while_the_grant_stands() {
    let (app, _) = app().await;
    allow(&app, "users:read,users:create", true).await;
    let access = access_of(&app).await;
    let introspect = |token: String| {
        let app = &app;
        async move {
            let r = app
                .client
                .post(format!("{}/oauth/introspect/", app.address))
                .basic_auth("portal", Some(PORTAL_SECRET))
                .form(&[("token", token.as_str())])
                .send()
                .await
                .expect("sent");
            status_and_json(r).await
        }
    };
    let (status, body) = introspect(access.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["active"].as_bool(), body["sub"].as_str(), body["client_id"].as_str()),
        (Some(true), Some("portal"), Some("portal"))
    );
    assert_eq!(
        (body["scope"].as_str(), body["token_type"].as_str()),
        (Some("users:read users:create"), Some("access_token"))
    );
    allow(&app, "users:read", true).await;
    let (_, body) = introspect(access.clone()).await;
    assert_eq!(body["scope"], "users:read", "a permission taken away is no longer described");
    allow(&app, "users:read", false).await;
    let (_, body) = introspect(access).await;
    assert_eq!(body, json!({"active": false}));
}

#[tokio::test]
async fn discovery_lists_the_grant() {
    let (app, _) = crate::oidc::oidc_app(|_| {}).await;
    let body = crate::oidc::discovery(&app).await;
    let grants: Vec<&str> =
        body["grant_types_supported"].as_array().expect("list").iter().filter_map(Value::as_str).collect();
    assert!(grants.contains(&"client_credentials"), "{grants:?}");
}

#[tokio::test]
async fn the_panel_allows_the_grant_to_a_confidential_client_after_asking_and_audits_it() {
    let (app, _) = app().await;
    crate::admin::add_staff(&app).await;
    let mut chefe = crate::admin::staff_browser(&app).await;
    let page = chefe.get("/admin/aplicativos/portal/api/").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("id=\"client_credentials\""), "a confidential client is offered the grant");
    let token = crate::account::form_token(&page);
    let fields = |extra: &[(&str, &str)]| {
        let mut fields = vec![("csrf_token".to_owned(), token.clone()), ("acao".to_owned(), "acesso".to_owned())];
        fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        fields
    };
    // Turning it on asks first, and nothing changes before the answer.
    let asked = chefe
        .post("/admin/aplicativos/portal/api/", &fields(&[("users_read", "1"), ("client_credentials", "1")]))
        .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("obtenha tokens próprios"), "{}", asked.body);
    assert!(asked.body.contains("poderá consultar usuários pela API"), "{}", asked.body);
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"), "not allowed before the confirmation");
    let saved = chefe.post("/admin/aplicativos/portal/api/", &crate::helpers::hidden_fields(&asked.body)).await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    assert!(saved.body.contains("Acesso à API salvo."), "{}", saved.body);
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, body["scope"].as_str()), (200, Some("users:read")), "{body}");
    let row: (String, String, String) = sqlx::query_as(
        "SELECT actor, target, CAST(changes AS TEXT) FROM audit_log WHERE action = 'client.api_access' ORDER BY id",
    )
    .fetch_one(&app.db.pool)
    .await
    .expect("audited");
    assert_eq!((row.0.as_str(), row.1.as_str()), ("chefe", "portal"));
    let changes: Value = serde_json::from_str(&row.2).expect("json");
    assert_eq!(changes, json!([["api_permissions", "users:read"], ["client_credentials", "sim"]]));
    // A permission more asks first, and nothing changes before the answer.
    let wider = fields(&[("users_read", "1"), ("users_create", "1"), ("client_credentials", "1")]);
    let asked = chefe.post("/admin/aplicativos/portal/api/", &wider).await;
    assert!(asked.body.contains("Ampliar as permissões de"), "{}", asked.body);
    assert!(asked.body.contains("pré-cadastrar usuários"), "{}", asked.body);
    let (_, body) = machine_token(&app, &[]).await;
    assert_eq!(body["scope"], "users:read", "not widened before the confirmation");
    let widened = chefe.post("/admin/aplicativos/portal/api/", &crate::helpers::hidden_fields(&asked.body)).await;
    assert!(widened.body.contains("Acesso à API salvo."), "{}", widened.body);
    let (_, body) = machine_token(&app, &[]).await;
    assert_eq!(body["scope"], "users:read users:create");
    // Narrowing and turning it off do not ask.
    let off = chefe.post("/admin/aplicativos/portal/api/", &fields(&[("users_read", "1")])).await;
    assert!(off.body.contains("Acesso à API salvo."), "{}", off.body);
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"));

    // A public client is not offered the grant, and a post asking it is 422.
    let spa = chefe.get("/admin/aplicativos/spa/api/").await;
    assert!(!spa.body.contains("id=\"client_credentials\""), "{}", spa.body);
    let refused = chefe.post("/admin/aplicativos/spa/api/", &fields(&[("client_credentials", "1")])).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.body.contains("Só uma aplicação confidencial"), "{}", refused.body);
    // A cross-site post changes nothing.
    let forged = [("csrf_token".to_owned(), "forjado".to_owned()), ("acao".to_owned(), "acesso".to_owned())];
    assert_eq!(chefe.post("/admin/aplicativos/portal/api/", &forged).await.status, 403);
}

#[tokio::test]
async fn the_cli_allows_the_grant_to_a_confidential_client_only() {
    let (app, _) = app().await;
    let url = app.db.url.clone();
    let args = [
        "client",
        "update",
        "--client-id",
        "portal",
        "--client-credentials",
        "true",
        "--api-permissions",
        "users:read",
    ];
    let out = crate::cli::credencial(&url, &args, "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("client_credentials: allowed; api_permissions: users:read"));
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, body["scope"].as_str()), (200, Some("users:read")), "{body}");
    let actor: String = sqlx::query_scalar("SELECT actor FROM audit_log WHERE action = 'client.api_access'")
        .fetch_one(&app.db.pool)
        .await
        .expect("audited");
    assert!(!actor.is_empty());

    let public =
        crate::cli::credencial(&url, &["client", "update", "--client-id", "spa", "--client-credentials", "true"], "");
    assert!(!public.status.success());
    assert!(
        String::from_utf8_lossy(&public.stderr).contains("only a confidential client"),
        "{}",
        String::from_utf8_lossy(&public.stderr)
    );
    let off = crate::cli::credencial(
        &url,
        &["client", "update", "--client-id", "portal", "--client-credentials", "false"],
        "",
    );
    assert!(off.status.success(), "{}", String::from_utf8_lossy(&off.stderr));
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"));
    let alone = crate::cli::credencial(
        &url,
        &["client", "update", "--client-id", "portal", "--api-permissions", "users:read"],
        "",
    );
    assert!(!alone.status.success(), "--api-permissions needs a companion");
}

#[tokio::test]
async fn without_the_providers_key_pair_there_is_no_grant_and_no_bearer_at_usuarios() {
    // Client tokens would be signed with the HS256 secret SUAP-side APIs
    // share: any of them could mint a machine token.
    let (app, _) = crate::oauth::app_with(|s| s.tokens.oidc_signing_key_file = None).await;
    allow(&app, "users:read", true).await;
    let (status, body) = machine_token(&app, &[]).await;
    assert_eq!((status, error_of(&body)), (400, "unauthorized_client"), "{body}");
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let keys = credencial_domain::JwtKeys::hmac(crate::helpers::SECRET.as_bytes()).expect("the shared secret");
    let minted = credencial_domain::TokenCodec::new(keys, 0)
        .expect("a codec")
        .encode_claims(&credencial_domain::Claims::machine("portal", "users:read".into(), now, 300))
        .expect("signed with the shared secret");
    let (status, body) =
        usuarios(&app, reqwest::Method::GET, &format!("/usuarios/{JOANA_CPF}/"), &format!("Bearer {minted}")).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("authentication_failed")), "{body}");
}

#[tokio::test]
async fn revocation_leaves_a_machine_token_alone_and_blacklist_refuses_it_and_deactivation_ends_it() {
    let (app, _) = app().await;
    allow(&app, "users:read", true).await;
    let access = access_of(&app).await;
    let r = app
        .client
        .post(format!("{}/oauth/revoke/", app.address))
        .basic_auth("portal", Some(PORTAL_SECRET))
        .form(&[("token", access.as_str())])
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status().as_u16(), 200, "RFC 7009: an access token is not revocable, answered 200");
    let (status, _) = status_and_json(app.post_json("/api/token/blacklist/", &json!({"refresh": access})).await).await;
    assert_eq!(status, 401, "no first-party refresh token");
    let read = format!("/usuarios/{JOANA_CPF}/");
    let (status, _) = usuarios(&app, reqwest::Method::GET, &read, &format!("Bearer {access}")).await;
    assert_eq!(status, 404, "still accepted (no such user yet)");
    sqlx::query("UPDATE oauth_clients SET is_active = FALSE WHERE client_id = 'portal'")
        .execute(&app.db.pool)
        .await
        .expect("deactivate");
    let (status, body) = usuarios(&app, reqwest::Method::GET, &read, &format!("Bearer {access}")).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("authentication_failed")), "deactivated: refused at once");
}
