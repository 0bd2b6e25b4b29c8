//! The token endpoint's use cases (RFC 6749 §3.2): client authentication,
//! the `authorization_code` and `refresh_token` grants, and the answer
//! (with an OpenID Connect ID token when `openid` was granted).

use std::fmt;

use credencial_domain::assurance::{decide, AccountPolicy, Decision, Proof};
use credencial_domain::federation::Demand;
use credencial_domain::oauth::{
    check_code_exchange, client_authentication, presented_client, refreshed_scopes, ClientAuthentication, ClientId,
    CodeHash, GrantType, OAuthError, BAD_CLIENT,
};
use credencial_domain::session::amr_claim;
use credencial_domain::throttle::ClientAddress;
use credencial_domain::{Redacted, Scope, ScopeSet, UserId};
use credencial_ports::OAuthClient;
use secrecy::SecretString;
use serde::Serialize;

use super::{oidc, serving_client, OAuthService, BEARER};
use crate::error::ServiceError;
use crate::metrics::{LoginForm, LoginOutcome};
use crate::tokens::{Audience, Recording};

/// A token request as received (form fields and the `Authorization`
/// header). Empty values count as absent. `Debug` hides every credential.
#[derive(Clone, Default)]
pub struct TokenRequest {
    /// The `Authorization` header (`Basic …` for `client_secret_basic`).
    pub authorization: Option<String>,
    /// `grant_type`.
    pub grant_type: Option<String>,
    /// `client_id` (body).
    pub client_id: Option<String>,
    /// `client_secret` (body, `client_secret_post`).
    pub client_secret: Option<String>,
    /// `code` (authorization_code grant).
    pub code: Option<String>,
    /// `redirect_uri` (authorization_code grant).
    pub redirect_uri: Option<String>,
    /// `code_verifier` (PKCE).
    pub code_verifier: Option<String>,
    /// `refresh_token` (refresh_token grant).
    pub refresh_token: Option<String>,
    /// `scope` (refresh_token grant: may narrow, never widen;
    /// client_credentials: the API permissions asked for).
    pub scope: Option<String>,
    /// Where the request came from (for the brute-force limits).
    pub client_address: Option<ClientAddress>,
    /// The HTTP request's id: the access log's entry of an ID token that
    /// carries the address names it.
    pub request_id: String,
}

impl fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| "[redacted]");
        f.debug_struct("TokenRequest")
            .field("authorization", &hidden(&self.authorization))
            .field("grant_type", &self.grant_type)
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(&self.client_secret))
            .field("code", &hidden(&self.code))
            .field("redirect_uri", &self.redirect_uri)
            .field("code_verifier", &hidden(&self.code_verifier))
            .field("refresh_token", &hidden(&self.refresh_token))
            .field("scope", &self.scope)
            .field("client_address", &self.client_address)
            .finish()
    }
}

/// A successful token response (RFC 6749 §5.1). `Debug` hides the tokens.
#[derive(Debug, Clone, Serialize)]
pub struct OAuthTokens {
    /// The access token: a JWT with `scope` and `client_id` claims.
    pub access_token: Redacted<String>,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds the access token lives.
    pub expires_in: i64,
    /// The refresh token: single use, rotated on every refresh; none for
    /// an application's own token (`client_credentials`, RFC 6749 §4.4.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Redacted<String>>,
    /// The access token's scopes, space-separated.
    pub scope: String,
    /// The OpenID Connect ID token, when `openid` was granted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<Redacted<String>>,
}

impl OAuthService {
    // ---------------------------------------------------- token endpoint

