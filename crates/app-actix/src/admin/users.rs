//! Accounts in the panel: the search (`/admin/usuarios/?q=…&pagina=N`) and
//! one account's page (`/admin/usuarios/{id}/`) with its actions.
//!
//! | path | GET | POST (`acao`) |
//! |---|---|---|
//! | `/admin/usuarios/` | search form and results, 20 a page | — |
//! | `/admin/usuarios/{id}/` | the account, its authorized applications and last logins | `desativar`, `reativar`, `remover-validacao`, `liberar-login`, `encerrar-sessoes`, `remover-segundo-fator`, `equipe-sim`, `equipe-nao`, `reenviar-confirmacao`: 303 back with a notice; `senha-temporaria`: 200, the password shown once |
//!
//! An id that is not a number or names no account is the 404 page; an
//! unknown `acao` the 400 page; a rule the action breaks (deactivating
//! oneself) the 409 page.

// A page's early answer is the `Err` of the helpers (see the parent).
#![allow(clippy::result_large_err)]

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, Resource};
use askama::Template;
use credencial_application::admin::accounts::masked;
use credencial_application::admin::AccountView;
use credencial_application::{AccountAdminService, ServiceError, StaffService};
use credencial_domain::admin::accounts::ACCOUNT_PAGE_SIZE;
use credencial_domain::admin::AccountQuery;
use credencial_domain::UserId;
use secrecy::ExposeSecret;

use super::{filter_query, refused, staff_post, staff_signed_in};
use crate::account::{form_refused, see_other};
use crate::confirmation::Words;
use crate::form::FormFields;
use crate::html::Frame;
use crate::html::{self, Site, PROVIDER};
use crate::routes::{self, resource};

/// The search's path.
pub const USERS_PATH: &str = "/admin/usuarios/";

/// Registers both pages; `with_data` gives them the panel's application
/// data.
pub fn register(config: &mut actix_web::dev::AppService, with_data: impl Fn(Resource) -> Resource) {
    use actix_web::dev::HttpServiceFactory;
    with_data(resource(USERS_PATH, "GET")).route(routes::get().to(search)).register(config);
    with_data(resource(&format!("{USERS_PATH}{{id}}/"), "GET, POST"))
        .route(routes::get().to(show))
        .route(web::post().to(act))
        .register(config);
}

/// One account of the results.
#[derive(Debug)]
pub struct Row {
    /// The account's id (its page's path).
    pub id: i64,
    /// The username.
    pub username: String,
    /// The name.
    pub name: String,
    /// The CPF, masked (`—` when none).
    pub cpf: String,
    /// The e-mail address.
    pub email: String,
    /// Whether it may log in.
    pub active: bool,
    /// Whether it is staff.
    pub staff: bool,
}

/// The search page (`templates/admin/users.html`).
#[derive(Debug, Template)]
#[template(path = "admin/users.html")]
pub struct UsersPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The search text, as typed.
    pub query: &'a str,
    /// The accounts of this page.
    pub rows: Vec<Row>,
    /// How many accounts the search selects ("12 contas", "mais de 1.000
    /// contas").
    pub tally: String,
    /// Whether this page continues the list (it is not the first).
    pub continued: bool,
    /// The query string of the search, for the first page's link.
    pub query_string: String,
    /// The query string of the next page, if there is one.
    pub next_query: Option<String>,
}

/// One authorized application of the account page.
#[derive(Debug)]
pub struct AppRow {
    /// The client id.
    pub client_id: String,
    /// The client's name.
    pub name: String,
    /// The granted scopes, by name.
    pub scopes: String,
    /// First granted (Brasília time).
    pub first_granted: String,
    /// Last used (Brasília time).
    pub last_used: String,
}

/// One account's page (`templates/admin/user.html`).
#[derive(Debug, Template)]
#[template(path = "admin/user.html")]
pub struct UserPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// A success to announce, if any.
    pub notice: Option<&'a str>,
    /// Where the actions post.
    pub action: String,
    /// The session's form token.
    pub csrf_token: &'a str,
    /// The username.
    pub username: &'a str,
    /// The username as a query value (the audit link).
    pub username_query: String,
    /// The name.
    pub name: &'a str,
    /// The e-mail address.
    pub email: &'a str,
    /// Whether the address is confirmed (`None`: the service sends no mail).
    pub email_confirmed: Option<bool>,
    /// The CPF, masked.
    pub cpf: Option<&'a str>,
    /// Whether it may log in.
    pub active: bool,
    /// Whether it is validated through the tax id.
    pub validated: bool,
    /// Whether it is staff.
    pub staff: bool,
    /// Whether its password is a temporary one.
    pub must_change_password: bool,
    /// Whether it has a second factor.
    pub second_factor: bool,
    /// When it was created (Brasília time).
    pub created: String,
    /// Its authorized applications.
    pub apps: Vec<AppRow>,
    /// Its last logins: when (Brasília time) and where.
    pub logins: Vec<(String, &'static str)>,
}

