//! What every HTML page of the service shares (the `/oauth/authorize/`
//! pages and the client component's): the document frame with its inline
//! base style, HTML escaping, and the headers of an HTML answer.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};

/// `Content-Security-Policy` of every page: nothing but inline styles, and
/// no framing (the consent page must not be clickjacked). No `form-action`:
/// browsers apply it to the redirect that follows the consent form.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/// The style every page starts from; a page's own rules follow it.
const BASE_STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;\
background:#eef2f6;color:#1d2733;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
main{background:#fff;width:100%;margin:1rem;padding:2rem;border-radius:.75rem;\
box-shadow:0 2px 12px rgba(20,40,70,.12)}\
h1{font-size:1.35rem;margin:0 0 .75rem}\
p{margin:.5rem 0}\
.actions{display:flex;gap:.75rem;margin-top:1.5rem}\
button.secondary{background:#e3e8ee;color:#1d2733}\
.message{background:#fdecea;color:#8a1c12;border-radius:.4rem;padding:.6rem .8rem}\
.note{color:#5a6773;font-size:.9rem}";

/// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title` (escaped) followed by `site` in the title bar, the
/// base style followed by `style`, and `body` (already escaped) in `<main>`.
pub fn document(title: &str, site: &str, style: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"pt-BR\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<title>{} · {}</title>\n\
         <style>{BASE_STYLE}{style}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        escape(title),
        escape(site)
    )
}

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

/// Finishes `builder` with an HTML body.
pub fn html(mut builder: HttpResponseBuilder, page: String) -> HttpResponse {
    builder.content_type("text/html; charset=utf-8").body(page)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attribute_values() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("Olá, ação"), "Olá, ação");
    }

    #[test]
    fn a_document_escapes_its_title_and_puts_the_page_style_after_the_base() {
        let page = document("<Entrar>", "credencial", "main{max-width:1rem}", "<p>x</p>\n");
        assert!(page.contains("<title>&lt;Entrar&gt; · credencial</title>"), "{page}");
        let base = page.find("*{box-sizing").expect("base style");
        let own = page.find("main{max-width:1rem}").expect("page style");
        assert!(base < own, "the page's rules come after the base");
        assert!(page.contains("<main>\n<p>x</p>\n</main>"), "{page}");
    }
}
