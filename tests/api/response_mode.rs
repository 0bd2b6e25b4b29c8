//! Response modes and the OpenID Connect parameters we refuse, at
//! `/oauth/authorize/` over real HTTP: `request`, `request_uri` and
//! `registration` answered with their own errors (to the redirect URI when
//! the client and redirect URI are valid, else the error page);
//! `response_mode=form_post` from the first request to the code exchange,
//! the page's form, script and Content-Security-Policy; `fragment`; and
//! unknown modes.

use std::collections::HashMap;

use url::Url;

use crate::helpers::{hidden_fields, status_and_json, unescape_html, with, Browser, Page};
use crate::oauth::{
    after_login, app, authorize_path, callback, consent_page, decide, token_request, PORTAL_SECRET, PORTAL_URI,
};
use crate::oidc::{discovery, oidc_app};

/// A request object (an unsigned JWT, as a client would send one).
const REQUEST_OBJECT: &str = "eyJhbGciOiJub25lIn0.eyJzY29wZSI6ImNwZiJ9.";

/// Each refused parameter, a value a client would send, and its error.
const REFUSED: [(&str, &str, &str); 3] = [
    ("request", REQUEST_OBJECT, "request_not_supported"),
    ("request_uri", "https://portal.example.gov.br/requests/1", "request_uri_not_supported"),
    ("registration", "{\"client_name\":\"Outro\"}", "registration_not_supported"),
];

/// portal's authorization request with state `s-rm` and `extra`.
fn portal(extra: &[(&str, &str)]) -> String {
    let mut pairs =
        vec![("response_type", "code"), ("client_id", "portal"), ("redirect_uri", PORTAL_URI), ("state", "s-rm")];
    pairs.extend_from_slice(extra);
    authorize_path(&pairs)
}

/// The form-post page's target and fields, after checking that it is one:
/// 200, HTML, a form that posts to `redirect_uri` with a button, the one
/// script file, and the page's security headers.
fn form_post(page: &Page, redirect_uri: &str) -> HashMap<String, String> {
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.location, None);
    assert!(page.headers["content-type"].to_str().expect("ascii").starts_with("text/html"));
    assert_eq!(page.headers["cache-control"], "no-store");
    assert_eq!(page.headers["x-frame-options"], "DENY");
    let action = page.body.split("<form id=\"resposta\" method=\"post\" action=\"").nth(1).expect("the form");
    let action = unescape_html(action.split('"').next().expect("action"));
    assert_eq!(action, redirect_uri, "posted to the redirect URI exactly");
    assert!(page.body.contains("<button type=\"submit\">Continuar</button>"), "works without scripts");
    assert_eq!(page.body.matches("<script").count(), 1, "{}", page.body);
    assert!(page.body.contains("<script src=\"/oauth/form_post.js\"></script>"), "{}", page.body);
    hidden_fields(&page.body).into_iter().collect()
}

/// The page's `Content-Security-Policy`, directive by directive.
fn csp(page: &Page) -> HashMap<String, String> {
    let header = page.headers["content-security-policy"].to_str().expect("ascii");
    header
        .split(';')
        .filter_map(|d| d.trim().split_once(' '))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

// ---------------------------------------------------- refused parameters

#[tokio::test]
async fn request_request_uri_and_registration_go_back_to_a_valid_redirect_uri_with_state() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    for (name, value, code) in REFUSED {
        // The first request: no login form, the error at once.
        let page = browser.get(&portal(&[(name, value)])).await;
        assert_eq!(page.status, 302, "{name}: {}", page.body);
        let query = callback(&page.location.expect("Location"), PORTAL_URI);
        assert_eq!((query["error"].as_str(), query["state"].as_str()), (code, "s-rm"), "{name}");
        assert!(!query.contains_key("code"));
        // The same in the form-post mode: the error is posted.
        let page = browser.get(&portal(&[(name, value), ("response_mode", "form_post")])).await;
        let fields = form_post(&page, PORTAL_URI);
        assert_eq!((fields["error"].as_str(), fields["state"].as_str()), (code, "s-rm"), "{name}");
    }
    // Added to the login and consent posts, which carry the request too.
    let login = browser.get(&portal(&[("scope", "cnes")])).await;
    let consent = consent_page(&mut browser, &portal(&[("scope", "cnes")]), "ana", "ana-password").await;
    for (name, value, code) in REFUSED {
        let fields =
            with(hidden_fields(&login.body), &[("username", "ana"), ("password", "ana-password"), (name, value)]);
        let page = browser.post("/oauth/authorize/", &fields).await;
        assert_eq!(page.status, 303, "{name}: {}", page.body);
        assert_eq!(callback(&page.location.expect("Location"), PORTAL_URI)["error"], code, "login post, {name}");
        let page = browser
            .post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", "approve"), (name, value)]))
            .await;
        assert_eq!(page.status, 303, "{name}: {}", page.body);
        let query = callback(&page.location.expect("Location"), PORTAL_URI);
        assert_eq!((query["error"].as_str(), query.contains_key("code")), (code, false), "consent post, {name}");
    }
}

