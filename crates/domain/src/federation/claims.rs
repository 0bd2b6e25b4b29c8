//! The identity an upstream's ID token carries, once its signature, issuer,
//! audience, lifetime and nonce were verified (the adapter's work): read
//! from the token's claims as a JSON object.
//!
//! gov.br bends the standard in known ways, read leniently here:
//! `email_verified` and `phone_number_verified` may be the strings
//! `"true"`/`"false"`, `sub` and `preferred_username` are the CPF, and the
//! level and seals come as `reliability_info`. Where leniency could join
//! two people, the reading is strict: a gov.br `sub` that is not a CPF with
//! good check digits is refused, and an address counts as verified only
//! when the upstream says so (`true` or `"true"`, nothing else).

use serde_json::{Map, Value};
use thiserror::Error;

use super::level::{ReliabilityLevel, Seal};
use super::methods::{govbr_method, govbr_strong_login, oidc_method, session_amr, upstream_second_factor};
use crate::account::registration::MAX_NAME_CHARS;
use crate::Cpf;

/// The longest subject (`sub`) kept: OpenID Connect allows 255 ASCII
/// characters.
pub const MAX_SUBJECT_CHARS: usize = 255;

/// The longest e-mail address kept from an upstream (RFC 5321's path).
const MAX_EMAIL_CHARS: usize = 254;

/// The rules an upstream's claims are read by (setting `profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// gov.br (Login Único): `sub` is the CPF, levels and seals come along.
    GovBr,
    /// A standard OpenID provider.
    Oidc,
}

impl ProviderKind {
    /// The kind a setting names: `govbr` or `oidc`.
    pub fn from_name(value: &str) -> Option<Self> {
        match value {
            "govbr" => Some(Self::GovBr),
            "oidc" => Some(Self::Oidc),
            _ => None,
        }
    }
}

/// Why an upstream's claims name nobody this service can log in.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClaimsError {
    /// No `sub`, an empty one, or one longer than OpenID Connect allows.
    #[error("the ID token has no usable subject (sub)")]
    NoSubject,
    /// A gov.br `sub` that is not a CPF with good check digits.
    #[error("the gov.br subject is not a valid CPF")]
    SubjectNotACpf,
    /// gov.br's `preferred_username` names another CPF than `sub`.
    #[error("the gov.br preferred_username and sub name different CPFs")]
    CpfMismatch,
}

/// Who an upstream says logged in, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamIdentity {
    /// The upstream's subject identifier (`sub`): with the provider's id,
    /// what a link between an account and the upstream is kept under. For
    /// gov.br, the CPF's eleven digits, however gov.br punctuated it.
    pub subject: String,
    /// The person's CPF: gov.br's `sub`; a standard provider's `cpf` claim
    /// when it has one with good check digits.
    pub cpf: Option<Cpf>,
    /// The name (`name`), trimmed, when it is usable (not empty, at most
    /// the registration's length).
    pub name: Option<String>,
    /// The e-mail address (`email`), trimmed.
    pub email: Option<String>,
    /// Whether the upstream verified that address (`email_verified`: `true`
    /// or `"true"`).
    pub email_verified: bool,
    /// gov.br's level and seals (`reliability_info`), when it sent a level
    /// this service knows.
    pub level: Option<(ReliabilityLevel, Vec<Seal>)>,
    /// The session's `amr`: `fed`, then the upstream's values mapped to
    /// RFC 8176's ([`super::methods`]).
    pub amr: Vec<&'static str>,
    /// Whether the upstream's methods include a second factor.
    pub second_factor: bool,
}

