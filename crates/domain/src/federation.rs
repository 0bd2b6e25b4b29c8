//! Logins brokered through an upstream identity provider: gov.br (Login
//! Único) or any OpenID provider.
//!
//! The rules here take what an upstream's verified ID token says and turn
//! it into what this service keeps and tells its applications:
//! - [`assurance`]: what a session proves (a second factor, a level) and
//!   whether it meets what an application requires;
//! - [`level`]: gov.br's reliability levels (bronze, prata, ouro) and seals,
//!   which registration they validate, and the `acr` each one is;
//! - [`claims`]: the identity an ID token carries, read leniently where the
//!   upstream is known to bend the standard (gov.br's booleans as strings)
//!   and strictly where a mistake would join two people (the CPF);
//! - [`id_token`]: the checks of an upstream's ID token beyond its
//!   signature (issuer, audience, lifetime, nonce, `at_hash`);
//! - [`methods`]: the upstream's `amr` values mapped to RFC 8176's;
//! - [`linking`]: which account a brokered login opens, links or creates;
//! - [`logout`]: where the upstream a session came from is kept for its
//!   logout.

pub mod assurance;
pub mod browser_binding;
pub mod claims;
pub mod id_token;
pub mod level;
pub mod linking;
pub mod logout;
pub mod methods;

pub use assurance::{Assurance, Demand, Requirement};
pub use claims::{ClaimsError, ProviderKind, UpstreamIdentity};
pub use level::{Reliability, ReliabilityLevel, Seal};
pub use linking::{decide, Candidate, Found, LinkDecision, LinkKey, LinkRefusal};
