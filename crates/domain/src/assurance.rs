//! The one assurance model: how a person proved who they are at a login
//! ([`Proof`]), and the one rule ([`decide`]) that says, from that proof,
//! the account's own policy ([`AccountPolicy`]) and what the application
//! asks ([`Demand`]), whether the person is in, must add a factor, or must
//! go elsewhere.
//!
//! Every way in yields a [`Proof`]: the password, a passkey, an app's code,
//! a recovery code, an application password, gov.br at each level and any
//! OpenID upstream (with what its `amr` says and how far this service
//! trusts it, [`UpstreamTrust`]). Every route asks [`decide`]: the browser
//! login, `/api/token/pair/`, the federation callbacks, step-up, the OAuth
//! code and every refresh (first-party and OAuth). The `amr` and `acr` an
//! application reads come from the proof alone ([`Proof::amr_claim`],
//! [`Proof::acr`]).
//!
//! A proof is stored with a session as two texts (its `amr` column and its
//! `acr` column, [`Proof::stored_amr`] and [`Proof::acr`]) and read back by
//! [`Proof::from_stored`]. The `amr` text lists the methods passed here
//! (`pwd`, `otp`, `rec`, `hwk`, `swk`, `app`), then, for a login through an
//! upstream, `fed` followed by the upstream's RFC 8176 values and `mfa`
//! when the upstream's login counts as a second factor. So a gov.br login
//! stepped up with an app's code is `otp fed pwd`: the local code, the
//! federation, and the password typed at gov.br — never a local password
//! nobody typed.

use crate::federation::assurance::{Assurance, Demand, Requirement};
use crate::federation::methods::{oidc_method, FEDERATED};
use crate::federation::ReliabilityLevel;
use crate::session::{AuthMethod, ACR_PASSWORD, ACR_TWO_FACTORS};

/// RFC 8176's `mfa`: the login used more than one factor.
pub const MULTIPLE_FACTORS: &str = "mfa";

/// What an upstream provider's login proved, as this service reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpstreamProof {
    /// The upstream's methods mapped to RFC 8176 values (without `fed` and
    /// `mfa`), in the upstream's order, each once.
    pub methods: Vec<&'static str>,
    /// The gov.br level read at this login, for a login through gov.br.
    pub level: Option<ReliabilityLevel>,
    /// Whether the login counts as a second factor here (the provider's
    /// [`UpstreamTrust`] applied to what it said).
    pub second_factor: bool,
}

/// How far a provider's login stands in for this service's second factor
/// (the provider setting `satisfies_second_factor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpstreamTrust {
    /// Never: an account with a factor here is always asked for it.
    Never,
    /// When the upstream's methods prove two factors (`mfa`, or methods of
    /// two kinds; for gov.br also `prata`/`ouro` reached with a one-time
    /// code, a certificate or a bank's login). The default.
    #[default]
    WhenUpstreamMfa,
    /// Always: the operator vouches that the provider asks a second factor
    /// of everyone.
    Always,
}

impl UpstreamTrust {
    /// The trust a setting names (`never`, `when_upstream_mfa`, `always`).
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "never" => Some(Self::Never),
            "when_upstream_mfa" => Some(Self::WhenUpstreamMfa),
            "always" => Some(Self::Always),
            _ => None,
        }
    }

    /// The setting's text.
    pub fn name(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::WhenUpstreamMfa => "when_upstream_mfa",
            Self::Always => "always",
        }
    }

    /// Whether a login whose upstream proved two factors or not
    /// (`upstream_mfa`) counts as a second factor here.
    pub fn counts(self, upstream_mfa: bool) -> bool {
        match self {
            Self::Never => false,
            Self::WhenUpstreamMfa => upstream_mfa,
            Self::Always => true,
        }
    }
}

/// How a person proved who they are at one login: the methods passed here,
/// what an upstream proved (for a brokered login), and when.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proof {
    /// The methods passed at this service, in order.
    pub local: Vec<AuthMethod>,
    /// What the upstream proved, for a login through one.
    pub upstream: Option<UpstreamProof>,
    /// When the person last authenticated (Unix seconds).
    pub at: i64,
}

