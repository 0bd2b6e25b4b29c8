//! Reading the answer of a one-round-trip page query: every row carries the
//! total the filter selects, and a page past the end is one row with the
//! total and nothing else (a `LEFT JOIN LATERAL` that matched nothing).

/// The rows of a page query that hold an item (`item` answers `None` for
/// the total-only row), and the total the first row carries (0 when there
/// is no row).
pub(crate) fn split_page<R, T>(
    rows: Vec<R>,
    total: impl Fn(&R) -> i64,
    item: impl FnMut(R) -> Option<T>,
) -> (Vec<T>, u64) {
    let total = rows.first().map_or(0, |r| u64::try_from(total(r)).unwrap_or(0));
    (rows.into_iter().filter_map(item).collect(), total)
}
