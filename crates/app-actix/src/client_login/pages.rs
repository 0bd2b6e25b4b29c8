//! The client component's HTML pages: the host user's record, the logout
//! page and the login errors, as askama templates under `templates/`
//! (auto-escaped). In Portuguese; no script.

use askama::Template;

use crate::html::{ErrorPage, Site, HOST_APP};

/// A value as shown in a record cell.
#[derive(Debug)]
pub enum Cell {
    /// `NULL`: a dimmed dash.
    Empty,
    /// A JSON object or array, pretty-printed in a block.
    Json(String),
    /// Anything else, as text.
    Text(String),
}

impl Cell {
    fn of(value: Option<&str>) -> Self {
        match value {
            None => Cell::Empty,
            Some(text) if text.starts_with('{') || text.starts_with('[') => Cell::Json(
                serde_json::from_str::<serde_json::Value>(text)
                    .ok()
                    .and_then(|v| serde_json::to_string_pretty(&v).ok())
                    .unwrap_or_else(|| text.to_owned()),
            ),
            Some(text) => Cell::Text(text.to_owned()),
        }
    }
}

/// The host user's record (`templates/client/record.html`).
#[derive(Debug, Template)]
#[template(path = "client/record.html")]
pub struct Record<'a> {
    site: &'static Site,
    title: &'a str,
    table: &'a str,
    rows: Vec<(&'a str, Cell)>,
    logout_path: &'a str,
    hidden: [(&'static str, &'a str); 1],
    leaving: bool,
}

/// The logout page (`templates/client/logout.html`).
#[derive(Debug, Template)]
#[template(path = "client/logout.html")]
pub struct Logout<'a> {
    site: &'static Site,
    title: &'a str,
    logout_path: &'a str,
    hidden: [(&'static str, &'a str); 1],
    leaving: bool,
    back_path: &'a str,
}

/// The page after leaving (`templates/client/logged_out.html`).
#[derive(Debug, Template)]
#[template(path = "client/logged_out.html")]
pub struct LoggedOut<'a> {
    site: &'static Site,
    title: &'a str,
    login_path: &'a str,
}

/// The host user's record, column by column, with a logout button that
/// posts `csrf_token` to `logout_path`.
pub fn record<'a>(
    table: &'a str,
    columns: &'a [(String, Option<String>)],
    logout_path: &'a str,
    csrf_token: &'a str,
) -> Record<'a> {
    Record {
        site: &HOST_APP,
        title: "Seu cadastro",
        table,
        rows: columns.iter().map(|(name, value)| (name.as_str(), Cell::of(value.as_deref()))).collect(),
        logout_path,
        hidden: [("csrf_token", csrf_token)],
        leaving: false,
    }
}

/// The logout page: what leaving means, the button, and a way back to
/// `back_path` (the record).
pub fn logout<'a>(logout_path: &'a str, csrf_token: &'a str, back_path: &'a str) -> Logout<'a> {
    Logout {
        site: &HOST_APP,
        title: "Sair",
        logout_path,
        hidden: [("csrf_token", csrf_token)],
        leaving: true,
        back_path,
    }
}

/// The page after leaving: the session here ended, the provider's did not,
/// and a link to `login_path`. A page, not a redirect to the login: with
/// the provider's session and the consent remembered, the login would
/// bring the person straight back in.
pub fn logged_out(login_path: &str) -> LoggedOut<'_> {
    LoggedOut { site: &HOST_APP, title: "Você saiu", login_path }
}

/// A login error: a title, the reason, and a link to try again.
pub fn error<'a>(title: &'a str, reason: &'a str, hint: &'a str, retry_path: &'a str) -> ErrorPage<'a> {
    ErrorPage { site: &HOST_APP, title, reason, hint, retry: Some(retry_path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(page: &impl Template) -> String {
        page.render().expect("renders")
    }

    #[test]
    fn every_value_on_the_record_page_is_escaped() {
        let columns = vec![
            ("first_name".to_owned(), Some("<script>alert(\"1\")</script>".to_owned())),
            ("profile".to_owned(), Some(r#"{"name": "<b>Ana</b>"}"#.to_owned())),
            ("email".to_owned(), None),
            ("<th>".to_owned(), Some("x".to_owned())),
        ];
        let page = render(&record("host_<users>", &columns, "/auth/logout/", "tok\"en"));
        for raw in ["<script>", "<b>Ana", "<th>", "host_<users>", "tok\"en"] {
            assert!(!page.contains(raw), "{raw} leaked into {page}");
        }
        assert!(page.contains("<td>&#60;script&#62;alert(&#34;1&#34;)&#60;/script&#62;</td>"), "{page}");
        assert!(page.contains("&#34;name&#34;: &#34;&#60;b&#62;Ana&#60;/b&#62;&#34;"), "pretty JSON, escaped: {page}");
        assert!(page.contains("<th scope=\"row\">email</th><td><span class=\"null\">— (vazio)</span></td>"), "{page}");
        assert!(page.contains("<code>host_&#60;users&#62;</code>"), "{page}");
        assert!(page.contains("<input type=\"hidden\" name=\"csrf_token\" value=\"tok&#34;en\">"), "{page}");
        assert!(page.contains("<form method=\"post\" action=\"/auth/logout/\""), "{page}");
    }

    #[test]
    fn the_logout_page_posts_the_token_with_a_primary_button() {
        let page = render(&logout("/auth/logout/", "tok", "/auth/me/"));
        assert!(page.contains("<h1>Sair desta aplicação</h1>"), "{page}");
        assert!(page.contains("<input type=\"hidden\" name=\"csrf_token\" value=\"tok\">"), "{page}");
        assert!(page.contains("<button type=\"submit\">Sair</button>"), "{page}");
        assert!(page.contains("<a href=\"/auth/me/\">Voltar ao seu cadastro</a>"), "{page}");
    }

    #[test]
    fn the_page_after_leaving_links_to_the_login() {
        let page = render(&logged_out("/auth/login/"));
        assert!(page.contains("<h1>Você saiu desta aplicação</h1>"), "{page}");
        assert!(page.contains("<a class=\"button\" href=\"/auth/login/\">Entrar novamente</a>"), "{page}");
        assert!(!page.contains("<form"), "nothing to post: {page}");
    }

    #[test]
    fn a_login_error_links_to_try_again() {
        let page = render(&error("Acesso negado", "motivo", "dica", "/auth/login/"));
        assert!(page.contains("<p class=\"message\" role=\"alert\">motivo</p>"), "{page}");
        assert!(page.contains("<a class=\"button\" href=\"/auth/login/\">Tentar novamente</a>"), "{page}");
    }
}