impl Proof {
    /// A login by `method` here, at `at`.
    pub fn local(method: AuthMethod, at: i64) -> Self {
        Self { local: vec![method], upstream: None, at }
    }

    /// A login through an upstream that proved `upstream`, at `at`.
    pub fn federated(upstream: UpstreamProof, at: i64) -> Self {
        Self { local: Vec::new(), upstream: Some(upstream), at }
    }

    /// The same proof with `method` passed too (a second factor after the
    /// password, or a step-up), at `at`: the earlier methods are kept.
    pub fn with_factor(mut self, method: AuthMethod, at: i64) -> Self {
        if !self.local.contains(&method) {
            self.local.push(method);
        }
        self.at = at;
        self
    }

    /// Whether a second factor was passed: here (anything but a password),
    /// or at an upstream this service trusts for it.
    pub fn second_factor(&self) -> bool {
        self.local.iter().any(|m| m.is_second_factor()) || self.upstream.as_ref().is_some_and(|u| u.second_factor)
    }

    /// The gov.br level, for a login through gov.br.
    pub fn level(&self) -> Option<ReliabilityLevel> {
        self.upstream.as_ref().and_then(|u| u.level)
    }

    /// What the proof meets of an application's requirements.
    pub fn assurance(&self) -> Assurance {
        Assurance { second_factor: self.second_factor(), level: self.level() }
    }

