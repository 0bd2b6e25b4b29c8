//! Demo only: a stand-in for gov.br's Login Único at `/sandbox/govbr/`, so
//! that "Entrar com gov.br" runs offline. It speaks the parts of gov.br's
//! protocol a relying party sees (its public integration guide): discovery,
//! the authorization code flow with PKCE S256, `state` and `nonce` all
//! required, the token endpoint with HTTP Basic client authentication, an
//! ES256 key set, and the front-channel logout. Its ID tokens have gov.br's
//! shape: `sub` and `preferred_username` the CPF, `email_verified` the
//! *string* `"true"`, `amr` with gov.br's values, `reliability_info` with
//! the level (`bronze`, `silver`, `gold`) and its seals, and a 60-second
//! lifetime.
//!
//! Instead of a password, its authorization page lets the person pick a
//! test citizen and the level and method of the login. Codes live in
//! memory for 60 seconds and are redeemed once; the signing key is made at
//! start-up. Redirect URIs must be on a loopback host.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use credencial_domain::jwt::{generate_pem_pair, JwtAlgorithm, JwtKeys, TokenCodec};
use credencial_domain::Cpf;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::form::FormFields;
use crate::html::{self, Site};
use crate::routes::{self, resource};

/// The sandbox's issuer path: its issuer is the server's origin and this.
pub const ISSUER_PATH: &str = "/sandbox/govbr/";
/// The client id the sandbox accepts.
pub const CLIENT_ID: &str = "credencial-demo";
/// The client secret the sandbox accepts (a demo has no secret).
pub const CLIENT_SECRET: &str = "segredo-da-demonstracao";
/// How long an ID token lives: gov.br's 60 seconds.
pub const ID_TOKEN_SECS: i64 = 60;
/// How long a code may wait for its redemption.
const CODE_SECS: i64 = 60;
/// The most codes kept at once (older ones are dropped).
const MAX_CODES: usize = 1_000;

/// The sandbox's page header.
const SANDBOX_SITE: Site = Site {
    own_name: Some("gov.br (sandbox)"),
    tagline: "Simulação do Login Único",
    footer: "Simulação do gov.br para a demonstração do credencial; nenhum dado sai desta máquina.",
    institutional: false,
};

/// A test citizen of the sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Citizen {
    /// The CPF (11 digits).
    pub cpf: &'static str,
    /// The name.
    pub name: &'static str,
    /// The e-mail address gov.br has verified.
    pub email: &'static str,
}

/// The test citizens: `ana` and `bruno` of the demo (the same CPFs), and
/// Carla, who has no account yet.
pub const CITIZENS: [Citizen; 3] = [
    Citizen { cpf: "52998224725", name: "Ana Beatriz Souza", email: "ana.souza@demo.credencial.gov.br" },
    Citizen { cpf: "12345678909", name: "Bruno Carvalho Lima", email: "bruno.lima@demo.credencial.gov.br" },
    Citizen { cpf: "11144477735", name: "Carla Mendes Rocha", email: "carla.rocha@exemplo.gov.br" },
];

/// How the person "logged in" at the sandbox: gov.br's `amr` values.
const METHODS: [(&str, &str, &[&str]); 4] = [
    ("senha", "Senha", &["passwd"]),
    ("app", "Senha e código do aplicativo gov.br (duas etapas)", &["passwd", "otp", "mfa"]),
    ("banco", "Internet banking", &["bank001"]),
    ("certificado", "Certificado digital", &["x509_cpf"]),
];

/// The levels, as gov.br names them in `reliability_info`, with a seal each.
const LEVELS: [(&str, &str, &str); 3] =
    [("bronze", "Bronze", "101"), ("silver", "Prata", "401"), ("gold", "Ouro", "801")];

/// A code waiting for its redemption.
#[derive(Debug, Clone)]
struct Issued {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    nonce: String,
    claims: Value,
    expires_at: i64,
}

/// The sandbox's state: its key and the codes waiting.
pub struct GovBrSandbox {
    codec: TokenCodec,
    codes: Mutex<HashMap<String, Issued>>,
}

