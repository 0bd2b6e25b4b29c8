//! The `client_credentials` grant (RFC 6749 §4.4): an application that the
//! panel or the CLI allowed it gets an access token for itself, to call the
//! user-management API on its own behalf. The rules are the domain's
//! ([`credencial_domain::oauth::machine_permissions`]); the token is an
//! `oauth_machine` JWT with `sub` = the client and no person, and no
//! refresh token goes with it.

use credencial_domain::introspection::Introspection;
use credencial_domain::oauth::{machine_permissions, machine_scope, remaining_permissions, ClientId, MachineAccess};
use credencial_ports::{ApiTokenState, OAuthClient};

use super::{OAuthService, OAuthTokens, TokenRequest, BEARER};
use crate::error::ServiceError;

impl OAuthService {
    /// Issues the authenticated `client` its own token with the API
    /// permissions the request's `scope` names (all of its list when it
    /// names none). Errors: `unauthorized_client` for a public client or
    /// one not allowed the grant; `invalid_scope` (see
    /// [`machine_permissions`]); `Storage`, `Internal`.
    pub(super) async fn client_credentials(
        &self,
        client: &OAuthClient,
        request: &TokenRequest,
    ) -> Result<OAuthTokens, ServiceError> {
        let state = self.machine_state(&client.client_id).await?;
        let access = MachineAccess {
            confidential: client.confidential,
            // Storage allows the grant to confidential clients only.
            allowed: state.as_ref().is_some_and(|s| s.client_credentials),
            signed_apart: self.tokens.issuer().has_id_token_key(),
            permissions: state.map(|s| s.permissions).unwrap_or_default(),
        };
        let permissions = machine_permissions(access, request.scope.as_deref())?;
        let scope = machine_scope(permissions);
        let (token, _) = self.tokens.issuer().issue_machine(&client.client_id, scope.clone())?;
        Ok(OAuthTokens {
            access_token: token,
            token_type: BEARER,
            expires_in: self.tokens.lifetimes().access_secs,
            refresh_token: None,
            scope,
            id_token: None,
        })
    }

    /// The introspection of `client`'s own token (the caller, already
    /// authenticated) that `answer` describes: active while the client may
    /// still use the grant, with the permissions of `scope` it still has.
    /// Errors: `Storage`.
    pub(super) async fn introspect_machine(
        &self,
        mut answer: Introspection,
        client: &str,
        scope: Option<&str>,
    ) -> Result<Introspection, ServiceError> {
        let Ok(client) = ClientId::parse(client) else {
            return Ok(Introspection::inactive());
        };
        let remaining = match self.machine_state(&client).await? {
            Some(state) if state.client_credentials && state.is_active => {
                remaining_permissions(scope, state.permissions)
            }
            _ => return Ok(Introspection::inactive()),
        };
        if remaining.is_empty() {
            return Ok(Introspection::inactive());
        }
        answer.scope = Some(machine_scope(remaining));
        Ok(answer)
    }

    /// The API access of `client`, when the service has the directory.
    async fn machine_state(&self, client: &ClientId) -> Result<Option<ApiTokenState>, ServiceError> {
        match &self.directory {
            Some(directory) => Ok(directory.api_token_state(client).await?),
            None => Ok(None),
        }
    }
}
