//! The one token issuer: every token the service hands out is signed here,
//! and every refresh token is recorded and rotated here — the first-party
//! pair (`pair`, `refresh`), the OAuth2 grants (authorization code, refresh
//! token), the login session and the OpenID Connect ID token.
//!
//! The rules of what a token says live in the domain ([`Claims`]); this
//! component applies them with the configured keys, lifetimes and the
//! refresh-token store, so that the JWT routes and the OAuth2 provider can
//! never drift apart in how they sign, record or rotate.

use std::fmt;
use std::sync::Arc;

use credencial_domain::admin::LoginVia;
use credencial_domain::oauth::backchannel_logout::{LogoutTokenClaims, LOGOUT_TOKEN_JWT_TYPE};
use credencial_domain::oauth::discovery::IssuerUrl;
use credencial_domain::oauth::id_token::subject;
use credencial_domain::oauth::ClientId;
use credencial_domain::refresh_grace::{open_successor, seal_successor, IssuedTexts, RefreshGrace, SEAL_NONCE_BYTES};
use credencial_domain::{Claims, Redacted, ScopeSet, TokenCodec, TokenError, TokenLifetimes, TokenType, UserId};
use credencial_ports::{Clock, GraceRotation, NewRefreshToken, RefreshTokenStore, Rotation};
use rand::RngCore;

use crate::error::ServiceError;
use crate::metrics::{Metrics, ReplayOutcome, TokenKind};

/// Whom a pair of tokens is for: the service's own users (the lane of
/// `pair`/`refresh`), or a client application a person granted scopes to.
#[derive(Debug, Clone, Copy)]
pub enum Audience<'a> {
    /// A first-party pair: no `aud`, no `client_id`, no `scope`; the
    /// refresh token carries the login's methods (`amr`, RFC 8176 values),
    /// which every refresh re-checks against the account's bar.
    FirstParty {
        /// The login's methods.
        amr: &'a [String],
        /// The application password the login used (its id), carried by
        /// the refresh token so that a revocation ends the family.
        app_password: Option<i64>,
    },
    /// An OAuth2 pair for `client_id`: both tokens carry `aud` and
    /// `client_id`; the access token `access_scopes`, the refresh token
    /// `refresh_scopes` (what later refreshes may ask for).
    Client {
        /// The client the tokens are issued to.
        client_id: &'a ClientId,
        /// The access token's scopes.
        access_scopes: ScopeSet,
        /// The refresh token's scopes.
        refresh_scopes: ScopeSet,
        /// When the person logged in, on the tokens of an OpenID Connect
        /// grant (a refresh's ID token keeps it).
        auth_time: Option<i64>,
        /// The login's authentication context class (kept through
        /// refreshes; RFC 9068 `acr`).
        acr: Option<&'a str>,
        /// The login's methods (RFC 8176 values; RFC 9068 `amr`).
        amr: Option<&'a [String]>,
        /// The login session's `sid` (kept through refreshes, for the ID
        /// token).
        sid: Option<&'a str>,
    },
}

/// How the new refresh token is recorded.
#[derive(Debug, Clone, Copy)]
pub enum Recording<'a> {
    /// A login (`pair`): a family of its own, named after its first token,
    /// and an entry in the login history, in one statement.
    Login(LoginVia),
    /// The first token of `family` (an authorization-code exchange).
    Start {
        /// The family's name.
        family: &'a str,
    },
    /// In place of the current token `old_jti`, in its family, atomically.
    Rotate {
        /// The `jti` of the refresh token presented.
        old_jti: &'a str,
        /// The refresh token presented, as sent: within the grace window
        /// the new pair is kept sealed with a key derived from it.
        old_token: &'a str,
        /// When the family's login was (the presented token's
        /// [`Claims::family_started`]): no rotation past its absolute
        /// lifetime.
        family_started: i64,
    },
}

impl Recording<'_> {
    /// When the family of the refresh token recorded so started: now, for
    /// a login or a code; the presented token's, for a rotation.
    fn family_started(&self, now: i64) -> i64 {
        match self {
            Self::Login(_) | Self::Start { .. } => now,
            Self::Rotate { family_started, .. } => *family_started,
        }
    }
}

/// An access and a refresh token just issued, with their claims.
#[derive(Debug, Clone)]
pub struct IssuedPair {
    /// The signed access token.
    pub access: Redacted<String>,
    /// The signed refresh token.
    pub refresh: Redacted<String>,
    /// What the access token says.
    pub access_claims: Claims,
    /// What the refresh token says.
    pub refresh_claims: Claims,
}