impl std::fmt::Debug for GovBrSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GovBrSandbox").finish_non_exhaustive()
    }
}

impl GovBrSandbox {
    /// A sandbox with a new ES256 key. Errors: the key could not be made.
    pub fn new() -> Result<Self, String> {
        let (private, public) = generate_pem_pair(JwtAlgorithm::ES256).map_err(|e| e.to_string())?;
        let keys = JwtKeys::asymmetric(JwtAlgorithm::ES256, private.0.as_bytes(), public.as_bytes())
            .map_err(|e| e.to_string())?;
        let codec = TokenCodec::new(keys, 0).map_err(|e| e.to_string())?;
        Ok(Self { codec, codes: Mutex::new(HashMap::new()) })
    }
}

/// The sandbox's routes.
pub fn scope(sandbox: Arc<GovBrSandbox>) -> actix_web::Scope {
    let data = web::Data::from(sandbox);
    web::scope("/sandbox/govbr")
        .app_data(data)
        .service(resource("/.well-known/openid-configuration", "GET").route(routes::get().to(discovery)))
        .service(
            resource("/authorize", "GET, POST").route(routes::get().to(authorize_page)).route(web::post().to(approve)),
        )
        .service(resource("/token", "POST").route(web::post().to(token)))
        .service(resource("/jwk", "GET").route(routes::get().to(keys)))
        .service(resource("/logout", "GET").route(routes::get().to(logout)))
}

/// The issuer as the request reached the sandbox.
fn issuer(req: &HttpRequest) -> String {
    let info = req.connection_info();
    format!("{}://{}{ISSUER_PATH}", info.scheme(), info.host())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

fn json_answer(status: StatusCode, body: &Value) -> HttpResponse {
    HttpResponse::build(status).insert_header((header::CACHE_CONTROL, "no-store")).json(body)
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> HttpResponse {
    json_answer(status, &json!({"error": error, "error_description": description}))
}

/// `GET /sandbox/govbr/.well-known/openid-configuration`.
async fn discovery(req: HttpRequest) -> HttpResponse {
    let issuer = issuer(&req);
    json_answer(
        StatusCode::OK,
        &json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}authorize"),
            "token_endpoint": format!("{issuer}token"),
            "jwks_uri": format!("{issuer}jwk"),
            "end_session_endpoint": format!("{issuer}logout"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": ["openid", "email", "profile", "govbr_confiabilidades", "govbr_confiabilidades_idtoken"],
        }),
    )
}

/// `GET /sandbox/govbr/jwk`.
async fn keys(sandbox: web::Data<GovBrSandbox>) -> HttpResponse {
    json_answer(StatusCode::OK, &json!({"keys": sandbox.codec.public_jwks()}))
}

/// Whether `uri` is an `http(s)` URL on a loopback host (the only
/// redirects the sandbox makes).
fn loopback(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host().is_some_and(|h| credencial_domain::oauth::is_loopback_host(&h))
            && u.fragment().is_none()
    })
}

/// The authorization request's parameters, checked.
struct Request<'a> {
    client_id: &'a str,
    redirect_uri: &'a str,
    state: &'a str,
    nonce: &'a str,
    challenge: &'a str,
}

/// The request's parameters, or what is wrong (shown on a page: the
/// sandbox never redirects a bad request).
fn checked<'a>(fields: &'a FormFields) -> Result<Request<'a>, &'static str> {
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    if field("response_type") != "code" {
        return Err("response_type deve ser code.");
    }
    if field("client_id") != CLIENT_ID {
        return Err("client_id desconhecido.");
    }
    if !loopback(field("redirect_uri")) {
        return Err("redirect_uri deve estar em um endereço local (loopback).");
    }
    if !field("scope").split_ascii_whitespace().any(|s| s == "openid") {
        return Err("scope deve incluir openid.");
    }
    if field("state").is_empty() || field("nonce").is_empty() {
        return Err("state e nonce são obrigatórios no gov.br.");
    }
    if field("code_challenge_method") != "S256" || field("code_challenge").len() != 43 {
        return Err("PKCE com S256 é obrigatório no gov.br.");
    }
    Ok(Request {
        client_id: field("client_id"),
        redirect_uri: field("redirect_uri"),
        state: field("state"),
        nonce: field("nonce"),
        challenge: field("code_challenge"),
    })
}

