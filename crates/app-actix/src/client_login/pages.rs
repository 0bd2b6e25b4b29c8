//! The client component's HTML pages: the host user's record and the
//! login errors. Self-contained (inline CSS, no script), in Portuguese, and
//! every value is HTML-escaped.

use crate::html::escape;

/// The rules of these pages, after the base style.
const STYLE: &str = "\
main{max-width:44rem}\
table{width:100%;border-collapse:collapse;margin:1rem 0;font-size:.95rem}\
th,td{text-align:left;vertical-align:top;padding:.45rem .6rem;border-bottom:1px solid #e3e8ee}\
th{width:11rem;color:#5a6773;font-weight:600;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem}\
td{word-break:break-word}\
pre{margin:0;white-space:pre-wrap;word-break:break-all;font-size:.8rem;background:#f5f7fa;padding:.5rem;\
border-radius:.3rem;max-height:18rem;overflow:auto}\
.null{color:#9aa5b1;font-style:italic}\
.actions{margin-top:1.25rem}\
a.button,button{display:inline-block;padding:.6rem 1rem;border:0;border-radius:.4rem;font:inherit;font-weight:600;\
cursor:pointer;background:#1459b3;color:#fff;text-decoration:none}";

fn layout(title: &str, body: &str) -> String {
    crate::html::document(title, "aplicação de demonstração", STYLE, body)
}

/// A value as shown in a cell: JSON pretty-printed in a block, `NULL` as a
/// dimmed dash, anything else as text.
fn cell(value: Option<&str>) -> String {
    match value {
        None => "<span class=\"null\">— (vazio)</span>".to_owned(),
        Some(text) if text.starts_with('{') || text.starts_with('[') => {
            let pretty = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| text.to_owned());
            format!("<pre>{}</pre>", escape(&pretty))
        }
        Some(text) => escape(text),
    }
}

/// The logout form: a POST to `logout_path` carrying `csrf_token`.
fn logout_form(logout_path: &str, csrf_token: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\" class=\"actions\">\
         <input type=\"hidden\" name=\"csrf_token\" value=\"{}\">\
         <button type=\"submit\" class=\"secondary\">Sair</button></form>\n",
        escape(logout_path),
        escape(csrf_token)
    )
}

/// The host user's record, column by column, with a logout button.
pub fn record(table: &str, columns: &[(String, Option<String>)], logout_path: &str, csrf_token: &str) -> String {
    let rows: String = columns
        .iter()
        .map(|(name, value)| {
            format!("<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n", escape(name), cell(value.as_deref()))
        })
        .collect();
    let body = format!(
        "<h1>Seu cadastro nesta aplicação</h1>\n\
         <p class=\"note\">Registro da tabela <code>{table}</code>, preenchido com os dados do seu perfil \
         conforme <code>SERVICE_USER_ATTR_MAP</code>.</p>\n\
         <table>\n<tbody>\n{rows}</tbody>\n</table>\n{logout}",
        table = escape(table),
        logout = logout_form(logout_path, csrf_token),
    );
    layout("Seu cadastro", &body)
}

/// The logout page: what leaving means, and the button.
pub fn logout(logout_path: &str, csrf_token: &str) -> String {
    let body = format!(
        "<h1>Sair desta aplicação</h1>\n\
         <p class=\"note\">A sua sessão nesta aplicação será encerrada. A sua conta no provedor de \
         identidade não muda.</p>\n{}",
        logout_form(logout_path, csrf_token)
    );
    layout("Sair", &body)
}

/// A login error: a title, the reason, and a link to try again.
pub fn error(title: &str, reason: &str, hint: &str, retry_path: &str) -> String {
    let body = format!(
        "<h1>{}</h1>\n<p class=\"message\" role=\"alert\">{}</p>\n<p class=\"note\">{}</p>\n\
         <div class=\"actions\"><a class=\"button\" href=\"{}\">Tentar novamente</a></div>\n",
        escape(title),
        escape(reason),
        escape(hint),
        escape(retry_path)
    );
    layout(title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_on_the_record_page_is_escaped() {
        let columns = vec![
            ("first_name".to_owned(), Some("<script>alert(1)</script>".to_owned())),
            ("profile".to_owned(), Some(r#"{"name": "<b>Ana</b>"}"#.to_owned())),
            ("email".to_owned(), None),
        ];
        let page = record("host_users", &columns, "/auth/logout/", "tok\"en");
        assert!(!page.contains("<script>") && !page.contains("<b>Ana"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("— (vazio)"));
        assert!(page.contains("name=\"csrf_token\" value=\"tok&quot;en\""), "{page}");
        let page = error("<t>", "<r>", "<h>", "/auth/login/?next=%2F\"x");
        assert!(!page.contains("<t>") && !page.contains("<r>") && !page.contains("\"x"));
    }
}
