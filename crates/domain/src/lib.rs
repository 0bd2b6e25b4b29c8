//! Pure rules of credencial: no I/O, no async runtime, no framework types.
//!
//! Everything here is deterministic given its inputs (the current time is a
//! parameter, never read from the system), so the rules can be tested alone.

pub mod attr_map;
pub mod client_login;
pub mod cpf;
pub mod degree;
pub mod endpoint;
pub mod error;
pub mod form_token;
pub mod host_table;
pub mod jwt;
pub mod oauth;
pub mod password;
pub mod password_policy;
pub mod profile;
pub mod registries;
pub mod scope;
pub mod throttle;
pub mod token;
pub mod user;

pub use cpf::{Cpf, CpfError};
pub use degree::Degree;
pub use endpoint::{EndpointAllowList, UpstreamPath};
pub use error::{EndpointError, TokenError};
pub use jwt::{JwtAlgorithm, JwtKeys, TokenCodec};
pub use password::{DjangoPbkdf2, PasswordFormatError};
pub use password_policy::{check_new_password, AccountIdentifiers, PasswordRuleError};
pub use registries::{CdpCourse, Cnes, CnesVinculo, CursosCdp, ReceitaFederal};
pub use scope::{Scope, ScopeSet, ScopeShape, ScopeSource, UnknownScope};
pub use token::{Claims, TokenLifetimes, TokenType};
pub use user::{UserData, UserId, Username, UsernameError};
