//! The HTML pages of `/oauth/authorize/`: login, consent and errors, as
//! askama templates under `templates/` (auto-escaped: every value that a
//! user or a client controls comes out as text). In Portuguese like the
//! scope descriptions; no external asset, and no script but the form-post
//! page's own file ([`super::form_post`]).

use askama::Template;
use credencial_domain::oauth::{AuthorizationParams, AuthorizationResponse};
use credencial_domain::ScopeSet;

use crate::form::authorization_pairs;
use crate::html::{ErrorPage, Site, PROVIDER};

/// The login form (`templates/oauth/login.html`).
#[derive(Debug, Template)]
#[template(path = "oauth/login.html")]
pub struct Login<'a> {
    site: &'static Site,
    title: &'a str,
    client: &'a str,
    message: Option<&'a str>,
    hidden: Vec<(&'static str, &'a str)>,
    username: &'a str,
    passkey_path: &'static str,
    passkey_next: Option<&'a str>,
    passkey_token: &'a str,
    /// "Esqueci minha senha", when the service can send mail.
    pub recovery_path: Option<&'static str>,
    /// The buttons of the upstream providers ("Entrar com gov.br").
    pub providers: Vec<crate::account::federation::ProviderButton>,
    /// "Criar conta", back to this request afterwards, when sign-up is open.
    pub signup_path: Option<String>,
}

/// The page that says which gov.br level an application requires
/// (`templates/oauth/level.html`).
#[derive(Debug, Template)]
#[template(path = "oauth/level.html")]
pub struct Level<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The application's name.
    pub client: &'a str,
    /// The level required (`prata`).
    pub level: &'static str,
    /// The login through gov.br that comes back to the request.
    pub login: String,
    /// gov.br's page on raising one's level.
    pub raise: &'static str,
}

/// The consent page (`templates/oauth/consent.html`).
#[derive(Debug, Template)]
#[template(path = "oauth/consent.html")]
pub struct Consent<'a> {
    site: &'static Site,
    title: &'a str,
    client: &'a str,
    scopes: Vec<&'static str>,
    destination: String,
    hidden: Vec<(&'static str, &'a str)>,
    /// The signed-in account's name, and where to log in as someone else.
    account: Option<(&'a str, &'a str)>,
}

impl<'a> Consent<'a> {
    /// The page naming the signed-in account `account` ("Não é você?"
    /// leads to `switch`).
    pub fn signed_in_as(mut self, account: Option<&'a str>, switch: &'a str) -> Self {
        self.account = account.map(|name| (name, switch));
        self
    }
}

/// The page that posts an authorization response to the client
/// (`templates/oauth/form_post.html`, `response_mode=form_post`).
#[derive(Debug, Template)]
#[template(path = "oauth/form_post.html")]
pub struct FormPost<'a> {
    site: &'static Site,
    title: &'a str,
    destination: String,
    action: &'a str,
    hidden: Vec<(&'static str, &'a str)>,
    script: &'static str,
}

/// The request's parameters, then `extra`, as the form's hidden fields.
fn hidden<'a>(params: &'a AuthorizationParams, extra: &[(&'static str, &'a str)]) -> Vec<(&'static str, &'a str)> {
    let mut fields = authorization_pairs(params);
    fields.extend_from_slice(extra);
    fields
}

/// The login form, posted back to the same URL with the request's
/// parameters, the anti-forgery token and `action=login`; and, when
/// `passkey_next` is given, the button of a login by passkey, which goes
/// back there afterwards.
pub fn login<'a>(
    client_name: &'a str,
    params: &'a AuthorizationParams,
    form_token: &'a str,
    username: &'a str,
    error: Option<&'a str>,
    passkey_next: Option<&'a str>,
) -> Login<'a> {
    Login {
        site: &PROVIDER,
        title: "Entrar",
        client: client_name,
        message: error,
        hidden: hidden(params, &[("csrf_token", form_token), ("action", "login")]),
        username,
        passkey_path: crate::account::passkeys::LOGIN_PASSKEY_PATH,
        passkey_next,
        passkey_token: form_token,
        recovery_path: None,
        providers: Vec::new(),
        signup_path: None,
    }
}

/// The consent page: the client's name, each granted scope in plain words,
/// where the answer goes (its origin), and Deny / Approve (Deny first, so
/// that Enter never approves).
pub fn consent<'a>(
    client_name: &'a str,
    scopes: ScopeSet,
    redirect_uri: &str,
    params: &'a AuthorizationParams,
    form_token: &'a str,
) -> Consent<'a> {
    let destination = origin_of(redirect_uri);
    Consent {
        site: &PROVIDER,
        title: "Autorizar acesso",
        client: client_name,
        scopes: scopes
            .has_openid()
            .then_some(OPENID_DESCRIPTION)
            .into_iter()
            .chain(scopes.iter().map(|s| s.description()))
            .collect(),
        destination,
        hidden: hidden(params, &[("csrf_token", form_token)]),
        account: None,
    }
}

