//! Browser sessions kept on the server: the rules of their ids, their two
//! time limits, how a person authenticated (`amr`, `acr`) and the short,
//! coarse description of where a session runs (device and approximate
//! place) that the person sees on `/conta/sessoes/`.
//!
//! The cookie holds a random id; the store keeps only its SHA-256 hash, so
//! a copy of the database opens no session. A session is live while both
//! limits hold: its last activity is recent (the inactivity limit) and it
//! was opened recently enough (the absolute limit). Ending it deletes the
//! stored record, which ends it on every instance at once.

use std::net::IpAddr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::oauth::random_token_text;
use crate::redacted::Redacted;

/// The inactivity limit's default: 30 minutes (NIST SP 800-63B-4 AAL2 asks
/// for at most one hour).
pub const DEFAULT_IDLE_SECS: i64 = 30 * 60;
/// The absolute limit's default: 12 hours (AAL2: at most 24 hours).
pub const DEFAULT_ABSOLUTE_SECS: i64 = 12 * 60 * 60;
/// How stale a session's recorded last activity may get before a request
/// records it again: at most one write per session per minute, and the
/// inactivity limit is kept to within this much.
pub const TOUCH_INTERVAL_SECS: i64 = 60;

/// A session's two time limits (settings `session_idle_secs` and
/// `session_absolute_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Seconds without a request after which the session is over.
    pub idle_secs: i64,
    /// Seconds after its opening after which the session is over, however
    /// active.
    pub absolute_secs: i64,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { idle_secs: DEFAULT_IDLE_SECS, absolute_secs: DEFAULT_ABSOLUTE_SECS }
    }
}

impl SessionLimits {
    /// When a session opened at `now` ends at the latest (the absolute
    /// limit; the stored expiry, and the cookie's lifetime).
    pub fn expires_at(&self, now: i64) -> i64 {
        now.saturating_add(self.absolute_secs)
    }

    /// The oldest last activity a live session may have at `now`.
    pub fn idle_since(&self, now: i64) -> i64 {
        now.saturating_sub(self.idle_secs)
    }

    /// Whether a session with this expiry and last activity is live at
    /// `now` (what the stores' queries select; see the module's
    /// documentation).
    pub fn is_live(&self, expires_at: i64, last_seen_at: i64, now: i64) -> bool {
        expires_at > now && last_seen_at >= self.idle_since(now)
    }
}

/// Whether a live session last seen at `last_seen_at` has its activity
/// recorded again by a request at `now`.
pub fn needs_touch(last_seen_at: i64, now: i64) -> bool {
    last_seen_at < now.saturating_sub(TOUCH_INTERVAL_SECS)
}

/// A session's id: 256 random bits as 43 base64url characters, the cookie's
/// value. `Debug` does not show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionToken(Redacted<String>);

impl SessionToken {
    /// A fresh random id.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        Self(Redacted(random_token_text(&bytes)))
    }

    /// The id a cookie holds, when it has the shape of one (43 base64url
    /// characters); anything else names no session and is never looked up.
    pub fn from_cookie(value: &str) -> Option<Self> {
        let shaped = value.len() == 43 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        shaped.then(|| Self(Redacted(value.to_owned())))
    }

    /// The text of the id (the cookie's value; the key of the session's
    /// form tokens).
    pub fn expose(&self) -> &str {
        &self.0 .0
    }

    /// What the store keeps and looks the session up by: the SHA-256 of
    /// the id.
    pub fn hash(&self) -> [u8; 32] {
        Sha256::digest(self.0 .0.as_bytes()).into()
    }

    /// The session's id as applications see it (the `sid` of ID tokens and
    /// logout tokens): see [`sid_of`].
    pub fn sid(&self) -> String {
        sid_of(&self.hash())
    }
}

/// The `sid` of the session whose cookie holds `value` (see [`sid_of`]).
pub fn sid_of_cookie(value: &str) -> String {
    sid_of(&Sha256::digest(value.as_bytes()).into())
}

/// The `sid` of the session whose id hashes to `token_hash`: 128 bits
/// derived from the stored hash (so neither the cookie nor the stored
/// hash can be read back from it), in URL-safe base64. Stable for the
/// session's life, different for every session.
pub fn sid_of(token_hash: &[u8; 32]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"credencial session id for applications\0");
    hasher.update(token_hash);
    let digest = hasher.finalize();
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

/// How a person proved who they are, as OpenID Connect's `amr` names it
/// (RFC 8176).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// A password (`pwd`).
    Password,
    /// A one-time code of an authenticator app (`otp`).
    Totp,
    /// A recovery code (stored as `rec`, this service's own value; an ID
    /// token says `otp`, which it is).
    RecoveryCode,
    /// A passkey bound to one device (`hwk`), used with user verification
    /// (a PIN or a biometric on the device): two factors in one.
    Passkey,
    /// A passkey that may be synced between devices (`swk`: the key lives
    /// in a password manager's cloud), used with user verification.
    SyncedPasskey,
    /// An application password the person made for a program that cannot
    /// ask a code (stored as `app`, this service's own value; a token says
    /// `pwd`, which it is). Accepted by `pair` only.
    AppPassword,
}