impl UpstreamIdentity {
    /// Reads the verified `claims` of an ID token by `kind`'s rules.
    pub fn from_claims(kind: ProviderKind, claims: &Map<String, Value>) -> Result<Self, ClaimsError> {
        let subject =
            text(claims, "sub").filter(|sub| sub.chars().count() <= MAX_SUBJECT_CHARS).ok_or(ClaimsError::NoSubject)?;
        let upstream_amr = claims.get("amr").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let upstream_amr: Vec<&str> = upstream_amr.iter().filter_map(Value::as_str).collect();
        let (subject, cpf, level, amr) = match kind {
            ProviderKind::GovBr => {
                let cpf = Cpf::parse(&subject).map_err(|_| ClaimsError::SubjectNotACpf)?;
                if let Some(preferred) = text(claims, "preferred_username") {
                    if Cpf::parse(&preferred).ok().as_ref() != Some(&cpf) {
                        return Err(ClaimsError::CpfMismatch);
                    }
                }
                let subject = cpf.as_str().to_owned();
                (
                    subject,
                    Some(cpf),
                    reliability(claims.get("reliability_info")),
                    session_amr(upstream_amr.iter().copied(), govbr_method),
                )
            }
            ProviderKind::Oidc => {
                let cpf = text(claims, "cpf").and_then(|cpf| Cpf::parse(&cpf).ok());
                (subject, cpf, None, session_amr(upstream_amr.iter().copied(), oidc_method))
            }
        };
        let level_reached = level.as_ref().map(|(level, _)| *level);
        let second_factor = upstream_second_factor(&amr)
            || (kind == ProviderKind::GovBr && govbr_strong_login(level_reached, &upstream_amr));
        Ok(Self {
            subject,
            cpf,
            name: text(claims, "name").filter(|name| name.chars().count() <= MAX_NAME_CHARS),
            email: text(claims, "email")
                .filter(|email| email.chars().count() <= MAX_EMAIL_CHARS && email.contains('@')),
            email_verified: flag(claims.get("email_verified")),
            level,
            amr,
            second_factor,
        })
    }

    /// The address, when the upstream verified it; an unverified one is
    /// never used to find, link or fill an account.
    pub fn verified_email(&self) -> Option<&str> {
        self.email.as_deref().filter(|_| self.email_verified)
    }
}

/// The trimmed, non-empty string of claim `name`.
fn text(claims: &Map<String, Value>, name: &str) -> Option<String> {
    claims.get(name).and_then(Value::as_str).map(str::trim).filter(|value| !value.is_empty()).map(str::to_owned)
}

/// A boolean claim, as a standard provider (`true`) or gov.br (`"true"`)
/// writes it; anything else, absence included, is false.
pub fn flag(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(value)) => *value,
        Some(Value::String(value)) => value.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// gov.br's `reliability_info` (`{level, reliabilities: [{id, updatedAt}]}`),