/// The form-post page: a form that posts the response's parameters to the
/// redirect URI exactly as registered, named by its origin; the script at
/// `script` submits it at once, and its *Continuar* button does without
/// scripts.
pub fn form_post<'a>(response: &'a AuthorizationResponse, script: &'static str) -> FormPost<'a> {
    FormPost {
        site: &PROVIDER,
        title: "Voltando ao aplicativo",
        destination: origin_of(response.redirect_uri()),
        action: response.redirect_uri(),
        hidden: response.params().collect(),
        script,
    }
}

/// The origin of `uri` (where an answer goes, in the words a person
/// checks), or `uri` itself if it is not a URL.
fn origin_of(uri: &str) -> String {
    url::Url::parse(uri).map(|u| u.origin().ascii_serialization()).unwrap_or_else(|_| uri.to_owned())
}

/// The logout confirmation (`templates/oauth/logout.html`).
#[derive(Debug, Template)]
#[template(path = "oauth/logout.html")]
pub struct LogoutConfirm<'a> {
    site: &'static Site,
    title: &'a str,
    client: Option<&'a str>,
    hidden: Vec<(&'static str, &'a str)>,
}

/// The page after a logout (`templates/oauth/logged_out.html`).
#[derive(Debug, Template)]
#[template(path = "oauth/logged_out.html")]
pub struct LoggedOut<'a> {
    site: &'static Site,
    title: &'a str,
    client: Option<&'a str>,
    unregistered_return: bool,
}

/// The logout confirmation: who asks (the client's name, if known), a
/// button that posts `hidden` (the request and the anti-forgery token)
/// back, and a way to stay.
pub fn logout_confirm<'a>(client_name: Option<&'a str>, hidden: Vec<(&'static str, &'a str)>) -> LogoutConfirm<'a> {
    LogoutConfirm { site: &PROVIDER, title: "Sair", client: client_name, hidden }
}

/// The page after a logout: the session ended; `unregistered_return` says
/// that the application asked to be returned to an address it did not
/// register (so the browser stays here).
pub fn logged_out(client_name: Option<&str>, unregistered_return: bool) -> LoggedOut<'_> {
    LoggedOut { site: &PROVIDER, title: "Você saiu", client: client_name, unregistered_return }
}

/// What the consent page says of `openid`: signing in to the application
/// with the account (the ID token names the account).
pub const OPENID_DESCRIPTION: &str = "Entrar no aplicativo com a sua conta (identificador da conta)";

