//! The `client_credentials` grant (RFC 6749 §4.4): an application asks a
//! token for itself, to call the user-management API on its own behalf.
//!
//! Who may: a confidential client (it authenticates with its secret; a
//! public client cannot prove who it is) that the panel or the CLI allowed
//! the grant (off by default). What it gets: an access token whose `scope`
//! holds API permissions (`users:read`, `users:create`) out of the client's
//! list, all of them unless the request narrows them; never a refresh token
//! (§4.4.3) and never a person.

use super::*;
use crate::admin::{ApiPermission, ApiPermissions};

/// What the token endpoint knows of a client asking for its own token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineAccess {
    /// Whether the client authenticated with a secret (a confidential
    /// client).
    pub confidential: bool,
    /// Whether the panel or the CLI allowed it the grant.
    pub allowed: bool,
    /// Whether the provider signs client tokens with its own key pair:
    /// without one they would be signed with the HS256 secret every
    /// SUAP-side API shares, and any of them could mint a token for the
    /// user-management API.
    pub signed_apart: bool,
    /// Its API permissions (one list per application, shared with its
    /// static API token).
    pub permissions: ApiPermissions,
}

/// The permissions of the token a `client_credentials` request gets:
/// the client's whole list, or the request's space-separated `scope` when
/// given (RFC 6749 §3.3). Errors: `unauthorized_client` for a public client
/// or one not allowed the grant; `invalid_scope` for an unknown
/// permission, one the client does not have, or when nothing is left (a
/// token that may do nothing is refused rather than issued).
pub fn machine_permissions(access: MachineAccess, requested: Option<&str>) -> Result<ApiPermissions, OAuthError> {
    if !access.confidential {
        return Err(OAuthError::UnauthorizedClient("client_credentials is only for confidential clients".into()));
    }
    if !access.allowed {
        return Err(OAuthError::UnauthorizedClient("the client is not allowed the client_credentials grant".into()));
    }
    if !access.signed_apart {
        return Err(OAuthError::UnauthorizedClient(
            "client_credentials needs the provider's key pair (oidc_signing_key_file)".into(),
        ));
    }
    let granted = match present(requested) {
        None => access.permissions,
        Some(raw) => {
            let mut wanted = ApiPermissions::NONE;
            for name in raw.split(' ').filter(|n| !n.is_empty()) {
                let permission = ApiPermission::from_name(name)
                    .ok_or_else(|| OAuthError::InvalidScope(format!("unknown scope: {name}")))?;
                if !access.permissions.contains(permission) {
                    return Err(OAuthError::InvalidScope(format!("the client may not ask for {name}")));
                }
                wanted = wanted.with(permission);
            }
            wanted
        }
    };
    if granted.is_empty() {
        return Err(OAuthError::InvalidScope("the client has no API permission to grant".into()));
    }
    Ok(granted)
}

/// The `scope` claim and answer of a token with `permissions`: their names,
/// space-separated (RFC 6749 §3.3).
pub fn machine_scope(permissions: ApiPermissions) -> String {
    permissions.names().join(" ")
}

/// The permissions a verified machine token's `scope` still gives, against
/// the client's list now: a permission the panel took away since the token
/// was issued gives nothing (names that are not permissions are ignored).
pub fn remaining_permissions(scope: Option<&str>, current: ApiPermissions) -> ApiPermissions {
    scope.unwrap_or("").split(' ').filter_map(ApiPermission::from_name).filter(|p| current.contains(*p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(permissions: ApiPermissions) -> MachineAccess {
        MachineAccess { confidential: true, allowed: true, signed_apart: true, permissions }
    }

    fn both() -> ApiPermissions {
        ApiPermission::ALL.into_iter().collect()
    }

    fn code(result: Result<ApiPermissions, OAuthError>) -> Result<ApiPermissions, &'static str> {
        result.map_err(|e| e.error_code())
    }

    #[test]
    fn without_a_scope_the_token_gets_every_permission_of_the_client() {
        assert_eq!(machine_permissions(access(both()), None), Ok(both()));
        assert_eq!(machine_permissions(access(both()), Some("")), Ok(both()));
        assert_eq!(machine_scope(both()), "users:read users:create");
    }

    #[test]
    fn a_scope_narrows_to_the_permissions_named() {
        let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
        assert_eq!(machine_permissions(access(both()), Some("users:read")), Ok(read));
        assert_eq!(machine_permissions(access(both()), Some(" users:create  users:read ")), Ok(both()));
    }

    #[test]
    fn a_scope_may_not_widen_nor_name_what_is_not_a_permission() {
        let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
        assert_eq!(code(machine_permissions(access(read), Some("users:create"))), Err("invalid_scope"));
        assert_eq!(code(machine_permissions(access(read), Some("users:read users:create"))), Err("invalid_scope"));
        for other in ["cpf", "openid", "users:delete", "USERS:READ", "users:read,users:create"] {
            assert_eq!(code(machine_permissions(access(both()), Some(other))), Err("invalid_scope"), "{other}");
        }
    }

    #[test]
    fn a_client_without_permissions_gets_no_token() {
        assert_eq!(code(machine_permissions(access(ApiPermissions::NONE), None)), Err("invalid_scope"));
    }

    #[test]
    fn only_a_confidential_client_allowed_the_grant_gets_a_token() {
        let public = MachineAccess { confidential: false, ..access(both()) };
        assert_eq!(code(machine_permissions(public, None)), Err("unauthorized_client"));
        let not_allowed = MachineAccess { allowed: false, ..access(both()) };
        assert_eq!(code(machine_permissions(not_allowed, None)), Err("unauthorized_client"));
        let shared_key = MachineAccess { signed_apart: false, ..access(both()) };
        assert_eq!(code(machine_permissions(shared_key, None)), Err("unauthorized_client"), "no key pair, no grant");
    }

    #[test]
    fn a_permission_taken_away_since_the_token_was_issued_gives_nothing() {
        let read = ApiPermissions::NONE.with(ApiPermission::UsersRead);
        assert_eq!(remaining_permissions(Some("users:read users:create"), read), read);
        assert_eq!(remaining_permissions(Some("users:create cpf"), read), ApiPermissions::NONE);
        assert_eq!(remaining_permissions(None, both()), ApiPermissions::NONE);
    }
}