#[tokio::test]
async fn request_request_uri_and_registration_with_an_unknown_client_or_redirect_uri_are_an_error_page() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    for (name, value, _) in REFUSED {
        for path in [
            authorize_path(&[
                ("response_type", "code"),
                ("client_id", "nobody"),
                ("redirect_uri", PORTAL_URI),
                (name, value),
            ]),
            authorize_path(&[
                ("response_type", "code"),
                ("client_id", "portal"),
                ("redirect_uri", "https://evil.example/cb"),
                ("state", "s"),
                ("response_mode", "form_post"),
                (name, value),
            ]),
            authorize_path(&[("response_type", "code"), (name, value)]),
        ] {
            let page = browser.get(&path).await;
            assert_eq!((page.status, page.location.as_deref()), (400, None), "{path}: {}", page.body);
            assert!(page.headers["content-type"].to_str().expect("ascii").starts_with("text/html"));
            assert!(page.body.contains("<h1>Não foi possível continuar</h1>"), "{}", page.body);
            assert!(!page.body.contains("<form"), "no form posts anywhere: {}", page.body);
            assert!(!page.body.contains("evil.example"), "the bad URI is not echoed");
        }
    }
}

// ------------------------------------------------------------- form_post

#[tokio::test]
async fn form_post_carries_the_code_from_login_and_consent_to_the_redirect_uri_and_the_code_buys_tokens() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let path = portal(&[("scope", "cnes"), ("response_mode", "form_post")]);
    let consent = consent_page(&mut browser, &path, "ana", "ana-password").await;
    assert!(
        hidden_fields(&consent.body).contains(&("response_mode".into(), "form_post".into())),
        "the mode goes through the login and consent forms"
    );
    let page = browser.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", "approve")])).await;
    let fields = form_post(&page, PORTAL_URI);
    assert_eq!(fields.keys().count(), 2, "code and state only: {fields:?}");
    assert_eq!(fields["state"], "s-rm");
    assert!(page.body.contains("<code>https://portal.example.gov.br</code>"), "names where it goes");

    let form = [("grant_type", "authorization_code"), ("code", fields["code"].as_str()), ("redirect_uri", PORTAL_URI)];
    let (status, tokens) = status_and_json(token_request(&app, Some(("portal", PORTAL_SECRET)), &form).await).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["scope"], "dados_publicos cpf email cnes");

    // Consent remembered: the next request answers with the page at once.
    let path = authorize_path(&[
        ("response_type", "code"),
        ("client_id", "portal"),
        ("scope", "cnes"),
        ("response_mode", "form_post"),
    ]);
    let page = browser.get(&path).await;
    let fields = form_post(&page, PORTAL_URI);
    assert!(fields.contains_key("code") && !fields.contains_key("state"), "no state when none was sent: {fields:?}");
}

