//! RFC 7009 revocation and RFC 7662 introspection for client applications,
//! authenticated as at the token endpoint. The rules of what a client may
//! revoke and learn are the domain's ([`credencial_domain::introspection`]).

use credencial_domain::introspection::{revocation_target, servable_scope, Introspection, RevocationTarget};
use credencial_domain::oauth::{OAuthError, BAD_CLIENT};
use credencial_domain::UserId;
use credencial_ports::TokenRevocation;

use super::{OAuthService, TokenRequest};
use crate::error::ServiceError;

impl OAuthService {
    /// `POST /oauth/revoke/` (RFC 7009): the client authenticates with the
    /// client fields of `client` (`Authorization`, `client_id`,
    /// `client_secret`, the address; as at the token endpoint, public
    /// clients by `client_id` alone), then a refresh token issued to it is
    /// revoked with its whole family. Everything else answers `Ok` and
    /// changes nothing (RFC 7009 §2.2): an access token (not revocable: it
    /// ends with its lifetime), another client's or a first-party token,
    /// and a token that does not verify or has expired. Errors:
    /// `invalid_request` without `token`; `invalid_client`, `Throttled` as
    /// at the token endpoint; `Storage`.
    pub async fn revoke(&self, client: &TokenRequest, token: Option<&str>) -> Result<(), ServiceError> {
        let token = required_token(token)?;
        let caller = self.authenticate_client(client).await?;
        let Ok(claims) = self.tokens.issuer().decode_client_lane(token) else {
            return Ok(());
        };
        if let RevocationTarget::RefreshFamily { jti, user_id } = revocation_target(&claims, &caller.client_id) {
            let found = self.tokens.issuer().refresh_tokens().revoke_token(jti, UserId(user_id)).await?;
            if found == TokenRevocation::WasRotated {
                tracing::warn!(
                    client_id = caller.client_id.as_str(),
                    user = user_id,
                    "a rotated refresh token was presented for revocation: its family is revoked"
                );
            } else if found == TokenRevocation::Revoked {
                tracing::info!(client_id = caller.client_id.as_str(), user = user_id, "refresh token revoked");
            }
        }
        Ok(())
    }

    /// `POST /oauth/introspect/` (RFC 7662): what the authenticated
    /// confidential client may know about `token`. Active only for an
    /// unexpired access or refresh token issued to this client, of an
    /// active user whose consent to the client still stands, and for a
    /// refresh token only while it is current; its `scope` is what the
    /// client may still be served (the token's scopes less any the client
    /// lost since; `openid` kept, see [`servable_scope`]). Anything else, including another client's token, is
    /// `{"active": false}`. Errors: `invalid_request` without `token`;
    /// `invalid_client` for a failed authentication and for a public client
    /// (anyone can name a public client, so it cannot be told anything);
    /// `Throttled`; `Storage`.
    pub async fn introspect(&self, client: &TokenRequest, token: Option<&str>) -> Result<Introspection, ServiceError> {
        let token = required_token(token)?;
        let caller = self.authenticate_client(client).await?;
        if !caller.confidential {
            return Err(OAuthError::InvalidClient(BAD_CLIENT).into());
        }
        let Ok(claims) = self.tokens.issuer().decode_client_lane(token) else {
            return Ok(Introspection::inactive());
        };
        let mut answer = Introspection::for_caller(&claims, &caller.client_id);
        if !answer.active {
            return Ok(answer);
        }
        if let Ok(client) = claims.machine_client() {
            return self.introspect_machine(answer, client, claims.scope.as_deref()).await;
        }
        let Ok(user) = claims.person() else {
            return Ok(Introspection::inactive());
        };
        let current =
            !claims.token_type.is_refresh() || self.tokens.issuer().refresh_tokens().is_current(&claims.jti).await?;
        if !current
            || !self.tokens.is_active_user(user).await?
            || !self.grants.is_granted(user, &caller.client_id).await?
        {
            return Ok(Introspection::inactive());
        }
        answer.scope = Some(servable_scope(claims.scope.as_deref().unwrap_or(""), caller.enabled_scopes));
        Ok(answer)
    }
}

/// The `token` parameter, required by both endpoints.
fn required_token(token: Option<&str>) -> Result<&str, ServiceError> {
    token.filter(|t| !t.is_empty()).ok_or_else(|| OAuthError::InvalidRequest("token is required".into()).into())
}