/// The page that shows a temporary password once
/// (`templates/admin/temporary_password.html`).
#[derive(Template)]
#[template(path = "admin/temporary_password.html")]
pub struct TemporaryPasswordPage<'a> {
    /// Who the page speaks for.
    pub site: &'static Site,
    /// The page title.
    pub title: &'a str,
    /// The panel frame.
    pub frame: Frame,
    /// The account's username.
    pub username: &'a str,
    /// The password.
    pub password: &'a str,
    /// How many refresh tokens were revoked.
    pub revoked: u64,
    /// The account's page.
    pub back: &'a str,
}

impl TemporaryPasswordPage<'_> {
    /// What the reset did to the open sessions, in a correct plural.
    pub fn revoked_words(&self) -> String {
        match self.revoked {
            0 => "Não havia sessões abertas com a senha anterior.".to_owned(),
            1 => "1 token de renovação revogado: a sessão aberta com a senha anterior foi encerrada.".to_owned(),
            n => format!(
                "{} tokens de renovação revogados: as sessões abertas com a senha anterior foram encerradas.",
                credencial_domain::admin::page::thousands(n)
            ),
        }
    }
}

/// `GET /admin/usuarios/?q=…&depois=<place>` (a page by key: the accounts
/// after that place — a username, or for a text search the matching term
/// and the account's id, `term~id`).
async fn search(
    req: HttpRequest,
    staff: web::Data<StaffService>,
    accounts: web::Data<AccountAdminService>,
) -> HttpResponse {
    or_answer!(staff_signed_in(&req, &staff).await);
    let fields = or_answer!(filter_query(&req));
    let query = AccountQuery::parse(fields.get("q").ok().flatten().unwrap_or(""));
    // Any text is a place in the list (the accounts after it), never an error.
    let after = fields.get("depois").ok().flatten().filter(|a| !a.is_empty());
    let found = match accounts.search(&query, after, ACCOUNT_PAGE_SIZE).await {
        Ok(found) => found,
        Err(e) => return html::failure_page(e),
    };
    let rows = found
        .accounts
        .into_iter()
        .map(|a| Row {
            id: a.id.0,
            cpf: masked(a.cpf.as_deref()).unwrap_or_else(|| "—".into()),
            username: a.username,
            name: a.name,
            email: a.email,
            active: a.is_active,
            staff: a.is_staff,
        })
        .collect();
    let page = UsersPage {
        site: &PROVIDER,
        title: "Usuários",
        frame: Frame::admin(USERS_PATH),
        query: query.text(),
        rows,
        tally: found.tally.describe("conta", "contas"),
        continued: after.is_some(),
        query_string: serde_urlencoded::to_string([("q", query.text())]).unwrap_or_default(),
        next_query: found.next.map(|last| {
            serde_urlencoded::to_string([("q", query.text()), ("depois", last.as_str())]).unwrap_or_default()
        }),
    };
    html::html(html::response(StatusCode::OK), &page)
}

/// `GET /admin/usuarios/{id}/` (`?feito=<acao>` after an action).
async fn show(
    req: HttpRequest,
    staff: web::Data<StaffService>,
    accounts: web::Data<AccountAdminService>,
) -> HttpResponse {
    let (session, _) = or_answer!(staff_signed_in(&req, &staff).await);
    let id = or_answer!(account_id(&req));
    let view = match accounts.view(id).await {
        Ok(view) => view,
        Err(e) => return failure(e),
    };
    let query = FormFields::parse(req.query_string().as_bytes()).unwrap_or_default();
    let notice = query.get("feito").ok().flatten().and_then(Action::parse).map(Action::done);
    let token = session.account_form_token();
    let confirmed = crate::account::email::confirmed(&req, id).await;
    account_page(&view, &token, notice, confirmed)
}

