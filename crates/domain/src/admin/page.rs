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
}

/// Matches counted at most: a broad filter over millions of rows is not
/// counted to the end (that would read every match); its pages say "more
/// than" this many instead.
pub const COUNT_LIMIT: u64 = 1_000;

/// How many items a filter selects, counted up to [`COUNT_LIMIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    /// Exactly this many.
    Exactly(u64),
    /// More than [`COUNT_LIMIT`].
    MoreThan(u64),
}

impl Tally {
    /// The tally of a count stopped after `COUNT_LIMIT + 1` matches
    /// (`SELECT count(*) FROM (… LIMIT COUNT_LIMIT + 1)`).
    pub fn from_capped(counted: u64) -> Self {
        if counted > COUNT_LIMIT {
            Self::MoreThan(COUNT_LIMIT)
        } else {
            Self::Exactly(counted)
        }
    }

    /// The bound to give the capped count's `LIMIT`.
    pub fn count_bound() -> i64 {
        i64::try_from(COUNT_LIMIT + 1).unwrap_or(i64::MAX)
    }

    /// The tally as a page says it, in Portuguese, with `noun` and its
    /// plural `nouns` ("1 conta", "12 contas", "mais de 1.000 contas").
    pub fn describe(self, noun: &str, nouns: &str) -> String {
        match self {
            Self::Exactly(1) => format!("1 {noun}"),
            Self::Exactly(n) => format!("{} {nouns}", thousands(n)),
            Self::MoreThan(n) => format!("mais de {} {nouns}", thousands(n)),
        }
    }
}

/// `n` with a dot between groups of three digits, as Portuguese writes it
/// (the panel's counts, the privacy notice's days).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

/// A list read by key ("próxima página"): the items after the last one
/// shown, in the list's order, never by skipping rows. A store returns up
/// to [`KeysetPage::fetch`] items; one more than the page holds says that
/// another page follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeysetPage {
    size: u32,
}

impl KeysetPage {
    /// Pages of `size` items (at least 1).
    pub fn new(size: u32) -> Self {
        Self { size: size.max(1) }
    }

    /// Items a store reads for a page: one more than it shows.
    pub fn fetch(self) -> u32 {
        self.size.saturating_add(1)
    }

    /// The page of `items` read with [`Self::fetch`]: at most `size` of
    /// them, and the key (`key` of the last one shown) to ask the next page
    /// after, when another page follows.
    pub fn split<T, K>(self, mut items: Vec<T>, key: impl FnOnce(&T) -> K) -> (Vec<T>, Option<K>) {
        let size = usize::try_from(self.size).unwrap_or(usize::MAX);
        let more = items.len() > size;
        items.truncate(size);
        let next = if more { items.last().map(key) } else { None };
        (items, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_past_the_limit_says_more_than() {
        assert_eq!(Tally::from_capped(0), Tally::Exactly(0));
        assert_eq!(Tally::from_capped(COUNT_LIMIT), Tally::Exactly(COUNT_LIMIT));
        assert_eq!(Tally::from_capped(COUNT_LIMIT + 1), Tally::MoreThan(COUNT_LIMIT));
        assert_eq!(Tally::count_bound(), 1_001);
    }

    #[test]
    fn tallies_read_as_portuguese() {
        assert_eq!(Tally::Exactly(1).describe("conta", "contas"), "1 conta");
        assert_eq!(Tally::Exactly(0).describe("conta", "contas"), "0 contas");
        assert_eq!(Tally::Exactly(999).describe("conta", "contas"), "999 contas");
        assert_eq!(Tally::MoreThan(1_000).describe("registro", "registros"), "mais de 1.000 registros");
        assert_eq!(thousands(1_234_567), "1.234.567");
    }

    #[test]
    fn a_keyset_page_reads_one_more_to_know_another_follows() {
        let page = KeysetPage::new(3);
        assert_eq!(page.fetch(), 4);
        let key = |n: &u8| n * 10;
        assert_eq!(page.split(vec![1, 2, 3, 4], key), (vec![1, 2, 3], Some(30)), "the last one shown");
        assert_eq!(page.split(vec![1, 2, 3], key), (vec![1, 2, 3], None));
        assert_eq!(page.split(Vec::<u8>::new(), key), (vec![], None));
        assert_eq!(KeysetPage::new(0).fetch(), 2, "a page holds at least one item");
    }

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
}
