//! The whole HTTP service, as the binary runs it.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{web, App, HttpServer};
use credencial_application::{ClientLoginService, OAuthService, ProfileService, TokenService};
use tracing_actix_web::TracingLogger;

use crate::telemetry::PathOnlySpan;

use crate::client_login::ClientLoginApi;
use crate::health;
use crate::jwt::JwtApi;
use crate::oauth::{CookiePolicy, OAuthApi};
use crate::routes::{not_found, resource};
use crate::{profile, sandbox, sandbox_registries};

/// What the HTTP layer needs to know from the configuration.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Prefix of the JWT sub-application (default `/api/token/`); `None`
    /// leaves it out.
    pub token_prefix: Option<String>,
    /// Serve the demo's stand-ins for the user-data resource and the registries.
    pub sandbox: bool,
    /// Serve `POST /_noop/`, the benchmark's baseline.
    pub noop_route: bool,
    /// Number of request workers (default: actix's, one per core).
    pub workers: Option<usize>,
    /// `Secure` attribute of the `/oauth` cookies (`None`: when the request
    /// came over https).
    pub cookie_secure: Option<bool>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            token_prefix: Some(crate::jwt::DEFAULT_PREFIX.to_owned()),
            sandbox: false,
            noop_route: false,
            workers: None,
            cookie_secure: None,
        }
    }
}

/// The use cases the server serves.
#[derive(Debug, Clone)]
pub struct Services {
    /// The token service (always served).
    pub tokens: Arc<TokenService>,
    /// The profile service (`POST /api/perfil/dados/`).
    pub profiles: Arc<ProfileService>,
    /// The OAuth2 provider (`/oauth/authorize/`, `/oauth/token/`).
    pub oauth: Arc<OAuthService>,
    /// The client component (`/auth/login/`, `/auth/callback/`,
    /// `/auth/logout/`, `/auth/me/`), when enabled.
    pub client_login: Option<Arc<ClientLoginService>>,
}

/// A running server on `listener` (bind port 0 to get a free port).
pub fn build_server(listener: TcpListener, services: Services, settings: HttpSettings) -> std::io::Result<Server> {
    let service = services.tokens;
    let data = web::Data::from(Arc::clone(&service));
    let profiles = web::Data::from(services.profiles);
    let oauth = web::Data::from(services.oauth);
    let cookies = CookiePolicy { secure: settings.cookie_secure };
    let client_login = services.client_login;
    let s = settings.clone();
    let mut server = HttpServer::new(move || {
        let mut app = App::new()
            .wrap(TracingLogger::<PathOnlySpan>::new())
            .app_data(data.clone())
            .service(resource("/healthz", "GET").route(web::get().to(health::healthz)))
            .service(profile::resource_for(profiles.clone()))
            .service(OAuthApi::new(oauth.clone(), cookies));
        if let Some(prefix) = &s.token_prefix {
            app = app.service(JwtApi::new(Arc::clone(&service)).at(prefix));
        }
        if let Some(client_login) = &client_login {
            app = app.service(ClientLoginApi::new(Arc::clone(client_login), s.cookie_secure));
        }
        if s.sandbox {
            app = app.service(sandbox::scope()).service(sandbox_registries::scope());
        }
        if s.noop_route {
            app = app.service(resource("/_noop", "POST").route(web::post().to(health::noop)));
        }
        app.default_service(web::to(not_found))
    })
    .listen(listener)?;
    if let Some(workers) = settings.workers {
        server = server.workers(workers);
    }
    Ok(server.run())
}