/// An error page: a title, the reason, and what the user can do.
pub fn error<'a>(title: &'a str, reason: &'a str, hint: &'a str) -> ErrorPage<'a> {
    ErrorPage { site: &PROVIDER, title, reason, hint, retry: None }
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
            prompt: None,
            nonce: None,
            max_age: None,
            ..AuthorizationParams::default()
        }
    }

    fn render(page: &impl Template) -> String {
        page.render().expect("renders")
    }

    #[test]
    fn everything_a_client_or_user_controls_is_escaped() {
        let params = params();
        let page = render(&login("<b>Evil</b>", &params, "tok", "\"><img src=x>", Some("<i>msg</i>"), None));
        for raw in ["<b>Evil</b>", "<script>", "\"><img", "<i>msg</i>", "y=\"2\""] {
            assert!(!page.contains(raw), "{raw} leaked into {page}");
        }
        assert!(page.contains("<strong>&#60;b&#62;Evil&#60;/b&#62;</strong>"), "{page}");
        assert!(page.contains("name=\"state\" value=\"&#60;script&#62;alert(1)&#60;/script&#62;\""), "{page}");
        assert!(page.contains("name=\"redirect_uri\" value=\"https://app.example/cb?x=1&#38;y=&#34;2&#34;\""));
        assert!(page.contains("value=\"&#34;&#62;&#60;img src=x&#62;\""), "the username, escaped: {page}");
        assert!(page.contains("<p class=\"message\" role=\"alert\">&#60;i&#62;msg&#60;/i&#62;</p>"), "{page}");
        let page = render(&consent("<b>Evil</b>", ScopeSet::required(), "https://app.example/cb", &params, "tok"));
        assert!(!page.contains("<b>Evil</b>") && !page.contains("<script>"), "{page}");
    }

    #[test]
    fn the_login_form_labels_its_fields_and_carries_the_request_token_and_action() {
        let params = params();
        let page = render(&login("Portal", &params, "tok", "", None, None));
        assert!(page.contains("<label for=\"username\">CPF ou usuário</label>"), "{page}");
        assert!(page.contains("<label for=\"password\">Senha</label>"), "{page}");
        assert!(
            page.contains("id=\"username\" name=\"username\"") && page.contains("id=\"password\" name=\"password\"")
        );
        assert!(!page.contains("role=\"alert\""), "no message, no alert");
        let names: Vec<&str> =
            page.split("<input type=\"hidden\" name=\"").skip(1).filter_map(|r| r.split('"').next()).collect();
        assert_eq!(names, ["response_type", "client_id", "redirect_uri", "scope", "state", "csrf_token", "action"]);
    }

    #[test]
    fn the_logout_pages_name_the_client_escaped_and_post_back_the_request() {
        let page = render(&logout_confirm(Some("<b>Portal</b>"), vec![("state", "\"s\""), ("csrf_token", "tok")]));
        assert!(!page.contains("<b>Portal</b>") && page.contains("&#60;b&#62;Portal"), "{page}");
        assert!(page.contains("<form method=\"post\" action=\"/oauth/logout/\""), "{page}");
        assert!(page.contains("name=\"state\" value=\"&#34;s&#34;\""), "{page}");
        assert!(page.contains("name=\"csrf_token\" value=\"tok\""), "{page}");
        let anonymous = render(&logout_confirm(None, vec![]));
        assert!(anonymous.contains("Um aplicativo"), "{anonymous}");
        let out = render(&logged_out(Some("Portal"), true));
        assert!(out.contains("Você saiu do credencial") && out.contains("não está registrado"), "{out}");
        assert!(!render(&logged_out(None, false)).contains("não está registrado"));
    }

    #[test]
    fn the_form_post_page_posts_the_escaped_fields_to_the_redirect_uri_with_a_button_and_no_inline_script() {
        use credencial_domain::oauth::{OAuthError, ResponseMode};
        let response = AuthorizationResponse::code(
            "https://app.example/cb?x=1&y=\"2\"",
            ResponseMode::FormPost,
            "c0de",
            Some("\"><script>alert(1)</script>"),
        );
        let page = render(&form_post(&response, "/oauth/form_post.js"));
        assert!(!page.contains("<script>alert") && !page.contains("y=\"2\""), "{page}");
        assert!(
            page.contains(
                "<form id=\"resposta\" method=\"post\" action=\"https://app.example/cb?x=1&#38;y=&#34;2&#34;\">"
            ),
            "{page}"
        );
        assert!(page.contains("<input type=\"hidden\" name=\"code\" value=\"c0de\">"), "{page}");
        assert!(
            page.contains("name=\"state\" value=\"&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;\""),
            "{page}"
        );
        assert!(page.contains("<button type=\"submit\">Continuar</button>"), "works without scripts: {page}");
        assert!(page.contains("<code>https://app.example</code>"), "{page}");
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert!(page.contains("<script src=\"/oauth/form_post.js\"></script>"), "the one script is the file: {page}");
        let error = AuthorizationResponse::error(
            "https://app.example/cb",
            ResponseMode::FormPost,
            &OAuthError::AccessDenied,
            None,
        );
        let page = render(&form_post(&error, "/oauth/form_post.js"));
        let names: Vec<&str> =
            page.split("<input type=\"hidden\" name=\"").skip(1).filter_map(|r| r.split('"').next()).collect();
        assert_eq!(names, ["error", "error_description"]);
    }

    #[test]
    fn the_consent_page_names_each_scope_and_the_destination() {
        let params = params();
        let scopes = ScopeSet::parse_strict("dados_publicos cpf email cnes").expect("known");
        let page = render(&consent("Portal", scopes, "https://app.example.gov.br/cb?tenant=1", &params, "tok"));
        for scope in scopes.iter() {
            assert!(page.contains(&format!("<li>{}</li>", scope.description())), "{scope}");
        }
        assert!(!page.contains(credencial_domain::Scope::ReceitaFederal.description()));
        assert!(!page.contains(OPENID_DESCRIPTION), "openid only when granted");
        let with_openid = render(&consent("Portal", scopes.with_openid(true), "https://a.example/cb", &params, "tok"));
        assert!(with_openid.contains(&format!("<li>{OPENID_DESCRIPTION}</li>")), "{with_openid}");
        assert!(page.contains("<code>https://app.example.gov.br</code>"));
        assert!(page.find("value=\"deny\"") < page.find("value=\"approve\""), "Enter denies");
        assert!(!page.contains("name=\"action\" value=\"login\""), "the action is the button's");
        assert!(!page.contains("Não é você?"), "no account named, no switch");
        let named = render(
            &consent("Portal", scopes, "https://a.example/cb", &params, "tok")
                .signed_in_as(Some("Ana <Souza>"), "/oauth/authorize/?prompt=login&x=\"y"),
        );
        assert!(named.contains("Você entrou como <strong>Ana &#60;Souza&#62;</strong>."), "{named}");
        assert!(
            named.contains(
                "<a href=\"/oauth/authorize/?prompt=login&#38;x=&#34;y\">Não é você? Entrar com outra conta</a>"
            ),
            "{named}"
        );
    }
}
