//! HTML for browsers, JSON for programs: an error answered by a route that
//! is not a JSON API (the pages, and any address no route serves) becomes
//! a page in Portuguese — with the frame, a title, `lang` and a way back —
//! when the browser asks for HTML. The JSON API routes keep their JSON
//! exactly, whatever the request accepts; programs that ask for JSON (or
//! say nothing) get JSON everywhere, as before.
//!
//! A middleware, so that every error reaches it (a handler's, an
//! extractor's 400 or 413, the fallback's 404, a resource's 405, a
//! fault's 5xx); successful answers pass it after one status comparison.

use std::future::{ready, Ready};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::StatusCode;
use askama::Template;
use futures_util::future::Map;
use futures_util::FutureExt;

use crate::error::ApiError;
use crate::html::{Site, PROVIDER};

/// Paths whose routes are JSON APIs (or scripts and key sets): their
/// errors stay JSON for every client. The routes' own constants where
/// they have one.
const API_PREFIXES: &[&str] = &[
    "/api/",
    "/.well-known/",
    crate::user_directory::PATH,
    crate::oauth::TOKEN_PATH,
    crate::oauth::revocation::REVOKE_PATH,
    crate::oauth::revocation::INTROSPECT_PATH,
    crate::oauth::userinfo::USERINFO_PATH,
    crate::oauth::form_post::SCRIPT_PATH,
    crate::account::passkeys::SCRIPT_PATH,
    "/auth/jwt",
    "/sandbox/govbr/token",
    "/sandbox/govbr/jwk",
    "/_sandbox/",
    "/_noop",
    "/_test/",
    "/healthz",
    "/readyz",
    crate::metrics::PATH,
];

/// Whether `path` belongs to a JSON API route (`token_prefix`: where the
/// JWT sub-application is mounted, when it is elsewhere).
pub fn is_api_path(path: &str, token_prefix: Option<&str>) -> bool {
    API_PREFIXES.iter().any(|prefix| path.starts_with(prefix))
        || token_prefix.is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('/')))
}

/// Whether the request's `Accept` prefers HTML to JSON: a browser's
/// navigation (`text/html,…,*/*;q=0.8`) does; `application/json`, `*/*`
/// or no `Accept` at all does not.
pub fn wants_html(headers: &HeaderMap) -> bool {
    let mut html = 0.0_f32;
    let mut json = 0.0_f32;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(text) = value.to_str() else { continue };
        for item in text.split(',') {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .next()
                .unwrap_or(1.0);
            match media.as_str() {
                "text/html" | "application/xhtml+xml" => html = html.max(quality),
                "application/json" => json = json.max(quality),
                _ => {}
            }
        }
    }
    html > 0.0 && html >= json
}

/// The page of an error status: its title, what happened and what to do
/// (also the words of [`crate::html::failure_page`]).
pub(crate) fn words(status: StatusCode) -> (&'static str, &'static str, &'static str) {
    match status {
        StatusCode::NOT_FOUND => (
            "Página não encontrada",
            "Não há nenhuma página neste endereço.",
            "Confira o endereço digitado ou comece pela página inicial.",
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            "Operação não permitida",
            "Esta página não aceita essa operação.",
            "Volte à página anterior e use os botões da própria página.",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "Envio grande demais",
            "O conteúdo enviado passa do tamanho aceito.",
            "Volte, reduza o texto ou o arquivo e envie de novo.",
        ),
        StatusCode::TOO_MANY_REQUESTS => (
            "Muitas tentativas",
            "Foram feitas muitas tentativas em pouco tempo.",
            "Aguarde alguns minutos e tente novamente.",
        ),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => (
            "Acesso não permitido",
            "Você não tem permissão para abrir esta página.",
            "Entre com uma conta que tenha acesso, ou volte à página inicial.",
        ),
        StatusCode::SERVICE_UNAVAILABLE => {
            ("Serviço indisponível", "O serviço está temporariamente indisponível.", "Tente novamente em instantes.")
        }
        s if s.is_server_error() => ("Erro interno", "Ocorreu um erro interno.", "Tente novamente em instantes."),
        _ => {
            ("Pedido inválido", "Não foi possível atender a este pedido.", "Volte à página anterior e tente novamente.")
        }
    }
}

