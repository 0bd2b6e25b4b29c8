//! The client component's provider adapter (`HttpProviderClient`) against
//! the real credencial provider: the authorize URL it builds is driven by a
//! browser (cookie jar, forms, redirects read from `Location`), then the
//! adapter exchanges the code and reads the profile over real HTTP.

use std::collections::HashMap;
use std::time::Duration;

use credencial_adapters_upstream::{http_client, BaseUrl, HttpProviderClient, ProviderSettings};
use credencial_domain::oauth::ClientId;
use credencial_domain::{DjangoPbkdf2, ScopeSet};
use credencial_ports::{OAuthClient, ProviderClient, ProviderError};
use reqwest::header::{LOCATION, SET_COOKIE};
use secrecy::SecretString;
use url::Url;

use crate::helpers::{spawn_app_with, TestApp, ITERATIONS};

const CLIENT_ID: &str = "sistema-rh";
const CLIENT_SECRET: &str = "sistema-rh-secret-0123456789";
const REDIRECT_URI: &str = "http://127.0.0.1:9/auth/callback/";

/// The app with a confidential client that must use PKCE, enabled for
/// `formacao_academica` and `experiencia_profissional`, and the user ana.
async fn provider_app() -> TestApp {
    let app = spawn_app_with(|_| {}).await;
    let secret_hash = DjangoPbkdf2::derive(CLIENT_SECRET, "clientsalt", ITERATIONS).expect("hash").encode();
    app.db
        .storage()
        .clients
        .create(
            OAuthClient {
                client_id: ClientId::parse(CLIENT_ID).expect("id"),
                name: "Sistema de RH".into(),
                secret_hash: Some(secret_hash),
                redirect_uris: vec![REDIRECT_URI.into()],
                post_logout_redirect_uris: vec![],
                confidential: true,
                require_pkce: true,
                requires_second_factor: false,
                minimum_govbr_level: None,
                enabled_scopes: ScopeSet::parse_strict("formacao_academica experiencia_profissional").expect("known"),
                is_active: true,
                created_at: 0,
                backchannel_logout_uri: None,
            },
            &credencial_adapters_postgres::testing::setup_audit(),
        )
        .await
        .expect("client registered");
    app.add_user("ana", "ana-password", true).await;
    app
}

fn adapter(app: &TestApp) -> HttpProviderClient {
    let base = BaseUrl::parse(&app.address).expect("base");
    HttpProviderClient::new(
        http_client().expect("client"),
        ProviderSettings {
            base: base.clone(),
            public_base: base,
            client_id: CLIENT_ID.into(),
            client_secret: SecretString::from(CLIENT_SECRET),
            redirect_uri: REDIRECT_URI.into(),
            timeout: Duration::from_secs(10),
        },
    )
    .expect("valid settings")
}

/// A browser: a cookie jar on a client that never follows redirects.
struct Browser {
    origin: String,
    client: reqwest::Client,
    jar: HashMap<String, String>,
}

impl Browser {
    /// Sends `request` with the jar's cookies; returns status, `Location`
    /// and body, keeping the cookies set.
    async fn send(&mut self, request: reqwest::RequestBuilder) -> (u16, Option<String>, String) {
        let cookies = self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
        let request = if cookies.is_empty() { request } else { request.header("cookie", cookies) };
        let r = request.send().await.expect("sent");
        for c in r.headers().get_all(SET_COOKIE) {
            let c = c.to_str().expect("ascii");
            let (pair, attributes) = c.split_once(';').unwrap_or((c, ""));
            let (name, value) = pair.split_once('=').expect("name=value");
            if attributes.contains("Max-Age=0") {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
        }
        let location = r.headers().get(LOCATION).map(|v| v.to_str().expect("ascii").to_owned());
        (r.status().as_u16(), location, r.text().await.expect("body"))
    }

    async fn get(&mut self, url: &str) -> (u16, Option<String>, String) {
        let url = if url.starts_with('/') { format!("{}{url}", self.origin) } else { url.to_owned() };
        let request = self.client.get(url);
        self.send(request).await
    }

    async fn post(&mut self, path: &str, fields: &[(String, String)]) -> (u16, Option<String>, String) {
        let request = self.client.post(format!("{}{path}", self.origin)).form(fields);
        self.send(request).await
    }
}

/// The hidden fields of a page's form, unescaped, plus `extra`.
fn form_fields(html: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let unescape = |s: &str| {
        s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#x27;", "'").replace("&amp;", "&")
    };
    let mut fields: Vec<(String, String)> = html
        .split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|rest| {
            let (name, rest) = rest.split_once("\" value=\"").expect("value");
            let (value, _) = rest.split_once('"').expect("end of value");
            (unescape(name), unescape(value))
        })
        .collect();
    fields.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    fields
}