/// Signs, records and rotates every token the service issues.
///
/// Two keys, one per kind of token (RFC 8725 §3.12): first-party tokens
/// and login sessions are signed with the service's key (`codec`: the
/// HS256 secret SUAP-side APIs share); tokens issued to client applications
/// with the provider's key pair when OpenID Connect has one (the ID-token
/// key, published at the JWKS URI), and with the service's key otherwise.
/// So an API holding the shared secret cannot verify, let alone mint, a
/// token a person granted to an application.
#[derive(Clone)]
pub struct TokenIssuer {
    codec: Arc<TokenCodec>,
    id_token_codec: Option<Arc<TokenCodec>>,
    refresh_tokens: Arc<dyn RefreshTokenStore>,
    clock: Arc<dyn Clock>,
    lifetimes: TokenLifetimes,
    grace: RefreshGrace,
    metrics: Metrics,
    /// The `iss` of the tokens issued to applications (RFC 9068 §2.2):
    /// the OpenID Connect issuer, when it is on.
    client_token_issuer: Option<String>,
}

impl fmt::Debug for TokenIssuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenIssuer")
            .field("codec", &self.codec)
            .field("id_token_codec", &self.id_token_codec)
            .field("lifetimes", &self.lifetimes)
            .field("grace", &self.grace)
            .finish_non_exhaustive()
    }
}

impl TokenIssuer {
    /// An issuer signing with `codec`, recording refresh tokens in
    /// `refresh_tokens`, with the given lifetimes. It signs no ID token
    /// until given a key ([`with_id_token_codec`](Self::with_id_token_codec)).
    pub fn new(
        codec: Arc<TokenCodec>,
        refresh_tokens: Arc<dyn RefreshTokenStore>,
        clock: Arc<dyn Clock>,
        lifetimes: TokenLifetimes,
    ) -> Self {
        Self {
            codec,
            id_token_codec: None,
            refresh_tokens,
            clock,
            lifetimes,
            grace: RefreshGrace::default(),
            metrics: Metrics::disabled(),
            client_token_issuer: None,
        }
    }

    /// The same issuer with the concurrent-refresh grace window `grace`
    /// (default 10 s; [`RefreshGrace::disabled`] turns it off).
    pub fn with_refresh_grace(mut self, grace: RefreshGrace) -> Self {
        self.grace = grace;
        self
    }

    /// The concurrent-refresh grace window.
    pub fn refresh_grace(&self) -> RefreshGrace {
        self.grace
    }

    /// The same issuer, counting the tokens it issues (by kind) and the
    /// refresh replays it detects in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The same issuer, signing OpenID Connect ID tokens with `codec` (the
    /// provider's asymmetric key).
    pub fn with_id_token_codec(mut self, codec: Arc<TokenCodec>) -> Self {
        self.id_token_codec = Some(codec);
        self
    }

    /// The same issuer, naming `issuer` (the OpenID Connect issuer, as
    /// the discovery document says it) as the `iss` of every token issued
    /// to an application (RFC 9068 §2.2). First-party tokens carry no
    /// `iss` (simplejwt's shape).
    pub fn with_client_token_issuer(mut self, issuer: &IssuerUrl) -> Self {
        self.client_token_issuer = Some(issuer.as_str().to_owned());
        self
    }

    /// The codec of the service's own tokens, for callers that verify them.
    pub fn codec(&self) -> &TokenCodec {
        &self.codec
    }

    /// The codec of tokens issued to client applications: the ID-token
    /// codec when the provider has a key pair, the service's own otherwise.
    pub fn client_codec(&self) -> &TokenCodec {
        self.id_token_codec.as_deref().unwrap_or(&self.codec)
    }

    /// Verifies a token with the service's key (first-party tokens and
    /// login sessions), at the issuer's clock, whatever its type and lane.
    /// A client application's token signed with the client key is refused
    /// as `WrongType` rather than `Invalid`: it is a token of ours, in the
    /// wrong place (the client key is only tried for a token the service's
    /// key refused). Errors: as [`TokenCodec::decode`].
    pub fn decode_own(&self, token: &str) -> Result<Claims, TokenError> {
        let now = self.now();
        match self.codec.decode(token, now) {
            Err(TokenError::Invalid)
                if !std::ptr::eq(self.client_codec(), self.codec.as_ref())
                    && self.client_codec().decode(token, now).is_ok() =>
            {
                Err(TokenError::WrongType)
            }
            read => read,
        }
    }

