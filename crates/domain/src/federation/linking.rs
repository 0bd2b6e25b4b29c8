//! Which account a brokered login opens.
//!
//! A link ties an account to a provider's subject; once made, a login by
//! that subject opens that account. The first login through a provider
//! finds the account by the provider's link key, or creates one:
//! - gov.br by the CPF (its `sub`): the account holding it is linked when
//!   its CPF is proven already; when the CPF was only declared here, the
//!   person first logs into that account (anyone can declare a CPF, so the
//!   account may not be theirs), and the link then proves it; no account
//!   holds it: a new one, from gov.br's name and verified address, without
//!   a password;
//! - a standard provider by the claim its settings name (`link_claim`):
//!   `cpf` (a valid CPF claim, proven here already, else the person first
//!   logs into the account), `email` (an address the provider verified,
//!   held by an account that confirmed it too: never an unverified one on
//!   either side), or `sub` (never an existing account: a new one at the
//!   first login).

use thiserror::Error;

use super::claims::{ProviderKind, UpstreamIdentity};
use crate::UserId;

/// How a standard provider's first login finds an existing account
/// (setting `link_claim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKey {
    /// By the `cpf` claim.
    Cpf,
    /// By the `email` claim, when `email_verified` is true.
    VerifiedEmail,
    /// By nothing: the first login creates an account.
    Subject,
}

impl LinkKey {
    /// The key a setting names: `cpf`, `email` or `sub`.
    pub fn from_name(value: &str) -> Option<Self> {
        match value {
            "cpf" => Some(Self::Cpf),
            "email" => Some(Self::VerifiedEmail),
            "sub" => Some(Self::Subject),
            _ => None,
        }
    }
}

/// An account the store found for a brokered login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The account.
    pub user: UserId,
    /// Whether it may log in (an inactive account never does).
    pub active: bool,
    /// Whether its CPF is already proven (by gov.br or the Receita).
    pub cpf_proven: bool,
    /// Whether its address was confirmed (`email_verified`).
    pub email_confirmed: bool,
}

/// What the store knows for one brokered login: the account linked to the
/// provider's subject, and the account the link key finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Found {
    /// The account already linked to this provider's subject.
    pub linked: Option<Candidate>,
    /// The account holding the identity's CPF (looked up for gov.br, and
    /// for a provider linking by `cpf`).
    pub by_cpf: Option<Candidate>,
    /// The account holding the identity's verified address (looked up for
    /// a provider linking by `email`).
    pub by_email: Option<Candidate>,
}

/// What a brokered login does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDecision {
    /// Opens the linked account.
    SignIn(UserId),
    /// Links the account a verified address found (it confirmed that
    /// address here too), then opens it.
    Link {
        /// The account.
        user: UserId,
        /// Whether the link proves the account's CPF (gov.br's).
        proves_cpf: bool,
    },
    /// The account holding the CPF: the person logs into it first — its
    /// password and factors —, then it is linked (and, through gov.br, its
    /// CPF proven: the person is told when it was only declared). A CPF,
    /// even one validated by what the tax authority knows (birth date,
    /// mother's name), is no proof that the account is this person's.
    ConfirmLink {
        /// The account.
        user: UserId,
        /// Whether the link will prove the account's CPF (gov.br's).
        proves_cpf: bool,
        /// Whether that proof is new (the CPF was only declared).
        newly_proven: bool,
    },
    /// Creates an account from the upstream's data, links and opens it.
    Create,
}

/// Why a brokered login opens no account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum LinkRefusal {
    /// The account it leads to is inactive.
    #[error("the account is inactive")]
    Inactive,
    /// The provider links by a claim the token does not carry (a valid
    /// `cpf`, or a verified `email`).
    #[error("the ID token lacks the claim the provider links accounts by")]
    MissingLinkClaim,
    /// A new account needs a name, and the token has none.
    #[error("the ID token has no name to create an account with")]
    MissingName,
    /// The account holding the verified address never confirmed it here:
    /// linking would hand the person's login to whoever typed it.
    #[error("the account holding the address never confirmed it")]
    LocalAddressUnconfirmed,
}

