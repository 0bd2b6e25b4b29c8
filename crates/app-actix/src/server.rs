//! The whole HTTP service, as the binary runs it.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{web, App, HttpServer};
use credencial_application::{
    AccountAdminService, AccountEditService, AccountService, ApiTokenService, ClientAdminService, ClientLoginService,
    EmailConfirmationService, FederationService, GrantService, MailSender, OAuthService, OwnEntryService,
    PasswordResetService, ProfileService, SecondFactorService, SessionService, SignupService, StaffService,
    TaxIdValidationService, TokenService, UserDirectoryService,
};
use credencial_ports::ReadinessProbe;

use crate::telemetry::RequestLog;

use crate::account::email::EmailPages;
use crate::account::recovery::RecoveryPages;
use crate::account::{AccountApi, AccountServices, AccountSettings};
use crate::admin::{AdminApi, AdminServices};
use crate::client_address::ClientAddressSource;
use crate::client_login::ClientLoginApi;
use crate::cookies::CookiePolicy;
use crate::health;
use crate::jwt::JwtApi;
use crate::metrics::MetricsExporter;
use crate::oauth::OAuthApi;
use crate::routes::{self, not_found, resource};
use crate::{openapi, profile, sandbox, sandbox_mail, sandbox_registries, user_directory};

/// What the HTTP layer needs to know from the configuration.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Prefix of the JWT sub-application (default `/api/token/`); `None`
    /// leaves it out.
    pub token_prefix: Option<String>,
    /// Serve the demo's stand-ins for the user-data resource and the registries.
    pub sandbox: bool,
    /// The demo's sandbox mailbox, shown at `/_sandbox/email/`.
    pub sandbox_mailbox: Option<crate::sandbox_mail::SandboxMailbox>,
    /// Serve `POST /_noop/`, the benchmark's baseline.
    pub noop_route: bool,
    /// Number of request workers (default: actix's, one per core).
    pub workers: Option<usize>,
    /// `Secure` attribute of the provider's cookies (`None`: when the request
    /// came over https).
    pub cookie_secure: Option<bool>,
    /// Where the brute-force limits read the client address from.
    pub client_address: ClientAddressSource,
    /// On a graceful stop, how long in-flight requests may take to finish
    /// before their connections are closed.
    pub shutdown_timeout_secs: u64,
    /// The account pages' settings (`/conta/`).
    pub account: AccountSettings,
    /// What the panel asks of staff (a second factor).
    pub staff: crate::admin::StaffPolicy,
    /// The metrics, when on: every request is recorded in the HTTP series.
    pub metrics: Option<MetricsExporter>,
    /// Serve `GET /metrics` on this server (the `metrics_enabled` setting
    /// without `metrics_bind`); needs `metrics`.
    pub metrics_route: bool,
    /// Who writes the request lines (the service's log output, in its
    /// format); `None`: they are tracing events like every other line.
    pub request_lines: Option<std::sync::Arc<dyn crate::telemetry::RequestLineWriter>>,
    /// What the privacy notice says of the retention.
    pub privacy: crate::public_pages::PrivacyFacts,
    /// The institution's identity on every page.
    pub branding: Arc<crate::branding::Branding>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            token_prefix: Some(crate::jwt::DEFAULT_PREFIX.to_owned()),
            sandbox: false,
            sandbox_mailbox: None,
            noop_route: false,
            workers: None,
            cookie_secure: None,
            client_address: ClientAddressSource::default(),
            shutdown_timeout_secs: DEFAULT_SHUTDOWN_TIMEOUT_SECS,
            account: AccountSettings::default(),
            staff: crate::admin::StaffPolicy::default(),
            metrics: None,
            metrics_route: false,
            request_lines: None,
            privacy: crate::public_pages::PrivacyFacts::default(),
            branding: Arc::default(),
        }
    }
}

/// Default of [`HttpSettings::shutdown_timeout_secs`] (actix-web's own).
pub const DEFAULT_SHUTDOWN_TIMEOUT_SECS: u64 = 30;

