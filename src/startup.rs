//! Wiring: settings → adapters → use cases → HTTP server.

use credencial_domain::refresh_grace::RefreshGrace;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use credencial_adapters_upstream::{
    http_client_with, ApiKey, BaseUrl, HttpCdpDirectory, HttpCnesRegistry, HttpProviderClient, HttpTaxAuthority,
    HttpUserDataSource, ProviderSettings, RegistryEndpoint, UnconfiguredRegistry,
};
use credencial_app_actix::account::AccountSettings;
use credencial_app_actix::mail_templates::MailTemplates;
use credencial_app_actix::metrics::{metrics_server, UPKEEP_INTERVAL};
use credencial_app_actix::{build_server, sandbox, sandbox_registries, HttpSettings, MetricsExporter, Services};
use credencial_application::admin::AccountAdminPorts;
use credencial_application::backchannel_logout::LogoutSender;
use credencial_application::client_login::BackchannelSettings;
use credencial_application::email_confirmation::ConfirmationPorts;
use credencial_application::purge::Pace;
use credencial_application::security_log::Notices;
use credencial_application::{
    AccountAdminService, AccountEditService, AccountService, ApiTokenService, AppPasswordService, ClientAdminService,
    ClientLoginConfig, ClientLoginService, EmailConfirmationService, FederationPorts, FederationService, GrantService,
    LoginThrottle, MailSender, Metrics, OAuthService, OwnEntryService, PasskeyService, PasswordHasher,
    PasswordResetPorts, PasswordResetService, ProfileService, Purge, Registries, ScopeCache, ScopeTtls,
    SecondFactorService, SecurityLog, SessionService, SignupService, StaffService, TaxIdValidationService,
    TokenService, TokenServiceConfig, UserDirectoryService,
};
use credencial_domain::attr_map::{MappingInput, UserMapping};
use credencial_domain::client_login::ValueSigner;
use credencial_domain::host_table;
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::session::SessionLimits;
use credencial_domain::{EndpointAllowList, TokenLifetimes};
use credencial_ports::{Clock, HostUserStore, SystemClock};
use rand::RngCore;
use secrecy::ExposeSecret;

use crate::settings::{ClientSettings, Settings, SettingsError};
use crate::storage::{Database, Storage};

/// How the service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Production: every key and upstream must be configured.
    Serve,
    /// Demo: a random signing secret if none is set, and the built-in
    /// sandbox stands in for the upstream user-data resource.
    Demo,
}

/// A built, not yet running, service.
pub struct Application {
    port: u16,
    server: Server,
    /// The `/metrics` server of `metrics_bind`, and its port.
    metrics_server: Option<(u16, Server)>,
    shutdown_timeout_secs: u64,
    background: BackgroundTasks,
    database: Database,
}

/// Binds the listener of `settings.server.bind`. Errors name the setting.
pub fn listen(settings: &Settings) -> Result<TcpListener, SettingsError> {
    TcpListener::bind(&settings.server.bind)
        .map_err(|e| SettingsError::about("bind", format!("cannot listen on {}: {e}", settings.server.bind)))
}

impl Application {
    /// Checks the database's schema, binds the listener, builds the
    /// service on `storage` and the server. A database with pending
    /// migrations (or migrations of a newer release) is refused before the
    /// port is bound.
    pub async fn build(settings: &Settings, mode: Mode, storage: Storage) -> anyhow::Result<Self> {
        check_schema(&storage.database).await?;
        Self::build_on(settings, mode, storage, listen(settings)?).await
    }