/// `POST /admin/usuarios/{id}/`: one action (`acao`).
async fn act(
    req: HttpRequest,
    payload: web::Payload,
    staff: web::Data<StaffService>,
    accounts: web::Data<AccountAdminService>,
) -> HttpResponse {
    let (_, actor, fields) = or_answer!(staff_post(&req, payload, &staff).await);
    let id = or_answer!(account_id(&req));
    let action = match fields.get("acao") {
        Ok(Some(raw)) => match Action::parse(raw) {
            Some(action) => action,
            None => return refused(StatusCode::BAD_REQUEST, "A ação pedida não existe."),
        },
        Ok(None) => return refused(StatusCode::BAD_REQUEST, "Informe a ação (acao)."),
        Err(e) => return form_refused(e),
    };
    if let Some(asked) = action.asked() {
        if !crate::confirmation::given(&fields) {
            let account = match accounts.find(id).await {
                Ok(account) => account,
                Err(e) => return failure(e),
            };
            let who = match account.name.trim() {
                "" => account.username.clone(),
                name => format!("{name} ({})", account.username),
            };
            let back = format!("{USERS_PATH}{}/", id.0);
            return crate::confirmation::page(&req, &fields, asked.about(&who, &back, Frame::admin(USERS_PATH)));
        }
    }
    let done = match action {
        Action::Deactivate => accounts.set_active(&actor, id, false).await.map(drop),
        Action::Reactivate => accounts.set_active(&actor, id, true).await.map(drop),
        Action::ClearValidation => accounts.clear_validation(&actor, id).await,
        Action::LiftThrottle => accounts.lift_throttle(&actor, id).await.map(drop),
        Action::EndSessions => accounts.end_sessions(&actor, id).await.map(drop),
        Action::ResetSecondFactor => accounts.reset_second_factors(&actor, id).await.map(drop),
        Action::StaffOn => accounts.set_staff(&actor, id, true).await,
        Action::StaffOff => accounts.set_staff(&actor, id, false).await,
        Action::ResendConfirmation => resend_confirmation(&req, &staff, &actor, id, &accounts).await,
        Action::TemporaryPassword => {
            return match accounts.temporary_password(&actor, id).await {
                Ok(set) => {
                    let back = format!("{USERS_PATH}{}/", id.0);
                    let page = TemporaryPasswordPage {
                        site: &PROVIDER,
                        title: "Senha temporária",
                        frame: Frame::admin(USERS_PATH),
                        username: &set.username,
                        password: set.password.expose_secret(),
                        revoked: set.revoked,
                        back: &back,
                    };
                    // Shown once: `no-store`, like every page (html::response).
                    html::html(html::response(StatusCode::OK), &page)
                }
                Err(e) => failure(e),
            };
        }
    };
    match done {
        Ok(()) => see_other(&format!("{USERS_PATH}{}/?feito={}", id.0, action.code())),
        Err(e) => failure(e),
    }
}

/// Sends `id` a new confirmation link (audited first). Errors: no mail
/// service (`Invalid`), an unknown account, storage.
async fn resend_confirmation(
    req: &HttpRequest,
    staff: &StaffService,
    actor: &credencial_domain::admin::Actor,
    id: credencial_domain::UserId,
    accounts: &AccountAdminService,
) -> Result<(), credencial_application::ServiceError> {
    use credencial_application::admin::audit_entry;
    use credencial_domain::admin::{AuditAction, AuditTarget};
    let Some(confirmations) = req.app_data::<web::Data<credencial_application::EmailConfirmationService>>() else {
        return Err(credencial_application::ServiceError::Invalid("o serviço não envia e-mails".into()));
    };
    let account = accounts.find(id).await?;
    staff.record(&audit_entry(actor, AuditAction::UserResendConfirmation, AuditTarget::User(account.username))).await?;
    confirmations.send(id).await?;
    Ok(())
}

/// What a staff user can do to an account, as the form names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Deactivate,
    Reactivate,
    ClearValidation,
    LiftThrottle,
    EndSessions,
    ResetSecondFactor,
    TemporaryPassword,
    StaffOn,
    StaffOff,
    ResendConfirmation,
}

impl Action {
    const ALL: [Action; 10] = [
        Self::Deactivate,
        Self::Reactivate,
        Self::ClearValidation,
        Self::LiftThrottle,
        Self::EndSessions,
        Self::ResetSecondFactor,
        Self::TemporaryPassword,
        Self::StaffOn,
        Self::StaffOff,
        Self::ResendConfirmation,
    ];

