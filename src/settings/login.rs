//! How people log in and stay logged in: browser sessions, second factors and
//! passkeys, sign-up, password hashing and the brute-force limits.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How people log in and stay logged in: browser sessions, second factors and
/// passkeys, sign-up, password hashing and the brute-force limits.
#[derive(Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct LoginSettings {
    /// A browser session ends after this many seconds without a request
    /// (the inactivity limit).
    pub session_idle_secs: i64,
    /// A browser session ends this many seconds after its login, however
    /// active (the absolute limit).
    pub session_absolute_secs: i64,
    /// The key that seals TOTP secrets at rest: a file holding 32 random
    /// bytes in base64 (`head -c 32 /dev/urandom | base64`). Unset: the
    /// demo makes `second_factor.key` in its working directory (kept for
    /// the next run); `serve` offers no second factor.
    pub second_factor_key_file: Option<PathBuf>,
    /// Passkeys (WebAuthn): the origin people open the pages at
    /// (`https://id.example.gov.br`), whose host name is the relying party
    /// id. Unset: `issuer_url`'s origin when its host is a name; in the
    /// demo, `http://localhost:<port>` (WebAuthn takes no IP address).
    /// Passkeys need second factors (`second_factor_key_file`).
    pub passkey_origin: Option<String>,
    /// Whether staff must pass a second factor before any panel page:
    /// unset, on whenever the service offers second factors
    /// (`second_factor_key_file`, or the demo's own key)… except in the
    /// demo, where it is off unless set. `true` without second factors
    /// stops the start.
    pub staff_second_factor: Option<bool>,
    /// Whether anyone may create an account at `/conta/cadastro/`: unset,
    /// on in `demo` and off in `serve`.
    pub signup_enabled: Option<bool>,
    /// PBKDF2 iterations for new password hashes.
    pub password_iterations: u32,
    /// Passwords hashed at once (default: cores − 1, at least 1).
    pub hashing_threads: Option<usize>,
    /// Failed passwords per username within the window before answers are
    /// 429 (0: no limit).
    pub login_throttle_username_failures: u32,
    /// Failed credential checks per client address within the window
    /// before answers are 429 (0: no limit).
    pub login_throttle_address_failures: u32,
    /// Length of the brute-force limits' window, in seconds (1 to 86,400).
    pub login_throttle_window_secs: u32,
}

impl Default for LoginSettings {
    fn default() -> Self {
        Self {
            session_idle_secs: credencial_domain::session::DEFAULT_IDLE_SECS,
            session_absolute_secs: credencial_domain::session::DEFAULT_ABSOLUTE_SECS,
            second_factor_key_file: None,
            passkey_origin: None,
            staff_second_factor: None,
            signup_enabled: None,
            password_iterations: credencial_domain::password::DEFAULT_ITERATIONS,
            hashing_threads: None,
            login_throttle_username_failures: 5,
            login_throttle_address_failures: 20,
            login_throttle_window_secs: 300,
        }
    }
}

impl LoginSettings {
    /// The brute-force limits.
    pub fn throttle_policy(&self) -> credencial_domain::throttle::ThrottlePolicy {
        credencial_domain::throttle::ThrottlePolicy {
            username_failures: self.login_throttle_username_failures,
            address_failures: self.login_throttle_address_failures,
            window_secs: self.login_throttle_window_secs,
        }
    }
}