/// when its level is one of the three; seals without an id are skipped,
/// and numeric ids are kept as their text.
fn reliability(info: Option<&Value>) -> Option<(ReliabilityLevel, Vec<Seal>)> {
    let info = info?.as_object()?;
    let level = ReliabilityLevel::from_govbr(info.get("level")?.as_str()?)?;
    let seals = info
        .get("reliabilities")
        .and_then(Value::as_array)
        .map(|seals| {
            seals
                .iter()
                .filter_map(|seal| {
                    let id = match seal.get("id")? {
                        Value::String(id) if !id.trim().is_empty() => id.trim().to_owned(),
                        Value::Number(id) => id.to_string(),
                        _ => return None,
                    };
                    let updated_at = seal.get("updatedAt").and_then(Value::as_str).map(str::to_owned);
                    Some(Seal { id, updated_at })
                })
                .collect()
        })
        .unwrap_or_default();
    Some((level, seals))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().expect("an object").clone()
    }

    fn govbr(value: Value) -> Result<UpstreamIdentity, ClaimsError> {
        UpstreamIdentity::from_claims(ProviderKind::GovBr, &claims(value))
    }

    #[test]
    fn a_govbr_token_gives_the_cpf_level_seals_and_methods() {
        let identity = govbr(json!({
            "sub": "52998224725", "preferred_username": "52998224725", "name": " Ana Maria Souza ",
            "email": "ana@example.org", "email_verified": "true", "phone_number_verified": "false",
            "amr": ["passwd", "captcha", "mfa", "otp"],
            "reliability_info": {"level": "silver", "reliabilities": [{"id": "401", "updatedAt": "2026-01-02 03:04:05"}, {"id": 801}]}
        }))
        .expect("reads");
        assert_eq!(identity.cpf, Some(Cpf::parse("529.982.247-25").expect("valid")));
        assert_eq!(identity.subject, "52998224725");
        assert_eq!(identity.name.as_deref(), Some("Ana Maria Souza"));
        assert_eq!(identity.verified_email(), Some("ana@example.org"));
        let (level, seals) = identity.level.expect("a level");
        assert_eq!(level, ReliabilityLevel::Prata);
        assert_eq!(seals.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["401", "801"]);
        assert_eq!(identity.amr, ["fed", "pwd", "mfa", "otp"]);
        assert!(identity.second_factor);
    }

    #[test]
    fn booleans_count_as_true_only_when_they_say_true() {
        for (value, expected) in [
            (json!(true), true),
            (json!("true"), true),
            (json!("TRUE"), true),
            (json!(false), false),
            (json!("false"), false),
            (json!("yes"), false),
            (json!(1), false),
            (Value::Null, false),
        ] {
            assert_eq!(flag(Some(&value)), expected, "{value}");
        }
        assert!(!flag(None));
    }

    #[test]
    fn an_unverified_address_is_kept_but_never_offered_as_verified() {
        let identity =
            govbr(json!({"sub": "52998224725", "email": "ana@example.org", "email_verified": "false"})).expect("reads");
        assert_eq!(identity.email.as_deref(), Some("ana@example.org"));
        assert_eq!(identity.verified_email(), None);
        let identity = govbr(json!({"sub": "52998224725", "email": "ana@example.org"})).expect("reads");
        assert_eq!(identity.verified_email(), None, "absent is not verified");
    }

    #[test]
    fn a_govbr_subject_must_be_a_cpf_and_agree_with_preferred_username() {
        assert_eq!(govbr(json!({"sub": "12345678901"})), Err(ClaimsError::SubjectNotACpf));
        assert_eq!(govbr(json!({"sub": "ana"})), Err(ClaimsError::SubjectNotACpf));
        assert_eq!(
            govbr(json!({"sub": "52998224725", "preferred_username": "11144477735"})),
            Err(ClaimsError::CpfMismatch)
        );
        assert_eq!(govbr(json!({"name": "Ana"})), Err(ClaimsError::NoSubject));
        assert_eq!(govbr(json!({"sub": "  "})), Err(ClaimsError::NoSubject));
        assert_eq!(govbr(json!({"sub": 52998224725_u64})), Err(ClaimsError::NoSubject));
    }

    #[test]
    fn an_unknown_level_or_malformed_seals_leave_what_is_sure() {
        let identity = govbr(json!({"sub": "52998224725", "reliability_info": {"level": "platinum"}})).expect("reads");
        assert_eq!(identity.level, None);
        let identity = govbr(json!({"sub": "52998224725", "reliability_info": {"level": "gold", "reliabilities": [{"updatedAt": "x"}, {"id": ""}, "801"]}}))
            .expect("reads");
        assert_eq!(identity.level, Some((ReliabilityLevel::Ouro, vec![])));
        let identity = govbr(json!({"sub": "52998224725", "reliability_info": "gold"})).expect("reads");
        assert_eq!(identity.level, None);
    }

    #[test]
    fn unknown_methods_are_ignored_and_a_password_alone_is_one_factor() {
        let identity =
            govbr(json!({"sub": "529.982.247-25", "amr": ["passwd", "app_qrcode", "bank001", 7]})).expect("reads");
        assert_eq!(identity.subject, "52998224725", "a link is kept under the digits");
        assert_eq!(identity.amr, ["fed", "pwd"]);
        assert!(!identity.second_factor);
        let identity = govbr(json!({"sub": "52998224725", "amr": "passwd"})).expect("reads");
        assert_eq!(identity.amr, ["fed"], "amr must be a list");
    }

    #[test]
    fn a_standard_provider_gives_its_subject_and_a_cpf_only_when_valid() {
        let read = |value| UpstreamIdentity::from_claims(ProviderKind::Oidc, &claims(value));
        let identity = read(json!({"sub": "abc-123", "cpf": "529.982.247-25", "email": "a@b.org", "email_verified": true, "amr": ["pwd", "hwk", "passwd"]}))
            .expect("reads");
        assert_eq!(identity.subject, "abc-123");
        assert_eq!(identity.cpf.map(|c| c.as_str().to_owned()).as_deref(), Some("52998224725"));
        assert_eq!(identity.amr, ["fed", "pwd", "hwk"]);
        assert!(identity.second_factor);
        assert_eq!(identity.level, None, "levels are gov.br's");
        let identity = read(json!({"sub": "abc-123", "cpf": "12345678901", "reliability_info": {"level": "gold"}}))
            .expect("reads");
        assert_eq!((identity.cpf, identity.level), (None, None));
        assert_eq!(read(json!({"sub": "x".repeat(256)})), Err(ClaimsError::NoSubject));
    }

    #[test]
    fn names_and_addresses_out_of_shape_are_dropped() {
        let identity = govbr(json!({"sub": "52998224725", "name": "n".repeat(MAX_NAME_CHARS + 1), "email": "not-an-address", "email_verified": true}))
            .expect("reads");
        assert_eq!((identity.name, identity.email), (None, None));
    }
}