    /// The token endpoint: checks `grant_type`, authenticates the client
    /// (`client_secret_basic`, `client_secret_post`, or `client_id` alone for
    /// public clients, which prove themselves with PKCE), then redeems a
    /// code, rotates a refresh token or issues the client its own token.
    /// Errors: `OAuth` with the RFC 6749
    /// code; `Storage`, `Internal`.
    pub async fn token(&self, request: TokenRequest) -> Result<OAuthTokens, ServiceError> {
        let grant_type = GrantType::parse(request.grant_type.as_deref())?;
        let client = self.authenticate_client(&request).await?;
        let tokens = match grant_type {
            GrantType::AuthorizationCode => self.exchange_code(&client, &request).await?,
            GrantType::RefreshToken => self.refresh(&client, &request).await?,
            GrantType::ClientCredentials => self.client_credentials(&client, &request).await?,
        };
        tracing::info!(client_id = %client.client_id, ?grant_type, scope = %tokens.scope, "oauth2 tokens issued");
        Ok(tokens)
    }

    /// The client the request authenticates as. A request without a secret
    /// has nothing to guess: a public client is accepted, anything else is
    /// `invalid_client`, without hashing or counting. A request with a
    /// secret goes through the brute-force limit of its address
    /// (`Throttled` while limited) and costs one hash, whether the
    /// client is unknown, public, or the secret wrong; each of those counts
    /// as a failure.
    pub(super) async fn authenticate_client(&self, request: &TokenRequest) -> Result<OAuthClient, ServiceError> {
        let presented = presented_client(
            request.authorization.as_deref(),
            request.client_id.as_deref(),
            request.client_secret.as_deref(),
        )?;
        let found = match ClientId::parse(&presented.client_id) {
            // A deactivated client can neither redeem a code nor refresh.
            Ok(id) => serving_client(self.clients.as_ref(), &id).await?,
            Err(_) => None,
        };
        let Some(secret) = presented.secret else {
            return match found {
                Some(client) => match client_authentication(&client.policy(), false)? {
                    ClientAuthentication::Public => Ok(client),
                    ClientAuthentication::VerifySecret => Err(OAuthError::InvalidClient(BAD_CLIENT).into()),
                },
                None => Err(OAuthError::InvalidClient(BAD_CLIENT).into()),
            };
        };
        // Unknown clients and public clients that send a secret are checked
        // against the dummy hash: they cost what a wrong secret costs.
        let hash = found.as_ref().and_then(|client| match client_authentication(&client.policy(), true) {
            Ok(ClientAuthentication::VerifySecret) => client.secret_hash.clone(),
            _ => None,
        });
        let eligible = hash.is_some();
        let checked = self
            .tokens
            .credentials()
            .check_client_secret(request.client_address, hash, SecretString::from(secret), eligible)
            .await;
        if let Some(outcome) = LoginOutcome::of_check(&checked) {
            self.tokens.metrics().login_outcome(LoginForm::ClientSecret, outcome);
        }
        let valid = checked?;
        match found {
            Some(client) if valid => Ok(client),
            _ => Err(OAuthError::InvalidClient(BAD_CLIENT).into()),
        }
    }

    async fn exchange_code(&self, client: &OAuthClient, request: &TokenRequest) -> Result<OAuthTokens, ServiceError> {
        let code = present(&request.code).ok_or_else(|| OAuthError::InvalidRequest("code is required".into()))?;
        let now = self.clock.now();
        let code_hash = CodeHash::of(code);
        let family = code_family(&client.client_id, &code_hash);
        let Some(grant) = self.codes.redeem(&code_hash, &client.client_id, now).await? else {
            // If this client redeemed the code before, the code was copied:
            // what it issued is revoked (RFC 6749 §4.1.2). A code that was
            // never redeemed by this client has no family: nothing happens.
            let revoked = self.tokens.issuer().refresh_tokens().revoke_family(&family).await?;
            if revoked > 0 {
                tracing::warn!(
                    client_id = client.client_id.as_str(),
                    revoked,
                    "a redeemed authorization code was presented again: the tokens it issued are revoked"
                );
            }
            return Err(
                OAuthError::InvalidGrant("authorization code is invalid, expired or already used".into()).into()
            );
        };
        let scopes = check_code_exchange(
            &grant,
            &client.policy(),
            request.redirect_uri.as_deref(),
            request.code_verifier.as_deref(),
        )?;
        let lane = Lane { client_id: &client.client_id, access_scopes: scopes, refresh_scopes: scopes };
        let amr = grant.amr.as_deref().map(amr_claim);
        let sign_in = SignIn {
            auth_time: grant.auth_time,
            nonce: grant.nonce.as_deref(),
            acr: grant.acr.as_deref(),
            amr: amr.as_deref(),
            sid: grant.sid.as_deref(),
            request_id: &request.request_id,
        };
        let tokens = self.issue(grant.user_id, lane, sign_in, Recording::Start { family: &family }).await?;
        // The person may have revoked the client since the code was issued.
        // Checked after the family is recorded: a revocation that comes
        // later revokes it with the others, one that came first is seen here.
        if !self.grants.is_granted(grant.user_id, &client.client_id).await? {
            self.tokens.issuer().refresh_tokens().revoke_family(&family).await?;
            return Err(OAuthError::InvalidGrant("the user revoked this client's access".into()).into());
        }
        Ok(tokens)
    }

