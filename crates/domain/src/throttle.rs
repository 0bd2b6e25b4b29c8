//! Brute-force limits on credential checks: which keys a failure counts
//! against, when a key is limited, and how long until it is free again.
//!
//! A failed password counts against the account (at `pair`, at the login
//! form and at a password change) and against the client's address; a
//! failed client secret (at `/oauth/token/`) against the address only. An
//! account has one count whichever identifier named it — its username or
//! its CPF, with or without punctuation — kept under its username
//! (`username:<name>`). A login that named no account counts under the
//! identifier typed, in the same form (`username:<digits>` for a CPF), so
//! that its answers cannot be told from a known account's. Client secrets are 256 random
//! bits made by `credencial client`, so counting failures per `client_id`
//! would stop no guessing; it would only let anyone who knows a client's
//! public id lock out every user of that application with a handful of
//! wrong secrets. Each key has a fixed window that starts at
//! its first failure: once `limit` failures fall into the window, the key is
//! limited until the window ends; a failure after the window starts a new
//! one. Times are Unix milliseconds, passed in (never read here).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use crate::cpf::Cpf;
use crate::user::Username;

/// What a throttle key counts the failures of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyKind {
    /// A username (at `pair` and the login form of `/oauth/authorize/`).
    Username,
    /// A client address.
    Address,
    /// An account's second step: wrong codes of an authenticator app and
    /// recovery codes, in a budget of their own that no password touches.
    SecondFactorCode,
}

impl KeyKind {
    fn prefix(self) -> &'static str {
        match self {
            Self::Username => "username",
            Self::Address => "address",
            Self::SecondFactorCode => "code",
        }
    }
}

/// The address a request came from, as the limits see it: an IPv4 address
/// (also when written IPv4-mapped, `::ffff:a.b.c.d`), or the /64 network of
/// an IPv6 address (one subscriber usually holds a whole /64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddress(IpAddr);

impl From<ClientAddress> for IpAddr {
    fn from(address: ClientAddress) -> Self {
        address.0
    }
}

impl ClientAddress {
    /// The address `ip` is counted under.
    pub fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self(IpAddr::V4(v4)),
            IpAddr::V6(v6) => {
                let network = u128::from(v6) & !((1u128 << 64) - 1);
                Self(IpAddr::V6(Ipv6Addr::from(network)))
            }
        }
    }
}

impl fmt::Display for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// A key failures are counted under: `username:<name>` or `address:<ip>`
/// (`address:<network>/64` for IPv6).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThrottleKey {
    // First, so that keys sort by their text (the order rows are locked in).
    text: String,
    kind: KeyKind,
}

impl ThrottleKey {
    /// The key of a username.
    pub fn username(username: &Username) -> Self {
        Self::new(KeyKind::Username, username.as_str())
    }

    /// The key of a login that named no account: a CPF (see
    /// [`Cpf::parse`]) by its digits, however punctuated, anything else as
    /// typed; `None` for text no username can be.
    pub fn identifier(typed: &str) -> Option<Self> {
        let digits = Cpf::parse(typed).ok();
        let text = digits.as_ref().map_or(typed, Cpf::as_str);
        Username::parse(text).ok().map(|name| Self::username(&name))
    }

    /// The key of the second step of the account whose username is
    /// `username` (as stored): `code:<username>`.
    pub fn second_factor_code(username: &str) -> Self {
        Self::new(KeyKind::SecondFactorCode, username)
    }

    /// The key of a client address.
    pub fn address(address: ClientAddress) -> Self {
        Self::new(KeyKind::Address, &address.to_string())
    }

    fn new(kind: KeyKind, value: &str) -> Self {
        Self { text: format!("{}:{value}", kind.prefix()), kind }
    }

    /// The key as stored (`username:ana`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the key counts.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }
}

impl fmt::Display for ThrottleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The failures of one key in its current (or last) window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureWindow {
    /// The key.
    pub key: ThrottleKey,
    /// Failures counted since the window started.
    pub failures: u32,
    /// When the window started: the first failure of the window (Unix ms).
    pub started_at_ms: i64,
}