/// Opens `authorize_url` as ana, logs in, approves (unless her consent to
/// the client is remembered from an earlier approval: then the provider
/// answers at once), and returns the query of the redirect back to the
/// client.
async fn approve_as_ana(app: &TestApp, authorize_url: &str) -> HashMap<String, String> {
    let mut browser = Browser { origin: app.address.clone(), client: app.client.clone(), jar: HashMap::new() };
    let (status, _, login) = browser.get(authorize_url).await;
    assert_eq!(status, 200, "{login}");
    assert!(login.contains("Entrar"), "login form expected: {login}");
    let fields = form_fields(&login, &[("username", "ana"), ("password", "ana-password")]);
    let (status, back, body) = browser.post("/oauth/authorize/", &fields).await;
    assert_eq!(status, 303, "{body}");
    let (status, remembered, consent) = browser.get(&back.expect("back to the authorization request")).await;
    let location = if status == 302 {
        remembered.expect("Location")
    } else {
        assert_eq!(status, 200, "{consent}");
        assert!(consent.contains("Sistema de RH"), "consent page expected: {consent}");
        let (status, location, body) =
            browser.post("/oauth/authorize/", &form_fields(&consent, &[("action", "approve")])).await;
        assert_eq!(status, 303, "{body}");
        location.expect("Location")
    };
    assert!(location.starts_with(REDIRECT_URI), "{location}");
    Url::parse(&location).expect("URL").query_pairs().into_owned().collect()
}

#[tokio::test]
async fn the_adapter_completes_the_flow_against_the_real_provider_and_reads_the_profile() {
    let app = provider_app().await;
    let provider = adapter(&app);
    let start = provider.start(ScopeSet::parse_strict("formacao_academica experiencia_profissional").expect("known"));
    assert!(start.url.starts_with(&format!("{}/oauth/authorize/?", app.address)), "{}", start.url);

    let callback = approve_as_ana(&app, &start.url).await;
    assert_eq!(callback.get("state"), Some(&start.state), "the state comes back");
    let code = callback.get("code").expect("code");

    let tokens = provider.exchange_code(code, &start.pkce_verifier).await.expect("tokens");
    assert_eq!(
        tokens.scope,
        ScopeSet::parse_strict("dados_publicos cpf email formacao_academica experiencia_profissional").expect("known")
    );

    let profile = provider.fetch_profile(&tokens.access_token).await.expect("profile");
    let mut keys: Vec<&str> = profile.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["avatar", "cpf", "email", "experiencia_profissional", "formacao_academica", "name"]);
    assert_eq!(profile["name"], "Full ana");
    assert_eq!(profile["email"], "ana@example.gov.br");

    assert_eq!(
        provider.exchange_code(code, &start.pkce_verifier).await,
        Err(ProviderError::Refused("invalid_grant".into())),
        "a code is redeemed once"
    );
    assert_eq!(
        provider.fetch_profile("not-a-token").await,
        Err(ProviderError::Refused("invalid_token".into())),
        "the provider's 401"
    );
}

#[tokio::test]
async fn the_real_provider_refuses_a_code_with_another_verifier_and_a_wrong_secret() {
    let app = provider_app().await;
    let provider = adapter(&app);
    let first = provider.start(ScopeSet::required());
    let callback = approve_as_ana(&app, &first.url).await;
    let other = provider.start(ScopeSet::required());
    assert_eq!(
        provider.exchange_code(&callback["code"], &other.pkce_verifier).await,
        Err(ProviderError::Refused("invalid_grant".into())),
        "PKCE binds the code to this start's verifier"
    );

    let base = BaseUrl::parse(&app.address).expect("base");
    let impostor = HttpProviderClient::new(
        http_client().expect("client"),
        ProviderSettings {
            base: base.clone(),
            public_base: base,
            client_id: CLIENT_ID.into(),
            client_secret: SecretString::from("not-the-secret"),
            redirect_uri: REDIRECT_URI.into(),
            timeout: Duration::from_secs(10),
        },
    )
    .expect("valid settings");
    let start = impostor.start(ScopeSet::required());
    let callback = approve_as_ana(&app, &start.url).await;
    assert_eq!(
        impostor.exchange_code(&callback["code"], &start.pkce_verifier).await,
        Err(ProviderError::Refused("invalid_client".into()))
    );
}