/// `templates/sandbox/govbr.html`.
#[derive(Debug, Template)]
#[template(path = "sandbox/govbr.html")]
struct AuthorizePage<'a> {
    site: &'static Site,
    title: &'a str,
    hidden: Vec<(&'static str, &'a str)>,
    citizens: Vec<(&'static str, String)>,
    levels: Vec<(&'static str, &'static str)>,
    methods: Vec<(&'static str, &'static str)>,
}

fn sandbox_error(reason: &str) -> HttpResponse {
    let page = html::ErrorPage {
        site: &SANDBOX_SITE,
        title: "Pedido inválido",
        reason,
        hint: "O aplicativo que enviou você para cá fez um pedido que o gov.br recusaria.",
        retry: None,
    };
    html::html(html::response(StatusCode::BAD_REQUEST), &page)
}

/// `GET /sandbox/govbr/authorize?…`: the page that picks the citizen, the
/// level and the method.
async fn authorize_page(req: HttpRequest) -> HttpResponse {
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    if let Err(reason) = checked(&fields) {
        return sandbox_error(reason);
    }
    let carried = [
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "nonce",
        "code_challenge",
        "code_challenge_method",
    ];
    let hidden = carried.iter().map(|name| (*name, fields.get(name).ok().flatten().unwrap_or(""))).collect();
    let masked = |cpf: &str| format!("{}.***.***-{}", &cpf[..3], &cpf[9..]);
    let page = AuthorizePage {
        site: &SANDBOX_SITE,
        title: "Entrar com gov.br",
        hidden,
        citizens: CITIZENS.iter().map(|c| (c.cpf, format!("{} (CPF {})", c.name, masked(c.cpf)))).collect(),
        levels: LEVELS.iter().map(|(value, label, _)| (*value, *label)).collect(),
        methods: METHODS.iter().map(|(value, label, _)| (*value, *label)).collect(),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `POST /sandbox/govbr/authorize`: "Autorizar" issues a code for the
/// chosen citizen; "Cancelar" answers `access_denied`.
async fn approve(body: web::Bytes, sandbox: web::Data<GovBrSandbox>) -> HttpResponse {
    let Ok(fields) = FormFields::parse(&body) else { return sandbox_error("Formulário inválido.") };
    let request = match checked(&fields) {
        Ok(request) => request,
        Err(reason) => return sandbox_error(reason),
    };
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    let mut back = match url::Url::parse(request.redirect_uri) {
        Ok(url) => url,
        Err(_) => return sandbox_error("redirect_uri inválido."),
    };
    if field("acao") == "cancelar" {
        back.query_pairs_mut().append_pair("error", "access_denied").append_pair("state", request.state);
        return redirect(back.as_str());
    }
    let citizen = CITIZENS.iter().find(|c| c.cpf == field("cidadao"));
    let level = LEVELS.iter().find(|(value, _, _)| *value == field("nivel"));
    let method = METHODS.iter().find(|(value, _, _)| *value == field("metodo"));
    let (Some(citizen), Some((level, _, seal)), Some((_, _, amr))) = (citizen, level, method) else {
        return sandbox_error("Escolha o cidadão, o nível e a forma de entrada.");
    };
    debug_assert!(Cpf::parse(citizen.cpf).is_ok());
    let claims = json!({
        "sub": citizen.cpf,
        "preferred_username": citizen.cpf,
        "name": citizen.name,
        "email": citizen.email,
        "email_verified": "true",
        "amr": amr,
        "reliability_info": {"level": level, "reliabilities": [{"id": seal, "updatedAt": "2026-01-15T10:00:00Z"}]},
    });
    let code = credencial_domain::session::SessionToken::generate().expose().to_owned();
    let issued = Issued {
        client_id: request.client_id.to_owned(),
        redirect_uri: request.redirect_uri.to_owned(),
        challenge: request.challenge.to_owned(),
        nonce: request.nonce.to_owned(),
        claims,
        expires_at: now() + CODE_SECS,
    };
    if let Ok(mut codes) = sandbox.codes.lock() {
        let now = now();
        codes.retain(|_, c| c.expires_at > now);
        if codes.len() < MAX_CODES {
            codes.insert(code.clone(), issued);
        }
    }
    back.query_pairs_mut().append_pair("code", &code).append_pair("state", request.state);
    redirect(back.as_str())
}

fn redirect(location: &str) -> HttpResponse {
    let mut builder = html::response(StatusCode::FOUND);
    builder.insert_header((header::LOCATION, location));
    builder.finish()
}

/// The client of an HTTP Basic `Authorization` header.
fn basic_client(req: &HttpRequest) -> Option<(String, String)> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape =
        |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned());
    Some((unescape(id)?, unescape(secret)?))
}