    /// Verifies a first-party token of `expected` type (`access` or
    /// `refresh`) with the service's key, at the issuer's clock (see
    /// [`decode_own`](Self::decode_own)); any other token is `WrongType`.
    pub fn decode_first_party(&self, token: &str, expected: TokenType) -> Result<Claims, TokenError> {
        let claims = self.decode_own(token)?;
        if claims.token_type != expected || !claims.is_first_party() {
            return Err(TokenError::WrongType);
        }
        Ok(claims)
    }

    /// Verifies a token issued to a client application, of `expected` kind
    /// (access or refresh; see [`Claims::require_client_kind`]), at the
    /// issuer's clock, with the keys of [`decode_client_lane`](Self::decode_client_lane).
    pub fn decode_client(&self, token: &str, expected: TokenType) -> Result<Claims, TokenError> {
        let claims = self.decode_client_lane(token)?;
        claims.require_client_kind(expected)?;
        Ok(claims)
    }

    /// Verifies a token that a client application presents (whose lane the
    /// caller then checks, as revocation and introspection do) at the
    /// issuer's clock: with the client key, and when that is not the
    /// service's own key, also with the service's key — for the refresh
    /// tokens issued before the provider had a key pair, and for the
    /// first-party tokens a client may present by mistake.
    ///
    /// A client token that the service's key signed is then read as a
    /// refresh token only (until it expires; its record in the
    /// refresh-token store is checked at every use): a client *access*
    /// token signed with the shared secret is `Invalid`, because whoever
    /// holds that secret (every API that reads first-party tokens) could
    /// mint one. Errors: as [`TokenCodec::decode`]; `Invalid` for such an
    /// access token.
    pub fn decode_client_lane(&self, token: &str) -> Result<Claims, TokenError> {
        let now = self.now();
        let client = self.client_codec();
        let read = client.decode(token, now);
        if !matches!(read, Err(TokenError::Invalid)) || std::ptr::eq(client, self.codec.as_ref()) {
            return read;
        }
        let claims = self.codec.decode(token, now)?;
        if claims.client_audience().is_some() && claims.token_type.is_access() {
            return Err(TokenError::Invalid);
        }
        Ok(claims)
    }

    /// Verifies a refresh token a client application presents at the
    /// token endpoint: with the provider's key pair when it has one, and
    /// only with it. The service's key (the HS256 secret SUAP-side APIs
    /// share) mints nothing in the application lane: a refresh token it
    /// signed — forged by whoever holds the secret, with the `jti` of a
    /// live first-party token — is `Invalid` there. Without a key pair,
    /// applications' tokens are signed with the service's key, and this is
    /// [`decode_client_lane`](Self::decode_client_lane).
    /// Errors: as [`TokenCodec::decode`].
    pub fn decode_client_refresh(&self, token: &str) -> Result<Claims, TokenError> {
        let claims = self.client_codec().decode(token, self.now())?;
        if !claims.token_type.is_refresh() {
            return Err(TokenError::WrongType);
        }
        Ok(claims)
    }

    /// The codec of ID tokens, when the provider has a key.
    pub fn id_token_codec(&self) -> Option<&TokenCodec> {
        self.id_token_codec.as_deref()
    }

    /// Whether ID tokens can be signed.
    pub fn has_id_token_key(&self) -> bool {
        self.id_token_codec.is_some()
    }

    /// The token lifetimes.
    pub fn lifetimes(&self) -> TokenLifetimes {
        self.lifetimes
    }

    /// The current time (Unix seconds) by the service's clock.
    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// The refresh-token store the issuer records in.
    pub fn refresh_tokens(&self) -> &dyn RefreshTokenStore {
        self.refresh_tokens.as_ref()
    }

    /// Signs `claims` with the key of their lane: the client key for a
    /// token with a client audience, the service's key otherwise (see
    /// [`TokenIssuer`]). Errors: `Internal` (a key problem, never a
    /// client's fault).
    pub fn sign(&self, claims: &Claims) -> Result<String, ServiceError> {
        let codec = match claims.client_audience() {
            Some(_) => self.client_codec(),
            None => &self.codec,
        };
        codec.encode_claims(claims).map_err(|e| ServiceError::Internal(e.to_string()))
    }

    /// Signs an application's own access token (`client_credentials`):
    /// `oauth_machine`, for `client_id` with the API permissions `scope`,
    /// living as long as an access token, signed with the client key (see
    /// [`TokenIssuer`]) and never recorded (there is no refresh token).
    /// Errors: `Internal`.
    pub fn issue_machine(
        &self,
        client_id: &ClientId,
        scope: String,
    ) -> Result<(Redacted<String>, Claims), ServiceError> {
        let claims = Claims {
            iss: self.client_token_issuer.clone(),
            ..Claims::machine(client_id.as_str(), scope, self.now(), self.lifetimes.of(TokenType::Machine))
        };
        let token = Redacted(self.sign(&claims)?);
        self.metrics.tokens_issued(TokenKind::OAuthMachine, 1);
        Ok((token, claims))
    }

