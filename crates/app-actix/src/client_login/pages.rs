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
    /// How the value of `column` is shown: personal data masked (LGPD: the
    /// full value is not needed to recognise one's record; see
    /// [`Personal`]), a database time in Brasília time, a flag of an `is_`
    /// column as "sim"/"não", JSON pretty-printed and masked the same way
    /// (JSON that cannot be read is not shown).
    fn of(column: &str, value: Option<&str>) -> Self {
        use credencial_domain::local_time::{brasilia_time, timestamp_from_text};
        let Some(text) = value else { return Cell::Empty };
        if text.starts_with('{') || text.starts_with('[') {
            let pretty = serde_json::from_str::<serde_json::Value>(text).ok().and_then(|mut v| {
                mask_json(None, &mut v);
                serde_json::to_string_pretty(&v).ok()
            });
            return Cell::Json(pretty.unwrap_or_else(|| "(conteúdo que não pôde ser lido)".to_owned()));
        }
        if let Some(kind) = Personal::of_name(column) {
            return Cell::Text(kind.masked(text));
        }
        let flag = column.starts_with("is_");
        let shown = match text {
            "true" | "t" | "1" if flag => "sim".into(),
            "false" | "f" | "0" if flag => "não".into(),
            _ => match (masked_cpf(text), timestamp_from_text(text)) {
                (Some(cpf), _) => cpf,
                (None, Some(at)) => format!("{} (horário de Brasília)", brasilia_time(at)),
                (None, None) => text.to_owned(),
            },
        };
        Cell::Text(shown)
    }
}

/// Personal data the record page masks, recognised by the name of its
/// column or JSON key, in Portuguese or English (`cpf`, `data_nascimento`
/// or `birth_date`, `nome_mae` or `mother_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Personal {
    /// A CPF: `529.***.***-25`; a value that is not a valid CPF is hidden.
    Cpf,
    /// A birth date: its year only.
    BirthDate,
    /// The mother's name: its initials.
    MotherName,
}

impl Personal {
    /// The kind of personal data a column or key named `name` holds.
    fn of_name(name: &str) -> Option<Self> {
        let name = name.to_lowercase();
        if name.contains("cpf") {
            Some(Self::Cpf)
        } else if name.contains("nascimento") || name.contains("birth") {
            Some(Self::BirthDate)
        } else if ["mae", "mãe", "mother"].iter().any(|word| name.contains(word)) {
            Some(Self::MotherName)
        } else {
            None
        }
    }

    /// `text` masked.
    fn masked(self, text: &str) -> String {
        match self {
            Self::Cpf => masked_cpf(text).unwrap_or_else(|| "***".into()),
            Self::BirthDate => masked_date(text),
            Self::MotherName => initials(text),
        }
    }
}

/// A CPF (11 digits, punctuated or not) masked; `None` for any other text.
fn masked_cpf(text: &str) -> Option<String> {
    credencial_domain::Cpf::parse(text).ok().map(|cpf| cpf.masked())
}

/// A name as its initials ("Maria da Silva" → "M. d. S.").
fn initials(name: &str) -> String {
    name.split_whitespace().filter_map(|w| w.chars().next()).map(|c| format!("{c}.")).collect::<Vec<_>>().join(" ")
}

/// A date (`AAAA-MM-DD`) with only its year: `**/**/1990`.
fn masked_date(text: &str) -> String {
    match text.get(..4).filter(|y| y.bytes().all(|b| b.is_ascii_digit())) {
        Some(year) => format!("**/**/{year}"),
        None => "**/**/****".into(),
    }
}

/// Masks the personal data inside a JSON value (the stored profile): the
/// values under a personal key (`key`: the nearest key above), and a CPF
/// anywhere, as text or as a number.
fn mask_json(key: Option<Personal>, value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| mask_json(key, item)),
        Value::Object(fields) => fields.iter_mut().for_each(|(k, v)| mask_json(Personal::of_name(k).or(key), v)),
        Value::Null | Value::Bool(_) => {}
        other => {
            let text = match &*other {
                Value::String(text) => text.clone(),
                number => number.to_string(),
            };
            let masked = match key {
                Some(kind) => Some(kind.masked(&text)),
                None => masked_cpf(&text),
            };
            if let Some(masked) = masked {
                *other = Value::String(masked);
            }
        }
    }
}

/// A host table column in words (the usual columns of a Django-style user
/// table); any other column by its name.
fn label(column: &str) -> &str {
    match column {
        "id" => "Número do registro",
        "username" => "Usuário",
        "email" => "E-mail",
        "first_name" => "Nome",
        "last_name" => "Sobrenome",
        "name" | "full_name" => "Nome completo",
        "cpf" => "CPF",
        "birth_date" => "Data de nascimento",
        "mother_name" => "Nome da mãe",
        "city" => "Município",
        "state" => "UF",
        "is_active" => "Conta ativa",
        "is_staff" => "Equipe",
        "is_superuser" => "Administrador",
        "last_login" => "Último acesso",
        "date_joined" => "Cadastrado em",
        "profile" => "Perfil (JSON)",
        other => other,
    }
}