    /// Like [`build`](Self::build), on a `listener` bound already and a
    /// schema the caller has just migrated (`demo` binds before it writes
    /// anything, so a taken port is reported first).
    pub async fn build_on(
        settings: &Settings,
        mode: Mode,
        storage: Storage,
        listener: TcpListener,
    ) -> anyhow::Result<Self> {
        let local = listener.local_addr()?;
        let metrics_endpoint = settings.server.metrics_endpoint(mode);
        let metrics_listener = match metrics_endpoint {
            Some(Some(address)) => Some(
                TcpListener::bind(address)
                    .map_err(|e| SettingsError::about("metrics_bind", format!("cannot listen on {address}: {e}")))?,
            ),
            _ => None,
        };
        let exporter = metrics_endpoint.map(|_| MetricsExporter::new(Some(Arc::clone(&storage.pool_status))));
        let metrics = exporter.as_ref().map(|e| e.metrics().clone()).unwrap_or_else(Metrics::disabled);
        let codec = Arc::new(crate::keys::codec(settings, mode)?);
        let id_token_codec = crate::keys::id_token_codec(settings, mode, &codec)?;
        let mapping = if client_component_enabled(settings, mode) {
            let mapping = client_mapping(settings, mode)?;
            let writes = client_writes(settings, mode)?;
            check_host_table(storage.host_users.as_ref(), &settings.client.user_table, &mapping, &writes).await?;
            Some((mapping, writes))
        } else {
            None
        };
        let upstream_base = match (mode, &settings.registries.upstream_base_url) {
            (_, Some(url)) => url.clone(),
            (Mode::Demo, None) => own_url(sandbox_url(local))?,
            (Mode::Serve, None) => {
                return Err(SettingsError::about(
                    "upstream_base_url",
                    "is not set (the base URL of the user-data resource, e.g. https://suap.example.gov.br)",
                )
                .into())
            }
        };
        let endpoints = EndpointAllowList::new(&settings.registries.upstream_endpoints)
            .map_err(|e| SettingsError::about("upstream_endpoints", e))?;
        let client = http_client_with(&settings.registries.outbound()?).map_err(crate::settings::outbound_error)?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let client_login = match mapping {
            Some(mapping) => {
                Some(Arc::new(client_login(settings, mode, local, &client, &storage, Arc::clone(&clock), mapping)?))
            }
            None => None,
        };
        let profiles =
            Arc::new(profile_service(settings, mode, local, &client, &storage, Arc::clone(&clock), metrics.clone())?);
        let refresh_tokens = Arc::clone(&storage.refresh_tokens);
        let hasher = hasher(settings)?.with_metrics(metrics.clone());
        let provider_client = client.clone();
        let logout_client = client.clone();
        let user_data = HttpUserDataSource::new(
            client,
            upstream_base,
            Duration::from_millis(settings.registries.upstream_timeout_ms),
        )
        .with_max_body_bytes(settings.registries.upstream_max_body_bytes);
        let service = TokenService::new(
            codec,
            Arc::clone(&storage.users),
            Arc::clone(&refresh_tokens),
            Arc::new(user_data),
            Arc::clone(&clock),
            hasher.clone(),
            TokenServiceConfig {
                lifetimes: TokenLifetimes {
                    access_secs: settings.tokens.access_token_lifetime_secs,
                    refresh_secs: settings.tokens.refresh_token_lifetime_secs,
                    refresh_family_secs: settings.tokens.refresh_family_lifetime_secs,
                    // No token is a session any more (sessions are stored).
                    session_secs: settings.login.session_absolute_secs,
                },
                endpoints,
                refresh_grace: RefreshGrace::new(settings.tokens.refresh_grace_secs),
            },
        )
        .with_throttle(LoginThrottle::new(
            Arc::clone(&storage.login_failures),
            Arc::clone(&clock),
            settings.login.throttle_policy(),
        ))
        .with_metrics(metrics);
        let service = match id_token_codec {
            Some(id) => service.with_id_token_codec(id),
            None => service,
        };
        // Tokens issued to applications name the OpenID Connect issuer
        // (RFC 9068 §2.2), when it is on.
        let openid = openid_issuer(settings, mode, local, &service)?;
        let service = match &openid {
            Some(issuer) => service.with_client_token_issuer(issuer),
            None => service,
        };
        // The institution's identity (its logo file read once, here).
        let branding = Arc::new(settings.branding.branding(mode)?);
        let mail = mail_setup(settings, mode, local, &storage, &clock, exporter.as_ref(), &branding)?;
        let security_log = SecurityLog::new(Arc::clone(&storage.security_events), Arc::clone(&clock));
        let security_log = Arc::new(match &mail {
            Some(m) => security_log.with_notices(Notices {
                users: Arc::clone(&storage.users),
                mail: Arc::clone(&storage.mail),
                renderer: Arc::clone(&m.renderer),
                public_url: m.public_url.clone(),
            }),
            None => security_log,
        });
        let factors = crate::keys::second_factor_key(settings, mode)?.map(|key| {
            Arc::new(
                SecondFactorService::new(
                    Arc::clone(&storage.second_factors),
                    key,
                    Arc::clone(service.credentials()),
                    Arc::clone(&clock),
                    &branding.service_name,
                )
                .with_security_log(Arc::clone(&security_log))
                // Application passwords, for programs that cannot ask a
                // code (`pair` only).
                .with_app_passwords(Arc::new(
                    AppPasswordService::new(
                        Arc::clone(&storage.app_passwords),
                        Arc::clone(service.credentials()),
                        Arc::clone(&clock),
                    )
                    .with_security_log(Arc::clone(&security_log)),
                )),
            )
        });
        // `pair` asks the second factor of accounts that have one.
        let tokens = Arc::new(match &factors {
            Some(factors) => service.with_second_factors(Arc::clone(factors)),
            None => service,
        });
        let grant_store = Arc::clone(&storage.grants);
        let login_history = Arc::clone(&storage.login_history);
        let oauth = OAuthService::new(
            Arc::clone(&tokens),
            Arc::clone(&storage.clients),
            Arc::clone(&storage.codes),
            grant_store.clone(),
            Arc::clone(&profiles),
            Arc::clone(&clock),
        )
        .with_machine_access(Arc::clone(&storage.directory));
        let sessions = SessionService::new(
            Arc::clone(&storage.sessions),
            Arc::clone(tokens.credentials()),
            Arc::clone(&clock),
            SessionLimits {
                idle_secs: settings.login.session_idle_secs,
                absolute_secs: settings.login.session_absolute_secs,
            },
        )
        .with_login_history(login_history.clone())
        .with_security_log(security_log)
        .with_metrics(tokens.metrics().clone());
        let sessions = match &factors {
            Some(factors) => sessions.with_second_factors(Arc::clone(factors)),
            None => sessions,
        };
        let sessions = Arc::new(
            match passkey_service(settings, mode, local, &storage, factors.as_ref(), &clock, &branding.service_name)? {
                Some(passkeys) => sessions.with_passkeys(Arc::new(passkeys)),
                None => sessions,
            },
        );
        let federation = federation_service(settings, mode, local, &provider_client, &storage, &sessions, &clock)?;
        let oauth = match openid {
            Some(issuer) => oauth.with_issuer(issuer),
            None => oauth,
        };
        // Back-channel logout tokens are signed like ID tokens: with OpenID
        // Connect on.
        let logouts = oauth.issuer().map(|issuer| {
            Arc::new(
                LogoutSender::new(
                    Arc::clone(&storage.logout_deliveries),
                    Arc::new(credencial_adapters_upstream::HttpLogoutPoster::new(logout_client.clone())),
                    Arc::clone(tokens.issuer()),
                    issuer.clone(),
                    Arc::clone(&clock),
                )
                .with_metrics(tokens.metrics().clone()),
            )
        });
        let grants = Arc::new(GrantService::new(
            grant_store,
            Arc::clone(&storage.access_log),
            Arc::clone(&clock),
            settings.storage.access_log_retention_days,
        ));
        let http = HttpSettings {
            token_prefix: Some(settings.server.token_prefix.clone()),
            sandbox: mode == Mode::Demo,
            sandbox_mailbox: None,
            noop_route: settings.server.bench_noop_route,
            workers: settings.server.workers,
            cookie_secure: settings.server.cookie_secure,
            client_address: settings.server.client_address_source()?,
            shutdown_timeout_secs: settings.server.shutdown_timeout_secs,
            account: AccountSettings { signup_enabled: settings.login.signup_enabled.unwrap_or(mode == Mode::Demo) },
            privacy: credencial_app_actix::public_pages::PrivacyFacts {
                access_log_days: settings.storage.access_log_retention_days,
                mail_days: settings.mail.mail_retention_days,
                session_idle_secs: settings.login.session_idle_secs,
                session_absolute_secs: settings.login.session_absolute_secs,
            },
            staff: staff_policy(settings, mode, factors.is_some())?,
            metrics: exporter.clone(),
            metrics_route: metrics_endpoint == Some(None),
            request_lines: crate::telemetry::request_line_writer(),
            branding,
        };
        let oauth = Arc::new(oauth);
        let own_entries = Arc::new(OwnEntryService::new(Arc::clone(&storage.users), Arc::clone(&storage.own_entries)));
        let tax_id_validation = Arc::new(TaxIdValidationService::new(
            Arc::clone(&storage.profiles),
            Arc::clone(&storage.tax_id),
            Arc::clone(&profiles),
            Arc::clone(&clock),
        ));
        let staff = Arc::new(StaffService::new(Arc::clone(&storage.users), Arc::clone(&storage.audit)));
        let account_admin = Arc::new(AccountAdminService::new(
            AccountAdminPorts {
                store: Arc::clone(&storage.account_admin),
                logins: login_history,
                grants: Arc::clone(&storage.grants),
                refresh_tokens: Arc::clone(&refresh_tokens),
                clock: Arc::clone(&clock),
                sessions: Arc::clone(&sessions),
                second_factors: Arc::clone(&storage.second_factors),
            },
            Arc::clone(&staff),
            // The same hashing threads for the operators' passwords.
            hasher.clone(),
        ));
        let purge = Purge::new(
            Arc::clone(&oauth),
            Arc::clone(&tokens),
            Arc::clone(&tax_id_validation),
            Arc::clone(&grants),
            Arc::clone(&account_admin),
            exporter.as_ref().map(|e| e.metrics().clone()).unwrap_or_else(Metrics::disabled),
            settings.storage.purge_batch_rows,
        )
        .with_sessions(Arc::clone(&sessions));
        // The engine's pace; on SQLite's one writer, each batch also waits
        // for the requests' writes to leave it alone a moment first.
        let purge = match &storage.database {
            Database::Sqlite(db) => purge.with_pace(Pace::SINGLE_WRITER).with_quiet_writer(Arc::new(db.clone())),
            Database::Postgres(_) => purge.with_pace(Pace::CONCURRENT),
        };
        let purge = match &mail {
            Some(m) => purge.with_mail(Arc::clone(&m.sender)),
            None => purge,
        };
        let background = BackgroundTasks::start(
            purge,
            Duration::from_secs(settings.storage.purge_start_delay_secs),
            exporter.clone(),
            mail.as_ref().map(|m| Arc::clone(&m.sender)),
            logouts,
        );
        let readiness = Arc::clone(&storage.readiness);
        let accounts = Arc::new(AccountService::new(Arc::clone(&storage.users), Arc::clone(&storage.profiles)));
        let users = Arc::clone(&storage.users);
        let signup = Arc::new(SignupService::new(Arc::clone(&users), Arc::clone(&tokens), Arc::clone(&sessions)));
        let password_resets = match &mail {
            Some(m) => Some(Arc::new(PasswordResetService::new(
                PasswordResetPorts {
                    users: Arc::clone(&users),
                    directory: Arc::clone(&storage.directory),
                    mail: Arc::clone(&storage.mail),
                    renderer: Arc::clone(&m.renderer),
                    refresh_tokens: Arc::clone(&refresh_tokens),
                    clock: Arc::clone(&clock),
                },
                Arc::clone(&tokens),
                Arc::clone(&sessions),
                factors.clone(),
                &m.public_url,
            ))),
            None => None,
        };
        let email_confirmations = match &mail {
            Some(m) => Some(Arc::new(EmailConfirmationService::new(
                ConfirmationPorts {
                    users: Arc::clone(&users),
                    mail: Arc::clone(&storage.mail),
                    renderer: Arc::clone(&m.renderer),
                    refresh_tokens: Arc::clone(&refresh_tokens),
                    clock: Arc::clone(&clock),
                },
                Arc::clone(&sessions),
                &m.public_url,
            ))),
            None => None,
        };
        let account_edits = AccountEditService::new(users, refresh_tokens, Arc::clone(&tokens), Arc::clone(&sessions));
        let account_edits = Arc::new(match &email_confirmations {
            Some(confirmations) => account_edits.with_confirmations(Arc::clone(confirmations)),
            None => account_edits,
        });
        let clients = Arc::new(ClientAdminService::new(Arc::clone(&storage.clients), hasher));
        // The user-management API: wrong tokens count under the login
        // form's per-address limit.
        let directory = Arc::clone(&storage.directory);
        // The applications' own OAuth2 tokens (client_credentials) are
        // accepted beside the static API tokens.
        let user_directory = Arc::new(
            UserDirectoryService::new(Arc::clone(&directory), Arc::clone(&storage.audit), tokens.throttle().clone())
                .with_machine_tokens(Arc::clone(tokens.issuer())),
        );
        let api_tokens = Arc::new(ApiTokenService::new(directory));
        let services = Services {
            tokens,
            profiles,
            oauth,
            sessions,
            factors,
            accounts,
            signup,
            account_edits,
            own_entries,
            tax_id_validation,
            grants,
            client_login,
            staff,
            clients,
            account_admin,
            user_directory,
            api_tokens,
            readiness,
            password_resets,
            mail: mail.as_ref().map(|m| Arc::clone(&m.sender)),
            email_confirmations,
            federation,
        };
        let http = HttpSettings { sandbox_mailbox: mail.and_then(|m| m.sandbox), ..http };
        let server = build_server(listener, services, http)?;
        let metrics_server = match (metrics_listener, exporter) {
            (Some(listener), Some(exporter)) => {
                let address = listener.local_addr()?;
                tracing::info!(%address, "metrics are served at /metrics on their own address");
                Some((address.port(), metrics_server(listener, exporter, settings.server.shutdown_timeout_secs)?))
            }
            _ => None,
        };
        if metrics_endpoint == Some(None) {
            tracing::info!("metrics are served at /metrics on the main address");
        }
        tracing::info!(address = %local, ?mode, storage = %storage.database.describe(), "credencial is serving");
        if cfg!(feature = "bench-unlogged") {
            tracing::warn!(
                "this binary was built with the bench-unlogged feature: applications' profile reads are NOT \
                 written to the access log; it is for benchmarks only, never for service"
            );
        }
        Ok(Self {
            port: local.port(),
            server,
            metrics_server,
            shutdown_timeout_secs: settings.server.shutdown_timeout_secs,
            background,
            database: storage.database,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of the `/metrics` server of `metrics_bind`, if any.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics_server.as_ref().map(|(port, _)| *port)
    }

    /// Serves until SIGTERM or SIGINT; then stops accepting connections,
    /// lets in-flight requests finish (up to `shutdown_timeout_secs`), ends
    /// the background tasks and closes the database pool.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let Self { server, metrics_server, shutdown_timeout_secs, mut background, database, .. } = self;
        // The metrics server runs beside the main one and stops with it.
        let metrics_server = metrics_server.map(|(_, server)| {
            let handle = server.handle();
            (handle, tokio::spawn(server))
        });
        let handle = server.handle();
        let mut server = std::pin::pin!(server);
        let result = tokio::select! {
            result = &mut server => result,
            signal = shutdown_signal() => {
                tracing::info!(
                    signal,
                    timeout_secs = shutdown_timeout_secs,
                    "stopping: no new connections, finishing in-flight requests"
                );
                // A purge under way stops after its current batch, while
                // the requests finish.
                background.request_stop();
                let started = std::time::Instant::now();
                // The server acts on the stop only while it is polled.
                let ((), result) = tokio::join!(handle.stop(true), server);
                let took_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                tracing::info!(took_ms, "in-flight requests done");
                result
            }
        };
        if let Some((handle, task)) = metrics_server {
            handle.stop(true).await;
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "the metrics server failed"),
                Err(e) => tracing::warn!(error = %e, "the metrics server ended abnormally"),
            }
        }
        background.stop().await;
        // Connections of requests cut off by the time-out may never come
        // back; do not wait for them forever.
        if tokio::time::timeout(POOL_CLOSE_TIMEOUT, database.close()).await.is_err() {
            tracing::warn!("database pool still busy after {POOL_CLOSE_TIMEOUT:?}; exiting anyway");
        }
        tracing::info!("stopped");
        result
    }
}