    /// The session's own `acr`: its gov.br level's, else two factors or the
    /// password alone.
    pub fn acr(&self) -> &'static str {
        self.assurance().acr()
    }

    /// Whether the proof meets the bar of an account that has a second
    /// factor: a second factor passed, or an application password (which
    /// the person made for a program that cannot ask a code, and which
    /// only `pair` accepts).
    pub fn meets_account_bar(&self) -> bool {
        self.second_factor() || self.local.contains(&AuthMethod::AppPassword)
    }

    /// Whether the account's policy can change what [`decide`] says of
    /// this proof: only when the proof does not meet an account's bar on
    /// its own. A caller that must look the policy up (a refresh, which
    /// runs every few minutes per application) skips the look-up
    /// otherwise.
    pub fn account_policy_matters(&self) -> bool {
        !self.meets_account_bar()
    }

    /// The `amr` text stored with a session or a grant (see the module's
    /// documentation).
    pub fn stored_amr(&self) -> String {
        let mut values: Vec<&str> = self.local.iter().map(|m| m.amr()).collect();
        if let Some(upstream) = &self.upstream {
            values.push(FEDERATED);
            values.extend(upstream.methods.iter().copied());
            if upstream.second_factor {
                values.push(MULTIPLE_FACTORS);
            }
        }
        values.join(" ")
    }

    /// The proof a session or grant stored as `amr` and `acr`, last
    /// authenticated at `at`. Values this service does not know are
    /// skipped (a text of unknown values alone proves nothing). An empty
    /// stored `amr` (an earlier release) reads as the password.
    pub fn from_stored(amr: &str, acr: &str, at: i64) -> Self {
        let mut proof = Self { at, ..Self::default() };
        let mut values = amr.split_ascii_whitespace();
        for value in values.by_ref() {
            if value == FEDERATED {
                let mut upstream = UpstreamProof { level: ReliabilityLevel::from_acr(acr), ..UpstreamProof::default() };
                for value in values.by_ref() {
                    match value {
                        MULTIPLE_FACTORS => upstream.second_factor = true,
                        other => {
                            if let Some(known) = oidc_method(other).filter(|v| !upstream.methods.contains(v)) {
                                upstream.methods.push(known);
                            }
                        }
                    }
                }
                proof.upstream = Some(upstream);
                break;
            }
            if let Some(method) = AuthMethod::from_amr(value).filter(|m| !proof.local.contains(m)) {
                proof.local.push(method);
            }
        }
        if amr.trim().is_empty() {
            proof.local.push(AuthMethod::Password);
        }
        proof
    }

    /// The proof an application's token says (`amr` and `acr` claims, as
    /// [`amr_claim`](Self::amr_claim) and [`Demand::acr`] wrote them): what
    /// a refresh re-checks. A token without `amr` (issued before tokens
    /// carried it) reads as the password alone.
    pub fn from_claims(amr: Option<&[String]>, acr: Option<&str>, at: i64) -> Self {
        let amr = amr.unwrap_or_default();
        let has = |value: &str| amr.iter().any(|v| v == value);
        let acr = acr.unwrap_or(ACR_PASSWORD);
        if has(FEDERATED) {
            let methods = amr
                .iter()
                .filter(|v| *v != FEDERATED && *v != MULTIPLE_FACTORS)
                .filter_map(|v| oidc_method(v))
                .collect();
            let second_factor = has(MULTIPLE_FACTORS) || acr == ACR_TWO_FACTORS;
            let upstream = UpstreamProof { methods, level: ReliabilityLevel::from_acr(acr), second_factor };
            return Self::federated(upstream, at);
        }
        let mut proof = Self::local(AuthMethod::Password, at);
        if has(MULTIPLE_FACTORS) || acr == ACR_TWO_FACTORS {
            // Which factor is not told apart in the claim; any one counts.
            let factor = if has("hwk") {
                AuthMethod::Passkey
            } else if has("swk") {
                AuthMethod::SyncedPasskey
            } else {
                AuthMethod::Totp
            };
            proof.local = if has("pwd") { vec![AuthMethod::Password, factor] } else { vec![factor] };
        }
        proof
    }

    /// The `amr` claim (RFC 8176) an application reads: `fed` and the
    /// upstream's values for a brokered login, then the methods passed here
    /// (`pwd` — an application password is one —, `otp` for an app's code or
    /// a recovery code, `hwk`, `swk`), and `mfa` when a second factor was
    /// passed; each value once.
    pub fn amr_claim(&self) -> Vec<String> {
        let mut values: Vec<&str> = Vec::new();
        let mut push = |value: &'static str| {
            if !values.contains(&value) {
                values.push(value);
            }
        };
        if let Some(upstream) = &self.upstream {
            push(FEDERATED);
            upstream.methods.iter().for_each(|m| push(m));
        }
        for method in &self.local {
            push(method.rfc_8176());
        }
        if self.second_factor() {
            push(MULTIPLE_FACTORS);
        }
        values.into_iter().map(str::to_owned).collect()
    }
}

/// What an account asks of every login, whatever the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountPolicy {
    /// The account has a second factor (an app or a passkey).
    pub has_factor: bool,
    /// The account is staff and the staff policy asks two factors of staff.
    pub staff_needs_factor: bool,
}

impl AccountPolicy {
    /// Whether every login of the account must pass a second factor.
    pub fn wants_second_factor(self) -> bool {
        self.has_factor || self.staff_needs_factor
    }
}

/// What [`decide`] says of a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The person is in.
    In,
    /// The person must add a second factor here first (the account's bar,
    /// or the application's); a person without one must enrol one.
    AddFactor,
    /// No factor here helps: the application asks what only another way in
    /// gives (a gov.br level).
    Refused(Requirement),
}

/// The one rule: whether a login that proved `proof` lets the person in,
/// given the account's `account` policy and the application's `demand`
/// ([`Demand::default`] where no application asks: `pair`, the account
/// pages). The account's bar comes first: an account with a factor is
/// never entered with less, whatever the application accepts.
pub fn decide(proof: &Proof, account: AccountPolicy, demand: &Demand) -> Decision {
    if account.wants_second_factor() && !proof.meets_account_bar() {
        return Decision::AddFactor;
    }
    match demand.unmet(proof.assurance()) {
        None => Decision::In,
        Some(Requirement::SecondFactor) => Decision::AddFactor,
        Some(requirement) => Decision::Refused(requirement),
    }
}

#[cfg(test)]
mod tests;
