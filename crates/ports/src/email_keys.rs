//! Keying the e-mail addresses of accounts that have no key yet
//! (`users.email_key`, see [`credencial_domain::EmailKey`]): what the
//! storage adapters' key fill (run by `credencial migrate`) and the import
//! share — which accounts would share a key, and the message that names
//! them instead of a unique-index error.

use std::collections::BTreeMap;
use std::fmt;

use credencial_domain::EmailKey;

/// An account as the key fill reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedAccount {
    /// The account's id.
    pub id: i64,
    /// Its username.
    pub username: String,
    /// Its address as stored.
    pub email: String,
}

/// Accounts whose addresses share one key, by key: what stops a key fill
/// or an import. The operator gives each such account its own address (or
/// none) and runs the step again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedAddresses(BTreeMap<EmailKey, BTreeMap<i64, KeyedAccount>>);

impl SharedAddresses {
    /// Records those of `accounts` (each with its key; one account may be
    /// listed twice) that share a non-empty key with another account.
    pub fn add(&mut self, accounts: &[(EmailKey, KeyedAccount)]) {
        let mut by_key: BTreeMap<&EmailKey, BTreeMap<i64, &KeyedAccount>> = BTreeMap::new();
        for (key, account) in accounts.iter().filter(|(key, _)| !key.is_empty()) {
            by_key.entry(key).or_default().insert(account.id, account);
        }
        for (key, holders) in by_key.into_iter().filter(|(_, holders)| holders.len() > 1) {
            let shared = self.0.entry(key.clone()).or_default();
            shared.extend(holders.into_iter().map(|(id, account)| (id, account.clone())));
        }
    }

    /// Whether `key` is one of the shared keys.
    pub fn contains(&self, key: &EmailKey) -> bool {
        self.0.contains_key(key)
    }

    /// Whether no key is shared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The accounts sharing each key, by key.
    pub fn accounts(&self) -> impl Iterator<Item = (&EmailKey, Vec<&KeyedAccount>)> {
        self.0.iter().map(|(key, holders)| (key, holders.values().collect()))
    }

    /// The whole message: the shared addresses with the accounts that
    /// hold them, and what to do, ending with `then` ("run `credencial
    /// migrate` again").
    pub fn message(&self, then: &str) -> String {
        format!(
            "{} e-mail address(es) are shared by more than one account once case and Unicode form are ignored: \
             {self}. Give each of these accounts its own address (or none), then {then}",
            self.0.len()
        )
    }
}

/// The shared addresses and their accounts: `élodie@example.org: account 1
/// "elodie" <Élodie@example.org>, account 2 "lodi" <élodie@example.org>;
/// …`.
impl fmt::Display for SharedAddresses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, (key, holders)) in self.accounts().enumerate() {
            if n > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{key}: ")?;
            for (m, a) in holders.iter().enumerate() {
                if m > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "account {} {:?} <{}>", a.id, a.username, a.email)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(id: i64, username: &str, email: &str) -> (EmailKey, KeyedAccount) {
        (EmailKey::of(email), KeyedAccount { id, username: username.into(), email: email.into() })
    }

    #[test]
    fn accounts_sharing_a_key_are_named_with_their_addresses() {
        let mut shared = SharedAddresses::default();
        shared.add(&[
            account(1, "elodie", "\u{c9}lodie@example.org"),
            account(2, "lodi", "e\u{301}lodie@example.org"),
            account(3, "ana", "ana@example.org"),
            account(4, "sem", ""),
            account(5, "tambem-sem", ""),
        ]);
        assert!(shared.contains(&EmailKey::of("\u{e9}lodie@example.org")));
        assert!(!shared.contains(&EmailKey::of("ana@example.org")), "one account only");
        assert!(!shared.contains(&EmailKey::of("")), "no address is never shared");
        let message = shared.message("run `credencial migrate` again");
        assert_eq!(
            message,
            "1 e-mail address(es) are shared by more than one account once case and Unicode form are ignored: \
             \u{e9}lodie@example.org: account 1 \"elodie\" <\u{c9}lodie@example.org>, \
             account 2 \"lodi\" <e\u{301}lodie@example.org>. \
             Give each of these accounts its own address (or none), then run `credencial migrate` again"
        );
    }

    #[test]
    fn an_account_listed_twice_is_not_shared_with_itself_and_later_batches_add_up() {
        let mut shared = SharedAddresses::default();
        shared.add(&[account(1, "ana", "Ana@example.org"), account(1, "ana", "Ana@example.org")]);
        assert!(shared.is_empty());
        shared.add(&[account(1, "ana", "Ana@example.org"), account(2, "bia", "ANA@example.org")]);
        shared.add(&[account(1, "ana", "Ana@example.org"), account(3, "caio", "ana@EXAMPLE.org")]);
        let (_, holders) = shared.accounts().next().expect("one key");
        let ids: Vec<i64> = holders.iter().map(|a| a.id).collect();
        assert_eq!(ids, [1, 2, 3]);
    }
}