    /// Signs an ID token's claims with the provider's asymmetric key.
    /// Errors: `Internal` when the provider has no key or signing fails.
    pub fn sign_id_token<T: serde::Serialize>(&self, claims: &T) -> Result<String, ServiceError> {
        let token = self.id_token_key()?.encode(claims).map_err(|e| ServiceError::Internal(e.to_string()))?;
        self.metrics.tokens_issued(TokenKind::IdToken, 1);
        Ok(token)
    }

    /// Signs a back-channel logout token's claims with the ID-token key,
    /// typed `logout+jwt` (Back-Channel Logout 1.0 §2.4). Errors:
    /// `Internal` when the provider has no key or signing fails.
    pub fn sign_logout_token(&self, claims: &LogoutTokenClaims) -> Result<String, ServiceError> {
        let token = self
            .id_token_key()?
            .encode_typed(claims, LOGOUT_TOKEN_JWT_TYPE)
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        self.metrics.tokens_issued(TokenKind::IdToken, 1);
        Ok(token)
    }

    /// The ID-token key. Errors: `Internal` when none is configured.
    fn id_token_key(&self) -> Result<&TokenCodec, ServiceError> {
        self.id_token_codec
            .as_deref()
            .ok_or_else(|| ServiceError::Internal("no ID-token signing key is configured".into()))
    }

    /// Signs an access and a refresh token for `user` in `audience`'s lane
    /// and records the refresh token as `recording` says.
    ///
    /// A rotation of a token that is no longer current is refused as
    /// `InvalidToken(Revoked)`; when that token had been rotated before (a
    /// replay: two parties hold copies of it), its whole family is revoked
    /// first, so neither the thief nor the user can go on refreshing.
    ///
    /// Except within the grace window: a token rotated at most
    /// `refresh_grace_secs` ago whose successor is still current (two tabs
    /// refreshing at once) is answered the very pair its rotation issued,
    /// byte for byte, and nothing is revoked. Every rotation keeps that pair
    /// sealed for the window with a key derived from the presented token
    /// ([`credencial_domain::refresh_grace`]). Errors: `Storage`, `Internal`.
    pub async fn issue_pair(
        &self,
        user: UserId,
        audience: Audience<'_>,
        recording: Recording<'_>,
    ) -> Result<IssuedPair, ServiceError> {
        let now = self.now();
        let family_started = recording.family_started(now);
        let family_ends = self.lifetimes.family_ends_at(family_started);
        if family_ends <= now {
            // The family's absolute lifetime is over: the person logs in again.
            return Err(TokenError::Expired.into());
        }
        let claims = |token_type: TokenType| {
            let lifetime = match token_type.is_refresh() {
                true => self.lifetimes.of(token_type).min(family_ends - now),
                false => self.lifetimes.of(token_type),
            };
            let mut base = Claims::new(token_type, user.0, now, lifetime);
            if token_type.is_refresh() {
                base.orig_iat = Some(family_started);
            }
            match audience {
                Audience::FirstParty { amr, app_password } => Claims {
                    amr: token_type.is_refresh().then(|| amr.to_vec()),
                    app_password: app_password.filter(|_| token_type.is_refresh()),
                    ..base
                },
                Audience::Client { client_id, access_scopes, refresh_scopes, auth_time, acr, amr, sid } => {
                    let scopes = if token_type.is_access() { access_scopes } else { refresh_scopes };
                    Claims {
                        token_type: token_type.for_client(),
                        // RFC 9068 §2.2: who issued it, and the person as
                        // their ID tokens name them.
                        iss: self.client_token_issuer.clone(),
                        sub: Some(subject(user)),
                        scope: Some(scopes.to_scope_string()),
                        client_id: Some(client_id.as_str().to_owned()),
                        aud: Some(client_id.as_str().to_owned()),
                        auth_time,
                        acr: acr.map(str::to_owned),
                        amr: amr.map(<[String]>::to_vec),
                        sid: sid.map(str::to_owned),
                        ..base
                    }
                }
            }
        };
        let (access_claims, refresh_claims) = (claims(TokenType::Access), claims(TokenType::Refresh));
        let access = Redacted(self.sign(&access_claims)?);
        let refresh = Redacted(self.sign(&refresh_claims)?);
        let record = NewRefreshToken { jti: refresh_claims.jti.clone(), user_id: user, expires_at: refresh_claims.exp };
        match recording {
            // A login starts a family of its own, named after its first token.
            Recording::Login(via) => {
                let family = record.jti.clone();
                self.refresh_tokens.record_login(record, &family, via).await?;
            }
            Recording::Start { family } => self.refresh_tokens.record(record, family).await?,
            Recording::Rotate { old_jti, old_token, .. } => {
                let texts = IssuedTexts { access: access.0.clone(), refresh: refresh.0.clone() };
                let grace = self.grace_rotation(old_token, old_jti, &texts, now);
                match self.refresh_tokens.rotate(old_jti, user, record, grace).await? {
                    Rotation::Repeated { sealed } => {
                        return self.repeated(old_token, old_jti, &sealed, user, audience, now);
                    }
                    rotation => self.rotated_or_revoked(rotation, user).await?,
                }
            }
        }
        let kinds = match audience {
            Audience::FirstParty { .. } => [TokenKind::Access, TokenKind::Refresh],
            Audience::Client { .. } => [TokenKind::OAuthAccess, TokenKind::OAuthRefresh],
        };
        for kind in kinds {
            self.metrics.tokens_issued(kind, 1);
        }
        Ok(IssuedPair { access, refresh, access_claims, refresh_claims })
    }

