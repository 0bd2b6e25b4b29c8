//! The profile service: the answer of `POST /api/perfil/dados/` and the
//! CNES supplementation on authorization.

use std::sync::Arc;

use credencial_domain::oauth::userinfo::{userinfo_claims, userinfo_scopes};
use credencial_domain::oauth::ClientId;
use credencial_domain::profile::{assemble, Experience, OwnProfile, UpstreamScopeData};
use credencial_domain::{Claims, Cnes, Cpf, CursosCdp, ReceitaFederal, Scope, ScopeSet, TokenError, UserId};
use credencial_ports::account::AccessLogEntry;
use credencial_ports::{
    CdpDirectory, ClientRead, Clock, CnesRegistry, OAuthClientRepository, ProfileRepository, TaxAuthority,
    UpstreamError,
};
use serde_json::{Map, Value};

use crate::error::ServiceError;
use crate::metrics::{Metrics, Upstream};
use crate::oauth::serving_client;
use crate::scope_cache::ScopeCache;

/// `erro` text when a user has no (valid) CPF to look registries up by.
pub const ERRO_SEM_CPF: &str = "O usuário não possui CPF válido cadastrado.";

/// `erro` text when the tax authority's answer cannot be used.
pub const ERRO_RECEITA_INDISPONIVEL: &str = "O serviço da Receita Federal está indisponível no momento.";

/// The upstream registries the profile service reads.
#[derive(Clone)]
pub struct Registries {
    /// Tax authority (`receita_federal`).
    pub tax_authority: Arc<dyn TaxAuthority>,
    /// Health-establishment registry (`cnes`).
    pub cnes: Arc<dyn CnesRegistry>,
    /// Community-of-practice API (`cursos_cdp`).
    pub cdp: Arc<dyn CdpDirectory>,
}

/// Builds profile answers and supplements experiences from CNES.
pub struct ProfileService {
    clients: Arc<dyn OAuthClientRepository>,
    profiles: Arc<dyn ProfileRepository>,
    registries: Registries,
    cache: ScopeCache,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
}

impl std::fmt::Debug for ProfileService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileService").field("cache", &self.cache).finish_non_exhaustive()
    }
}

impl ProfileService {
    /// A service over the client registry, the profile repository (which
    /// also checks grants and writes the access log on a client's read),
    /// the registries, the cache and the clock (the access log's times).
    pub fn new(
        clients: Arc<dyn OAuthClientRepository>,
        profiles: Arc<dyn ProfileRepository>,
        registries: Registries,
        cache: ScopeCache,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { clients, profiles, registries, cache, clock, metrics: Metrics::disabled() }
    }

    /// The same service, recording its registry calls (outcome and time)
    /// in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The answer for the holder of an OAuth2 access token with `claims`
    /// (`POST /api/perfil/dados/`), in the HTTP request `request_id`: the
    /// token's scopes, reduced to those still enabled for its client and,
    /// when `narrow` is given (space-separated), to those named there. A
    /// scope not granted or not enabled is omitted, never an error.
    ///
    /// The person must still grant the client access (a revocation takes
    /// effect at once, before the token expires), and every answer is
    /// first written to the access log with the scopes it carries, the time
    /// and `request_id`; the grant check and the log row ride on the one
    /// statement that reads the own profile. Errors: `InvalidToken` for a
    /// token without OAuth2 claims (an audience that names its client, and
    /// scopes), whose client is no longer registered or is deactivated
    /// (`Invalid`) or whose grant was revoked (`Revoked`); `UnknownUser` when the user no longer
    /// exists or is inactive; `Storage` when the database is unavailable or
    /// the log row cannot be written (then nothing is answered).
    pub async fn answer(
        &self,
        claims: &Claims,
        narrow: Option<&str>,
        request_id: &str,
    ) -> Result<Map<String, Value>, ServiceError> {
        let (Some(client_id), Some(scope)) = (claims.client_audience(), &claims.scope) else {
            return Err(TokenError::WrongType.into());
        };
        let client_id = ClientId::parse(client_id).map_err(|_| TokenError::Invalid)?;
        // The active flag comes with the client's record: no extra round trip.
        let client = serving_client(self.clients.as_ref(), &client_id).await?.ok_or(TokenError::Invalid)?;
        let mut scopes = ScopeSet::parse_lenient(scope).intersection(client.enabled_scopes);
        if let Some(narrow) = narrow {
            scopes = scopes.intersection(ScopeSet::parse_lenient(narrow));
        }
        let user = claims.person()?;
        let entry = AccessLogEntry {
            user,
            client: client_id,
            // What the answer carries a key for (the required scopes always).
            scopes: scopes.union(ScopeSet::required()),
            at: self.clock.now(),
            request_id: request_id.to_owned(),
        };
        let own = match self.profiles.read_for_client(&entry).await? {
            ClientRead::Answered(own) => own,
            ClientRead::NotGranted => return Err(TokenError::Revoked.into()),
            ClientRead::UnknownUser => return Err(ServiceError::UnknownUser),
        };
        Ok(self.assemble(user, &own, scopes).await)
    }

