//! One wrapper for values that must never be printed: tokens, secrets,
//! hashes, personal data inside debug output.
//!
//! `Redacted<T>` behaves as its value everywhere (it dereferences to it,
//! serialises and deserialises as it, compares and clones as it) except in
//! `Debug`, which prints `[redacted]`. A struct whose sensitive fields are
//! `Redacted` can derive `Debug` and still never leak them into a log line.
//!
//! ```
//! use credencial_domain::redacted::Redacted;
//!
//! #[derive(Debug)]
//! struct Login {
//!     username: String,
//!     password: Redacted<String>,
//! }
//!
//! let login = Login { username: "ana".into(), password: Redacted::from("s3cret".to_owned()) };
//! let shown = format!("{login:?}");
//! assert!(shown.contains("ana") && shown.contains("[redacted]") && !shown.contains("s3cret"));
//! assert_eq!(login.password.as_str(), "s3cret");
//! ```

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What `Debug` prints in place of a redacted value.
pub const REDACTED: &str = "[redacted]";

/// A value that is never shown by `Debug` (see the module documentation).
/// Its equality is ordinary equality: compare secrets with the
/// constant-time helpers, never with `==`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Redacted<T>(pub T);

impl<T> Redacted<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }

    /// The value, borrowed.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> From<T> for Redacted<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl From<&str> for Redacted<String> {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl<T> Deref for Redacted<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Redacted<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> fmt::Debug for Redacted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T: Serialize> Serialize for Redacted<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Redacted<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value_even_nested_or_pretty() {
        let value = Some(Redacted("token-value".to_owned()));
        assert_eq!(format!("{value:?}"), "Some([redacted])");
        assert!(!format!("{value:#?}").contains("token-value"));
    }

    #[test]
    fn serialises_and_deserialises_as_the_value_itself() {
        let json = serde_json::to_string(&Redacted("abc")).expect("serialises");
        assert_eq!(json, "\"abc\"");
        let back: Redacted<String> = serde_json::from_str(&json).expect("deserialises");
        assert_eq!(back.as_str(), "abc");
    }

    #[test]
    fn compares_as_the_value() {
        assert_eq!(Redacted(1), Redacted(1));
        assert_ne!(Redacted("a"), Redacted("b"));
    }
}
