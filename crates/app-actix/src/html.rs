//! What every HTML page of the service shares (the `/oauth/authorize/`
//! pages and the client component's): who the page speaks for, rendering
//! a page template (askama, auto-escaping; the frame is
//! `templates/base.html`), and the headers of an HTML answer.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};
use askama::Template;

/// `Content-Security-Policy` of every page: nothing but inline styles (the
/// frame's one `<style>` element), and no framing (the consent page must
/// not be clickjacked). No `form-action`: browsers apply it to the redirect
/// that follows the consent form. The form-post page adds to it
/// (`oauth::form_post`).
pub(crate) const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Who a page speaks for: the header bar, the title bar and the footer.
/// The institution's identity around it comes from the request's
/// [`crate::branding`].
#[derive(Debug)]
pub struct Site {
    /// The service's name, in the header bar and after the page title;
    /// `None`: the institution's identity service (the branding's
    /// `service_name`).
    pub own_name: Option<&'static str>,
    /// One line under or beside the name in the header bar.
    pub tagline: &'static str,
    /// The footer's line.
    pub footer: &'static str,
    /// Whether the page carries the institution's identity (logo, colour,
    /// footer links, gov.br bar): every page but the gov.br sandbox's,
    /// which stands for gov.br.
    pub institutional: bool,
}

impl Site {
    /// The service's name (see [`Site::own_name`]).
    pub fn name(&self) -> String {
        match self.own_name {
            Some(name) => name.to_owned(),
            None => crate::branding::current().service_name.clone(),
        }
    }

    /// The request's identity (the frame's logo, colours and links).
    pub fn brand(&self) -> std::sync::Arc<crate::branding::Branding> {
        crate::branding::current()
    }

    /// The signed-in person's name, on signed-in pages.
    pub fn person(&self) -> Option<String> {
        crate::branding::person()
    }

    /// Where the header's "Sair" leads (Minha conta's logout page).
    pub fn logout_path(&self) -> &'static str {
        crate::account::LOGOUT_PATH
    }
}

/// The frame of a signed-in page (`templates/frame.html`): the
/// navigation of its area (the account's or the administration panel's)
/// and which section is shown. Each area builds it with its own
/// constructor ([`Frame::account`], [`Frame::admin`]).
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// The area's sections: path and label.
    pub(crate) nav: &'static [(&'static str, &'static str)],
    /// The navigation's accessible name (`aria-label`).
    pub(crate) label: &'static str,
    /// The navigation's CSS classes.
    pub(crate) class: &'static str,
    /// The path of the section shown (one of `nav`'s), marked as current.
    pub current: &'static str,
}

impl Frame {
    /// The navigation's entries.
    pub fn nav(&self) -> &'static [(&'static str, &'static str)] {
        self.nav
    }
}

/// The identity provider's pages (`/oauth/`).
pub const PROVIDER: Site = Site {
    own_name: None,
    tagline: "Identidade digital",
    footer: "Seus dados só são compartilhados com um aplicativo quando você autoriza.",
    institutional: true,
};

/// The client component's pages (`/auth/`): the host application.
pub const HOST_APP: Site = Site {
    own_name: Some("Aplicação de demonstração"),
    tagline: "Entrar com a sua identidade digital",
    footer: "Aplicação de demonstração do componente cliente do credencial.",
    institutional: true,
};

/// A builder for an HTML answer with `status` and the headers every page
/// carries (never cached, never framed, no sniffing, no referrer).
pub fn response(status: StatusCode) -> HttpResponseBuilder {
    let mut builder = HttpResponse::build(status);
    builder
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .insert_header((header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)))
        .insert_header((header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .insert_header((header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")));
    builder
}

/// Finishes `builder` with `page` rendered. A page that cannot be rendered
/// (a value's `Display` failed, which ours never do) is logged and answered
/// with a bare 500.
pub fn html(mut builder: HttpResponseBuilder, page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(body) => builder.content_type("text/html; charset=utf-8").body(body),
        Err(e) => {
            tracing::error!(error = %e, "rendering a page failed");
            response(StatusCode::INTERNAL_SERVER_ERROR).content_type("text/plain; charset=utf-8").body("Erro interno.")
        }
    }
}

/// Whether the browser says this form post came from a page of another
/// origin (`Sec-Fetch-Site: same-site` or `cross-site`). The anti-forgery
/// tokens stop a post from another site, but not one from a sibling
/// subdomain that can plant the login form's cookie (login CSRF: the victim
/// ends up logged in as the attacker); a browser's fetch metadata tells both
/// apart from our own pages. Clients that send no such header (not
/// browsers, or browsers from before 2023) are judged by the tokens alone.
pub fn posted_from_another_origin(req: &actix_web::HttpRequest) -> bool {
    req.headers().get("sec-fetch-site").is_some_and(|v| {
        !(v.as_bytes().eq_ignore_ascii_case(b"same-origin") || v.as_bytes().eq_ignore_ascii_case(b"none"))
    })
}

/// A fault of ours or of storage, as a provider page: 503 (with
/// `Retry-After`) or 500, and an error id whose details went to the log
/// (the JSON routes' rule).
pub fn failure_page(e: credencial_application::ServiceError) -> HttpResponse {
    let api = crate::error::ApiError::from(e);
    let error_id = api.body().get("error_id").and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let status = api.status();
    let unavailable = status == StatusCode::SERVICE_UNAVAILABLE;
    let shown = if unavailable { status } else { StatusCode::INTERNAL_SERVER_ERROR };
    let (title, reason, hint) = crate::error_pages::words(shown);
    let mut builder = response(status);
    if unavailable {
        builder.insert_header((header::RETRY_AFTER, "5"));
    }
    let hint = format!("{hint} Código do erro: {error_id}.");
    html(builder, &ErrorPage { site: &PROVIDER, title, reason, hint: &hint, retry: None })
}

/// What a page says while the brute-force limits refuse its form: the wait
/// in whole minutes, rounded up ("Tente novamente em 5 minutos", never
/// "em 299 segundos").
pub fn throttled_text(retry_after_secs: u64) -> String {
    let minutes = retry_after_secs.div_ceil(60).max(1);
    let unit = if minutes == 1 { "minuto" } else { "minutos" };
    format!(
        "Muitas tentativas sem sucesso. Tente novamente em {} {unit}.",
        credencial_domain::admin::page::thousands(minutes)
    )
}

/// Items as Portuguese lists them: "a", "a e b", "a, b e c".
pub fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} e {last}", rest.join(", ")),
    }
}

