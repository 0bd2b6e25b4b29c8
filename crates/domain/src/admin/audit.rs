//! The audit trail's entries: who changed what, when, in which request.
//!
//! An entry names its actor (a staff user of the panel, an operator at the
//! CLI, or a host application of the user-management API), its action, its
//! target and the fields the action changed with their new values. Never a
//! secret or a password: an action that sets one records that it was set
//! (the field's value is a fixed word), and a CPF is recorded masked.

use crate::oauth::ClientId;
use crate::user::UserId;

/// Who did something the audit trail records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// A staff user, through the administration panel.
    Staff {
        /// The staff user's id.
        id: UserId,
        /// The staff user's username.
        username: String,
    },
    /// An operator at the command line, as the operating system named them
    /// (`$USER`; `"?"` when unknown).
    Cli {
        /// The operating-system user.
        os_user: String,
    },
    /// A host application, through the user-management API.
    Application(ClientId),
}

impl Actor {
    /// The kind as stored: `staff`, `cli` or `application`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Staff { .. } => "staff",
            Self::Cli { .. } => "cli",
            Self::Application(_) => "application",
        }
    }

    /// The actor's name as stored and filtered on: the staff user's
    /// username, the operating-system user, or the client id.
    pub fn name(&self) -> &str {
        match self {
            Self::Staff { username, .. } => username,
            Self::Cli { os_user } => os_user,
            Self::Application(client) => client.as_str(),
        }
    }

    /// The staff user's id, for a staff actor.
    pub fn user_id(&self) -> Option<UserId> {
        match self {
            Self::Staff { id, .. } => Some(*id),
            _ => None,
        }
    }
}

/// What an audited action was done to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    /// A registered application, by client id.
    Client(ClientId),
    /// An account, by username.
    User(String),
    /// Nothing in particular (a list read of the user-management API).
    None,
}

impl AuditTarget {
    /// The kind as stored: `client`, `user` or `none`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Client(_) => "client",
            Self::User(_) => "user",
            Self::None => "none",
        }
    }

    /// The target's name as stored and filtered on (`""` for none).
    pub fn name(&self) -> &str {
        match self {
            Self::Client(client) => client.as_str(),
            Self::User(username) => username,
            Self::None => "",
        }
    }
}

