//! Where a login may send the browser back to (`next`): a path of this
//! site, checked as the browser will read it.
//!
//! The browser resolves a `Location` with the WHATWG URL rules: dot
//! segments are removed (RFC 3986 §5.2.4), and `%2e` counts as a dot, in
//! either case (`/conta/%2E%2e/auth/logout/` is `/auth/logout/`); a
//! backslash is a slash, and tabs and line breaks are dropped. So `next` is
//! resolved the same way (with the `url` crate, which implements those
//! rules) before any check, and what is checked is what is sent: the
//! resolved path, never the text as it came.

use url::Url;

/// Longest `next` accepted (bytes).
pub const MAX_NEXT_LEN: usize = 2048;

/// A stand-in for this site's origin: the resolution needs a base URL, and
/// only whether the result stays on it matters.
const BASE: &str = "http://this-site.invalid/";

/// `raw` resolved as the browser would resolve it on a page of this site —
/// path, then `?query` and `#fragment` as the URL parser writes them —
/// when it is a path of this site: it starts with `/` but not `//`, holds
/// no backslash, no control character and no whitespace, is at most
/// [`MAX_NEXT_LEN`] bytes, and its resolved path does not start with `//`
/// either (`/a/..//host` would be another host). `None` otherwise.
pub fn resolve(raw: &str) -> Option<String> {
    let plain = raw.len() <= MAX_NEXT_LEN
        && raw.starts_with('/')
        && !raw.starts_with("//")
        && !raw.chars().any(|c| c == '\\' || c.is_control() || c.is_whitespace());
    if !plain {
        return None;
    }
    let base = Url::parse(BASE).ok()?;
    let url = base.join(raw).ok()?;
    if url.origin() != base.origin() || url.path().starts_with("//") {
        return None;
    }
    let mut resolved = url.path().to_owned();
    if let Some(query) = url.query() {
        resolved.push('?');
        resolved.push_str(query);
    }
    if let Some(fragment) = url.fragment() {
        resolved.push('#');
        resolved.push_str(fragment);
    }
    Some(resolved)
}