    fn code(self) -> &'static str {
        match self {
            Self::Deactivate => "desativar",
            Self::Reactivate => "reativar",
            Self::ClearValidation => "remover-validacao",
            Self::LiftThrottle => "liberar-login",
            Self::EndSessions => "encerrar-sessoes",
            Self::ResetSecondFactor => "remover-segundo-fator",
            Self::TemporaryPassword => "senha-temporaria",
            Self::StaffOn => "equipe-sim",
            Self::StaffOff => "equipe-nao",
            Self::ResendConfirmation => "reenviar-confirmacao",
        }
    }

    fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.code() == code)
    }

    /// What the confirmation step asks before the action (`{}`: the
    /// account's name and username); `None` for the one that changes
    /// nothing but sends a mail.
    fn asked(self) -> Option<Words> {
        let (question, consequence, button) = match self {
            Self::Deactivate => (
                "Desativar a conta de {}?",
                "Todas as sessões e tokens de renovação da conta são revogados, os tokens de acesso emitidos para ela \
                 passam a ser recusados, e a pessoa não consegue mais entrar até a conta ser reativada.",
                "Desativar a conta",
            ),
            Self::Reactivate => (
                "Reativar a conta de {}?",
                "A pessoa volta a poder entrar com a senha e os fatores que já tinha.",
                "Reativar a conta",
            ),
            Self::ClearValidation => (
                "Remover a validação do CPF de {}?",
                "Os dados da Receita Federal deixam de ser entregues aos aplicativos até a pessoa validar o CPF de novo.",
                "Remover a validação",
            ),
            Self::LiftThrottle => (
                "Liberar o login bloqueado de {}?",
                "As tentativas de senha erradas contadas para esta conta são esquecidas e a senha volta a ser aceita \
                 na hora.",
                "Liberar o login",
            ),
            Self::EndSessions => (
                "Encerrar todas as sessões de {}?",
                "A pessoa sai de todos os navegadores e precisa entrar de novo em cada um.",
                "Encerrar as sessões",
            ),
            Self::ResetSecondFactor => (
                "Remover o segundo fator de {}?",
                "O aplicativo autenticador, as chaves de acesso e os códigos de recuperação da conta são removidos e \
                 as sessões dela são encerradas: a pessoa passa a entrar só com a senha. Faça isso apenas depois de \
                 confirmar a identidade dela.",
                "Remover o segundo fator",
            ),
            Self::TemporaryPassword => (
                "Definir uma senha temporária para {}?",
                "A senha atual deixa de valer, as sessões e tokens de renovação da conta são revogados, e a nova \
                 senha aparece uma única vez, para você entregar à pessoa; ela deverá trocá-la ao entrar.",
                "Definir a senha temporária",
            ),
            Self::StaffOn => (
                "Dar a {} acesso à administração?",
                "A conta passa a ter acesso a este painel: ver e alterar contas de outras pessoas, aplicativos e a \
                 auditoria. Tudo o que ela fizer fica registrado na auditoria.",
                "Dar acesso à administração",
            ),
            Self::StaffOff => (
                "Retirar o acesso à administração de {}?",
                "A conta deixa de ter acesso a este painel; o resto dela não muda.",
                "Retirar o acesso",
            ),
            Self::ResendConfirmation => return None,
        };
        Some(Words { question, consequence, button })
    }

    /// What the account page announces after the action.
    fn done(self) -> &'static str {
        match self {
            Self::Deactivate => {
                "Conta desativada. As sessões e os tokens de renovação foram revogados; os tokens de acesso \
                 emitidos para ela são recusados."
            }
            Self::Reactivate => "Conta reativada: a pessoa pode entrar de novo.",
            Self::ClearValidation => "A validação do CPF foi removida.",
            Self::LiftThrottle => "O bloqueio de login desta conta foi removido.",
            Self::EndSessions => "Todas as sessões desta conta foram encerradas: a pessoa precisa entrar de novo.",
            Self::ResetSecondFactor => {
                "O segundo fator desta conta foi removido e as sessões dela foram encerradas: a pessoa entra só com a \
                 senha e pode ativar um novo aplicativo autenticador."
            }
            Self::TemporaryPassword => "Senha temporária definida.",
            Self::StaffOn => "A conta agora tem acesso à administração.",
            Self::StaffOff => "A conta não tem mais acesso à administração.",
            Self::ResendConfirmation => "Um novo link de confirmação foi enviado ao e-mail da conta.",
        }
    }
}

/// The `{id}` of the path: digits only, else the 404 page.
fn account_id(req: &HttpRequest) -> Result<UserId, HttpResponse> {
    req.match_info()
        .get("id")
        .filter(|id| !id.is_empty() && id.len() <= 18 && id.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|id| id.parse::<i64>().ok())
        .map(UserId)
        .ok_or_else(not_found)
}

fn not_found() -> HttpResponse {
    refused(StatusCode::NOT_FOUND, "Esta conta não existe.")
}