/// Refuses a database whose migrations are not exactly this build's:
/// pending ones (`credencial migrate` applies them), or ones a newer
/// release applied.
pub async fn check_schema(database: &Database) -> anyhow::Result<()> {
    let status = database.schema_status().await?;
    if !status.pending.is_empty() {
        anyhow::bail!(
            "pending migrations: run `credencial migrate` ({} of {} not applied, the first {})",
            status.pending.len(),
            database.known_versions().len(),
            status.pending[0]
        );
    }
    if !status.unknown.is_empty() {
        anyhow::bail!(
            "the database has {} migration(s) this build does not know (the first {}): it was migrated by a newer \
             release of credencial; run that release",
            status.unknown.len(),
            status.unknown[0]
        );
    }
    Ok(())
}

/// How long a stop waits for the database pool to close.
const POOL_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The first SIGTERM or SIGINT (Ctrl-C), by name.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            },
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM/SIGINT; serving until killed");
                std::future::pending().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        match tokio::signal::ctrl_c().await {
            Ok(()) => "Ctrl-C",
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for Ctrl-C; serving until killed");
                std::future::pending().await
            }
        }
    }
}

/// The service's periodic tasks; they end when told to.
struct BackgroundTasks {
    /// Dropped to tell the tasks to stop.
    stop: Option<tokio::sync::watch::Sender<()>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl BackgroundTasks {
    /// Starts the periodic purge (first pass after `purge_delay`; see
    /// [`Purge`]), the mail sender when the service sends mail, the
    /// back-channel logout sender when OpenID Connect is on, and, with
    /// metrics on, the exporter's upkeep.
    fn start(
        purge: Purge,
        purge_delay: Duration,
        exporter: Option<MetricsExporter>,
        mail: Option<Arc<MailSender>>,
        logouts: Option<Arc<LogoutSender>>,
    ) -> Self {
        let (stop, stopped) = tokio::sync::watch::channel(());
        let mut tasks = vec![tokio::spawn(purge_periodically(purge, purge_delay, stopped.clone()))];
        if let Some(mail) = mail {
            tasks.push(tokio::spawn(send_mail(mail, stopped.clone())));
        }
        if let Some(logouts) = logouts {
            tasks.push(tokio::spawn(send_logouts(logouts, stopped.clone())));
        }
        if let Some(exporter) = exporter {
            tasks.push(tokio::spawn(metrics_upkeep(exporter, stopped)));
        }
        Self { stop: Some(stop), tasks }
    }

    /// Tells every task to stop, without waiting (a purge under way stops
    /// after its current batch).
    fn request_stop(&mut self) {
        self.stop = None;
    }

    /// Tells every task to stop and waits until each has (a purge under way
    /// finishes its current batch first).
    async fn stop(mut self) {
        self.request_stop();
        for task in self.tasks {
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "a background task ended abnormally");
            }
        }
    }
}