/// How many failures are allowed per key within how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    /// Failed passwords per username within the window (0: no limit).
    pub username_failures: u32,
    /// Failures per client address within the window (0: no limit).
    pub address_failures: u32,
    /// Length of a window, in seconds (at least 1).
    pub window_secs: u32,
}

impl Default for ThrottlePolicy {
    /// 5 failures per username, 20 per address, in 300 seconds.
    fn default() -> Self {
        Self { username_failures: 5, address_failures: 20, window_secs: 300 }
    }
}

/// Who an attempt claims to be.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// The account a login named, by its username as stored, whichever
    /// identifier named it: one count per account.
    Account(&'a Username),
    /// A login that named no account, as typed (trimmed): counted under
    /// [`ThrottleKey::identifier`] of it, the key an account of that
    /// username would have. One that cannot exist (see
    /// [`Username::parse`]) has no key of its own.
    Unknown(&'a str),
    /// A client secret at `/oauth/token/`: counted against the address only
    /// (see the module's documentation).
    ClientSecret,
    /// A second factor's code for the account whose username (as stored)
    /// this is: counted in the account's own code budget
    /// ([`KeyKind::SecondFactorCode`], as many as the password's limit per
    /// window) and against the address; a right password never resets it,
    /// and a wrong code never spends the password's.
    SecondFactorCode(&'a str),
}

impl ThrottlePolicy {
    /// No limits at all.
    pub const DISABLED: Self = Self { username_failures: 0, address_failures: 0, window_secs: 1 };

    /// The limit of keys of `kind` (0: none).
    pub fn limit(&self, kind: KeyKind) -> u32 {
        match kind {
            KeyKind::Username | KeyKind::SecondFactorCode => self.username_failures,
            KeyKind::Address => self.address_failures,
        }
    }

    /// The window length in milliseconds.
    pub fn window_ms(&self) -> i64 {
        i64::from(self.window_secs.max(1)) * 1000
    }

    /// The keys an attempt by `subject` from `address` counts against,
    /// leaving out the kinds whose limit is 0. The username's key, if any,
    /// comes first.
    pub fn keys(&self, subject: Subject<'_>, address: Option<ClientAddress>) -> Vec<ThrottleKey> {
        let mut keys = Vec::with_capacity(2);
        if self.username_failures > 0 {
            match subject {
                Subject::Account(username) => keys.push(ThrottleKey::username(username)),
                Subject::Unknown(typed) => keys.extend(ThrottleKey::identifier(typed)),
                Subject::SecondFactorCode(username) => keys.push(ThrottleKey::second_factor_code(username)),
                Subject::ClientSecret => {}
            }
        }
        if self.address_failures > 0 {
            keys.extend(address.map(ThrottleKey::address));
        }
        keys
    }

    /// Whether `window` has ended at `now_ms` (a failure now starts a new one).
    pub fn has_ended(&self, window: &FailureWindow, now_ms: i64) -> bool {
        now_ms >= window.started_at_ms.saturating_add(self.window_ms())
    }

    /// Seconds until the key of `window` is free again, if it is limited at
    /// `now_ms`: the rest of the window rounded up, at least 1. `None` when
    /// the window has ended or holds fewer failures than the limit.
    pub fn retry_after_secs(&self, window: &FailureWindow, now_ms: i64) -> Option<u64> {
        let limit = self.limit(window.key.kind());
        if limit == 0 || window.failures < limit || self.has_ended(window, now_ms) {
            return None;
        }
        let remaining_ms = window.started_at_ms.saturating_add(self.window_ms()).saturating_sub(now_ms);
        let secs = u64::try_from(remaining_ms).unwrap_or(0).div_ceil(1000);
        Some(secs.max(1))
    }

    /// The longest wait among `windows`, if any of them is limited at `now_ms`.
    pub fn retry_after_any(&self, windows: &[FailureWindow], now_ms: i64) -> Option<u64> {
        windows.iter().filter_map(|w| self.retry_after_secs(w, now_ms)).max()
    }

    /// Windows that started before this instant (Unix ms) have ended at
    /// `now_ms`; their rows can be deleted.
    pub fn ended_before(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.window_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn policy() -> ThrottlePolicy {
        ThrottlePolicy { username_failures: 5, address_failures: 20, window_secs: 300 }
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("ip")
    }

    fn window(key: ThrottleKey, failures: u32, started_at_ms: i64) -> FailureWindow {
        FailureWindow { key, failures, started_at_ms }
    }

    fn ana() -> ThrottleKey {
        ThrottleKey::username(&Username::parse("ana").expect("username"))
    }

    #[test]
    fn keys_name_their_kind_and_value() {
        assert_eq!(ana().as_str(), "username:ana");
        assert_eq!(ana().kind(), KeyKind::Username);
        let address = ThrottleKey::address(ClientAddress::of(ip("203.0.113.7")));
        assert_eq!(address.as_str(), "address:203.0.113.7");
        assert_eq!(address.kind(), KeyKind::Address);
    }

    #[test]
    fn a_username_that_looks_like_a_prefix_is_still_a_username() {
        let tricky = ThrottleKey::username(&Username::parse("address:1.2.3.4").expect("username"));
        assert_eq!(tricky.as_str(), "username:address:1.2.3.4");
        assert_eq!(tricky.kind(), KeyKind::Username);
        assert_ne!(tricky, ThrottleKey::address(ClientAddress::of(ip("1.2.3.4"))));
    }

    #[test]
    fn ipv6_addresses_count_per_64_network_and_mapped_ipv4_as_ipv4() {
        let a = ClientAddress::of(ip("2001:db8:1:2:aaaa::1"));
        let b = ClientAddress::of(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"));
        let other = ClientAddress::of(ip("2001:db8:1:3::1"));
        assert_eq!(a, b);
        assert_ne!(a, other);
        assert_eq!(ThrottleKey::address(a).as_str(), "address:2001:db8:1:2::/64");
        assert_eq!(ClientAddress::of(ip("::ffff:198.51.100.4")), ClientAddress::of(ip("198.51.100.4")));
        assert_eq!(ThrottleKey::address(ClientAddress::of(ip("::1"))).as_str(), "address:::/64");
    }

    #[test]
    fn a_password_counts_against_username_and_address_a_client_secret_against_the_address_only() {
        let from = Some(ClientAddress::of(ip("192.0.2.1")));
        let keys = policy().keys(Subject::Unknown("ana"), from);
        let texts: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
        assert_eq!(texts, ["username:ana", "address:192.0.2.1"]);
        let ana = Username::parse("ana").expect("username");
        assert_eq!(policy().keys(Subject::Account(&ana), from), keys, "a known account's key looks the same");
        let keys = policy().keys(Subject::ClientSecret, from);
        let texts: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
        assert_eq!(texts, ["address:192.0.2.1"]);
    }

    #[test]
    fn an_unknown_cpf_counts_under_its_digits_however_punctuated() {
        let bare = ThrottleKey::identifier("52998224725").expect("a key");
        assert_eq!(bare.as_str(), "username:52998224725");
        assert_eq!(ThrottleKey::identifier("529.982.247-25"), Some(bare.clone()));
        assert_eq!(ThrottleKey::identifier("529982247-25"), Some(bare));
        // Not a CPF (wrong check digits): the text as typed.
        assert_eq!(
            ThrottleKey::identifier("529.982.247-26").map(|k| k.to_string()).as_deref(),
            Some("username:529.982.247-26")
        );
        assert_eq!(ThrottleKey::identifier("ana"), Some(ana()));
        assert_eq!(ThrottleKey::identifier("a\u{0}"), None);
    }

    #[test]
    fn second_factor_codes_have_their_own_budget_beside_the_address() {
        let from = Some(ClientAddress::of(ip("192.0.2.1")));
        let keys = policy().keys(Subject::SecondFactorCode("ana"), from);
        let texts: Vec<&str> = keys.iter().map(ThrottleKey::as_str).collect();
        assert_eq!(texts, ["code:ana", "address:192.0.2.1"], "never the password's key");
        assert_eq!(keys[0].kind(), KeyKind::SecondFactorCode);
        assert_eq!(policy().limit(KeyKind::SecondFactorCode), 5, "as many as the password's");
        assert!(ThrottlePolicy::DISABLED.keys(Subject::SecondFactorCode("ana"), from).is_empty());
        assert_ne!(ThrottleKey::second_factor_code("ana"), ana());
    }

    #[test]
    fn disabled_limits_and_impossible_subjects_have_no_keys() {
        let from = Some(ClientAddress::of(ip("192.0.2.1")));
        let no_subject = ThrottlePolicy { username_failures: 0, ..policy() };
        assert_eq!(no_subject.keys(Subject::Unknown("ana"), from).len(), 1);
        let no_address = ThrottlePolicy { address_failures: 0, ..policy() };
        assert_eq!(no_address.keys(Subject::Unknown("ana"), from), vec![ana()]);
        assert!(ThrottlePolicy::DISABLED.keys(Subject::Unknown("ana"), from).is_empty());
        assert!(policy().keys(Subject::Unknown("has space"), None).is_empty());
        assert!(policy().keys(Subject::ClientSecret, None).is_empty());
        assert!(policy().keys(Subject::Unknown(""), None).is_empty());
    }

    #[test]
    fn a_key_is_limited_from_the_limit_until_the_window_ends() {
        let p = policy();
        let started = NOW - 10_000;
        assert_eq!(p.retry_after_secs(&window(ana(), 4, started), NOW), None);
        assert_eq!(p.retry_after_secs(&window(ana(), 5, started), NOW), Some(290));
        assert_eq!(p.retry_after_secs(&window(ana(), 9, started), NOW), Some(290));
        // The last millisecond of the window is still limited; its end is not.
        let end = started + 300_000;
        assert_eq!(p.retry_after_secs(&window(ana(), 5, started), end - 1), Some(1));
        assert_eq!(p.retry_after_secs(&window(ana(), 5, started), end), None);
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds_and_is_at_least_one() {
        let p = ThrottlePolicy { window_secs: 2, ..policy() };
        let w = window(ana(), 5, NOW);
        assert_eq!(p.retry_after_secs(&w, NOW), Some(2));
        assert_eq!(p.retry_after_secs(&w, NOW + 1), Some(2));
        assert_eq!(p.retry_after_secs(&w, NOW + 999), Some(2));
        assert_eq!(p.retry_after_secs(&w, NOW + 1000), Some(1));
        assert_eq!(p.retry_after_secs(&w, NOW + 1999), Some(1));
        assert_eq!(p.retry_after_secs(&w, NOW + 2000), None);
    }

    #[test]
    fn each_kind_has_its_own_limit_and_zero_means_none() {
        let address = ThrottleKey::address(ClientAddress::of(ip("192.0.2.1")));
        let p = policy();
        assert_eq!(p.retry_after_secs(&window(address.clone(), 19, NOW), NOW), None);
        assert_eq!(p.retry_after_secs(&window(address.clone(), 20, NOW), NOW), Some(300));
        let off = ThrottlePolicy { address_failures: 0, ..policy() };
        assert_eq!(off.retry_after_secs(&window(address, 1_000, NOW), NOW), None);
    }

    #[test]
    fn the_longest_wait_wins() {
        let address = ThrottleKey::address(ClientAddress::of(ip("192.0.2.1")));
        let windows = [window(ana(), 5, NOW - 200_000), window(address, 20, NOW - 50_000), window(ana(), 1, NOW)];
        assert_eq!(policy().retry_after_any(&windows, NOW), Some(250));
        assert_eq!(policy().retry_after_any(&windows[2..], NOW), None);
    }

    #[test]
    fn windows_older_than_the_window_length_have_ended() {
        let p = policy();
        assert_eq!(p.ended_before(NOW), NOW - 300_000);
        assert!(p.has_ended(&window(ana(), 3, NOW - 300_000), NOW));
        assert!(!p.has_ended(&window(ana(), 3, NOW - 299_999), NOW));
    }
}