/// Decides what the login of `identity` through a provider of `kind`
/// (linking by `key`, for a standard provider) does, given what the store
/// `found`.
pub fn decide(
    kind: ProviderKind,
    key: LinkKey,
    identity: &UpstreamIdentity,
    found: Found,
) -> Result<LinkDecision, LinkRefusal> {
    if let Some(linked) = found.linked {
        return if linked.active { Ok(LinkDecision::SignIn(linked.user)) } else { Err(LinkRefusal::Inactive) };
    }
    let by_cpf = |found: Option<Candidate>| (found, kind == ProviderKind::GovBr);
    let (candidate, proves_cpf) = match (kind, key) {
        (ProviderKind::GovBr, _) => by_cpf(found.by_cpf),
        (ProviderKind::Oidc, LinkKey::Cpf) => {
            if identity.cpf.is_none() {
                return Err(LinkRefusal::MissingLinkClaim);
            }
            by_cpf(found.by_cpf)
        }
        (ProviderKind::Oidc, LinkKey::VerifiedEmail) => {
            if identity.verified_email().is_none() {
                return Err(LinkRefusal::MissingLinkClaim);
            }
            if found.by_email.is_some_and(|account| !account.email_confirmed) {
                return Err(LinkRefusal::LocalAddressUnconfirmed);
            }
            (found.by_email, false)
        }
        (ProviderKind::Oidc, LinkKey::Subject) => (None, false),
    };
    let found_by_cpf = matches!((kind, key), (ProviderKind::GovBr, _) | (ProviderKind::Oidc, LinkKey::Cpf));
    match candidate {
        Some(account) if !account.active => Err(LinkRefusal::Inactive),
        Some(account) if found_by_cpf => Ok(LinkDecision::ConfirmLink {
            user: account.user,
            proves_cpf,
            newly_proven: proves_cpf && !account.cpf_proven,
        }),
        Some(account) => Ok(LinkDecision::Link { user: account.user, proves_cpf }),
        None if identity.name.is_none() => Err(LinkRefusal::MissingName),
        None => Ok(LinkDecision::Create),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn identity(kind: ProviderKind, claims: serde_json::Value) -> UpstreamIdentity {
        UpstreamIdentity::from_claims(kind, claims.as_object().expect("object")).expect("reads")
    }

    fn govbr() -> UpstreamIdentity {
        identity(ProviderKind::GovBr, json!({"sub": "52998224725", "name": "Ana Souza"}))
    }

    fn account(id: i64, active: bool, cpf_proven: bool) -> Candidate {
        Candidate { user: UserId(id), active, cpf_proven, email_confirmed: true }
    }

    #[test]
    fn a_link_opens_its_account_whatever_else_matches() {
        let found =
            Found { linked: Some(account(7, true, true)), by_cpf: Some(account(9, true, false)), ..Found::default() };
        assert_eq!(decide(ProviderKind::GovBr, LinkKey::Cpf, &govbr(), found), Ok(LinkDecision::SignIn(UserId(7))));
        let found = Found { linked: Some(account(7, false, true)), ..Found::default() };
        assert_eq!(decide(ProviderKind::GovBr, LinkKey::Cpf, &govbr(), found), Err(LinkRefusal::Inactive));
    }

    #[test]
    fn govbr_links_the_account_holding_the_cpf_only_after_the_person_logs_into_it() {
        let found = Found { by_cpf: Some(account(9, true, true)), ..Found::default() };
        assert_eq!(
            decide(ProviderKind::GovBr, LinkKey::Subject, &govbr(), found),
            Ok(LinkDecision::ConfirmLink { user: UserId(9), proves_cpf: true, newly_proven: false }),
            "a CPF validated by what the tax authority knows is no proof the account is this person's"
        );
        let found = Found { by_cpf: Some(account(9, true, false)), ..Found::default() };
        assert_eq!(
            decide(ProviderKind::GovBr, LinkKey::Subject, &govbr(), found),
            Ok(LinkDecision::ConfirmLink { user: UserId(9), proves_cpf: true, newly_proven: true }),
            "a declared CPF may be anyone's; the link proves it"
        );
        let found = Found { by_cpf: Some(account(9, false, false)), ..Found::default() };
        assert_eq!(decide(ProviderKind::GovBr, LinkKey::Subject, &govbr(), found), Err(LinkRefusal::Inactive));
    }

    #[test]
    fn govbr_creates_an_account_for_a_new_cpf_when_it_has_a_name() {
        assert_eq!(decide(ProviderKind::GovBr, LinkKey::Cpf, &govbr(), Found::default()), Ok(LinkDecision::Create));
        let nameless = identity(ProviderKind::GovBr, json!({"sub": "52998224725"}));
        assert_eq!(
            decide(ProviderKind::GovBr, LinkKey::Cpf, &nameless, Found::default()),
            Err(LinkRefusal::MissingName)
        );
    }

    #[test]
    fn a_standard_provider_never_links_by_an_unverified_address() {
        let found = Found { by_email: Some(account(3, true, false)), ..Found::default() };
        let unverified = identity(
            ProviderKind::Oidc,
            json!({"sub": "u1", "name": "Ana", "email": "ana@example.org", "email_verified": false}),
        );
        assert_eq!(
            decide(ProviderKind::Oidc, LinkKey::VerifiedEmail, &unverified, found),
            Err(LinkRefusal::MissingLinkClaim)
        );
        let verified = identity(
            ProviderKind::Oidc,
            json!({"sub": "u1", "name": "Ana", "email": "ana@example.org", "email_verified": "true"}),
        );
        assert_eq!(
            decide(ProviderKind::Oidc, LinkKey::VerifiedEmail, &verified, found),
            Ok(LinkDecision::Link { user: UserId(3), proves_cpf: false })
        );
    }

    #[test]
    fn a_standard_provider_s_cpf_claim_finds_an_account_but_links_only_after_its_login() {
        let found = Found { by_cpf: Some(account(4, true, true)), ..Found::default() };
        let with_cpf = identity(ProviderKind::Oidc, json!({"sub": "u1", "name": "Ana", "cpf": "52998224725"}));
        assert_eq!(
            decide(ProviderKind::Oidc, LinkKey::Cpf, &with_cpf, found),
            Ok(LinkDecision::ConfirmLink { user: UserId(4), proves_cpf: false, newly_proven: false }),
            "a claim the provider may let people edit proves nothing"
        );
        let declared = Found { by_cpf: Some(account(4, true, false)), ..Found::default() };
        assert_eq!(
            decide(ProviderKind::Oidc, LinkKey::Cpf, &with_cpf, declared),
            Ok(LinkDecision::ConfirmLink { user: UserId(4), proves_cpf: false, newly_proven: false })
        );
        let without = identity(ProviderKind::Oidc, json!({"sub": "u1", "name": "Ana"}));
        assert_eq!(decide(ProviderKind::Oidc, LinkKey::Cpf, &without, found), Err(LinkRefusal::MissingLinkClaim));
    }

    #[test]
    fn linking_by_subject_only_ever_creates() {
        let found = Found {
            by_cpf: Some(account(4, true, false)),
            by_email: Some(account(5, true, false)),
            ..Found::default()
        };
        let who = identity(
            ProviderKind::Oidc,
            json!({"sub": "u1", "name": "Ana", "cpf": "52998224725", "email": "a@b.org", "email_verified": true}),
        );
        assert_eq!(decide(ProviderKind::Oidc, LinkKey::Subject, &who, found), Ok(LinkDecision::Create));
    }

    #[test]
    fn settings_name_the_keys() {
        assert_eq!(LinkKey::from_name("cpf"), Some(LinkKey::Cpf));
        assert_eq!(LinkKey::from_name("email"), Some(LinkKey::VerifiedEmail));
        assert_eq!(LinkKey::from_name("sub"), Some(LinkKey::Subject));
        assert_eq!(LinkKey::from_name("username"), None);
    }
}