/// The OpenID Connect issuer: `issuer_url`, or in the demo its own
/// address; `None` (OpenID Connect off) in `serve` without `issuer_url`.
/// Errors: an issuer without a key to sign ID tokens with (named after
/// `issuer_url`).
fn openid_issuer(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    tokens: &TokenService,
) -> Result<Option<IssuerUrl>, SettingsError> {
    let issuer = match (settings.tokens.issuer_url.clone(), mode) {
        (Some(issuer), _) => issuer,
        (None, Mode::Demo) => IssuerUrl::parse(&origin(local)).map_err(|e| SettingsError::about("issuer_url", e))?,
        (None, Mode::Serve) => {
            tracing::info!("OpenID Connect is off: issuer_url is not set");
            return Ok(None);
        }
    };
    if !tokens.issuer().has_id_token_key() {
        return Err(SettingsError::about(
            "issuer_url",
            "OpenID Connect needs a key to sign ID tokens with: set oidc_signing_key_file (made by `credencial keys \
             generate`)",
        ));
    }
    let discovery = issuer.join(credencial_domain::oauth::discovery::DISCOVERY_PATH);
    tracing::info!(issuer = issuer.as_str(), %discovery, "OpenID Connect is on");
    Ok(Some(issuer))
}

/// Whether the client component (`/auth/login/`, `/auth/callback/`) runs:
/// always in the demo, in `serve` when a provider is configured.
fn client_component_enabled(settings: &Settings, mode: Mode) -> bool {
    mode == Mode::Demo || settings.client.provider_base_url.is_some()
}