/// `raw` resolved (see [`resolve`]) when its resolved path is one of
/// `roots` (e.g. `/conta`) or a path below one (`/conta/…`), and holds no
/// `//` anywhere; `None` otherwise.
pub fn resolve_under(raw: &str, roots: &[&str]) -> Option<String> {
    let resolved = resolve(raw)?;
    let path = resolved.split(['?', '#']).next().unwrap_or("");
    let under = roots.iter().any(|root| path == *root || path.strip_prefix(root).is_some_and(|r| r.starts_with('/')));
    (under && !resolved.contains("//")).then_some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ROOTS: [&str; 2] = ["/conta", "/admin"];

    #[test]
    fn dot_segments_are_resolved_in_every_spelling() {
        for (raw, resolved) in [
            ("/conta/../auth/logout/", "/auth/logout/"),
            ("/conta/%2e%2e/auth/logout/", "/auth/logout/"),
            ("/conta/%2E%2E/auth/logout/", "/auth/logout/"),
            ("/conta/%2e%2E/auth/logout/", "/auth/logout/"),
            ("/conta/.%2e/auth/logout/", "/auth/logout/"),
            ("/conta/%2e./auth/logout/", "/auth/logout/"),
            ("/conta/.%2E/auth/logout/", "/auth/logout/"),
            ("/conta/x/../../auth/", "/auth/"),
            ("/conta/..", "/"),
            ("/conta/%2e%2e", "/"),
            ("/../../../etc/passwd", "/etc/passwd"),
            ("/conta/./x", "/conta/x"),
            ("/conta/%2e/x", "/conta/x"),
            ("/conta/.", "/conta/"),
            ("/conta/x/..?y=/../z", "/conta/?y=/../z"),
            ("/conta/x/..#/../z", "/conta/#/../z"),
            ("/admin/../conta/", "/conta/"),
            ("/conta/..%2f", "/conta/..%2f"),
            ("/conta/...", "/conta/..."),
            ("/conta/%2e%2e%2e", "/conta/%2e%2e%2e"),
            ("/conta/", "/conta/"),
            ("/", "/"),
            ("/a/b?c=d&e=%2F%2F", "/a/b?c=d&e=%2F%2F"),
            ("/caf%C3%A9", "/caf%C3%A9"),
            ("/café", "/caf%C3%A9"),
        ] {
            assert_eq!(resolve(raw).as_deref(), Some(resolved), "{raw:?}");
        }
    }

    #[test]
    fn anything_that_leaves_the_site_or_is_not_a_plain_path_is_refused() {
        for raw in [
            "https://evil.example/",
            "//evil.example/",
            "/\\evil.example",
            "\\\\evil",
            "/conta/..\\auth/logout/",
            "/conta/%2e%2e\\auth/",
            "/a/..//evil.example/",
            "/a/%2e%2e//evil.example/",
            "/conta/.././/evil.example",
            "javascript:alert(1)",
            "evil.example",
            "",
            "/a\nb",
            "/a b",
            "/\t/evil",
            "/conta/\0",
        ] {
            assert_eq!(resolve(raw), None, "{raw:?}");
        }
        assert_eq!(resolve(&format!("/{}", "a".repeat(MAX_NEXT_LEN))), None, "too long");
    }

    #[test]
    fn the_prefix_is_checked_on_the_resolved_path() {
        for (raw, resolved) in [
            ("/conta", "/conta"),
            ("/conta/", "/conta/"),
            ("/conta/experiencias/?x=1", "/conta/experiencias/?x=1"),
            ("/admin/usuarios/3/", "/admin/usuarios/3/"),
            ("/admin/../conta/", "/conta/"),
            ("/conta/x/%2e%2e/", "/conta/"),
        ] {
            assert_eq!(resolve_under(raw, &ROOTS).as_deref(), Some(resolved), "{raw:?}");
        }
        for raw in [
            "/conta/../auth/logout/",
            "/conta/%2e%2e/auth/logout/",
            "/conta/%2E%2E/oauth/authorize/",
            "/conta/.%2e/auth/logout/",
            "/conta/%2e./auth/logout/",
            "/admin/%2e%2E/%2e%2e/auth/logout/",
            "/conta/..",
            "/conta/..\\auth/logout/",
            "/contas",
            "/contas/",
            "/oauth/x",
            "/conta//evil.example",
            "/conta/?next=//evil.example",
            "//evil.example/conta/",
            "https://evil.example/conta/",
            "/conta/\n",
        ] {
            assert_eq!(resolve_under(raw, &ROOTS), None, "{raw:?}");
        }
    }

    /// A path segment: a name, or a dot segment in one of its spellings.
    fn segment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "conta", "admin", "auth", "logout", "x", "", ".", "..", "%2e", "%2E", "%2e%2e", "%2E%2E", ".%2e", "%2e.",
            ".%2E", "%2E.", "...", "..%2f",
        ])
    }

    /// Whether `segment` is one the browser reads as `.` or `..`.
    fn is_dot_segment(segment: &str) -> bool {
        matches!(segment.to_ascii_lowercase().replace("%2e", ".").as_str(), "." | "..")
    }

    proptest! {
        #[test]
        fn a_resolved_path_has_no_dot_segment_and_resolves_to_itself(
            segments in prop::collection::vec(segment(), 0..8),
            query in prop::option::of("[a-z=&/.%]{0,10}"),
        ) {
            let mut raw = format!("/{}", segments.join("/"));
            if let Some(q) = &query {
                raw.push('?');
                raw.push_str(q);
            }
            if let Some(resolved) = resolve(&raw) {
                let path = resolved.split(['?', '#']).next().unwrap_or("");
                prop_assert!(path.starts_with('/') && !path.starts_with("//"), "{raw} -> {resolved}");
                prop_assert!(!path.split('/').any(is_dot_segment), "{raw} -> {resolved}");
                prop_assert_eq!(resolve(&resolved), Some(resolved.clone()), "idempotent");
            }
        }

        #[test]
        fn what_passes_the_prefix_check_stays_under_the_roots(
            root in prop::sample::select(vec!["/conta", "/admin"]),
            segments in prop::collection::vec(segment(), 0..8),
        ) {
            let raw = format!("{root}/{}", segments.join("/"));
            if let Some(resolved) = resolve_under(&raw, &ROOTS) {
                prop_assert!(
                    ROOTS.iter().any(|r| resolved == *r || resolved.starts_with(&format!("{r}/"))),
                    "{raw} -> {resolved}"
                );
                prop_assert!(!resolved.split('/').any(is_dot_segment), "{raw} -> {resolved}");
            }
            // Climbing out of the root by as many dot-dots as there are
            // names, in any spelling, is always refused.
            // (An empty segment counts: `/a//b/..` is `/a//`.)
            let names = segments.iter().filter(|s| !is_dot_segment(s)).count();
            let climb = format!("{root}/{}/%2E%2e/{}auth/logout/", segments.join("/"), "../".repeat(names + 2));
            prop_assert_eq!(resolve_under(&climb, &ROOTS), None, "{}", climb);
        }
    }
}