/// The use cases the server serves.
#[derive(Clone)]
pub struct Services {
    /// The token service (always served).
    pub tokens: Arc<TokenService>,
    /// The profile service (`POST /api/perfil/dados/`).
    pub profiles: Arc<ProfileService>,
    /// The OAuth2 provider (`/oauth/authorize/`, `/oauth/token/`).
    pub oauth: Arc<OAuthService>,
    /// Browser sessions (the login forms, the session cookie).
    pub sessions: Arc<SessionService>,
    /// Second factors (none without `second_factor_key_file` in `serve`).
    pub factors: Option<Arc<SecondFactorService>>,
    /// The person's own account (`/conta/`).
    pub accounts: Arc<AccountService>,
    /// The person's experiences and degrees (`/conta/experiencias/`,
    /// `/conta/formacoes/`).
    pub own_entries: Arc<OwnEntryService>,
    /// The tax-id validation (`/conta/validacao/`).
    pub tax_id_validation: Arc<TaxIdValidationService>,
    /// The person's authorized applications and access report (the
    /// `/conta/` pages; application data of every route).
    pub grants: Arc<GrantService>,
    /// Sign-up (`/conta/cadastro/`).
    pub signup: Arc<SignupService>,
    /// The account's details form and password page.
    pub account_edits: Arc<AccountEditService>,
    /// The client component (`/auth/login/`, `/auth/callback/`,
    /// `/auth/logout/`, `/auth/me/`), when enabled.
    pub client_login: Option<Arc<ClientLoginService>>,
    /// Staff membership and the audit trail (`/admin/`).
    pub staff: Arc<StaffService>,
    /// The registered applications (`/admin/aplicativos/`).
    pub clients: Arc<ClientAdminService>,
    /// Account administration (`/admin/usuarios/`).
    pub account_admin: Arc<AccountAdminService>,
    /// The user-management API (`/usuarios/`).
    pub user_directory: Arc<UserDirectoryService>,
    /// The user-management API's tokens (`/admin/aplicativos/{id}/api/`).
    pub api_tokens: Arc<ApiTokenService>,
    /// Logins through upstream identity providers ("Entrar com gov.br"),
    /// when any is configured.
    pub federation: Option<Arc<FederationService>>,
    /// Whether the database answers (`/readyz`).
    pub readiness: Arc<dyn ReadinessProbe>,
    /// "Esqueci minha senha" (`/conta/recuperar/`), when the service can
    /// send mail.
    pub password_resets: Option<Arc<PasswordResetService>>,
    /// The outbox as staff see it (`/admin/emails/`), when the service
    /// can send mail.
    pub mail: Option<Arc<MailSender>>,
    /// Address confirmation (`/conta/email/…`), when the service can send
    /// mail.
    pub email_confirmations: Option<Arc<EmailConfirmationService>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("tokens", &self.tokens)
            .field("profiles", &self.profiles)
            .field("oauth", &self.oauth)
            .field("grants", &self.grants)
            .field("client_login", &self.client_login)
            .finish_non_exhaustive()
    }
}