    /// The OpenID Connect userinfo answer (`/oauth/userinfo/`) for the
    /// holder of an OAuth2 access token with `claims`, in the HTTP request
    /// `request_id`: `sub`, and the claims of the token's profile scopes
    /// ([`userinfo_claims`]). The token must carry `openid`; as at the
    /// profile read, its client must still be served, the person must still
    /// grant it access, and the answer is first written to the access log
    /// (with the scopes it reads), in the one statement that reads the data.
    /// Errors: `InvalidToken` (as [`answer`](Self::answer));
    /// `Forbidden` for a token without `openid`; `UnknownUser`; `Storage`
    /// (then nothing is answered).
    pub async fn userinfo(&self, claims: &Claims, request_id: &str) -> Result<Map<String, Value>, ServiceError> {
        let (Some(client_id), Some(scope)) = (claims.client_audience(), &claims.scope) else {
            return Err(TokenError::WrongType.into());
        };
        let granted = ScopeSet::parse_lenient(scope);
        if !granted.has_openid() {
            return Err(ServiceError::Forbidden("the access token was not granted the openid scope".into()));
        }
        let client_id = ClientId::parse(client_id).map_err(|_| TokenError::Invalid)?;
        serving_client(self.clients.as_ref(), &client_id).await?.ok_or(TokenError::Invalid)?;
        let user = claims.person()?;
        let entry = AccessLogEntry {
            user,
            client: client_id,
            scopes: userinfo_scopes(granted),
            at: self.clock.now(),
            request_id: request_id.to_owned(),
        };
        match self.profiles.identity_for_client(&entry).await? {
            ClientRead::Answered(identity) => Ok(userinfo_claims(user, &identity, granted)),
            ClientRead::NotGranted => Err(TokenError::Revoked.into()),
            ClientRead::UnknownUser => Err(ServiceError::UnknownUser),
        }
    }

    /// The address claims of an ID token issued to `client` for `user`
    /// (the `email` scope), in the HTTP request `request_id`: the address
    /// and whether it is confirmed, `None` when the account has none. Read
    /// under the userinfo rules: the grant is checked and the read is
    /// written to the access log in the statement that reads it. Errors:
    /// `InvalidToken` when the person no longer grants the client access;
    /// `UnknownUser`; `Storage` (then nothing is read).
    pub async fn id_token_email(
        &self,
        user: UserId,
        client: &ClientId,
        request_id: &str,
    ) -> Result<Option<(String, bool)>, ServiceError> {
        let entry = AccessLogEntry {
            user,
            client: client.clone(),
            scopes: [Scope::Email].into_iter().collect(),
            at: self.clock.now(),
            request_id: request_id.to_owned(),
        };
        match self.profiles.identity_for_client(&entry).await? {
            ClientRead::Answered(identity) if identity.email.is_empty() => Ok(None),
            ClientRead::Answered(identity) => Ok(Some((identity.email, identity.email_verified))),
            ClientRead::NotGranted => Err(TokenError::Revoked.into()),
            ClientRead::UnknownUser => Err(ServiceError::UnknownUser),
        }
    }

    /// The profile answer of `user` for `scopes` (the caller has already
    /// reduced them to what was granted and is enabled for the client; the
    /// required scopes are added here), without grant check or access log.
    /// Upstream failures never fail the answer: they become stale data or
    /// `erro` objects. Errors: `UnknownUser` when the user no longer exists
    /// or is inactive, `Storage` when the database is unavailable.
    pub async fn profile(&self, user: UserId, scopes: ScopeSet) -> Result<Map<String, Value>, ServiceError> {
        let own = self.profiles.own_profile(user).await?.ok_or(ServiceError::UnknownUser)?;
        Ok(self.assemble(user, &own, scopes).await)
    }

    /// The answer for `scopes` from the own data `own` and the registries
    /// (through the cache).
    async fn assemble(&self, user: UserId, own: &OwnProfile, scopes: ScopeSet) -> Map<String, Value> {
        let cpf = own.cpf.as_deref().and_then(|c| Cpf::parse(c).ok());
        let mut upstream = Vec::new();
        let mut to_read = Vec::new();
        for scope in [Scope::ReceitaFederal, Scope::Cnes, Scope::CursosCdp] {
            if !scopes.contains(scope) || (scope == Scope::ReceitaFederal && !own.receita_validated) {
                // Not asked for, or not validated: the assembly says so.
                continue;
            }
            if cpf.is_none() {
                upstream.push((scope, UpstreamScopeData::Erro(ERRO_SEM_CPF.into())));
            } else {
                to_read.push(scope);
            }
        }
        if let Some(cpf) = &cpf {
            upstream.extend(self.cache.get(user, &to_read, |scope| self.fetch(scope, cpf)).await);
        }
        assemble(scopes, own, &upstream)
    }

