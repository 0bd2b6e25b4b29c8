//! A page of an administrative list: a number from 1 and a fixed size.

/// Page `number` (from 1) of a list shown `size` items at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    number: u32,
    size: u32,
}

impl Page {
    /// Page `number` of `size` items (from a query string): 0 means the
    /// first; the number is capped so that the offset cannot overflow, the
    /// size is at least 1.
    pub fn new(number: u32, size: u32) -> Self {
        let size = size.max(1);
        Self { number: number.clamp(1, u32::MAX / size), size }
    }

    /// The page number, from 1.
    pub fn number(self) -> u32 {
        self.number
    }

    /// Items to skip before this page.
    pub fn offset(self) -> u64 {
        u64::from(self.number - 1) * u64::from(self.size)
    }

    /// Items on a full page.
    pub fn limit(self) -> u32 {
        self.size
    }

    /// How many pages `total` items fill (at least one, possibly empty).
    pub fn count(self, total: u64) -> u64 {
        total.div_ceil(u64::from(self.size)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_at_one_and_skip_whole_pages() {
        for (asked, number, offset) in [(0, 1, 0), (1, 1, 0), (2, 2, 100), (7, 7, 600)] {
            let page = Page::new(asked, 100);
            assert_eq!((page.number(), page.offset(), page.limit()), (number, offset, 100));
        }
    }

    #[test]
    fn huge_page_numbers_do_not_overflow() {
        let page = Page::new(u32::MAX, 100);
        assert_eq!(page.number(), u32::MAX / 100);
        assert!(page.offset() < u64::from(u32::MAX));
    }

    #[test]
    fn the_page_count_rounds_up_and_is_never_zero() {
        let page = Page::new(1, 100);
        assert_eq!(page.count(0), 1);
        assert_eq!(page.count(100), 1);
        assert_eq!(page.count(101), 2);
    }
}