    async fn refresh(&self, client: &OAuthClient, request: &TokenRequest) -> Result<OAuthTokens, ServiceError> {
        let raw = present(&request.refresh_token)
            .ok_or_else(|| OAuthError::InvalidRequest("refresh_token is required".into()))?;
        let old = self
            .tokens
            .issuer()
            .decode_client_refresh(raw)
            .map_err(|_| OAuthError::InvalidGrant("refresh token is invalid or expired".into()))?;
        // The token's audience must be this client (a first-party refresh
        // token, or one issued to another client, buys nothing here).
        if old.client_audience() != Some(client.client_id.as_str()) {
            return Err(OAuthError::InvalidGrant("refresh token was not issued to this client".into()).into());
        }
        let user = old.person().map_err(|_| OAuthError::InvalidGrant("refresh token is invalid or expired".into()))?;
        self.refresh_still_holds(client, user, &old).await?;
        let granted = ScopeSet::parse_lenient(old.scope.as_deref().unwrap_or(""));
        let (refresh_scopes, access_scopes) =
            refreshed_scopes(granted, client.enabled_scopes, request.scope.as_deref())?;
        let lane = Lane { client_id: &client.client_id, access_scopes, refresh_scopes };
        // A refresh's ID token keeps the login's time and has no nonce.
        let sign_in = SignIn {
            auth_time: old.auth_time,
            nonce: None,
            acr: old.acr.as_deref(),
            amr: old.amr.as_deref(),
            sid: old.sid.as_deref(),
            request_id: &request.request_id,
        };
        let rotate = Recording::Rotate { old_jti: &old.jti, old_token: raw, family_started: old.family_started() };
        self.issue(user, lane, sign_in, rotate).await
    }

    /// Whether the login behind `old` (a refresh token of `client` for
    /// `user`) still lets the person in, by the one rule: the person is
    /// still active, and what the login proved (the token's `amr` and
    /// `acr`) meets the account's bar and the application's requirements
    /// as they are now — a second factor or a gov.br level added since is
    /// asked of every refresh. Errors: `invalid_grant` when not (the
    /// application sends the person to log in again); `Storage`.
    async fn refresh_still_holds(
        &self,
        client: &OAuthClient,
        user: UserId,
        old: &credencial_domain::Claims,
    ) -> Result<(), ServiceError> {
        if !self.tokens.is_active_user(user).await? {
            return Err(OAuthError::InvalidGrant("the user is no longer active".into()).into());
        }
        let proof = Proof::from_claims(old.amr.as_deref(), old.acr.as_deref(), old.auth_time.unwrap_or(old.iat));
        let demand = Demand::new(client.requires_second_factor, client.minimum_govbr_level, None);
        let policy = match proof.account_policy_matters() {
            true => self.tokens.account_policy(user).await?,
            false => AccountPolicy::default(),
        };
        match decide(&proof, policy, &demand) {
            Decision::In => Ok(()),
            Decision::AddFactor | Decision::Refused(_) => Err(OAuthError::InvalidGrant(
                "the login no longer meets this client's requirements; the user must log in again".into(),
            )
            .into()),
        }
    }