    /// Called when `user` authorizes `scopes`: on the first authorization
    /// that includes `cnes`, the CNES bonds are added to the professional
    /// experiences — exactly once, on any instance. A CNES failure leaves it
    /// for the next authorization and does not fail this one.
    pub async fn on_authorized(&self, user: UserId, scopes: ScopeSet) -> Result<(), ServiceError> {
        if !scopes.contains(Scope::Cnes) {
            return Ok(());
        }
        let Some(own) = self.profiles.own_profile(user).await? else {
            return Err(ServiceError::UnknownUser);
        };
        let Some(cpf) = own.cpf.as_deref().and_then(|c| Cpf::parse(c).ok()) else {
            return Ok(());
        };
        let answer = self.cache.get(user, &[Scope::Cnes], |scope| self.fetch(scope, &cpf)).await;
        let Some((_, UpstreamScopeData::Value(value))) = answer.into_iter().next() else {
            return Ok(());
        };
        let Ok(cnes) = serde_json::from_value::<Cnes>(value) else {
            return Ok(());
        };
        let experiences = experiences_from_bonds(&cnes);
        if self.profiles.supplement_from_cnes(user, experiences).await? {
            tracing::info!(user = user.0, bonds = cnes.vinculos.len(), "experiences supplemented from CNES");
        }
        Ok(())
    }

    /// The tax authority's record of `cpf` (the CPF on file of `user`),
    /// through the cache of `user`'s `receita_federal` answers: fresh, else
    /// asked of the registry (and kept), else stale. For the tax-id
    /// validation, which must compare with what `receita_federal` answers.
    /// Errors: the `erro` text the scope would answer (in Portuguese, for
    /// the person) when there is neither an answer nor a kept record.
    pub async fn tax_record(&self, user: UserId, cpf: &Cpf) -> Result<ReceitaFederal, String> {
        let answer = self.cache.get(user, &[Scope::ReceitaFederal], |scope| self.fetch(scope, cpf)).await;
        match answer.into_iter().next() {
            Some((_, UpstreamScopeData::Value(value))) => serde_json::from_value(value).map_err(|_| {
                // The error text may quote the record's values: not logged.
                tracing::warn!("a kept tax record does not have the contract's shape");
                ERRO_RECEITA_INDISPONIVEL.to_owned()
            }),
            Some((_, UpstreamScopeData::Erro(erro))) => Err(erro),
            None => Err(ERRO_RECEITA_INDISPONIVEL.to_owned()),
        }
    }

    async fn fetch(&self, scope: Scope, cpf: &Cpf) -> Result<Value, UpstreamError> {
        let to_json = |r: Result<Value, serde_json::Error>| r.map_err(|e| UpstreamError::BadResponse(e.to_string()));
        match scope {
            Scope::ReceitaFederal => {
                to_json(serde_json::to_value(self.measured(scope, self.registries.tax_authority.lookup(cpf)).await?))
            }
            // A person unknown to CNES or CDP simply has no bonds or courses.
            Scope::Cnes => match self.measured(scope, self.registries.cnes.bonds(cpf)).await {
                Err(UpstreamError::NotFound) => to_json(serde_json::to_value(Cnes::default())),
                other => to_json(serde_json::to_value(other?)),
            },
            Scope::CursosCdp => match self.measured(scope, self.registries.cdp.courses(cpf)).await {
                Err(UpstreamError::NotFound) => to_json(serde_json::to_value(CursosCdp::from_courses(vec![]))),
                other => to_json(serde_json::to_value(other?)),
            },
            other => Err(UpstreamError::BadResponse(format!("{other} has no upstream"))),
        }
    }

    /// `call` to the registry of `scope`, its outcome and time recorded.
    async fn measured<T>(
        &self,
        scope: Scope,
        call: impl std::future::Future<Output = Result<T, UpstreamError>>,
    ) -> Result<T, UpstreamError> {
        let Some(upstream) = Upstream::of_scope(scope).filter(|_| self.metrics.is_enabled()) else {
            return call.await;
        };
        let started = std::time::Instant::now();
        let result = call.await;
        self.metrics.upstream_call(upstream, started.elapsed(), &result);
        result
    }
}

/// The experiences CNES bonds become: establishment from `noFant`,
/// profession from `noCBO`, municipality from `coMun`.
pub fn experiences_from_bonds(cnes: &Cnes) -> Vec<Experience> {
    cnes.vinculos
        .iter()
        .map(|b| Experience {
            estabelecimento: b.no_fant.clone(),
            profissao: b.no_cbo.clone(),
            data_inicio: None,
            data_fim: None,
            municipio: b.co_mun.clone(),
            descricao: String::new(),
        })
        .collect()
}