macro_rules! audit_actions {
    ($($variant:ident => $code:literal, $label:literal;)*) => {
        /// Every action the audit trail records. The code is what is
        /// stored (stable across releases); the label is what the panel
        /// shows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum AuditAction {
            $(
                #[doc = $label]
                $variant,
            )*
        }

        impl AuditAction {
            /// Every action, in the order the panel's filter lists them.
            pub const ALL: &'static [AuditAction] = &[$(AuditAction::$variant),*];

            /// The stored code, e.g. `client.deactivate`.
            pub fn code(self) -> &'static str {
                match self {
                    $(Self::$variant => $code,)*
                }
            }

            /// What the panel shows (Portuguese).
            pub fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => $label,)*
                }
            }

            /// The action stored as `code`; `None` for a code this release
            /// does not know (a newer release wrote it).
            pub fn from_code(code: &str) -> Option<Self> {
                match code {
                    $($code => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

audit_actions! {
    ClientCreate => "client.create", "Aplicação criada";
    ClientUpdate => "client.update", "Aplicação alterada";
    ClientScopes => "client.scopes", "Escopos da aplicação alterados";
    ClientSecretRotate => "client.rotate_secret", "Segredo da aplicação trocado";
    ClientDeactivate => "client.deactivate", "Aplicação desativada";
    ClientReactivate => "client.reactivate", "Aplicação reativada";
    ClientApiToken => "client.api_token", "Token da API de usuários emitido";
    ClientApiAccess => "client.api_access", "Acesso da aplicação à API alterado";
    UserCreate => "user.create", "Conta criada";
    UserStaff => "user.staff", "Acesso à administração alterado";
    UserDeactivate => "user.deactivate", "Conta desativada";
    UserReactivate => "user.reactivate", "Conta reativada";
    UserPassword => "user.set_password", "Senha definida";
    UserTemporaryPassword => "user.temporary_password", "Senha temporária definida";
    UserClearValidation => "user.clear_validation", "Validação do CPF removida";
    UserLiftThrottle => "user.lift_throttle", "Bloqueio de login removido";
    UserEndSessions => "user.end_sessions", "Sessões encerradas";
    UserResetSecondFactor => "user.reset_second_factor", "Segundo fator removido";
    UserResendConfirmation => "user.resend_confirmation", "Link de confirmação do e-mail reenviado";
    ApiUserRead => "api.user_read", "API: usuário consultado";
    ApiUserList => "api.user_list", "API: lista de usuários consultada";
    ApiUserCreate => "api.user_create", "API: usuário pré-cadastrado";
    ApiUserExisting => "api.user_existing", "API: cadastro de usuário já existente";
    ApiRefused => "api.refused", "API: chamada recusada por falta de permissão";
    MailRetry => "mail.retry", "E-mail com falha posto de novo na fila";
}

/// The value recorded for a field that holds a secret or a password: the
/// trail says it was set, never what it is.
pub const SECRET_SET: &str = "[definido]";

/// An entry to append to the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuditEntry {
    /// Who.
    pub actor: Actor,
    /// What.
    pub action: AuditAction,
    /// To what.
    pub target: AuditTarget,
    /// The changed fields and their new values, in order (never a secret
    /// or a password: see [`SECRET_SET`]; a CPF masked).
    pub changes: Vec<(String, String)>,
    /// The id of the HTTP request that made the change (none at the CLI).
    pub request_id: Option<String>,
}

impl NewAuditEntry {
    /// An entry with no changed field.
    pub fn new(actor: Actor, action: AuditAction, target: AuditTarget) -> Self {
        Self { actor, action, target, changes: Vec::new(), request_id: None }
    }

    /// This entry with one more changed field.
    #[must_use]
    pub fn with(mut self, field: &str, value: impl Into<String>) -> Self {
        self.changes.push((field.to_owned(), value.into()));
        self
    }

    /// This entry with the request id `id`.
    #[must_use]
    pub fn in_request(mut self, id: Option<String>) -> Self {
        self.request_id = id;
        self
    }
}

/// One entry as the audit page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Position in the trail (increasing).
    pub id: i64,
    /// When (Unix seconds).
    pub at: i64,
    /// The actor's kind as stored (`staff`, `cli`, `application`).
    pub actor_kind: String,
    /// The actor's name.
    pub actor: String,
    /// The action's stored code.
    pub action: String,
    /// The target's kind as stored (`client`, `user`, `none`).
    pub target_kind: String,
    /// The target's name.
    pub target: String,
    /// The changed fields and their new values.
    pub changes: Vec<(String, String)>,
    /// The request id, if the change came over HTTP.
    pub request_id: Option<String>,
}

impl AuditEntry {
    /// The action's label, or its code when this release does not know it.
    pub fn action_label(&self) -> &str {
        match AuditAction::from_code(&self.action) {
            Some(action) => action.label(),
            None => &self.action,
        }
    }

    /// The changed fields as the panel shows them: each field's Portuguese
    /// label (its code when this release does not know it) and its value,
    /// with `true`/`false` as "sim"/"não" and an empty value as "—".
    pub fn change_labels(&self) -> Vec<(&str, &str)> {
        self.changes
            .iter()
            .map(|(field, value)| {
                let value = match value.as_str() {
                    "true" => "sim",
                    "false" => "não",
                    "" => "—",
                    other => other,
                };
                (field_label(field).unwrap_or(field), value)
            })
            .collect()
    }

    /// The actor's kind in Portuguese.
    pub fn actor_kind_label(&self) -> &str {
        match self.actor_kind.as_str() {
            "staff" => "equipe",
            "cli" => "linha de comando",
            "application" => "aplicação",
            other => other,
        }
    }
}

/// The Portuguese label of an audited field.
fn field_label(field: &str) -> Option<&'static str> {
    Some(match field {
        "name" | "nome" => "Nome",
        "email" => "E-mail",
        "cpf" => "CPF",
        "cpfs" => "CPFs",
        "data_de_nascimento" => "Data de nascimento",
        "genero" => "Gênero",
        "is_active" => "Ativa",
        "is_staff" => "Equipe",
        "password" => "Senha",
        "must_change_password" => "Troca de senha obrigatória",
        "receita_validated" => "Cadastro validado na Receita Federal",
        "confidential" => "Confidencial",
        "secret" => "Segredo",
        "redirect_uris" => "Endereços de retorno",
        "post_logout_redirect_uris" => "Endereços de retorno após sair",
        "enabled_scopes" => "Escopos habilitados",
        "require_pkce" => "PKCE exigido",
        "requires_second_factor" => "Verificação em duas etapas exigida",
        "minimum_govbr_level" => "Nível mínimo da conta gov.br",
        "api_permissions" => "Permissões da API",
        "api_token" => "Token da API",
        "permission" => "Permissão",
        "chave" => "Chave",
        "pagina" => "Página",
        "encontrado" => "Encontrado",
        "encontrados" => "Encontrados",
        "mensagem" => "Mensagem",
        _ => return None,
    })
}