/// An error page with the way back (the home page and Minha conta).
#[derive(Debug, Template)]
#[template(path = "status.html")]
struct StatusPage<'a> {
    site: &'static Site,
    title: &'a str,
    reason: &'a str,
    hint: &'a str,
}

/// The headers of the JSON answer a page keeps (what to wait for, which
/// methods to use, the request's id).
const KEPT_HEADERS: &[header::HeaderName] = &[header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE];

/// Where the JWT sub-application is mounted, as application data, so that
/// [`HtmlErrors`] counts it among the JSON routes.
#[derive(Debug, Clone)]
pub struct TokenPrefix(pub Option<String>);

/// The middleware (see the module's documentation). A successful answer
/// costs one status comparison: no allocation, no lookup.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlErrors;

impl<S, B> Transform<S, ServiceRequest> for HtmlErrors
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Transform = HtmlErrorsService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(HtmlErrorsService { service }))
    }
}

/// The service [`HtmlErrors`] wraps around the application.
#[derive(Debug)]
pub struct HtmlErrorsService<S> {
    service: S,
}

/// What the inner service answers.
type Answer<B> = Result<ServiceResponse<B>, actix_web::Error>;

impl<S, B> Service<ServiceRequest> for HtmlErrorsService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Future = Map<S::Future, fn(Answer<B>) -> Answer<EitherBody<B>>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, request: ServiceRequest) -> Self::Future {
        self.service.call(request).map(as_page_for_browsers::<B>)
    }
}

/// An error answer of a page route (or of no route) as a page, when the
/// browser asks for HTML; every other answer as it is.
fn as_page_for_browsers<B>(answer: Answer<B>) -> Answer<EitherBody<B>> {
    let res = answer?;
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return Ok(res.map_into_left_body());
    }
    let json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("application/problem+json"));
    let request = res.request();
    let prefix = request.app_data::<TokenPrefix>().and_then(|p| p.0.as_deref());
    if !json || is_api_path(request.path(), prefix) || !wants_html(request.headers()) {
        return Ok(res.map_into_left_body());
    }
    let error_id = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
        .and_then(|e| e.body().get("error_id").and_then(|v| v.as_str()).map(str::to_owned));
    let (title, reason, hint) = words(status);
    let hint = match error_id {
        Some(id) => format!("{hint} Código do erro: {id}."),
        None => hint.to_owned(),
    };
    let mut builder = crate::html::response(status);
    for name in KEPT_HEADERS {
        if let Some(value) = res.headers().get(name) {
            builder.insert_header((name.clone(), value.clone()));
        }
    }
    let page = crate::html::html(builder, &StatusPage { site: &PROVIDER, title, reason, hint: &hint });
    let (request, _) = res.into_parts();
    Ok(ServiceResponse::new(request, page).map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).expect("a header value"));
        headers
    }

    #[test]
    fn a_browser_navigation_wants_html_and_a_program_does_not() {
        let chromium = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
        assert!(wants_html(&accept(chromium)));
        assert!(wants_html(&accept("text/html")));
        for program in ["application/json", "*/*", "application/json, text/html;q=0.5", "text/html;q=0", "image/*"] {
            assert!(!wants_html(&accept(program)), "{program}");
        }
        assert!(!wants_html(&HeaderMap::new()), "no Accept: JSON");
    }

    #[test]
    fn the_api_routes_are_told_apart_from_the_pages() {
        for api in ["/api/perfil/dados/", "/oauth/token/", "/oauth/userinfo", "/.well-known/jwks.json", "/usuarios/1/"]
        {
            assert!(is_api_path(api, None), "{api}");
        }
        for page in ["/", "/x", "/favicon.ico", "/conta/x", "/admin/x", "/oauth/authorize/", "/auth/me/"] {
            assert!(!is_api_path(page, None), "{page}");
        }
        assert!(is_api_path("/jwt/pair/", Some("/jwt/")), "a token prefix of its own");
    }

    #[test]
    fn every_error_status_has_portuguese_words() {
        for status in [400, 401, 403, 404, 405, 413, 415, 429, 500, 502, 503, 504] {
            let (title, reason, hint) = words(StatusCode::from_u16(status).expect("a status"));
            assert!(!title.is_empty() && reason.ends_with('.') && hint.ends_with('.'), "{status}");
        }
    }
}