impl AuthMethod {
    /// The value stored with the session (RFC 8176's, but `rec`).
    pub fn amr(self) -> &'static str {
        match self {
            Self::Password => "pwd",
            Self::Totp => "otp",
            Self::RecoveryCode => "rec",
            Self::Passkey => "hwk",
            Self::SyncedPasskey => "swk",
            Self::AppPassword => "app",
        }
    }

    /// The RFC 8176 value an application reads: the stored one, but a
    /// recovery code is `otp` and an application password `pwd`.
    pub fn rfc_8176(self) -> &'static str {
        match self {
            Self::Password | Self::AppPassword => "pwd",
            Self::Totp | Self::RecoveryCode => "otp",
            Self::Passkey => "hwk",
            Self::SyncedPasskey => "swk",
        }
    }

    /// The method a stored value names, when it is one this service uses.
    pub fn from_amr(value: &str) -> Option<Self> {
        match value {
            "pwd" => Some(Self::Password),
            "otp" => Some(Self::Totp),
            "rec" => Some(Self::RecoveryCode),
            "hwk" => Some(Self::Passkey),
            "swk" => Some(Self::SyncedPasskey),
            "app" => Some(Self::AppPassword),
            _ => None,
        }
    }

    /// Whether the method is a second factor (anything but a password;
    /// a passkey is, and also stands alone).
    pub fn is_second_factor(self) -> bool {
        !matches!(self, Self::Password | Self::AppPassword)
    }

    /// Whether the method is a passkey, of either kind.
    pub fn is_passkey(self) -> bool {
        matches!(self, Self::Passkey | Self::SyncedPasskey)
    }

    /// The method's name in the metrics and the security activity
    /// (`password`, `totp`, `recovery_code`, `passkey`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::Totp => "totp",
            Self::RecoveryCode => "recovery_code",
            Self::Passkey | Self::SyncedPasskey => "passkey",
            Self::AppPassword => "app_password",
        }
    }
}

/// The authentication context class of a session opened with a password
/// alone (the ID token's `acr`).
pub const ACR_PASSWORD: &str = "urn:credencial:acr:senha";
/// The authentication context class of a session that passed a second
/// factor after the password, or a passkey with user verification (which
/// is two factors: the device, and the PIN or biometric that unlocks it).
pub const ACR_TWO_FACTORS: &str = "urn:credencial:acr:dois-fatores";

/// The `acr` a session authenticated by `methods` reaches.
pub fn acr_of(methods: &[AuthMethod]) -> &'static str {
    if methods.iter().any(|m| m.is_second_factor()) {
        ACR_TWO_FACTORS
    } else {
        ACR_PASSWORD
    }
}

/// The `amr` values of `methods` as stored: space-separated, in order.
pub fn amr_text(methods: &[AuthMethod]) -> String {
    methods.iter().map(|m| m.amr()).collect::<Vec<_>>().join(" ")
}

/// The methods a stored `amr` text names (values this service does not
/// use are skipped).
pub fn methods_of(amr: &str) -> Vec<AuthMethod> {
    amr.split_ascii_whitespace().filter_map(AuthMethod::from_amr).collect()
}

/// The `amr` claim (RFC 8176) of a session authenticated by the stored
/// `amr`: see [`crate::assurance::Proof::amr_claim`]. A session without a
/// stored value (an earlier release) is `["pwd"]`.
pub fn amr_claim(stored: &str) -> Vec<String> {
    crate::assurance::Proof::from_stored(stored, "", 0).amr_claim()
}

