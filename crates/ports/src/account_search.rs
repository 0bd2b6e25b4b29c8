//! What both stores do alike to read a page of the account search: which
//! values its statements bind and in what order, the place each row
//! answers, and the count the search reports. The statements themselves
//! are each engine's (its `user_lookups`).

use credencial_domain::admin::{term_place, words_count, write_term_place, AccountFilter, Tally, WORDS_COUNT_WINDOW};

use crate::stored::{placed_account_record, PlacedRecordColumns};
use crate::users::AccountRecord;

/// One value a search statement binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// Text.
    Text(String),
    /// An integer (an account id, a limit).
    Int(i64),
}

/// The reading of one page of an account search by a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRead {
    words: bool,
    /// What the page statement binds before its limit, in order: the
    /// range and the place (term, id) after which it reads, for a search
    /// by words; else the filter's value and the username after which.
    pub page: Vec<Bound>,
    /// What the count statement binds, its window last.
    pub count: Vec<Bound>,
}

impl SearchRead {
    /// The reading of the page of `filter` after the place `after`.
    pub fn new(filter: &AccountFilter, after: Option<&str>) -> Self {
        let mut page = Vec::with_capacity(4);
        let mut count = Vec::with_capacity(3);
        let value = match filter {
            AccountFilter::Words(prefix) => {
                for bound in [prefix.start().to_owned(), prefix.end()] {
                    page.push(Bound::Text(bound.clone()));
                    count.push(Bound::Text(bound));
                }
                if let Some((term, id)) = after.map(term_place) {
                    page.extend([Bound::Text(term), Bound::Int(id)]);
                }
                count.push(Bound::Int(i64::try_from(WORDS_COUNT_WINDOW).unwrap_or(i64::MAX)));
                return Self { words: true, page, count };
            }
            AccountFilter::Cpf(value) | AccountFilter::EmailKey(value) => Some(value),
            AccountFilter::Everyone => None,
        };
        if let Some(value) = value {
            page.push(Bound::Text(value.clone()));
            count.push(Bound::Text(value.clone()));
        }
        if let Some(after) = after {
            page.push(Bound::Text(after.to_owned()));
        }
        count.push(Bound::Int(Tally::count_bound()));
        Self { words: false, page, count }
    }

    /// The page's rows, each with its place: the username, or for a search
    /// by words the place of its term and id.
    pub fn rows(&self, rows: Vec<PlacedRecordColumns>) -> Vec<(String, AccountRecord)> {
        let placed = rows.into_iter().map(placed_account_record);
        if self.words {
            placed.map(|(term, account)| (write_term_place(&term, account.id.0), account)).collect()
        } else {
            placed.collect()
        }
    }

    /// The count to report from the count statement's answer (rows
    /// matching up to the window, and for a search by words their
    /// distinct accounts).
    pub fn count(&self, found: i64, accounts: i64) -> u64 {
        let (found, accounts) = (u64::try_from(found).unwrap_or(0), u64::try_from(accounts).unwrap_or(0));
        if self.words {
            words_count(found, accounts)
        } else {
            found
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use credencial_domain::admin::AccountQuery;

    fn text(value: &str) -> Bound {
        Bound::Text(value.into())
    }

    #[test]
    fn a_search_by_words_binds_its_range_then_the_place_and_counts_over_its_window() {
        let filter = AccountQuery::parse("Maria Sou").filter();
        let read = SearchRead::new(&filter, Some("maria souza~42"));
        let end = format!("maria sou{}", char::MAX);
        assert_eq!(read.page, [text("maria sou"), text(&end), text("maria souza"), Bound::Int(42)]);
        assert_eq!(read.count, [text("maria sou"), text(&end), Bound::Int(4_004)]);
        assert_eq!(read.count(4_004, 900), 1_001);
        assert_eq!(read.count(12, 4), 4);
    }

    #[test]
    fn other_searches_bind_their_value_then_the_username_and_count_up_to_the_bound() {
        let read = SearchRead::new(&AccountQuery::parse("529.982.247-25").filter(), Some("ana"));
        assert_eq!(read.page, [text("52998224725"), text("ana")]);
        assert_eq!(read.count, [text("52998224725"), Bound::Int(1_001)]);
        let everyone = SearchRead::new(&AccountFilter::Everyone, None);
        assert_eq!((everyone.page.len(), everyone.count.as_slice()), (0, [Bound::Int(1_001)].as_slice()));
        assert_eq!(everyone.count(1_001, 1_001), 1_001);
    }
}
