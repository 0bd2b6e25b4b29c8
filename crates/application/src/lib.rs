//! Use cases of credencial. They hold no state of their own beyond
//! configuration: everything shared lives behind the ports.

pub mod account;
pub mod account_edit;
pub mod admin;
pub mod app_passwords;
pub mod backchannel_logout;
pub mod client_login;
pub mod credentials;
pub mod email_confirmation;
pub mod error;
pub mod federation;
pub mod grants;
pub mod hashing;
pub mod mail;
pub mod metrics;
pub mod oauth;
pub mod own_entries;
pub mod passkey;
pub mod password_reset;
pub mod profile;
pub mod purge;
pub mod request_context;
pub mod scope_cache;
pub mod second_factor;
pub mod security_log;
pub mod session;
pub mod signup;
pub mod tax_id_validation;
pub mod throttle;
pub mod tokens;

pub use account::{AccountOverview, AccountService};
pub use account_edit::{AccountEditService, DetailsOutcome, PasswordOutcome};
pub use admin::{
    AccountAdminService, ApiAccessChange, ApiCaller, ApiTokenService, AuditPage, ClientAdminService, NewAccount,
    PreRegistrationOutcome, StaffService, UserDirectoryService,
};
pub use app_passwords::{AppPasswordService, Creation};
pub use client_login::{
    CallbackResult, ClientLoginConfig, ClientLoginError, ClientLoginService, HostLogin, LoginStart, PendingLogin,
    SealedValue,
};
pub use credentials::{AuthenticatedUser, CredentialCheck};
pub use email_confirmation::EmailConfirmationService;
pub use error::ServiceError;
pub use federation::{
    ConfirmedLink, FederatedLogin, FederationFailure, FederationPorts, FederationService, LinkNotice, StartedLogin,
    UpstreamProvider,
};
pub use grants::{AccessReport, GrantService};
pub use hashing::{HashSlot, PasswordHasher};
pub use mail::{MailContent, MailRenderer, MailSender, SendRound};
pub use metrics::Metrics;
pub use oauth::{AuthorizationStep, ConsentPrompt, LogoutStep, OAuthService, OAuthTokens, TokenRequest};
pub use own_entries::{EntrySave, OwnEntryService};
pub use passkey::{PasskeyLogin, PasskeyService, PasskeyView, StartedCeremony};
pub use password_reset::{LinkProblem, PasswordResetPorts, PasswordResetService, ResetOutcome, UsableLink};
pub use profile::{ProfileService, Registries};
pub use purge::Purge;
pub use request_context::RequestId;
pub use scope_cache::{ScopeCache, ScopeTtls};
pub use second_factor::{FactorState, SecondFactorService, TotpEnrolment};
pub use security_log::SecurityLog;
pub use session::{LoginSession, Origin, SessionList, SessionService, SignedSession};
pub use signup::{SignupOutcome, SignupService};
pub use tax_id_validation::{TaxIdValidationService, ValidationOutcome, ValidationState};
pub use throttle::LoginThrottle;
pub use tokens::{
    Audience, IssuedPair, Recording, RefreshedPair, TokenIssuer, TokenPair, TokenService, TokenServiceConfig,
};
