//! Pure rules of credencial: no I/O, no async runtime, no framework types.
//!
//! Everything here is deterministic given its inputs (the current time is a
//! parameter, never read from the system), so the rules can be tested alone
//! and reused by other tools: the credencial service is built on them, and a
//! script or service of your own can check CPFs, verify the tokens the
//! service issues, or map profile answers onto a user table the way the
//! service's client component does.
//!
//! # Check a CPF
//!
//! [`Cpf::parse`] accepts the number with or without punctuation and checks
//! both check digits.
//!
//! ```
//! use credencial_domain::{Cpf, CpfError};
//!
//! let cpf = Cpf::parse("529.982.247-25").expect("valid check digits");
//! assert_eq!(cpf.as_str(), "52998224725");
//! assert_eq!(Cpf::parse("12345678901"), Err(CpfError::CheckDigits));
//! assert_eq!(Cpf::parse("111.111.111-11"), Err(CpfError::Repeated));
//! ```
//!
//! # Sign and verify a token
//!
//! A [`TokenCodec`] signs [`Claims`] and verifies tokens with one pinned
//! algorithm (here HS256; [`JwtKeys::asymmetric`] takes RS256 or ES256 PEM
//! keys). The time is a parameter, in seconds since the Unix epoch.
//!
//! ```
//! use credencial_domain::{Claims, JwtKeys, TokenCodec, TokenError, TokenType};
//!
//! let keys = JwtKeys::hmac(b"a-secret-of-at-least-32-bytes-long!").expect("long enough");
//! let codec = TokenCodec::new(keys, 0).expect("leeway is not negative");
//! let now = 1_800_000_000;
//!
//! let token = codec.encode(&Claims::new(TokenType::Access, 42, now, 300)).expect("signs");
//! // A login check wants a first-party token: type and lane both checked.
//! let claims = codec.decode_first_party(&token, TokenType::Access, now + 10).expect("valid");
//! assert_eq!(claims.person(), Ok(credencial_domain::UserId(42)));
//!
//! // A token a user granted to a client application (it names an `aud`)
//! // is never a first-party login, though its signature is good.
//! let granted = Claims {
//!     aud: Some("portal".into()),
//!     client_id: Some("portal".into()),
//!     ..Claims::new(TokenType::Access, 42, now, 300)
//! };
//! let granted = codec.encode(&granted).expect("signs");
//! assert_eq!(codec.decode_first_party(&granted, TokenType::Access, now), Err(TokenError::WrongType));
//!
//! // An access token is not a refresh token, and it dies at `exp`.
//! assert_eq!(codec.decode_first_party(&token, TokenType::Refresh, now), Err(TokenError::WrongType));
//! assert_eq!(codec.decode(&token, now + 300), Err(TokenError::Expired));
//! // Another key's signature does not verify.
//! let other = TokenCodec::new(JwtKeys::hmac(&[7; 32]).expect("long enough"), 0).expect("ok");
//! assert_eq!(other.decode(&token, now), Err(TokenError::Invalid));
//! ```
//!
//! # Map a profile answer onto a user record
//!
//! The [`attr_map`] module parses an attribute map (`{column:
//! profile_field}`, the form of the service's `SERVICE_USER_ATTR_MAP`), a
//! lookup field and a scope list, and applies them to a profile answer
//! (`POST /api/perfil/dados/`). The example program `map-profile` does the
//! same from the command line.
//!
//! ```
//! use credencial_domain::attr_map::{AttrMap, ClientScopes, ColumnValue, LookupField, UserMapping};
//! use credencial_domain::host_table::HostValue;
//!
//! let map = AttrMap::from_json(
//!     r#"{"username": "cpf", "(first_name, last_name)": "name", "birth_date": "receita_federal.dtNascimento"}"#,
//! )
//! .expect("a valid map");
//! let scopes = ClientScopes::parse(["cpf receita_federal"]).expect("known scopes");
//! let lookup = LookupField::parse("username").expect("a column name");
//! let mapping = UserMapping::new(map, lookup, scopes).expect("the map, lookup and scopes agree");
//!
//! let profile = serde_json::json!({
//!     "name": "Ana Beatriz Souza",
//!     "cpf": "52998224725",
//!     "receita_federal": {"erro": "CPF não validado"},
//! });
//! let profile = profile.as_object().expect("an object");
//! let user = mapping.apply(profile).expect("the lookup column has a value");
//! assert_eq!(user.lookup_value, "52998224725");
//! let text = |s: &str| Some(ColumnValue::Set(HostValue::Text(s.to_owned())));
//! assert_eq!(user.record.get("first_name").cloned(), text("Ana"));
//! assert_eq!(user.record.get("last_name").cloned(), text("Beatriz Souza"));
//! // A scope that answered with an `erro` object leaves its columns alone.
//! assert!(matches!(user.record.get("birth_date"), Some(ColumnValue::Skip(_))));
//!
//! // Errors name the input at fault; a tool can name it its own way.
//! let e = AttrMap::from_json(r#"{"bonds": "cnes.vinculos"}"#).expect_err("cnes is a list");
//! assert!(e.to_string().starts_with("the attribute map: key \"bonds\""));
//! ```

pub mod account;
pub mod admin;
pub mod app_password;
pub mod assurance;
pub mod attr_map;
pub mod client_login;
pub mod cpf;
pub mod degree;
pub mod email;
pub mod endpoint;
pub mod error;
pub mod federation;
pub mod form_token;
pub mod host_table;
pub mod introspection;
pub mod jwt;
pub mod local_path;
pub mod local_time;
pub mod mail;
pub mod oauth;
pub mod password;
pub mod password_policy;
pub mod password_stamp;
pub mod profile;
pub mod redacted;
pub mod refresh_grace;
pub mod registries;
pub mod scope;
pub mod second_factor;
pub mod security_event;
pub mod session;
pub mod text;
pub mod throttle;
pub mod token;
pub mod user;

pub use cpf::{Cpf, CpfError};
pub use degree::Degree;
pub use email::EmailKey;
pub use endpoint::{EndpointAllowList, UpstreamPath};
pub use error::{EndpointError, TokenError};
pub use jwt::{JwtAlgorithm, JwtKeys, TokenCodec};
pub use password::{DjangoPbkdf2, PasswordFormatError};
pub use password_policy::{check_new_password, is_common_password, AccountIdentifiers, PasswordRuleError};
pub use password_stamp::PasswordStamp;
pub use redacted::Redacted;
pub use registries::{CdpCourse, Cnes, CnesVinculo, CursosCdp, ReceitaFederal};
pub use scope::{Scope, ScopeSet, ScopeShape, ScopeSource, UnknownScope};
pub use token::{Claims, TokenLifetimes, TokenType};
pub use user::{UserData, UserId, Username, UsernameError};
