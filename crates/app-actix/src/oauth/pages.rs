//! The HTML pages of `/oauth/authorize/`: login, consent and errors.
//! Self-contained (inline CSS, no script, no external asset), in
//! Portuguese like the scope descriptions, and every value that a user or
//! a client controls is HTML-escaped.

use credencial_domain::oauth::AuthorizationParams;
use credencial_domain::ScopeSet;

use super::form::authorization_pairs;
use crate::html::escape;

/// The rules of these pages, after the base style.
const STYLE: &str = "\
main{max-width:26rem}\
label{display:block;margin:.9rem 0 .25rem;font-weight:600}\
input[type=text],input[type=password]{width:100%;padding:.6rem .7rem;border:1px solid #b8c2cc;\
border-radius:.4rem;font:inherit}\
input:focus,button:focus{outline:3px solid #8bb8ee;outline-offset:1px}\
button{flex:1;padding:.65rem 1rem;border:0;border-radius:.4rem;font:inherit;font-weight:600;cursor:pointer;\
background:#1459b3;color:#fff}\
ul{padding-left:1.2rem;margin:.75rem 0}li{margin:.3rem 0}\
code{word-break:break-all}";

fn layout(title: &str, body: &str) -> String {
    crate::html::document(title, "credencial", STYLE, body)
}

fn hidden(name: &str, value: &str) -> String {
    format!("<input type=\"hidden\" name=\"{}\" value=\"{}\">\n", escape(name), escape(value))
}

fn hidden_params(params: &AuthorizationParams) -> String {
    authorization_pairs(params).into_iter().map(|(name, value)| hidden(name, value)).collect()
}

fn message(text: Option<&str>) -> String {
    text.map(|t| format!("<p class=\"message\" role=\"alert\">{}</p>\n", escape(t))).unwrap_or_default()
}

/// The login form, posted back to the same URL with the request's
/// parameters, `action=login` and the anti-forgery token.
pub fn login(
    client_name: &str,
    params: &AuthorizationParams,
    form_token: &str,
    username: &str,
    error: Option<&str>,
) -> String {
    let body = format!(
        "<h1>Entrar</h1>\n<p>para continuar em <strong>{client}</strong></p>\n{message}\
         <form method=\"post\">\n{params}{token}{action}\
         <label for=\"username\">Usuário</label>\n\
         <input type=\"text\" id=\"username\" name=\"username\" value=\"{username}\" autocomplete=\"username\" \
         autocapitalize=\"none\" spellcheck=\"false\" required autofocus>\n\
         <label for=\"password\">Senha</label>\n\
         <input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\" required>\n\
         <div class=\"actions\"><button type=\"submit\">Entrar</button></div>\n</form>\n",
        client = escape(client_name),
        message = message(error),
        params = hidden_params(params),
        token = hidden("csrf_token", form_token),
        action = hidden("action", "login"),
        username = escape(username),
    );
    layout("Entrar", &body)
}

/// The consent page: the client's name, each granted scope in plain words,
/// where the answer goes, and Deny / Approve (Deny first, so that Enter
/// never approves).
pub fn consent(
    client_name: &str,
    scopes: ScopeSet,
    redirect_uri: &str,
    params: &AuthorizationParams,
    form_token: &str,
) -> String {
    let items: String = scopes.iter().map(|s| format!("<li>{}</li>\n", escape(s.description()))).collect();
    let destination = url::Url::parse(redirect_uri)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| redirect_uri.to_owned());
    let body = format!(
        "<h1>Autorizar acesso</h1>\n<p><strong>{client}</strong> quer acessar os seguintes dados da sua conta:</p>\n\
         <ul>\n{items}</ul>\n\
         <p class=\"note\">Depois da sua resposta, você volta para <code>{destination}</code>.</p>\n\
         <form method=\"post\">\n{params}{token}\
         <div class=\"actions\">\
         <button type=\"submit\" name=\"action\" value=\"deny\" class=\"secondary\">Negar</button>\
         <button type=\"submit\" name=\"action\" value=\"approve\">Autorizar</button></div>\n</form>\n",
        client = escape(client_name),
        destination = escape(&destination),
        params = hidden_params(params),
        token = hidden("csrf_token", form_token),
    );
    layout("Autorizar acesso", &body)
}

/// An error page: a title, the reason, and what the user can do.
pub fn error(title: &str, reason: &str, hint: &str) -> String {
    let body = format!(
        "<h1>{}</h1>\n<p class=\"message\" role=\"alert\">{}</p>\n<p class=\"note\">{}</p>\n",
        escape(title),
        escape(reason),
        escape(hint)
    );
    layout(title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> AuthorizationParams {
        AuthorizationParams {
            response_type: Some("code".into()),
            client_id: Some("portal".into()),
            redirect_uri: Some("https://app.example/cb?x=1&y=\"2\"".into()),
            scope: Some("cpf".into()),
            state: Some("<script>alert(1)</script>".into()),
            code_challenge: None,
            code_challenge_method: None,
        }
    }

    #[test]
    fn everything_a_client_or_user_controls_is_escaped() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;");
        let page = login("<b>Evil</b>", &params(), "tok", "\"><img src=x>", Some("<i>msg</i>"));
        for raw in ["<b>Evil</b>", "<script>", "\"><img", "<i>msg</i>", "y=\"2\""] {
            assert!(!page.contains(raw), "{raw} leaked into {page}");
        }
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("name=\"state\" value=\"&lt;script&gt;"));
        let page = consent("<b>Evil</b>", ScopeSet::required(), "https://app.example/cb", &params(), "tok");
        assert!(!page.contains("<b>Evil</b>") && !page.contains("<script>"));
    }

    #[test]
    fn the_consent_page_names_each_scope_and_the_destination() {
        let scopes = ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("known");
        let page = consent("Portal", scopes, "https://app.example.gov.br/cb?tenant=1", &params(), "tok");
        for scope in scopes.iter() {
            assert!(page.contains(&escape(scope.description())), "{scope}");
        }
        assert!(!page.contains(&escape(credencial_domain::Scope::ReceitaFederal.description())));
        assert!(page.contains("<code>https://app.example.gov.br</code>"));
        assert!(page.find("value=\"deny\"") < page.find("value=\"approve\""), "Enter denies");
    }
}