/// Which entries the audit page lists: every one, or those of one actor
/// and/or one target (names matched exactly, ignoring case).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// The actor's name (username, OS user or client id).
    pub actor: Option<String>,
    /// The target's name (client id or username).
    pub target: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_shown_with_portuguese_labels_and_values() {
        let entry = AuditEntry {
            id: 1,
            at: 0,
            actor_kind: "staff".into(),
            actor: "admin".into(),
            action: "user.update".into(),
            target_kind: "user".into(),
            target: "bruno".into(),
            changes: vec![
                ("is_active".into(), "false".into()),
                ("enabled_scopes".into(), "cnes cursos_cdp".into()),
                ("cpf".into(), String::new()),
                ("something_new".into(), "true".into()),
            ],
            request_id: None,
        };
        assert_eq!(
            entry.change_labels(),
            vec![("Ativa", "não"), ("Escopos habilitados", "cnes cursos_cdp"), ("CPF", "—"), ("something_new", "sim"),]
        );
    }

    #[test]
    fn action_codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::from_code(action.code()), Some(*action));
            assert!(seen.insert(action.code()), "{} twice", action.code());
        }
        assert_eq!(AuditAction::from_code("client.explode"), None);
    }

    #[test]
    fn an_unknown_code_is_shown_as_stored() {
        let entry = AuditEntry {
            id: 1,
            at: 0,
            actor_kind: "robot".into(),
            actor: "r2".into(),
            action: "client.explode".into(),
            target_kind: "none".into(),
            target: String::new(),
            changes: vec![],
            request_id: None,
        };
        assert_eq!(entry.action_label(), "client.explode");
        assert_eq!(entry.actor_kind_label(), "robot");
    }

    #[test]
    fn actors_and_targets_are_stored_by_kind_and_name() {
        let client = ClientId::parse("demo-host").expect("valid");
        let app = Actor::Application(client.clone());
        assert_eq!((app.kind(), app.name(), app.user_id()), ("application", "demo-host", None));
        let staff = Actor::Staff { id: UserId(7), username: "admin".into() };
        assert_eq!((staff.kind(), staff.name(), staff.user_id()), ("staff", "admin", Some(UserId(7))));
        assert_eq!(AuditTarget::Client(client).name(), "demo-host");
        assert_eq!(AuditTarget::None.kind(), "none");
    }

    #[test]
    fn changes_keep_their_order() {
        let entry =
            NewAuditEntry::new(Actor::Cli { os_user: "root".into() }, AuditAction::ClientUpdate, AuditTarget::None)
                .with("name", "Portal")
                .with("secret", SECRET_SET);
        assert_eq!(entry.changes, vec![("name".into(), "Portal".into()), ("secret".into(), SECRET_SET.into())]);
    }
}