/// The start-up check of the host user table against the mapping and the
/// login options: every mapped column (and every column the options
/// write) exists and can hold its value, the lookup column has a unique
/// constraint of its own, a new row gets every `NOT NULL` column (unless
/// logins do not create users), and the options fit the map. The message
/// names the column and the setting to fix.
pub async fn check_host_table(
    store: &dyn HostUserStore,
    table: &host_table::TableName,
    mapping: &UserMapping,
    writes: &host_table::LoginWrites,
) -> Result<(), SettingsError> {
    let shape = store.describe(table).await.map_err(|e| SettingsError::about("user_table", e))?;
    let lookup = mapping.lookup().column().as_str();
    let mapped = mapping.map().column_needs();
    let mapped_columns: Vec<&str> = mapped.iter().map(|(name, _)| *name).collect();
    writes
        .check(&shape, &mapped_columns)
        .map_err(|problem| SettingsError(format!("setting {}", named_option(&problem))))?;
    let mut needs = mapped.clone();
    needs.extend(writes.column_needs());
    host_table::check_columns_for(&shape, &needs, lookup, writes.create_users).map_err(|problem| {
        // Which setting to change: the lookup column's, the table's, or the map's.
        let setting = if problem.starts_with("lookup column") {
            crate::settings::mapping_setting(MappingInput::LookupField)
        } else if problem.starts_with("table") || problem.contains("\"id\"") || problem.contains("it must be boolean") {
            crate::settings::env_name("user_table")
        } else {
            crate::settings::mapping_setting(MappingInput::AttrMap)
        };
        SettingsError(format!("setting {setting}: host user table: {problem}"))
    })
}

/// A problem of the login options (`"<setting>: …"`), with the setting's
/// environment name in front.
fn named_option(problem: &str) -> String {
    match problem.split_once(": ") {
        Some((key, rest)) => format!("{}: {rest}", crate::settings::env_name(key)),
        None => problem.to_owned(),
    }
}

/// The login options of the client component: the settings', or, in the
/// demo without a `last_login_column`, `last_login` (the demo table's).
fn client_writes(settings: &Settings, mode: Mode) -> Result<host_table::LoginWrites, SettingsError> {
    let mut writes = settings.client.login_writes()?;
    if mode == Mode::Demo && writes.last_login_column.is_none() {
        writes.last_login_column = Some(host_table::ColumnName::parse("last_login").expect("a column name"));
    }
    Ok(writes)
}

/// How long a host session at the client component lasts (8 hours).
const HOST_SESSION_SECS: i64 = 8 * 60 * 60;

/// The demo's attribute map: one column per rule (plain, tuple, dot
/// notation, `fulljson`).
pub const DEMO_ATTR_MAP: &str = r#"{"username": "cpf", "cpf": "cpf", "email": "email", "(first_name, last_name)": "name", "birth_date": "receita_federal.dtNascimento", "mother_name": "receita_federal.mae", "city": "receita_federal.noMunicipio", "state": "receita_federal.uf", "profile": "fulljson"}"#;

/// The demo's requested scopes.
pub const DEMO_SCOPES: &str = "dados_publicos cpf email receita_federal cnes formacao_academica";

/// The mapping the client component applies: the settings', or, in the demo
/// with the default map and scopes, [`DEMO_ATTR_MAP`] and [`DEMO_SCOPES`].
fn client_mapping(settings: &Settings, mode: Mode) -> Result<UserMapping, SettingsError> {
    let defaults = ClientSettings::default();
    let client = &settings.client;
    if mode == Mode::Demo && client.user_attr_map == defaults.user_attr_map && client.scopes == defaults.scopes {
        let demo = ClientSettings {
            user_attr_map: DEMO_ATTR_MAP.to_owned(),
            scopes: vec![DEMO_SCOPES.to_owned()],
            user_lookup_field: client.user_lookup_field.clone(),
            ..defaults
        };
        return demo.user_mapping();
    }
    client.user_mapping()
}