    /// What a rotation at `now` keeps for the grace window: `texts` sealed
    /// for the holder of `old_token`. `None` when the window is disabled.
    fn grace_rotation(&self, old_token: &str, old_jti: &str, texts: &IssuedTexts, now: i64) -> Option<GraceRotation> {
        let covered_since = self.grace.covered_since(now)?;
        let mut nonce = [0u8; SEAL_NONCE_BYTES];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed_successor = seal_successor(old_token, old_jti, texts, nonce)?;
        Some(GraceRotation { sealed_successor, at: now, covered_since })
    }

    /// The pair a rotation of `old_token` issued moments ago, opened from
    /// what it sealed, for a replay inside the grace window. Refused as
    /// `Revoked` (nothing revoked) if it does not open or is not a pair of
    /// `user` in `audience`'s lane.
    fn repeated(
        &self,
        old_token: &str,
        old_jti: &str,
        sealed: &[u8],
        user: UserId,
        audience: Audience<'_>,
        now: i64,
    ) -> Result<IssuedPair, ServiceError> {
        let texts = open_successor(old_token, old_jti, sealed).ok_or(TokenError::Revoked)?;
        let (access_claims, refresh_claims) = match audience {
            Audience::FirstParty { .. } => (
                self.codec.decode_first_party(&texts.access, TokenType::Access, now)?,
                self.codec.decode_first_party(&texts.refresh, TokenType::Refresh, now)?,
            ),
            Audience::Client { .. } => (
                self.decode_client(&texts.access, TokenType::ClientAccess)?,
                self.decode_client(&texts.refresh, TokenType::ClientRefresh)?,
            ),
        };
        let lane = match audience {
            Audience::FirstParty { .. } => true,
            Audience::Client { client_id, .. } => {
                access_claims.client_audience() == Some(client_id.as_str())
                    && refresh_claims.client_audience() == Some(client_id.as_str())
            }
        };
        if !lane || access_claims.user_id != Some(user.0) || refresh_claims.user_id != Some(user.0) {
            return Err(TokenError::Revoked.into());
        }
        // A concurrent refresh, not a theft: counted apart from revocations.
        self.metrics.refresh_replay(ReplayOutcome::Grace);
        tracing::info!(
            user = user.0,
            "a refresh token was presented again within the grace window: same pair answered"
        );
        Ok(IssuedPair {
            access: Redacted(texts.access),
            refresh: Redacted(texts.refresh),
            access_claims,
            refresh_claims,
        })
    }

    /// `Ok` when `rotation` rotated the presented token; a replay revokes
    /// every current token of its family first. Errors:
    /// `InvalidToken(Revoked)` for a token that was not rotated, `Storage`.
    async fn rotated_or_revoked(&self, rotation: Rotation, user: UserId) -> Result<(), ServiceError> {
        match rotation {
            Rotation::Rotated => Ok(()),
            Rotation::Refused | Rotation::Repeated { .. } => Err(TokenError::Revoked.into()),
            Rotation::Replayed { family } => {
                self.metrics.refresh_replay(ReplayOutcome::Revoked);
                let revoked = self.refresh_tokens.revoke_family(&family).await?;
                tracing::warn!(
                    user = user.0,
                    revoked,
                    "a rotated refresh token was presented again: its family is revoked"
                );
                Err(TokenError::Revoked.into())
            }
        }
    }
}