/// What the panel says when an action would leave no active staff account.
pub const LAST_STAFF: &str = "Esta é a última conta ativa da equipe: ela não pode perder o acesso à administração \
     nem ser desativada. Dê acesso à administração a outra conta primeiro.";

/// The page for a use case's failure: no such account (404), a rule the
/// action breaks (409: the last active staff account among them), storage
/// down (503) or a fault (500).
fn failure(e: ServiceError) -> HttpResponse {
    match e {
        ServiceError::UnknownUser => not_found(),
        ServiceError::Invalid(why) => refused(StatusCode::CONFLICT, &capitalized(&why)),
        ServiceError::LastStaff => refused(StatusCode::CONFLICT, LAST_STAFF),
        other => html::failure_page(other),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).chain(std::iter::once('.')).collect(),
        None => String::new(),
    }
}

fn account_page(
    view: &AccountView,
    csrf_token: &str,
    notice: Option<&str>,
    email_confirmed: Option<bool>,
) -> HttpResponse {
    let a = &view.account;
    let page = UserPage {
        site: &PROVIDER,
        title: &a.username,
        frame: Frame::admin(USERS_PATH),
        notice,
        action: format!("{USERS_PATH}{}/", a.id.0),
        csrf_token,
        username: &a.username,
        username_query: serde_urlencoded::to_string([("alvo", a.username.as_str())])
            .map(|q| q.trim_start_matches("alvo=").to_owned())
            .unwrap_or_default(),
        name: &a.name,
        email: &a.email,
        email_confirmed,
        cpf: view.masked_cpf.as_deref(),
        active: a.is_active,
        validated: a.tax_id_validated,
        staff: a.is_staff,
        must_change_password: a.must_change_password,
        second_factor: view.second_factor,
        created: html::brasilia_time(a.created_at),
        apps: view
            .grants
            .iter()
            .map(|g| AppRow {
                client_id: g.client_id.to_string(),
                name: g.client_name.clone(),
                scopes: g.scopes.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
                first_granted: html::brasilia_time(g.first_granted_at),
                last_used: html::brasilia_time(g.last_used_at),
            })
            .collect(),
        logins: view.logins.iter().map(|l| (html::brasilia_time(l.at), l.via.label())).collect(),
    };
    html::html(html::response(StatusCode::OK), &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_code_parses_back() {
        for action in Action::ALL {
            assert_eq!(Action::parse(action.code()), Some(action));
        }
        assert_eq!(Action::parse("apagar"), None);
    }

    #[test]
    fn a_rule_message_reads_as_a_sentence() {
        assert_eq!(capitalized("você não pode"), "Você não pode.");
    }

    #[test]
    fn the_last_staff_refusal_is_a_409_page_that_says_why() {
        let answer = failure(ServiceError::LastStaff);
        assert_eq!(answer.status(), StatusCode::CONFLICT);
        let body = actix_web::body::to_bytes(answer.into_body());
        let body = futures_util::FutureExt::now_or_never(body).expect("ready").expect("body");
        let text = String::from_utf8(body.to_vec()).expect("UTF-8");
        assert!(text.contains("Esta é a última conta ativa da equipe"), "{text}");
    }

    #[test]
    fn the_temporary_password_page_escapes_and_shows_the_password() {
        let page = TemporaryPasswordPage {
            site: &PROVIDER,
            title: "t",
            frame: Frame::admin(USERS_PATH),
            username: "<b>x</b>",
            password: "abcd-efgh-jkmn-pqrs",
            revoked: 2,
            back: "/admin/usuarios/1/",
        }
        .render()
        .expect("renders");
        assert!(page.contains("abcd-efgh-jkmn-pqrs") && !page.contains("<b>x</b>"), "{page}");
        assert!(page.contains("2 tokens de renovação revogados: as sessões abertas"), "{page}");
    }

    #[test]
    fn the_revoked_tokens_are_counted_in_a_correct_plural() {
        let words = |revoked| {
            TemporaryPasswordPage {
                site: &PROVIDER,
                title: "t",
                frame: Frame::admin(USERS_PATH),
                username: "u",
                password: "p",
                revoked,
                back: "/",
            }
            .revoked_words()
        };
        assert_eq!(words(0), "Não havia sessões abertas com a senha anterior.");
        assert!(words(1).starts_with("1 token de renovação revogado: a sessão"), "{}", words(1));
        assert!(words(1_234).starts_with("1.234 tokens de renovação revogados"), "{}", words(1_234));
    }
}
