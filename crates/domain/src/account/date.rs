//! Calendar dates typed as `YYYY-MM-DD`.

use std::fmt;

use crate::registries::is_iso_date;

/// A real calendar date written `YYYY-MM-DD` (years 0001–9999). Ordering is
/// chronological (the text form sorts as the dates do).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IsoDate(String);

impl IsoDate {
    /// Accepts exactly `YYYY-MM-DD` with a month and day that exist
    /// (surrounding white space is ignored); `None` otherwise.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        is_iso_date(raw).then(|| Self(raw.to_owned()))
    }

    /// The `YYYY-MM-DD` text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IsoDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_strictly_and_order_chronologically() {
        let cases = [
            ("2024-02-29", Some("2024-02-29")),
            (" 2019-02-01 ", Some("2019-02-01")),
            ("2023-02-29", None),
            ("01/02/2019", None),
            ("2019-2-1", None),
            ("", None),
        ];
        for (raw, want) in cases {
            assert_eq!(IsoDate::parse(raw).as_ref().map(IsoDate::as_str), want, "{raw:?}");
        }
        let a = IsoDate::parse("2019-12-31").expect("date");
        let b = IsoDate::parse("2020-01-01").expect("date");
        assert!(a < b);
    }
}
