//! The whole matrix of the one rule: every way in, against every account
//! policy and every application demand; and the `amr`/`acr` each proof
//! says.

use super::*;
use crate::federation::ReliabilityLevel::{Bronze, Ouro, Prata};
use AuthMethod::{AppPassword, Passkey, Password, RecoveryCode, SyncedPasskey, Totp};

const AT: i64 = 1_800_000_000;

fn local(methods: &[AuthMethod]) -> Proof {
    Proof { local: methods.to_vec(), upstream: None, at: AT }
}

fn govbr(methods: &[&'static str], level: ReliabilityLevel, second_factor: bool) -> Proof {
    Proof::federated(UpstreamProof { methods: methods.to_vec(), level: Some(level), second_factor }, AT)
}

fn oidc(methods: &[&'static str], second_factor: bool) -> Proof {
    Proof::federated(UpstreamProof { methods: methods.to_vec(), level: None, second_factor }, AT)
}

const NO_FACTOR: AccountPolicy = AccountPolicy { has_factor: false, staff_needs_factor: false };
const HAS_FACTOR: AccountPolicy = AccountPolicy { has_factor: true, staff_needs_factor: false };
const STAFF: AccountPolicy = AccountPolicy { has_factor: false, staff_needs_factor: true };

fn any_app() -> Demand {
    Demand::default()
}

fn two_factor_app() -> Demand {
    Demand::new(true, None, None)
}

fn prata_app() -> Demand {
    Demand::new(false, Some(Prata), None)
}

#[test]
fn every_way_in_against_every_policy() {
    use Decision::{AddFactor, In, Refused};
    let prata = Requirement::Level(Prata);
    // (what the login proved, the account, the application, the decision)
    let cases: Vec<(&str, Proof, AccountPolicy, Demand, Decision)> = vec![
        ("password, no factor, any app", local(&[Password]), NO_FACTOR, any_app(), In),
        ("password, account with a factor", local(&[Password]), HAS_FACTOR, any_app(), AddFactor),
        ("password, staff under the staff policy", local(&[Password]), STAFF, any_app(), AddFactor),
        ("password, app asking two factors", local(&[Password]), NO_FACTOR, two_factor_app(), AddFactor),
        ("password, app asking prata", local(&[Password]), NO_FACTOR, prata_app(), Refused(prata)),
        ("password and app code", local(&[Password, Totp]), HAS_FACTOR, two_factor_app(), In),
        ("password and recovery code", local(&[Password, RecoveryCode]), HAS_FACTOR, any_app(), In),
        ("passkey alone", local(&[Passkey]), HAS_FACTOR, two_factor_app(), In),
        ("synced passkey alone", local(&[SyncedPasskey]), STAFF, any_app(), In),
        ("two factors do not make a level", local(&[Password, Totp]), HAS_FACTOR, prata_app(), Refused(prata)),
        ("application password, account with a factor", local(&[AppPassword]), HAS_FACTOR, any_app(), In),
        (
            "application password, app asking two factors",
            local(&[AppPassword]),
            HAS_FACTOR,
            two_factor_app(),
            AddFactor,
        ),
        ("gov.br bronze by password, no factor here", govbr(&["pwd"], Bronze, false), NO_FACTOR, any_app(), In),
        ("gov.br bronze by password, factor here", govbr(&["pwd"], Bronze, false), HAS_FACTOR, any_app(), AddFactor),
        ("gov.br prata with a code, factor here", govbr(&["pwd", "otp"], Prata, true), HAS_FACTOR, any_app(), In),
        ("gov.br bronze, app asking prata", govbr(&["pwd"], Bronze, false), NO_FACTOR, prata_app(), Refused(prata)),
        ("gov.br ouro, app asking prata", govbr(&["pwd"], Ouro, false), NO_FACTOR, prata_app(), In),
        (
            "gov.br ouro by password, factor here, app asking prata",
            govbr(&["pwd"], Ouro, false),
            HAS_FACTOR,
            prata_app(),
            AddFactor,
        ),
        (
            "gov.br bronze stepped up here",
            govbr(&["pwd"], Bronze, false).with_factor(Totp, AT),
            HAS_FACTOR,
            two_factor_app(),
            In,
        ),
        ("oidc upstream by password, factor here", oidc(&["pwd"], false), HAS_FACTOR, any_app(), AddFactor),
        ("oidc upstream with mfa, factor here", oidc(&["pwd", "otp"], true), HAS_FACTOR, two_factor_app(), In),
        (
            "oidc upstream with mfa, app asking prata",
            oidc(&["pwd", "otp"], true),
            NO_FACTOR,
            prata_app(),
            Refused(prata),
        ),
        (
            "oidc upstream stepped up with a passkey",
            oidc(&["pwd"], false).with_factor(Passkey, AT),
            STAFF,
            any_app(),
            In,
        ),
    ];
    for (name, proof, account, demand, expected) in cases {
        assert_eq!(decide(&proof, account, &demand), expected, "{name}");
    }
}

#[test]
fn acr_values_are_alternatives_after_the_account_s_bar() {
    let demand = Demand::new(false, None, Some("urn:credencial:acr:govbr:ouro urn:credencial:acr:dois-fatores"));
    assert_eq!(decide(&local(&[Password]), NO_FACTOR, &demand), Decision::Refused(Requirement::Level(Ouro)));
    assert_eq!(decide(&local(&[Password, Totp]), NO_FACTOR, &demand), Decision::In);
    let senha = Demand::new(false, None, Some("urn:credencial:acr:senha"));
    assert_eq!(
        decide(&local(&[Password]), HAS_FACTOR, &senha),
        Decision::AddFactor,
        "asking for the password alone never lowers the account's bar"
    );
}

#[test]
fn amr_and_acr_come_from_the_proof_alone() {
    // (proof, amr claim, acr)
    let cases: Vec<(Proof, &[&str], &str)> = vec![
        (local(&[Password]), &["pwd"], ACR_PASSWORD),
        (local(&[Password, Totp]), &["pwd", "otp", "mfa"], ACR_TWO_FACTORS),
        (local(&[Password, RecoveryCode]), &["pwd", "otp", "mfa"], ACR_TWO_FACTORS),
        (local(&[Passkey]), &["hwk", "mfa"], ACR_TWO_FACTORS),
        (local(&[SyncedPasskey]), &["swk", "mfa"], ACR_TWO_FACTORS),
        (local(&[AppPassword]), &["pwd"], ACR_PASSWORD),
        (govbr(&["pwd"], Bronze, false), &["fed", "pwd"], "urn:credencial:acr:govbr:bronze"),
        (govbr(&["pwd", "otp"], Prata, true), &["fed", "pwd", "otp", "mfa"], "urn:credencial:acr:govbr:prata"),
        (govbr(&["swk"], Ouro, false), &["fed", "swk"], "urn:credencial:acr:govbr:ouro"),
        // Step-up of a federated session keeps `fed` and adds the factor,
        // never a local password nobody typed.
        (govbr(&[], Bronze, false).with_factor(Totp, AT), &["fed", "otp", "mfa"], "urn:credencial:acr:govbr:bronze"),
        (oidc(&["pwd"], false).with_factor(Passkey, AT), &["fed", "pwd", "hwk", "mfa"], ACR_TWO_FACTORS),
        (oidc(&["pwd"], false), &["fed", "pwd"], ACR_PASSWORD),
    ];
    for (proof, amr, acr) in cases {
        assert_eq!(proof.amr_claim(), amr, "{proof:?}");
        assert_eq!(proof.acr(), acr, "{proof:?}");
    }
}

#[test]
fn a_proof_survives_storage_and_claims() {
    let proofs = [
        local(&[Password]),
        local(&[Password, Totp]),
        local(&[Password, RecoveryCode]),
        local(&[Passkey]),
        local(&[AppPassword]),
        govbr(&["pwd"], Bronze, false),
        govbr(&["pwd", "otp"], Prata, true),
        govbr(&["pwd"], Bronze, false).with_factor(Totp, AT),
        oidc(&["pwd", "hwk"], true),
        oidc(&[], false).with_factor(SyncedPasskey, AT),
    ];
    for proof in proofs {
        let stored = Proof::from_stored(&proof.stored_amr(), proof.acr(), AT);
        assert_eq!(stored, proof, "stored as {:?}", proof.stored_amr());
        // The claims keep what the rule needs (not which factor exactly).
        let claimed = Proof::from_claims(Some(&proof.amr_claim()), Some(proof.acr()), AT);
        assert_eq!(claimed.assurance(), proof.assurance(), "claimed as {:?}", proof.amr_claim());
        for account in [NO_FACTOR, HAS_FACTOR] {
            for demand in [any_app(), two_factor_app(), prata_app()] {
                if !proof.local.contains(&AppPassword) {
                    assert_eq!(decide(&claimed, account, &demand), decide(&proof, account, &demand), "{proof:?}");
                }
            }
        }
    }
}

#[test]
fn what_earlier_releases_stored_still_reads() {
    // Sessions and grants stored before the model: a local `amr`, or an
    // upstream's values after `fed` with `mfa` when it proved two factors.
    assert_eq!(Proof::from_stored("pwd otp", ACR_TWO_FACTORS, AT), local(&[Password, Totp]));
    assert_eq!(Proof::from_stored("", ACR_PASSWORD, AT), local(&[Password]));
    assert_eq!(Proof::from_stored("pwd unknown", ACR_PASSWORD, AT), local(&[Password]));
    let unknown = Proof::from_stored("xyz", ACR_PASSWORD, AT);
    assert!(unknown.local.is_empty() && unknown.upstream.is_none(), "unknown values prove nothing");
    assert_eq!(decide(&unknown, HAS_FACTOR, &any_app()), Decision::AddFactor);
    assert_eq!(
        Proof::from_stored("fed pwd otp mfa", "urn:credencial:acr:govbr:prata", AT),
        govbr(&["pwd", "otp"], Prata, true)
    );
    // A token without `amr` (issued before tokens carried it).
    assert_eq!(Proof::from_claims(None, None, AT), local(&[Password]));
}

#[test]
fn upstream_trust_reads_its_setting() {
    for trust in [UpstreamTrust::Never, UpstreamTrust::WhenUpstreamMfa, UpstreamTrust::Always] {
        assert_eq!(UpstreamTrust::parse(trust.name()), Some(trust));
    }
    assert_eq!(UpstreamTrust::parse("sometimes"), None);
    assert_eq!(UpstreamTrust::default(), UpstreamTrust::WhenUpstreamMfa);
    assert!(!UpstreamTrust::Never.counts(true));
    assert!(UpstreamTrust::WhenUpstreamMfa.counts(true) && !UpstreamTrust::WhenUpstreamMfa.counts(false));
    assert!(UpstreamTrust::Always.counts(false));
}

#[test]
fn the_account_s_policy_matters_only_to_a_proof_below_the_bar() {
    let proofs = [
        local(&[Password]),
        local(&[Password, Totp]),
        local(&[Passkey]),
        local(&[AppPassword]),
        govbr(&["pwd"], Bronze, false),
        govbr(&["pwd", "otp"], Prata, true),
        oidc(&["pwd"], false).with_factor(Totp, AT),
    ];
    let policies = [NO_FACTOR, HAS_FACTOR, STAFF];
    for proof in proofs {
        for demand in [any_app(), two_factor_app(), prata_app()] {
            let decisions: Vec<Decision> = policies.iter().map(|p| decide(&proof, *p, &demand)).collect();
            if !proof.account_policy_matters() {
                assert!(decisions.iter().all(|d| *d == decisions[0]), "{proof:?} {demand:?}: {decisions:?}");
            }
        }
        assert_eq!(proof.account_policy_matters(), !proof.meets_account_bar());
    }
    assert!(local(&[Password]).account_policy_matters());
}
