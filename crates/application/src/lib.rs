//! Use cases of credencial. They hold no state of their own beyond
//! configuration: everything shared lives behind the ports.

pub mod error;
pub mod hashing;
pub mod tokens;

pub use error::ServiceError;
pub use hashing::PasswordHasher;
pub use tokens::{RefreshedPair, TokenPair, TokenService, TokenServiceConfig};