/// The hint of a page that refuses a request for a reason meant for the
/// integrating developer (an OAuth2 error): `before`, then the request's
/// code to quote when asking for help. The technical detail goes to the
/// log under that code, never to the person in English.
pub fn refusal_hint(before: &str, detail: &str, code: &str) -> String {
    tracing::warn!(error = code, detail, "request refused");
    match credencial_application::request_context::current() {
        Some(id) => format!("{before} Se precisar de ajuda, informe o código {}.", id.as_str()),
        None => before.to_owned(),
    }
}

/// `at` as `dd/mm/aaaa hh:mm` in Brasília time (the domain's rule, which
/// the CLI's tables share).
pub use credencial_domain::local_time::brasilia_time;

/// An error page of either site: a title, the reason (announced), what the
/// user can do, and optionally a link to try again.
#[derive(Debug, Template)]
#[template(path = "error.html")]
pub struct ErrorPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page's heading and title.
    pub title: &'a str,
    /// What went wrong, in words for the user.
    pub reason: &'a str,
    /// What the user can do about it.
    pub hint: &'a str,
    /// Where "Tentar novamente" leads, if anywhere.
    pub retry: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(page: &impl Template) -> String {
        page.render().expect("renders")
    }

    #[test]
    fn lists_read_as_portuguese_writes_them() {
        let items = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(listed(&items(&[])), "");
        assert_eq!(listed(&items(&["a"])), "a");
        assert_eq!(listed(&items(&["a", "b"])), "a e b");
        assert_eq!(listed(&items(&["a", "b", "c"])), "a, b e c");
    }

    #[test]
    fn a_wait_is_said_in_whole_minutes_rounded_up() {
        assert_eq!(throttled_text(299), "Muitas tentativas sem sucesso. Tente novamente em 5 minutos.");
        assert_eq!(throttled_text(300), "Muitas tentativas sem sucesso. Tente novamente em 5 minutos.");
        assert_eq!(throttled_text(301), "Muitas tentativas sem sucesso. Tente novamente em 6 minutos.");
        assert_eq!(throttled_text(1), "Muitas tentativas sem sucesso. Tente novamente em 1 minuto.");
        assert_eq!(throttled_text(0), "Muitas tentativas sem sucesso. Tente novamente em 1 minuto.");
        assert_eq!(throttled_text(86_400), "Muitas tentativas sem sucesso. Tente novamente em 1.440 minutos.");
    }

    #[test]
    fn the_frame_is_portuguese_with_a_skip_link_a_header_bar_and_a_footer() {
        let page = render(&ErrorPage { site: &PROVIDER, title: "Erro", reason: "r", hint: "h", retry: None });
        assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"pt-BR\">"), "{page}");
        assert!(page.contains("<title>Erro · credencial</title>"), "{page}");
        let skip = page.find("<a class=\"skip\" href=\"#conteudo\">").expect("skip link");
        let header = page.find("<header class=\"bar\">").expect("header bar");
        let main = page.find("<main id=\"conteudo\"").expect("main");
        let footer = page.find("<footer").expect("footer");
        assert!(skip < header && header < main && main < footer, "{page}");
        assert!(page.contains("<style>") && page.contains("#1351b4"), "the inline stylesheet");
        assert!(!page.contains("{#") && !page.contains("Inlined by base.html"), "template comments stay out");
        assert!(!page.contains("Tentar novamente"), "no retry link unless given");
    }

    #[test]
    fn an_error_page_escapes_every_value_and_announces_the_reason() {
        let page = render(&ErrorPage {
            site: &HOST_APP,
            title: "<t>",
            reason: "<script>alert('x')</script>",
            hint: "\"h\"",
            retry: Some("/auth/login/?next=%2F\"><b>"),
        });
        for raw in ["<t>", "<script>", "'x'", "\"h\"", "\"><b>"] {
            assert!(!page.contains(raw), "{raw} leaked into {page}");
        }
        assert!(page.contains("<p class=\"message\" role=\"alert\">&#60;script&#62;alert(&#39;x&#39;)"), "{page}");
        assert!(page.contains("<a class=\"button\" href=\"/auth/login/?next=%2F&#34;&#62;&#60;b&#62;\">"), "{page}");
        assert!(page.contains("<title>&#60;t&#62; · Aplicação de demonstração</title>"), "{page}");
    }
}
