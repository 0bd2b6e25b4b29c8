//! The access report ("Quem acessou meus dados"): paging and retention.

/// Entries on one page of the access report.
pub const ACCESS_LOG_PAGE_SIZE: u32 = 50;

/// How long entries are kept unless configured otherwise (5 years).
pub const DEFAULT_ACCESS_LOG_RETENTION_DAYS: u32 = 1_825;

/// One page of the report, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessLogPage(u32);

impl AccessLogPage {
    /// The first page.
    pub const FIRST: AccessLogPage = AccessLogPage(1);

    /// The page numbered `number` (from a query string): 0 or nothing
    /// means the first; numbers are capped so the offset cannot overflow.
    pub fn new(number: u32) -> Self {
        Self(number.clamp(1, u32::MAX / ACCESS_LOG_PAGE_SIZE))
    }

    /// The page number, from 1.
    pub fn number(self) -> u32 {
        self.0
    }

    /// Entries to skip before this page.
    pub fn offset(self) -> u64 {
        u64::from(self.0 - 1) * u64::from(ACCESS_LOG_PAGE_SIZE)
    }

    /// Entries on a page.
    pub fn limit(self) -> u32 {
        ACCESS_LOG_PAGE_SIZE
    }

    /// How many pages `total` entries fill (at least one, possibly empty).
    pub fn count(total: u64) -> u64 {
        total.div_ceil(u64::from(ACCESS_LOG_PAGE_SIZE)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hold_fifty_entries_and_start_at_one() {
        let cases = [(0, 1, 0), (1, 1, 0), (2, 2, 50), (3, 3, 100)];
        for (asked, number, offset) in cases {
            let page = AccessLogPage::new(asked);
            assert_eq!((page.number(), page.offset(), page.limit()), (number, offset, 50), "{asked}");
        }
        let last = AccessLogPage::new(u32::MAX);
        assert!(last.offset() < u64::from(u32::MAX) * 50, "no overflow");
        for (total, pages) in [(0, 1), (1, 1), (50, 1), (51, 2), (101, 3)] {
            assert_eq!(AccessLogPage::count(total), pages, "{total}");
        }
    }
}