/// The client component: the provider from the settings (demo: this
/// service itself as `demo-host`), the host user table, and cookie values
/// signed with a key derived from the JWT key material.
fn client_login(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    client: &reqwest::Client,
    storage: &Storage,
    clock: Arc<dyn Clock>,
    (mapping, writes): (UserMapping, host_table::LoginWrites),
) -> Result<ClientLoginService, SettingsError> {
    let required = |key: &str, value: &Option<String>| {
        value.clone().ok_or_else(|| SettingsError::about(key, "is not set (needed with SERVICE_PROVIDER_BASE_URL)"))
    };
    let (base, client_id, secret, redirect_uri) = match (&settings.client.provider_base_url, mode) {
        (Some(base), _) => (
            base.clone(),
            required("provider_client_id", &settings.client.provider_client_id)?,
            settings
                .client
                .provider_client_secret
                .clone()
                .ok_or_else(|| SettingsError::about("provider_client_secret", "is not set"))?,
            required("provider_redirect_uri", &settings.client.provider_redirect_uri)?,
        ),
        (None, _) => (
            own_url(origin(local))?,
            crate::demo::DEMO_CLIENT_ID.to_owned(),
            secrecy::SecretString::from(crate::demo::DEMO_CLIENT_SECRET),
            settings
                .client
                .provider_redirect_uri
                .clone()
                .unwrap_or_else(|| format!("{}/auth/callback/", origin(local))),
        ),
    };
    let public_url = settings.client.provider_public_url.clone().unwrap_or_else(|| base.clone());
    // Written as the provider's discovery document says it: no trailing
    // slash (a configured one would refuse every logout token).
    let issuer = match &settings.client.provider_issuer_url {
        Some(issuer) => issuer.trim().trim_end_matches('/').to_owned(),
        None => public_url.to_string().trim_end_matches('/').to_owned(),
    };
    let backchannel = BackchannelSettings { issuer, client_id: client_id.clone() };
    let provider = HttpProviderClient::new(
        client.clone(),
        ProviderSettings {
            base,
            public_base: public_url,
            client_id,
            client_secret: secret,
            redirect_uri,
            timeout: Duration::from_millis(settings.client.provider_timeout_ms),
        },
    )
    .map_err(|e| SettingsError::about(e.setting(), e))?;
    let service = ClientLoginService::new(
        Arc::new(provider),
        Arc::clone(&storage.host_users),
        Arc::clone(&storage.host_user_records),
        clock,
        ClientLoginConfig {
            mapping,
            table: settings.client.user_table.clone(),
            writes,
            session_secs: HOST_SESSION_SECS,
            signer: ValueSigner::derive(&cookie_key_material(settings)?),
        },
    );
    Ok(match settings.client.provider_backchannel_logout.unwrap_or(mode == Mode::Demo) {
        true => service.with_backchannel_logout(Arc::clone(&storage.host_session_ends), backchannel),
        false => service,
    })
}

/// What the client component's cookie key is derived from: the HS256
/// secret, or the RS256/ES256 private key (so every instance that shares
/// the JWT keys shares it); without either (the demo's random secret), 32
/// random bytes for this run.
fn cookie_key_material(settings: &Settings) -> Result<Vec<u8>, SettingsError> {
    if let Some(secret) = &settings.tokens.jwt_secret {
        return Ok(secret.expose_secret().as_bytes().to_vec());
    }
    if let Some(path) = &settings.tokens.jwt_private_key_file {
        return std::fs::read(path)
            .map_err(|e| SettingsError::about("jwt_private_key_file", format!("cannot read {}: {e}", path.display())));
    }
    let mut material = vec![0u8; 32];
    rand::thread_rng().fill_bytes(&mut material);
    Ok(material)
}

/// How often the purge passes run after the first (see [`Purge`]).
const PURGE_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// Runs a [`Purge`] pass `delay` after the start, then every
/// [`PURGE_INTERVAL`], until `stop`'s sender goes away; a pass under way
/// then stops after its current batch (every instance purges; the deletes
/// are idempotent).
async fn purge_periodically(purge: Purge, delay: Duration, mut stop: tokio::sync::watch::Receiver<()>) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + delay, PURGE_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stop.changed() => break,
        }
        // The sender gone is the stop request; asked before every batch.
        let stopping = || stop.has_changed().is_err();
        if purge.pass(&stopping).await.stopped {
            break;
        }
    }
}