/// `POST /sandbox/govbr/token`: redeems a code (HTTP Basic, PKCE S256) for
/// an access token and a 60-second ID token.
async fn token(req: HttpRequest, body: web::Bytes, sandbox: web::Data<GovBrSandbox>) -> HttpResponse {
    let Some((client_id, secret)) = basic_client(&req) else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "client authentication by HTTP Basic is required",
        );
    };
    if client_id != CLIENT_ID || secret != CLIENT_SECRET {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "unknown client or wrong secret");
    }
    let Ok(fields) = FormFields::parse(&body) else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "the body is not a form");
    };
    let field = |name| fields.get(name).ok().flatten().unwrap_or("");
    if field("grant_type") != "authorization_code" {
        return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", "only authorization_code");
    }
    let issued = sandbox.codes.lock().ok().and_then(|mut codes| codes.remove(field("code")));
    let Some(issued) = issued.filter(|i| i.expires_at > now()) else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "the code is unknown, used or expired");
    };
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(field("code_verifier").as_bytes()));
    if issued.client_id != client_id || issued.redirect_uri != field("redirect_uri") || issued.challenge != challenge {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "redirect_uri or code_verifier does not match");
    }
    let access_token = credencial_domain::session::SessionToken::generate().expose().to_owned();
    let digest = Sha256::digest(access_token.as_bytes());
    let now = now();
    let mut claims = issued.claims;
    if let Some(object) = claims.as_object_mut() {
        object.insert("iss".into(), json!(issuer(&req)));
        object.insert("aud".into(), json!(client_id));
        object.insert("iat".into(), json!(now));
        object.insert("exp".into(), json!(now + ID_TOKEN_SECS));
        object.insert("nonce".into(), json!(issued.nonce));
        object.insert("at_hash".into(), json!(URL_SAFE_NO_PAD.encode(&digest[..16])));
    }
    match sandbox.codec.encode(&claims) {
        Ok(id_token) => json_answer(
            StatusCode::OK,
            &json!({"access_token": access_token, "token_type": "Bearer", "expires_in": ID_TOKEN_SECS, "id_token": id_token, "scope": "openid email profile govbr_confiabilidades govbr_confiabilidades_idtoken"}),
        ),
        Err(e) => oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e.to_string()),
    }
}

/// `GET /sandbox/govbr/logout?post_logout_redirect_uri=…`: "ends" the
/// gov.br session and sends the browser back (to a loopback URI only).
async fn logout(req: HttpRequest) -> HttpResponse {
    let fields = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    match fields.get("post_logout_redirect_uri").ok().flatten() {
        Some(uri) if loopback(uri) => redirect(uri),
        _ => {
            let page = html::ErrorPage {
                site: &SANDBOX_SITE,
                title: "Você saiu do gov.br",
                reason: "A sessão do gov.br (simulado) foi encerrada.",
                hint: "Você pode fechar esta página.",
                retry: None,
            };
            html::html(html::response(StatusCode::OK), &page)
        }
    }
}
