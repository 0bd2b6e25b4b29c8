//! Use cases of credencial. They hold no state of their own beyond
//! configuration: everything shared lives behind the ports.

pub mod client_login;
pub mod error;
pub mod hashing;
pub mod oauth;
pub mod profile;
pub mod request_context;
pub mod scope_cache;
pub mod throttle;
pub mod tokens;
pub mod user_admin;

pub use client_login::{
    CallbackResult, ClientLoginConfig, ClientLoginError, ClientLoginService, HostLogin, LoginStart, PendingLogin,
    SealedValue,
};
pub use error::ServiceError;
pub use hashing::{HashSlot, PasswordHasher};
pub use oauth::{
    AuthorizationStep, ConsentPrompt, LoginSession, OAuthService, OAuthTokens, SignedSession, TokenRequest,
};
pub use profile::{ProfileService, Registries};
pub use request_context::RequestId;
pub use scope_cache::{ScopeCache, ScopeTtls};
pub use throttle::LoginThrottle;
pub use tokens::{AuthenticatedUser, RefreshedPair, TokenPair, TokenService, TokenServiceConfig};
pub use user_admin::{NewAccount, UserAdminService, UserPage};
