//! The upstream's authentication methods (`amr`), mapped to the values of
//! RFC 8176 that this service repeats to its applications.
//!
//! gov.br has values of its own (`passwd`, `captcha`, `bankNNN`,
//! `app_qrcode`, `x509_…`) beside some of RFC 8176's; a standard provider
//! uses RFC 8176's. Only values whose meaning is certain are repeated; the
//! rest (new ones may appear at any time) are left out, never guessed.
//! Every brokered login is also `fed` (RFC 8176: federated
//! authentication), which [`session_amr`] puts first.

use super::level::ReliabilityLevel;

/// RFC 8176's `fed`: the person authenticated at another provider.
pub const FEDERATED: &str = "fed";

/// The values of RFC 8176's registry (§2) that a standard provider's `amr`
/// is repeated with.
const RFC_8176: [&str; 20] = [
    "face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pwd", "rba", "retina", "sc", "sms", "swk",
    "tel", "user", "vbm", "wia",
];

/// The RFC 8176 value of one gov.br `amr` value, when there is a sure one:
/// `passwd` is `pwd`; `otp` and `mfa` are themselves; a digital certificate
/// (`x509_…`) is a key the person holds, at least a software one (`swk`:
/// an A3 certificate on a token would be `hwk`, which gov.br does not tell
/// apart). `captcha`, a bank's login (`bankNNN`), the app's QR code and
/// anything unknown have none.
pub fn govbr_method(value: &str) -> Option<&'static str> {
    match value {
        "passwd" => Some("pwd"),
        "otp" => Some("otp"),
        "mfa" => Some("mfa"),
        certificate if certificate.starts_with("x509") => Some("swk"),
        _ => None,
    }
}

/// The RFC 8176 value of one standard provider's `amr` value: itself when
/// RFC 8176 registers it, else none.
pub fn oidc_method(value: &str) -> Option<&'static str> {
    RFC_8176.into_iter().find(|known| *known == value)
}

/// The `amr` of a session opened through an upstream: `fed`, then the
/// upstream's values mapped by `map`, each once, in the upstream's order.
pub fn session_amr<'a>(
    upstream: impl IntoIterator<Item = &'a str>,
    map: fn(&str) -> Option<&'static str>,
) -> Vec<&'static str> {
    let mut values = vec![FEDERATED];
    for value in upstream.into_iter().filter_map(map) {
        if !values.contains(&value) {
            values.push(value);
        }
    }
    values
}

/// Whether the upstream's mapped methods prove two factors: `mfa` said
/// outright, or methods of two different kinds among what the person
/// knows (`pwd`, `pin`, `kba`), holds (`otp`, `sms`, `tel`, `hwk`, `swk`,
/// `sc`) and is (`face`, `fpt`, `iris`, `retina`, `vbm`). One kind alone —
/// a password, or a one-time code without one — is one factor.
pub fn upstream_second_factor(mapped: &[&str]) -> bool {
    let kind = |value: &str| match value {
        "pwd" | "pin" | "kba" => Some(0),
        "otp" | "sms" | "tel" | "hwk" | "swk" | "sc" => Some(1),
        "face" | "fpt" | "iris" | "retina" | "vbm" => Some(2),
        _ => None,
    };
    let mut kinds = mapped.iter().filter_map(|value| kind(value)).collect::<Vec<_>>();
    kinds.sort_unstable();
    kinds.dedup();
    mapped.contains(&"mfa") || kinds.len() >= 2
}

/// Whether a gov.br login at `level` with gov.br's own `amr` values counts
/// as two factors though its mapped values alone do not say so: `prata` or
/// `ouro` (an identity checked against a registry, a bank or a
/// certificate) reached with a one-time code, a certificate (`x509_…`) or
/// a bank's login (`bankNNN`), each of which gov.br asks on top of
/// something the person knows.
pub fn govbr_strong_login(level: Option<ReliabilityLevel>, upstream: &[&str]) -> bool {
    let strong =
        |value: &&str| matches!(*value, "otp" | "mfa") || value.starts_with("x509") || value.starts_with("bank");
    level.is_some_and(|l| l >= ReliabilityLevel::Prata) && upstream.iter().any(strong)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn govbr_values_map_to_rfc_8176_where_the_meaning_is_sure() {
        assert_eq!(govbr_method("passwd"), Some("pwd"));
        assert_eq!(govbr_method("otp"), Some("otp"));
        assert_eq!(govbr_method("mfa"), Some("mfa"));
        assert_eq!(govbr_method("x509_pf"), Some("swk"));
        for unmapped in ["captcha", "bank001", "bank237", "app_qrcode", "pwd-novo", "", "PASSWD"] {
            assert_eq!(govbr_method(unmapped), None, "{unmapped}");
        }
    }

    #[test]
    fn a_standard_provider_s_values_pass_only_when_registered() {
        assert_eq!(oidc_method("hwk"), Some("hwk"));
        assert_eq!(oidc_method("pwd"), Some("pwd"));
        assert_eq!(oidc_method("passwd"), None);
        assert_eq!(oidc_method("fed"), None, "fed is this service's to say");
    }

    #[test]
    fn the_session_is_federated_first_and_each_value_once() {
        assert_eq!(
            session_amr(["passwd", "captcha", "otp", "mfa", "otp"], govbr_method),
            vec!["fed", "pwd", "otp", "mfa"]
        );
        assert_eq!(session_amr([], govbr_method), vec!["fed"]);
        assert_eq!(session_amr(["bank001", "x509_pj"], govbr_method), vec!["fed", "swk"]);
    }

    #[test]
    fn govbr_silver_and_gold_with_a_code_certificate_or_bank_are_two_factors() {
        use ReliabilityLevel::{Bronze, Ouro, Prata};
        assert!(govbr_strong_login(Some(Prata), &["passwd", "bank001"]));
        assert!(govbr_strong_login(Some(Ouro), &["x509_pf"]));
        assert!(govbr_strong_login(Some(Prata), &["passwd", "otp"]));
        assert!(!govbr_strong_login(Some(Bronze), &["passwd", "bank001"]), "bronze proves too little");
        assert!(!govbr_strong_login(Some(Ouro), &["passwd"]), "a password alone, at any level");
        assert!(!govbr_strong_login(Some(Prata), &["passwd", "captcha", "app_qrcode"]));
        assert!(!govbr_strong_login(None, &["otp"]));
    }

    #[test]
    fn second_factors_are_told_from_a_password_alone() {
        assert!(!upstream_second_factor(&["fed", "pwd"]));
        assert!(!upstream_second_factor(&["fed"]));
        assert!(upstream_second_factor(&["fed", "pwd", "mfa"]));
        assert!(upstream_second_factor(&["fed", "pwd", "otp"]), "something known and something held");
        assert!(!upstream_second_factor(&["fed", "swk"]), "a key alone is one factor");
        assert!(!upstream_second_factor(&["fed", "otp", "sms"]), "two held things are one kind");
        assert!(upstream_second_factor(&["fed", "hwk", "fpt"]));
    }
}