/// How often a sender looks at its outbox when it had nothing due.
const OUTBOX_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Runs `round` (given the stop signal; answering whether it came back
/// full) until `stop`'s sender goes away: again right away while rounds
/// come back full, else every [`OUTBOX_POLL_INTERVAL`].
async fn drain_outbox<Round, Fut>(outbox: &'static str, mut stop: tokio::sync::watch::Receiver<()>, round: Round)
where
    Round: Fn(tokio::sync::watch::Receiver<()>) -> Fut,
    Fut: std::future::Future<Output = Result<bool, credencial_application::ServiceError>>,
{
    loop {
        let full = match round(stop.clone()).await {
            Ok(full) => full,
            Err(e) => {
                tracing::warn!(error = %e, outbox, "a sender cannot read its outbox");
                false
            }
        };
        if stop.has_changed().is_err() {
            break;
        }
        if !full {
            tokio::select! {
                () = tokio::time::sleep(OUTBOX_POLL_INTERVAL) => {}
                _ = stop.changed() => break,
            }
        }
    }
}

/// Delivers the mail outbox until `stop`'s sender goes away. A stop is
/// seen before every mail (the rest of a round is given back).
async fn send_mail(mail: Arc<MailSender>, stop: tokio::sync::watch::Receiver<()>) {
    drain_outbox("mail", stop, move |stop| {
        let mail = Arc::clone(&mail);
        async move {
            let round = mail.send_due(&|| stop.has_changed().is_err()).await?;
            Ok(round.claimed == credencial_application::mail::SEND_BATCH as usize && round.retried == 0)
        }
    })
    .await;
}

/// Posts back-channel logout tokens until `stop`'s sender goes away (a
/// stop is seen before every round; a round's posts end within their
/// timeout).
async fn send_logouts(logouts: Arc<LogoutSender>, stop: tokio::sync::watch::Receiver<()>) {
    drain_outbox("backchannel_logout", stop, move |stop| {
        let logouts = Arc::clone(&logouts);
        async move {
            let round = logouts.send_due(&|| stop.has_changed().is_err()).await?;
            Ok(round.claimed == credencial_application::backchannel_logout::LOGOUT_BATCH as usize && round.retried == 0)
        }
    })
    .await;
}

/// What sends mail: the sender, the templates, the base of the links and,
/// in the demo without `smtp_url`, the sandbox mailbox it delivers to.
struct MailSetup {
    sender: Arc<MailSender>,
    renderer: Arc<dyn credencial_application::MailRenderer>,
    public_url: String,
    sandbox: Option<credencial_app_actix::sandbox_mail::SandboxMailbox>,
}

/// The mail sender: through the SMTP relay of `smtp_url`; in the demo
/// without it, to the sandbox mailbox; `None` in `serve` without it (no
/// mail, no password recovery). Errors name the setting.
fn mail_setup(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    storage: &Storage,
    clock: &Arc<dyn Clock>,
    exporter: Option<&MetricsExporter>,
    branding: &Arc<credencial_app_actix::branding::Branding>,
) -> Result<Option<MailSetup>, SettingsError> {
    let (mailer, sandbox): (Arc<dyn credencial_ports::Mailer>, _) = match (&settings.mail.smtp_url, mode) {
        (Some(url), _) => {
            let smtp = credencial_adapters_upstream::SmtpMailer::new(&credencial_adapters_upstream::SmtpSettings {
                url: url.clone(),
                from: settings.mail.mail_from.clone().unwrap_or_default(),
                timeout: Duration::from_secs(settings.mail.smtp_timeout_secs),
                ca_file: settings.mail.smtp_ca_file.clone(),
            })
            .map_err(|e| {
                let setting = if e.0.starts_with("mail_from") { "mail_from" } else { "smtp_url" };
                SettingsError::about(setting, e)
            })?;
            tracing::info!(security = ?smtp.security(), "mail is sent through the SMTP relay of smtp_url");
            (Arc::new(smtp), None)
        }
        (None, Mode::Demo) => {
            let mailbox = credencial_app_actix::sandbox_mail::SandboxMailbox::new();
            tracing::info!(
                path = credencial_app_actix::sandbox_mail::SANDBOX_MAIL_PATH,
                "mail goes to the demo's sandbox mailbox"
            );
            (Arc::new(mailbox.clone()), Some(mailbox))
        }
        (None, Mode::Serve) => {
            tracing::info!("mail is off: smtp_url is not set (no password recovery by e-mail)");
            return Ok(None);
        }
    };
    let sender =
        MailSender::new(Arc::clone(&storage.mail), mailer, Arc::clone(clock), settings.mail.mail_retention_days);
    let sender = match exporter {
        Some(e) => sender.with_metrics(e.metrics().clone()),
        None => sender,
    };
    Ok(Some(MailSetup {
        sender: Arc::new(sender),
        renderer: Arc::new(MailTemplates::new(Arc::clone(branding))),
        public_url: public_url(settings, mode, local)?,
        sandbox,
    }))
}

/// Logins through upstream providers, when any is configured; the demo
/// without any logs in through its gov.br sandbox (`/sandbox/govbr/`).
fn federation_service(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    client: &reqwest::Client,
    storage: &Storage,
    sessions: &Arc<SessionService>,
    clock: &Arc<dyn Clock>,
) -> Result<Option<Arc<FederationService>>, SettingsError> {
    let mut settings = settings.clone();
    if settings.federation.providers.is_empty() && mode == Mode::Demo {
        settings.federation.providers.push(crate::settings::ProviderSettings {
            id: "govbr".into(),
            name: None,
            profile: "govbr".into(),
            issuer: format!("{}{}", origin(local), credencial_app_actix::sandbox_govbr::ISSUER_PATH),
            client_id: credencial_app_actix::sandbox_govbr::CLIENT_ID.into(),
            client_secret: secrecy::SecretString::from(credencial_app_actix::sandbox_govbr::CLIENT_SECRET),
            scopes: None,
            link_by: None,
            algorithms: Some(vec!["ES256".into()]),
            logout_url: None,
            timeout_ms: None,
            satisfies_second_factor: None,
        });
    }
    if settings.federation.providers.is_empty() {
        return Ok(None);
    }
    let providers = settings.federation.identity_providers(client)?;
    let level = settings.federation.govbr_validated_level;
    let ports = FederationPorts {
        links: Arc::clone(&storage.federated_links),
        ceremonies: Arc::clone(&storage.passkeys),
        sessions: Arc::clone(sessions),
        tax_id: Arc::clone(&storage.tax_id),
        clock: Arc::clone(clock),
    };
    let public = public_url(&settings, mode, local).map_err(|_| {
        SettingsError::about(
            "public_url",
            "logins through providers need the service's public address: set public_url (or issuer_url)",
        )
    })?;
    let names: Vec<&str> = providers.iter().map(|p| p.id.as_str()).collect();
    tracing::info!(providers = ?names, "logins through upstream providers are on");
    Ok(Some(Arc::new(FederationService::new(providers, ports, &public, level))))
}

/// The base of links in mails: `public_url`, else `issuer_url`, else (in
/// the demo) the service's own address. Errors: `serve` with neither.
fn public_url(settings: &Settings, mode: Mode, local: SocketAddr) -> Result<String, SettingsError> {
    match (&settings.mail.public_url, &settings.tokens.issuer_url, mode) {
        (Some(url), _, _) | (None, Some(url), _) => Ok(url.as_str().trim_end_matches('/').to_owned()),
        (None, None, Mode::Demo) => Ok(origin(local)),
        (None, None, Mode::Serve) => Err(SettingsError::about(
            "public_url",
            "mail links need the service's public address: set public_url (or issuer_url)",
        )),
    }
}

/// Folds the histograms' samples every [`UPKEEP_INTERVAL`], so that their
/// memory stays bounded when nobody scrapes, until `stop`'s sender goes
/// away.
async fn metrics_upkeep(exporter: MetricsExporter, mut stop: tokio::sync::watch::Receiver<()>) {
    let mut ticks = tokio::time::interval(UPKEEP_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => exporter.run_upkeep(),
            _ = stop.changed() => break,
        }
    }
}

/// The password hasher the settings describe.
pub fn hasher(settings: &Settings) -> anyhow::Result<PasswordHasher> {
    let threads = settings
        .login
        .hashing_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get().saturating_sub(1)).unwrap_or(1).max(1));
    Ok(PasswordHasher::new(threads, settings.login.password_iterations)
        .map_err(|e| SettingsError::about("password_iterations", e))?)
}

