//! The claims of `/oauth/userinfo/` (OIDC Core 1.0 §5.3, §5.4): `sub`
//! always, then the standard claims of the granted profile scopes, and the
//! CPF as a `cpf` claim. A claim without a value is left out (never `null`
//! or an empty string).

use serde_json::{Map, Value};

use super::id_token::subject;
use crate::scope::{Scope, ScopeSet};
use crate::user::UserId;

/// Every claim the userinfo answer and the ID token may carry, for the
/// discovery document's `claims_supported`.
pub const CLAIMS_SUPPORTED: [&str; 17] = [
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "at_hash",
    "acr",
    "amr",
    "sid",
    "name",
    "preferred_username",
    "picture",
    "email",
    "email_verified",
    "cpf",
];

/// What the userinfo answer may reveal of a person (read with the access
/// log entry of the read, in one statement).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserIdentity {
    /// The username (`preferred_username`).
    pub username: String,
    /// The public name (`name`).
    pub name: String,
    /// The avatar URL (`picture`), possibly empty.
    pub avatar: String,
    /// The CPF, 11 digits, if known (`cpf`).
    pub cpf: Option<String>,
    /// The e-mail address (`email`), possibly empty.
    pub email: String,
    /// Whether the person confirmed the address through a link sent to it
    /// (`email_verified`).
    pub email_verified: bool,
    /// gov.br's level and seals for the CPF, when a gov.br login proved it
    /// ([`crate::profile::GOVBR_RELIABILITY`]).
    pub govbr_reliability: Option<Value>,
}

/// The profile scopes a userinfo answer reads (what its access-log entry
/// records): those of `granted` that carry a userinfo claim.
pub fn userinfo_scopes(granted: ScopeSet) -> ScopeSet {
    granted.intersection([Scope::DadosPublicos, Scope::Email, Scope::Cpf].into_iter().collect())
}

/// The userinfo claims of `user` for the `granted` scopes: `sub`; with
/// `dados_publicos` `name`, `preferred_username` and `picture`; with
/// `email` `email` and `email_verified` (whether the person confirmed the
/// address through a link sent to it); with `cpf` `cpf`.
pub fn userinfo_claims(user: UserId, identity: &UserIdentity, granted: ScopeSet) -> Map<String, Value> {
    let mut claims = Map::new();
    claims.insert("sub".into(), Value::String(subject(user)));
    let put = |claims: &mut Map<String, Value>, name: &str, value: &str| {
        if !value.is_empty() {
            claims.insert(name.into(), Value::String(value.to_owned()));
        }
    };
    for scope in userinfo_scopes(granted).iter() {
        match scope {
            Scope::DadosPublicos => {
                put(&mut claims, "name", &identity.name);
                put(&mut claims, "preferred_username", &identity.username);
                put(&mut claims, "picture", &identity.avatar);
            }
            Scope::Email if !identity.email.is_empty() => {
                put(&mut claims, "email", &identity.email);
                claims.insert("email_verified".into(), Value::Bool(identity.email_verified));
            }
            Scope::Cpf => {
                put(&mut claims, "cpf", identity.cpf.as_deref().unwrap_or(""));
                if let Some(reliability) = &identity.govbr_reliability {
                    claims.insert(crate::profile::GOVBR_RELIABILITY.into(), reliability.clone());
                }
            }
            _ => {}
        }
    }
    claims
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ana() -> UserIdentity {
        UserIdentity {
            username: "ana".into(),
            name: "Ana Beatriz Souza".into(),
            avatar: "https://example.gov.br/a.png".into(),
            cpf: Some("52998224725".into()),
            email: "ana@example.gov.br".into(),
            email_verified: true,
            govbr_reliability: None,
        }
    }

    fn set(text: &str) -> ScopeSet {
        ScopeSet::parse_strict(text).expect("known")
    }

    #[test]
    fn each_scope_gives_its_claims_and_sub_is_always_there() {
        let all = userinfo_claims(UserId(42), &ana(), set("openid dados_publicos cpf email cnes"));
        assert_eq!(
            Value::Object(all),
            json!({
                "sub": "42",
                "name": "Ana Beatriz Souza",
                "preferred_username": "ana",
                "picture": "https://example.gov.br/a.png",
                "email": "ana@example.gov.br",
                "email_verified": true,
                "cpf": "52998224725",
            })
        );
        let unconfirmed = UserIdentity { email_verified: false, ..ana() };
        let only_email = userinfo_claims(UserId(42), &unconfirmed, set("openid email"));
        assert_eq!(
            Value::Object(only_email),
            json!({"sub": "42", "email": "ana@example.gov.br", "email_verified": false})
        );
        let none = userinfo_claims(UserId(42), &ana(), set("openid receita_federal"));
        assert_eq!(Value::Object(none), json!({"sub": "42"}));
    }

    #[test]
    fn claims_without_a_value_are_left_out() {
        let bare = UserIdentity { username: "bruno".into(), ..UserIdentity::default() };
        let claims = userinfo_claims(UserId(7), &bare, set("dados_publicos cpf email"));
        assert_eq!(Value::Object(claims), json!({"sub": "7", "preferred_username": "bruno"}));
    }

    #[test]
    fn the_access_log_records_the_scopes_the_answer_reads() {
        assert_eq!(userinfo_scopes(set("openid dados_publicos cnes email")), set("dados_publicos email"));
        assert_eq!(userinfo_scopes(set("openid")), ScopeSet::empty());
        for claim in
            ["name", "preferred_username", "picture", "email", "email_verified", "cpf", "sub", "nonce", "at_hash"]
        {
            assert!(CLAIMS_SUPPORTED.contains(&claim), "{claim}");
        }
    }

    #[test]
    fn the_cpf_claim_carries_govbr_s_word_when_there_is_one() {
        let word = json!({"nivel": "ouro", "selos": [], "lido_em": "2026-11-29T10:00:00Z"});
        let vouched = UserIdentity { govbr_reliability: Some(word.clone()), ..ana() };
        let cpf = ScopeSet::parse_strict("cpf").expect("scope");
        assert_eq!(userinfo_claims(UserId(7), &vouched, cpf).get(crate::profile::GOVBR_RELIABILITY), Some(&word));
        let email = ScopeSet::parse_strict("email").expect("scope");
        assert!(userinfo_claims(UserId(7), &vouched, email).get(crate::profile::GOVBR_RELIABILITY).is_none());
        assert!(userinfo_claims(UserId(7), &ana(), cpf).get(crate::profile::GOVBR_RELIABILITY).is_none());
    }
}
