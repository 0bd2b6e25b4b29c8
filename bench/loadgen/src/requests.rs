//! One request per route against the service, and what counts as its success.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::mix::Route;
use crate::stats::Failure;
use crate::tokens::{AccessTokens, RefreshPool, User};

/// The keys of a profile answer with every scope (`dados_publicos` is `name`
/// and `avatar`).
pub const PROFILE_KEYS: [&str; 9] = [
    "avatar",
    "cnes",
    "cpf",
    "cursos_cdp",
    "email",
    "experiencia_profissional",
    "formacao_academica",
    "name",
    "receita_federal",
];

/// Everything a request needs: the HTTP client, the base URL and the tokens.
#[derive(Debug)]
pub struct Target {
    client: reqwest::Client,
    base: String,
    timeout: Duration,
    users: Vec<User>,
    next_user: std::sync::atomic::AtomicUsize,
    /// Refresh tokens for the refresh requests.
    pub refresh_tokens: RefreshPool,
    /// Access tokens for the verify requests.
    pub access_tokens: AccessTokens,
    /// OAuth2 access token for the profile requests.
    pub profile_token: Option<String>,
}

#[derive(Deserialize)]
struct Pair {
    access: String,
    refresh: String,
}

impl Target {
    /// A target at `base` (e.g. `http://127.0.0.1:18200`); requests time out after `timeout`.
    pub fn new(base: &str, timeout: Duration, users: Vec<User>) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(2))
            // Close idle connections before the server does (actix-web's
            // keep-alive is 5 s): a request sent on a connection the server
            // is closing at that moment fails, a race of the client's making
            // that every pooled HTTP/1 client must avoid this way.
            .pool_idle_timeout(IDLE_TIMEOUT)
            .tcp_nodelay(true)
            .build()?;
        Ok(Target {
            client,
            base: base.trim_end_matches('/').to_owned(),
            timeout,
            users,
            next_user: Default::default(),
            refresh_tokens: RefreshPool::default(),
            access_tokens: AccessTokens::new(64),
            profile_token: None,
        })
    }

    /// Sends one request of `route` and checks the answer.
    pub async fn send(self: &Arc<Self>, route: Route) -> Result<(), Failure> {
        match route {
            Route::Verify => self.verify().await,
            Route::Refresh => self.refresh().await,
            Route::Profile => self.profile().await.map(|_| ()),
            Route::Pair => self.pair().await.map(|_| ()),
        }
    }

    fn post(&self, route: Route) -> reqwest::RequestBuilder {
        self.client.post(format!("{}{}", self.base, route.path()))
    }

    /// Logs the next user in; the tokens feed the access-token ring.
    pub async fn pair(&self) -> Result<String, Failure> {
        let n = self.next_user.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let user = &self.users[n % self.users.len()];
        let body = json!({"username": user.username, "password": user.password});
        let pair: Pair = call(self.post(Route::Pair).json(&body)).await?;
        self.access_tokens.push(&pair.access);
        Ok(pair.refresh)
    }

    async fn verify(&self) -> Result<(), Failure> {
        let token = self.access_tokens.pick().ok_or_else(|| Failure::Body("no access token yet".into()))?;
        let body = json!({"token": &*token});
        let answer: Value = call(self.post(Route::Verify).json(&body)).await?;
        if answer != json!({}) {
            return Err(Failure::Body("verify: not {}".into()));
        }
        Ok(())
    }

    async fn refresh(&self) -> Result<(), Failure> {
        let token = self.refresh_tokens.take(self.timeout).await.ok_or(Failure::NoRefreshToken)?;
        let body = json!({"refresh": token});
        // A failed refresh loses its slot: the token may or may not have been
        // rotated, and either way the run has failed.
        let pair: Pair = call(self.post(Route::Refresh).json(&body)).await?;
        self.refresh_tokens.put(pair.refresh);
        self.access_tokens.push(&pair.access);
        Ok(())
    }

    /// Reads the profile with every scope; fails if a key is missing or a
    /// scope holds an `erro` object (the registries' data is cached).
    pub async fn profile(&self) -> Result<Value, Failure> {
        let token = self.profile_token.as_deref().ok_or_else(|| Failure::Body("no profile token".into()))?;
        let answer: Value = call(self.post(Route::Profile).bearer_auth(token).json(&json!({}))).await?;
        let object = answer.as_object().ok_or_else(|| Failure::Body("profile: not an object".into()))?;
        if let Some(missing) = PROFILE_KEYS.iter().find(|k| !object.contains_key(**k)) {
            return Err(Failure::Body(format!("profile: no {missing}")));
        }
        if let Some((scope, _)) = object.iter().find(|(_, v)| v.get("erro").is_some()) {
            return Err(Failure::Body(format!("profile: {scope} holds erro")));
        }
        Ok(answer)
    }
}

/// Sends `request` and reads a 200 answer's JSON body as `T`.
async fn call<T: serde::de::DeserializeOwned>(request: reqwest::RequestBuilder) -> Result<T, Failure> {
    let response = request.send().await.map_err(transport)?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(Failure::Status(status));
    }
    response.json().await.map_err(|e| {
        if e.is_decode() {
            Failure::Body(format!("not the expected JSON: {e}"))
        } else {
            transport(e)
        }
    })
}

/// How long the client keeps an idle connection: under the server's
/// keep-alive.
const IDLE_TIMEOUT: Duration = Duration::from_secs(2);

/// How many transport errors are printed in full (to the loadgen's stderr).
const TRANSPORT_ERRORS_SHOWN: usize = 20;

fn transport(error: reqwest::Error) -> Failure {
    static SHOWN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    if SHOWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < TRANSPORT_ERRORS_SHOWN {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        eprintln!("loadgen: transport error: {text}");
    }
    if error.is_timeout() {
        Failure::Timeout
    } else {
        Failure::Connection
    }
}