/// The profile service with its registries: configured URLs, else (demo)
/// the built-in sandbox, else a stand-in whose scopes answer `erro`.
fn profile_service(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    client: &reqwest::Client,
    storage: &Storage,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
) -> Result<ProfileService, SettingsError> {
    let endpoint = |name: &str,
                    url: &Option<BaseUrl>,
                    timeout_ms: u64,
                    key: &Option<secrecy::SecretString>,
                    sandbox_path: &str| {
        let url = match (url, mode) {
            (Some(url), _) => url.clone(),
            (None, Mode::Demo) => own_url(format!("{}{sandbox_path}", origin(local)))?,
            (None, Mode::Serve) => {
                tracing::warn!(setting = %crate::settings::env_name(&format!("{name}_base_url")), "registry not configured; its scope will answer an erro object");
                return Ok(None);
            }
        };
        let mut endpoint = RegistryEndpoint::new(client.clone(), url).with_timeout(Duration::from_millis(timeout_ms));
        if let Some(key) = key {
            let key = ApiKey::new(key.expose_secret())
                .map_err(|_| SettingsError::about(&format!("{name}_api_key"), "is not a valid header value"))?;
            endpoint = endpoint.with_api_key(key);
        }
        Ok::<_, SettingsError>(Some(endpoint))
    };
    let s = settings;
    let receita = endpoint(
        "receita",
        &s.registries.receita_base_url,
        s.registries.receita_timeout_ms,
        &s.registries.receita_api_key,
        sandbox_registries::RECEITA_BASE_PATH,
    )?;
    let cnes = endpoint(
        "cnes",
        &s.registries.cnes_base_url,
        s.registries.cnes_timeout_ms,
        &s.registries.cnes_api_key,
        sandbox_registries::CNES_BASE_PATH,
    )?;
    let cdp = endpoint(
        "cdp",
        &s.registries.cdp_base_url,
        s.registries.cdp_timeout_ms,
        &s.registries.cdp_api_key,
        sandbox_registries::CDP_BASE_PATH,
    )?;
    let registries = Registries {
        tax_authority: match receita {
            Some(e) => Arc::new(HttpTaxAuthority::new(e)),
            None => Arc::new(UnconfiguredRegistry),
        },
        cnes: match cnes {
            Some(e) => Arc::new(HttpCnesRegistry::new(e)),
            None => Arc::new(UnconfiguredRegistry),
        },
        cdp: match cdp {
            Some(e) => Arc::new(HttpCdpDirectory::new(e)),
            None => Arc::new(UnconfiguredRegistry),
        },
    };
    let ttls = ScopeTtls {
        receita_federal: s.registries.receita_cache_secs,
        cnes: s.registries.cnes_cache_secs,
        cursos_cdp: s.registries.cdp_cache_secs,
    };
    let cache = ScopeCache::new(
        Arc::clone(&storage.snapshots),
        Arc::clone(&clock),
        ttls,
        s.registries.scope_cache_memory_entries,
    )
    .with_metrics(metrics.clone());
    Ok(ProfileService::new(Arc::clone(&storage.clients), Arc::clone(&storage.profiles), registries, cache, clock)
        .with_metrics(metrics))
}

/// `http://host:port` of the local listener, as a client on this machine reaches it.
/// The panel's demand on staff: a second factor, by default whenever the
/// service offers second factors in `serve` (off in the demo unless set);
/// asked for without them, the start stops.
fn staff_policy(
    settings: &Settings,
    mode: Mode,
    factors_offered: bool,
) -> Result<credencial_app_actix::admin::StaffPolicy, SettingsError> {
    let second_factor = settings.login.staff_second_factor.unwrap_or(mode == Mode::Serve && factors_offered);
    if second_factor && !factors_offered {
        return Err(SettingsError::about(
            "staff_second_factor",
            "needs second factors: set second_factor_key_file (head -c 32 /dev/urandom | base64 > file)",
        ));
    }
    if !second_factor && mode == Mode::Serve {
        tracing::warn!(
            "staff may use the panel with a password alone (staff_second_factor off or no second_factor_key_file)"
        );
    }
    Ok(credencial_app_actix::admin::StaffPolicy { second_factor })
}

/// Passkeys, when the service offers second factors and has an origin
/// for them (`passkey_origin`; else `issuer_url`'s when its host is a
/// name; in the demo, `http://localhost:<port>`). Errors: an origin
/// WebAuthn cannot serve (named after `passkey_origin`).
fn passkey_service(
    settings: &Settings,
    mode: Mode,
    local: SocketAddr,
    storage: &Storage,
    factors: Option<&Arc<SecondFactorService>>,
    clock: &Arc<dyn credencial_ports::Clock>,
    service_name: &str,
) -> Result<Option<PasskeyService>, SettingsError> {
    let Some(factors) = factors else {
        return Ok(None);
    };
    let issuer_origin = settings
        .tokens
        .issuer_url
        .as_ref()
        .and_then(|u| url::Url::parse(u.as_str()).ok())
        .filter(|u| matches!(u.host(), Some(url::Host::Domain(_))))
        .map(|u| u.origin().ascii_serialization());
    let origin = match (&settings.login.passkey_origin, issuer_origin, mode) {
        (Some(origin), _, _) => origin.clone(),
        (None, Some(origin), _) => origin,
        (None, None, Mode::Demo) => format!("http://localhost:{}", local.port()),
        (None, None, Mode::Serve) => {
            tracing::info!("passkeys are off: set passkey_origin (or an issuer_url with a host name)");
            return Ok(None);
        }
    };
    let url = url::Url::parse(&origin).map_err(|e| SettingsError::about("passkey_origin", e))?;
    let service =
        PasskeyService::new(&url, service_name, Arc::clone(&storage.passkeys), Arc::clone(factors), Arc::clone(clock))
            .map_err(|e| SettingsError::about("passkey_origin", e))?;
    tracing::info!(origin = url.origin().ascii_serialization(), "passkeys are on");
    Ok(Some(service))
}

fn origin(local: SocketAddr) -> String {
    let ip = if local.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else if local.is_ipv6() {
        format!("[{}]", local.ip())
    } else {
        local.ip().to_string()
    };
    format!("http://{ip}:{}", local.port())
}

/// One of the service's own URLs (the demo's sandboxes and itself as the
/// client component's provider) as a base URL.
fn own_url(url: String) -> Result<BaseUrl, SettingsError> {
    BaseUrl::parse(&url).map_err(|e| SettingsError(format!("the service's own address {url}: {e}")))
}

fn sandbox_url(local: SocketAddr) -> String {
    format!("{}{}", origin(local), sandbox::SANDBOX_PREFIX)
}