/// A running server on `listener` (bind port 0 to get a free port).
///
/// It does not listen to signals: the caller stops it through its handle
/// (`Server::handle().stop(true)`), which stops accepting connections and
/// gives in-flight requests `shutdown_timeout_secs` to finish. Every
/// response carries the request's id in `X-Request-Id`.
pub fn build_server(listener: TcpListener, services: Services, settings: HttpSettings) -> std::io::Result<Server> {
    let service = services.tokens;
    let data = web::Data::from(Arc::clone(&service));
    let profiles = web::Data::from(services.profiles);
    let oauth = web::Data::from(services.oauth);
    let sessions = web::Data::from(services.sessions);
    let factors = services.factors.map(web::Data::from);
    let account_services = AccountServices {
        sessions: sessions.clone(),
        accounts: web::Data::from(services.accounts),
        signup: web::Data::from(services.signup),
        edits: web::Data::from(services.account_edits),
        entries: web::Data::from(services.own_entries),
        validation: web::Data::from(services.tax_id_validation),
        factors: factors.clone(),
    };
    let admin_services = AdminServices {
        sessions: sessions.clone(),
        staff: web::Data::from(services.staff),
        clients: web::Data::from(services.clients),
        accounts: web::Data::from(services.account_admin),
        api_tokens: web::Data::from(services.api_tokens),
        factors: factors.clone(),
    };
    let user_directory = web::Data::from(services.user_directory);
    let grants = web::Data::from(services.grants);
    let cookies = CookiePolicy { secure: settings.cookie_secure };
    let client_login = services.client_login;
    let client_address = web::Data::new(settings.client_address.clone());
    let readiness = web::Data::from(services.readiness);
    let password_resets = services.password_resets.map(web::Data::from);
    let mail = services.mail.map(web::Data::from);
    let email_confirmations = services.email_confirmations.map(web::Data::from);
    let federation = services.federation.map(web::Data::from);
    let request_log = match &settings.metrics {
        Some(exporter) => RequestLog::with_metrics(exporter.metrics().clone()),
        None => RequestLog::default(),
    }
    .writing_lines_with(settings.request_lines.clone());
    let govbr_sandbox = match settings.sandbox {
        true => Some(Arc::new(crate::sandbox_govbr::GovBrSandbox::new().map_err(std::io::Error::other)?)),
        false => None,
    };
    let s = settings.clone();
    let token_prefix = crate::error_pages::TokenPrefix(settings.token_prefix.clone());
    let key_set = crate::keys::key_set(service.issuer());
    let mut server = HttpServer::new(move || {
        let mut app = App::new()
            // Errors of the pages as HTML for browsers (inside the log, which
            // counts the status either way).
            .wrap(crate::error_pages::HtmlErrors)
            // The institution's identity for every page, error pages included.
            .wrap(crate::branding::PageContext(Arc::clone(&s.branding)))
            // Outermost: every answer gets its id, its line and its count.
            .wrap(request_log.clone())
            .app_data(data.clone())
            .app_data(client_address.clone())
            .app_data(readiness.clone())
            .app_data(grants.clone())
            .app_data(token_prefix.clone())
            // The consent page names the signed-in account; the home page
            // and the application's login form offer sign-up when it is
            // open.
            .app_data(account_services.accounts.clone())
            .app_data(web::Data::new(s.account));
        // First the routes a load calls: actix tries the services in the
        // order they are registered, and each page route before them would
        // cost a request a regular-expression match (docs/performance.md).
        // The token scope claims only its own paths, so that it hides no
        // route registered after it whatever its prefix (`JwtApi`); the
        // benchmark's no-op route is one exact path.
        if let Some(prefix) = &s.token_prefix {
            app = app.service(JwtApi::new(Arc::clone(&service)).at(prefix));
        }
        if s.noop_route {
            app = app.service(routes::two_forms("/_noop", "POST", |r| r.route(web::post().to(health::noop))));
        }
        app = app
            .service(resource("/healthz", "GET").route(routes::get().to(health::healthz)))
            .service(resource("/readyz", "GET").route(routes::get().to(health::readyz)))
            .service(resource(openapi::PATH, "GET").route(routes::get().to(openapi::document)))
            .service(crate::keys::resource_for(&key_set))
            .service(profile::resource_for(profiles.clone()))
            .service(crate::oauth::userinfo::resource_for(data.clone(), profiles.clone()))
            .service(OAuthApi::new(oauth.clone(), sessions.clone(), cookies).with_second_factors(factors.clone()))
            .service(AccountApi::new(account_services.clone(), cookies, s.account))
            .service(AdminApi::new(admin_services.clone(), cookies, s.staff).with_mail(mail.clone()))
            .service(user_directory::resources(user_directory.clone()))
            .service(crate::public_pages::resources(s.privacy))
            .service(s.branding.logo_resource());
        if let Some(client_login) = &client_login {
            app = app.service(ClientLoginApi::new(Arc::clone(client_login), s.cookie_secure));
        }
        if let Some(resets) = &password_resets {
            // Application-wide: the login forms link to it when it is here.
            app = app.app_data(resets.clone()).service(RecoveryPages::new(resets.clone(), sessions.clone(), cookies));
        }
        if let Some(confirmations) = &email_confirmations {
            // Application-wide: the overview and the sign-up use it too.
            app = app.app_data(confirmations.clone()).service(EmailPages::new(
                confirmations.clone(),
                sessions.clone(),
                cookies,
            ));
        }
        if let Some(federation) = &federation {
            // Application-wide: every login form offers its providers.
            app = app.app_data(federation.clone()).service(crate::account::federation::FederationPages::new(
                federation.clone(),
                sessions.clone(),
                cookies,
            ));
        }
        if s.sandbox {
            app = app.service(sandbox::scope()).service(sandbox_registries::scope());
        }
        if let Some(govbr) = &govbr_sandbox {
            app = app.service(crate::sandbox_govbr::scope(Arc::clone(govbr)));
        }
        if let Some(mailbox) = &s.sandbox_mailbox {
            app = app.service(sandbox_mail::resource_for(mailbox.clone()));
        }
        if let (true, Some(exporter)) = (s.metrics_route, &s.metrics) {
            app = app.service(crate::metrics::resource_for(exporter.clone()));
        }
        #[cfg(feature = "route-inventory")]
        {
            app = app.service(
                web::resource(crate::routes::INVENTORY_PATH).route(routes::get().to(crate::routes::inventory)),
            );
        }
        app.default_service(web::to(not_found))
    })
    .listen(listener)?
    .disable_signals()
    .shutdown_timeout(settings.shutdown_timeout_secs);
    if let Some(workers) = settings.workers {
        server = server.workers(workers);
    }
    Ok(server.run())
}