    /// Issues the client's pair through the one token issuer (recorded as
    /// `recording` says) and shapes the RFC 6749 answer; a refresh token
    /// that is no longer current is `invalid_grant` (and revoked its family
    /// if it had been rotated before). With `openid` in the access token's
    /// scopes, an ID token goes with them (OpenID Connect Core §3.1.3.3,
    /// §12.2).
    async fn issue(
        &self,
        user: UserId,
        lane: Lane<'_>,
        sign_in: SignIn<'_>,
        recording: Recording<'_>,
    ) -> Result<OAuthTokens, ServiceError> {
        let Lane { client_id, access_scopes, refresh_scopes } = lane;
        let auth_time = sign_in.auth_time.filter(|_| refresh_scopes.has_openid());
        let audience = Audience::Client {
            client_id,
            access_scopes,
            refresh_scopes,
            auth_time,
            acr: sign_in.acr,
            amr: sign_in.amr,
            sid: sign_in.sid,
        };
        // The ID token's address is a read of personal data: logged (and
        // the grant checked) before anything is issued.
        let email = match access_scopes.has_openid() && access_scopes.contains(Scope::Email) {
            true => match self.profiles.id_token_email(user, client_id, sign_in.request_id).await {
                Err(ServiceError::InvalidToken(_)) => {
                    return Err(OAuthError::InvalidGrant("the user revoked this client's access".into()).into())
                }
                other => other?,
            },
            false => None,
        };
        let issued = match self.tokens.issuer().issue_pair(user, audience, recording).await {
            Err(ServiceError::InvalidToken(_)) => {
                return Err(OAuthError::InvalidGrant("refresh token was already used or has been revoked".into()).into())
            }
            other => other?,
        };
        let id_token = match access_scopes.has_openid() {
            true => Some(Redacted(self.id_token(oidc::IdTokenFor {
                user,
                client_id,
                auth_time: sign_in.auth_time,
                nonce: sign_in.nonce,
                access_token: &issued.access,
                acr: sign_in.acr,
                amr: sign_in.amr,
                email: email.as_ref().map(|(address, verified)| (address.as_str(), *verified)),
                sid: sign_in.sid,
            })?)),
            false => None,
        };
        Ok(OAuthTokens {
            access_token: issued.access,
            token_type: BEARER,
            expires_in: self.tokens.lifetimes().access_secs,
            // The access token's own scopes: within the grace window the
            // pair answered is the first rotation's, whatever this request
            // asked to narrow.
            scope: issued.access_claims.scope.clone().unwrap_or_else(|| access_scopes.to_scope_string()),
            refresh_token: Some(issued.refresh),
            id_token,
        })
    }
}

/// The client lane of a pair: the client and each token's scopes.
#[derive(Debug, Clone, Copy)]
struct Lane<'a> {
    client_id: &'a ClientId,
    access_scopes: ScopeSet,
    refresh_scopes: ScopeSet,
}

/// What the ID token of a pair says of the login.
#[derive(Debug, Clone, Copy)]
struct SignIn<'a> {
    /// When the person logged in, if known.
    auth_time: Option<i64>,
    /// The authorization request's nonce (code exchange only).
    nonce: Option<&'a str>,
    /// The login's authentication context class, when known.
    acr: Option<&'a str>,
    /// The login's methods (RFC 8176), when known.
    amr: Option<&'a [String]>,
    /// The login session's `sid`, when the grant was made in one.
    sid: Option<&'a str>,
    /// The HTTP request's id (for the access log).
    request_id: &'a str,
}

/// The refresh-token family an authorization code starts: the client and
/// the code's hash, so that only the client the code was issued to can
/// revoke it by presenting the code again.
fn code_family(client_id: &ClientId, code_hash: &CodeHash) -> String {
    let hash: String = code_hash.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("code:{}:{hash}", client_id.as_str())
}

fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}
