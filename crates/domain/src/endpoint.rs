//! The `endpoint` of a consume request: a path on the configured upstream.
//!
//! Only plain paths are accepted, so that joining one to the upstream base URL
//! can never leave the upstream host: no scheme, no `//host`, no backslash, no
//! dot segments, no percent-encoding, no query or fragment.

use crate::error::EndpointError;

/// Longest accepted endpoint path.
pub const MAX_PATH_LEN: usize = 512;

/// A plain absolute path that is safe to append to the upstream base URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UpstreamPath(String);

impl UpstreamPath {
    /// Accepts `raw` only if it is a plain path (see the module docs).
    pub fn parse(raw: &str) -> Result<Self, EndpointError> {
        let plain = raw.len() <= MAX_PATH_LEN
            && raw.starts_with('/')
            && !raw.starts_with("//")
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~'))
            && !raw.split('/').any(|seg| seg == "." || seg == "..");
        if plain {
            Ok(Self(raw.to_owned()))
        } else {
            Err(EndpointError::NotAPlainPath)
        }
    }

    /// The path text, starting with `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The paths a consume request may name. An entry ending in `*` allows every
/// plain path that starts with what comes before the `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointAllowList {
    entries: Vec<Entry>,
    default: UpstreamPath,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Exact(String),
    Prefix(String),
}

/// The path used when a consume request names no `endpoint`.
pub const DEFAULT_ENDPOINT: &str = "/api/rh/eu/";

impl EndpointAllowList {
    /// Builds the list from configured entries; the first entry is the default
    /// endpoint. Fails on an entry that is not a plain path (an optional
    /// trailing `*` aside) or on an empty list.
    pub fn new<S: AsRef<str>>(entries: &[S]) -> Result<Self, String> {
        let mut parsed = Vec::with_capacity(entries.len());
        for raw in entries {
            let raw = raw.as_ref().trim();
            let (path, prefix) = match raw.strip_suffix('*') {
                Some(p) => (p, true),
                None => (raw, false),
            };
            UpstreamPath::parse(path).map_err(|_| format!("{raw:?} is not a plain path"))?;
            parsed.push(if prefix { Entry::Prefix(path.to_owned()) } else { Entry::Exact(path.to_owned()) });
        }
        let default = match parsed.first() {
            Some(Entry::Exact(p)) => UpstreamPath(p.clone()),
            Some(Entry::Prefix(_)) => {
                return Err("the first entry is the default endpoint and must not end in '*'".into())
            }
            None => return Err("the allow-list must not be empty".into()),
        };
        Ok(Self { entries: parsed, default })
    }

    /// The endpoint used when a request names none.
    pub fn default_endpoint(&self) -> &UpstreamPath {
        &self.default
    }

    /// Resolves a requested endpoint: `None` gives the default; a value must
    /// be a plain path on the list.
    pub fn resolve(&self, requested: Option<&str>) -> Result<UpstreamPath, EndpointError> {
        let Some(raw) = requested else {
            return Ok(self.default.clone());
        };
        let path = UpstreamPath::parse(raw)?;
        let allowed = self.entries.iter().any(|e| match e {
            Entry::Exact(p) => p == path.as_str(),
            Entry::Prefix(p) => path.as_str().starts_with(p.as_str()),
        });
        if allowed {
            Ok(path)
        } else {
            Err(EndpointError::NotAllowed)
        }
    }
}

impl Default for EndpointAllowList {
    fn default() -> Self {
        Self {
            entries: vec![Entry::Exact(DEFAULT_ENDPOINT.to_owned())],
            default: UpstreamPath(DEFAULT_ENDPOINT.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tricks_are_not_plain_paths() {
        for raw in [
            "http://evil.example/",
            "//evil.example/x",
            "/api/rh/eu/../../admin",
            "/%2e%2e/x",
            "\\\\evil",
            "/\\evil",
            "/api/rh/eu/?x=1",
            "/api/rh/eu/#frag",
            "/api/./rh/",
            "api/rh/eu/",
            "",
            "/api/rh/eu/\n",
            "/api/rh/eu/\u{202e}",
            "/api/rh/eu/ ",
            "/api@evil/",
        ] {
            assert_eq!(UpstreamPath::parse(raw), Err(EndpointError::NotAPlainPath), "{raw:?}");
        }
    }

    #[test]
    fn default_list_allows_only_the_user_data_path() {
        let list = EndpointAllowList::default();
        assert_eq!(list.resolve(None).expect("default").as_str(), "/api/rh/eu/");
        assert!(list.resolve(Some("/api/rh/eu/")).is_ok());
        assert_eq!(list.resolve(Some("/api/rh/eu")), Err(EndpointError::NotAllowed));
        assert_eq!(list.resolve(Some("/admin/")), Err(EndpointError::NotAllowed));
        assert_eq!(list.resolve(Some("/api/rh/eu/../x")), Err(EndpointError::NotAPlainPath));
    }

    #[test]
    fn prefix_entries_allow_paths_below_them() {
        let list = EndpointAllowList::new(&["/api/rh/eu/", "/api/ensino/*"]).expect("valid");
        assert!(list.resolve(Some("/api/ensino/diarios/")).is_ok());
        assert_eq!(list.resolve(Some("/api/ens")), Err(EndpointError::NotAllowed));
    }

    #[test]
    fn bad_configuration_is_refused() {
        assert!(EndpointAllowList::new::<&str>(&[]).is_err());
        assert!(EndpointAllowList::new(&["http://x/"]).is_err());
        assert!(EndpointAllowList::new(&["/api/*"]).is_err(), "default cannot be a prefix");
    }

    proptest! {
        #[test]
        fn accepted_paths_never_carry_tricks(raw in "/[A-Za-z0-9/._~%:@?#\\\\-]{0,40}") {
            if let Ok(p) = UpstreamPath::parse(&raw) {
                let s = p.as_str();
                prop_assert!(s.starts_with('/') && !s.starts_with("//"));
                prop_assert!(!s.contains('%') && !s.contains('\\') && !s.contains(':'));
                prop_assert!(!s.split('/').any(|seg| seg == ".."));
            }
        }

        #[test]
        fn a_dot_dot_segment_anywhere_is_refused(a in "[a-z/]{0,10}", b in "[a-z/]{0,10}") {
            let raw = format!("/{a}/../{b}");
            prop_assert_eq!(UpstreamPath::parse(&raw), Err(EndpointError::NotAPlainPath));
        }
    }
}