/// The host user's record (`templates/client/record.html`).
#[derive(Debug, Template)]
#[template(path = "client/record.html")]
pub struct Record<'a> {
    site: &'static Site,
    title: &'a str,
    table: &'a str,
    rows: Vec<(&'a str, &'a str, Cell)>,
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
        rows: columns
            .iter()
            .map(|(name, value)| (name.as_str(), label(name), Cell::of(name, value.as_deref())))
            .collect(),
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

/// A login error: a title, the reason, and a link to try again when trying
/// again can help.
pub fn error<'a>(title: &'a str, reason: &'a str, hint: &'a str, retry_path: Option<&'a str>) -> ErrorPage<'a> {
    ErrorPage { site: &HOST_APP, title, reason, hint, retry: retry_path }
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
        assert!(page.contains("<th scope=\"row\">E-mail</th><td><span class=\"null\">— (vazio)</span></td>"), "{page}");
        assert!(page.contains("<code>host_&#60;users&#62;</code>"), "{page}");
        assert!(page.contains("<input type=\"hidden\" name=\"csrf_token\" value=\"tok&#34;en\">"), "{page}");
        assert!(page.contains("<form method=\"post\" action=\"/auth/logout/\""), "{page}");
    }

    #[test]
    fn the_record_speaks_portuguese_masks_personal_data_and_shows_brasilia_time() {
        let columns = vec![
            ("username".to_owned(), Some("52998224725".to_owned())),
            ("cpf".to_owned(), Some("529.982.247-25".to_owned())),
            ("birth_date".to_owned(), Some("1990-05-17".to_owned())),
            ("mother_name".to_owned(), Some("Maria da Silva".to_owned())),
            ("is_active".to_owned(), Some("true".to_owned())),
            ("last_login".to_owned(), Some("2026-11-29 15:00:00+00".to_owned())),
            (
                "profile".to_owned(),
                Some(
                    r#"{"cpf": 52998224725, "data_de_nascimento": "1990-05-17", "nome_mae": "Maria da Silva"}"#
                        .to_owned(),
                ),
            ),
            ("telefone".to_owned(), Some("12345678901".to_owned())),
            ("data_nascimento_titular".to_owned(), Some("1990-05-17".to_owned())),
            ("cpf_responsavel".to_owned(), Some("000.000.000-00".to_owned())),
            ("extra".to_owned(), Some("{'cpf': '52998224725'}".to_owned())),
        ];
        let page = render(&record("host_users", &columns, "/auth/logout/", "t"));
        for full in ["52998224725", "529.982.247-25", "1990-05-17", "Maria da Silva"] {
            assert!(!page.contains(full), "{full} in {page}");
        }
        assert!(page.contains("<th scope=\"row\">Usuário</th><td>529.***.***-25</td>"), "{page}");
        assert!(page.contains("<th scope=\"row\">CPF</th><td>529.***.***-25</td>"), "{page}");
        assert!(page.contains("<th scope=\"row\">Data de nascimento</th><td>**/**/1990</td>"), "{page}");
        assert!(page.contains("<th scope=\"row\">Nome da mãe</th><td>M. d. S.</td>"), "{page}");
        assert!(page.contains("<th scope=\"row\">Conta ativa</th><td>sim</td>"), "{page}");
        assert!(page.contains("<td>29/11/2026 12:00 (horário de Brasília)</td>"), "{page}");
        assert!(page.contains("<th scope=\"row\">telefone</th><td>12345678901</td>"), "not a CPF: as it is");
        assert!(page.contains("<th scope=\"row\">data_nascimento_titular</th><td>**/**/1990</td>"), "by its name");
        assert!(page.contains("<th scope=\"row\">cpf_responsavel</th><td>***</td>"), "an invalid CPF is hidden");
        assert!(page.contains("(conteúdo que não pôde ser lido)"), "unreadable JSON is not shown raw");
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
    fn a_login_error_links_to_try_again_unless_that_cannot_help() {
        let page = render(&error("Acesso negado", "motivo", "dica", None));
        assert!(!page.contains("Tentar novamente"), "{page}");
        let page = render(&error("Acesso negado", "motivo", "dica", Some("/auth/login/")));
        assert!(page.contains("<p class=\"message\" role=\"alert\">motivo</p>"), "{page}");
        assert!(page.contains("<a class=\"button\" href=\"/auth/login/\">Tentar novamente</a>"), "{page}");
    }
}
