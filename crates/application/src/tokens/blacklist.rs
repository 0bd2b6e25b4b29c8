//! Logout for the JWT routes: simplejwt's `blacklist`.

use credencial_domain::{TokenError, TokenType};
use credencial_ports::TokenRevocation;

use super::TokenService;
use crate::error::ServiceError;

impl TokenService {
    /// Ends the session of the holder of a first-party refresh token
    /// (simplejwt's `blacklist`): the token and every current token of its
    /// family are revoked, on every instance. An OAuth2 refresh token (with
    /// an `aud` or a `client_id`) is refused as of the wrong type: a client
    /// application revokes its tokens at `/oauth/revoke/`. A token that is
    /// no longer current is refused as blacklisted (one that had been
    /// rotated is a replay: its family is revoked all the same). Errors:
    /// `InvalidToken`, `Storage`.
    pub async fn blacklist(&self, refresh_token: &str) -> Result<(), ServiceError> {
        let claims = self.issuer.decode_first_party(refresh_token, TokenType::Refresh)?;
        let user = claims.person()?;
        match self.issuer.refresh_tokens().revoke_token(&claims.jti, user).await? {
            TokenRevocation::Revoked => {
                tracing::info!(user = user.0, "refresh token blacklisted: its family is revoked");
                Ok(())
            }
            TokenRevocation::WasRotated => {
                tracing::warn!(
                    user = user.0,
                    "a rotated refresh token was presented for blacklisting: its family is revoked"
                );
                Err(TokenError::Revoked.into())
            }
            TokenRevocation::WasRevoked | TokenRevocation::Unknown => Err(TokenError::Revoked.into()),
        }
    }
}