#[tokio::test]
async fn the_form_post_page_allows_its_script_file_and_posting_to_the_client_s_origin_only() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let path = portal(&[("response_mode", "form_post")]);
    let consent = consent_page(&mut browser, &path, "ana", "ana-password").await;
    let other_pages = csp(&consent);
    assert_eq!(other_pages.get("script-src"), None, "no script on the other pages");
    assert_eq!(other_pages.get("form-action"), None, "the consent form's redirect is not restricted");
    let page = browser.post("/oauth/authorize/", &with(hidden_fields(&consent.body), &[("action", "deny")])).await;
    let fields = form_post(&page, PORTAL_URI);
    assert_eq!((fields["error"].as_str(), fields["state"].as_str()), ("access_denied", "s-rm"));
    let policy = csp(&page);
    assert_eq!(policy["script-src"], "'self'", "the file, no inline script");
    assert_eq!(policy["form-action"], "https://portal.example.gov.br");
    assert_eq!(policy["default-src"], "'none'");
    assert_eq!(policy["frame-ancestors"], "'none'");
    assert_eq!(policy["base-uri"], "'none'");
    assert!(!page.headers["content-security-policy"].to_str().expect("ascii").contains("unsafe-eval"));

    // The script: JavaScript that submits the page's form.
    for script_path in ["/oauth/form_post.js", "/oauth/form_post.js/"] {
        let script = browser.get(script_path).await;
        assert_eq!(script.status, 200, "{script_path}");
        assert_eq!(script.headers["content-type"], "text/javascript; charset=utf-8");
        assert_eq!(script.headers["x-content-type-options"], "nosniff");
        assert!(script.body.contains("getElementById('resposta')") && script.body.contains(".submit()"));
    }
}

#[tokio::test]
async fn errors_in_the_form_post_mode_are_posted_too() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    // prompt=none without a session.
    let page = browser.get(&portal(&[("response_mode", "form_post"), ("prompt", "none")])).await;
    let fields = form_post(&page, PORTAL_URI);
    assert_eq!((fields["error"].as_str(), fields["state"].as_str()), ("login_required", "s-rm"));
    // A request error after the mode.
    let page = browser.get(&portal(&[("response_mode", "form_post"), ("scope", "phone")])).await;
    let fields = form_post(&page, PORTAL_URI);
    assert_eq!(fields["error"], "invalid_scope");
    assert!(fields["error_description"].contains("phone"), "{fields:?}");
}

// -------------------------------------------------- fragment and unknown

#[tokio::test]
async fn fragment_puts_the_code_in_the_redirect_uri_s_fragment() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    let page = after_login(&mut browser, &portal(&[("response_mode", "fragment")]), "ana", "ana-password").await;
    let location = decide(&mut browser, &page, "approve").await;
    let url = Url::parse(&location).expect("url");
    assert_eq!(
        (url.origin().ascii_serialization() + url.path(), url.query()),
        (PORTAL_URI.to_owned(), None),
        "{location}"
    );
    let fragment: HashMap<String, String> =
        url::form_urlencoded::parse(url.fragment().expect("fragment").as_bytes()).into_owned().collect();
    assert_eq!((fragment["code"].len(), fragment["state"].as_str()), (43, "s-rm"));
}

#[tokio::test]
async fn an_unknown_response_mode_is_invalid_request_in_the_query_with_state() {
    let (app, _) = app().await;
    let mut browser = Browser::new(&app);
    for mode in ["form_post.jwt", "jwt", "web_message", "FORM_POST"] {
        let page = browser.get(&portal(&[("response_mode", mode), ("request", REQUEST_OBJECT)])).await;
        assert_eq!(page.status, 302, "{mode}: {}", page.body);
        let query = callback(&page.location.expect("Location"), PORTAL_URI);
        assert_eq!((query["error"].as_str(), query["state"].as_str()), ("invalid_request", "s-rm"), "{mode}");
        assert!(query["error_description"].contains("response_mode"), "{query:?}");
    }
    // With an unregistered redirect URI it is the error page, as always.
    let path = authorize_path(&[
        ("response_type", "code"),
        ("client_id", "portal"),
        ("redirect_uri", "https://evil.example/cb"),
        ("response_mode", "web_message"),
    ]);
    let page = browser.get(&path).await;
    assert_eq!((page.status, page.location), (400, None));
}

#[tokio::test]
async fn discovery_lists_the_response_modes_and_no_request_objects() {
    let (app, _) = oidc_app(|_| {}).await;
    let doc = discovery(&app).await;
    assert_eq!(doc["response_modes_supported"], serde_json::json!(["query", "fragment", "form_post"]));
    assert_eq!(doc["request_parameter_supported"], false);
    assert_eq!(doc["request_uri_parameter_supported"], false, "its default is true: written out");
}