/// A short summary of the browser and system a `User-Agent` names
/// ("Firefox no Linux", "Chrome no Android"), for the person to recognise
/// their own devices; never the whole header (it is a fingerprint, and as
/// long as the client likes). Unknown parts are named generically.
pub fn device_summary(user_agent: Option<&str>) -> String {
    let ua = user_agent.unwrap_or("");
    // Order matters: Edge and Opera say "Chrome", Chrome says "Safari",
    // Android says "Linux", iOS says "Mac OS X".
    let browser = [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("CriOS/", "Chrome"),
        ("Chromium/", "Chromium"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
        ("curl/", "curl"),
    ]
    .iter()
    .find(|(marker, _)| ua.contains(marker))
    .map_or("Navegador desconhecido", |(_, name)| name);
    let system = [
        ("Android", "Android"),
        ("iPhone", "iOS"),
        ("iPad", "iPadOS"),
        ("Windows", "Windows"),
        ("CrOS", "ChromeOS"),
        ("Mac OS X", "macOS"),
        ("Macintosh", "macOS"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find(|(marker, _)| ua.contains(marker))
    .map(|(_, name)| *name);
    match system {
        Some(system) => format!("{browser} no {system}"),
        None => browser.to_owned(),
    }
}

/// The approximate place of a client address that the person sees: an
/// IPv4 address's /24 network (`203.0.113.0/24`), an IPv6 address's /48
/// (`2001:db8:1::/48`); an IPv4-mapped IPv6 address as IPv4.
pub fn approximate_address(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            format!("{a}.{b}.{c}.0/24")
        }
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 80) - 1);
            format!("{}/48", std::net::Ipv6Addr::from(network))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_lives_while_both_limits_hold() {
        let limits = SessionLimits { idle_secs: 1800, absolute_secs: 43_200 };
        let opened = 1_000_000;
        let expires = limits.expires_at(opened);
        // (last seen, now, live)
        let cases = [
            (opened, opened, true),
            (opened, opened + 1800, true),
            (opened, opened + 1801, false),
            (opened + 42_000, opened + 43_199, true),
            (opened + 43_199, opened + 43_200, false),
            (opened + 43_199, opened + 50_000, false),
        ];
        for (last_seen, now, live) in cases {
            assert_eq!(limits.is_live(expires, last_seen, now), live, "last seen {last_seen}, now {now}");
        }
    }

    #[test]
    fn activity_is_recorded_at_most_once_a_minute() {
        assert!(!needs_touch(100, 100));
        assert!(!needs_touch(100, 160));
        assert!(needs_touch(100, 161));
    }

    #[test]
    fn an_id_is_random_shaped_and_only_its_hash_is_kept() {
        let a = SessionToken::generate();
        let b = SessionToken::generate();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 43);
        assert_eq!(SessionToken::from_cookie(a.expose()), Some(a.clone()));
        assert_eq!(a.hash(), SessionToken::from_cookie(a.expose()).expect("shaped").hash());
        assert_ne!(a.hash(), b.hash());
        assert!(!format!("{a:?}").contains(a.expose()), "Debug hides the id");
        for bad in ["", "short", &"a".repeat(44), &format!("{}=", &"a".repeat(42)), "eyJhbGciOiJIUzI1NiJ9.e30.sig"] {
            assert_eq!(SessionToken::from_cookie(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn methods_round_trip_through_their_amr_text() {
        assert_eq!(amr_text(&[AuthMethod::Password]), "pwd");
        assert_eq!(methods_of("pwd unknown"), vec![AuthMethod::Password]);
        assert_eq!(amr_text(&[AuthMethod::Password, AuthMethod::Totp]), "pwd otp");
        assert_eq!(methods_of("pwd rec"), vec![AuthMethod::Password, AuthMethod::RecoveryCode]);
        assert_eq!(acr_of(&[AuthMethod::Password]), ACR_PASSWORD);
        assert_eq!(amr_claim("pwd"), ["pwd"]);
        assert_eq!(amr_claim("fed pwd otp mfa"), ["fed", "pwd", "otp", "mfa"], "an upstream's values as stored");
        assert_eq!(amr_claim("pwd otp"), ["pwd", "otp", "mfa"]);
        assert_eq!(amr_claim("pwd rec"), ["pwd", "otp", "mfa"], "a recovery code is a one-time code");
        assert_eq!(amr_claim(""), ["pwd"]);
        assert_eq!(acr_of(&[AuthMethod::Password, AuthMethod::RecoveryCode]), ACR_TWO_FACTORS);
        assert_eq!(amr_text(&[AuthMethod::Passkey]), "hwk");
        assert_eq!(methods_of("swk"), vec![AuthMethod::SyncedPasskey]);
        assert_eq!(amr_claim("hwk"), ["hwk", "mfa"], "a passkey with user verification is two factors");
        assert_eq!(amr_claim("swk"), ["swk", "mfa"]);
        assert_eq!(amr_claim("pwd hwk"), ["pwd", "hwk", "mfa"]);
        assert_eq!(acr_of(&[AuthMethod::SyncedPasskey]), ACR_TWO_FACTORS, "a passkey alone reaches two factors");
        assert!(AuthMethod::Passkey.is_passkey() && !AuthMethod::Totp.is_passkey());
        assert_eq!(AuthMethod::SyncedPasskey.label(), AuthMethod::Passkey.label());
        assert_eq!(methods_of(""), vec![]);
    }

    #[test]
    fn devices_are_summarised_not_copied() {
        let cases = [
            (
                "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                "Firefox no Linux",
            ),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Mobile Safari/537.36",
                "Chrome no Android",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
                "Safari no iOS",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36 Edg/130.0",
                "Edge no Windows",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
                "Safari no macOS",
            ),
            ("curl/8.5.0", "curl"),
            ("", "Navegador desconhecido"),
        ];
        for (ua, summary) in cases {
            assert_eq!(device_summary(Some(ua)), summary, "{ua}");
        }
        assert_eq!(device_summary(None), "Navegador desconhecido");
    }

    #[test]
    fn places_are_networks_not_addresses() {
        let cases = [
            ("203.0.113.77", "203.0.113.0/24"),
            ("::ffff:198.51.100.9", "198.51.100.0/24"),
            ("2001:db8:1:2:3:4:5:6", "2001:db8:1::/48"),
            ("::1", "::/48"),
        ];
        for (ip, place) in cases {
            assert_eq!(approximate_address(ip.parse().expect("ip")), place, "{ip}");
        }
    }
}
