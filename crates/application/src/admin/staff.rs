//! Who may administer (staff users), and the audit trail's pages.

use std::sync::Arc;

use credencial_domain::admin::{
    Actor, AuditAction, AuditEntry, AuditFilter, AuditTarget, KeysetPage, NewAuditEntry, Tally,
};
use credencial_domain::{UserId, Username};
use credencial_ports::{AccessChange, AuditTrail, UserRepository};

use super::audit_entry;
use crate::error::ServiceError;

/// Entries on a page of the audit trail.
pub const AUDIT_PAGE_SIZE: u32 = 50;

/// One page of the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPage {
    /// The entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// The entry to ask the next (older) page before (`None`: this is the
    /// last).
    pub next: Option<i64>,
    /// How many entries the filter selects (counted up to a bound).
    pub tally: Tally,
}

/// Staff membership and the audit trail.
pub struct StaffService {
    users: Arc<dyn UserRepository>,
    trail: Arc<dyn AuditTrail>,
}

impl std::fmt::Debug for StaffService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaffService").finish_non_exhaustive()
    }
}

impl StaffService {
    /// A service over the users and the audit trail.
    pub fn new(users: Arc<dyn UserRepository>, trail: Arc<dyn AuditTrail>) -> Self {
        Self { users, trail }
    }

    /// The actor the signed-in user `user` is in the panel, when the
    /// account is active and staff; `Ok(None)` otherwise (read on every
    /// request, so that taking the flag away takes effect at once).
    /// Errors: `Storage`.
    pub async fn member(&self, user: UserId) -> Result<Option<Actor>, ServiceError> {
        let username = self.users.find_active_staff(user).await?;
        Ok(username.map(|username| Actor::Staff { id: user, username }))
    }

    /// Makes `username` staff (`true`) or not, as `actor`. Errors:
    /// `UnknownUser`; `LastStaff` when it is the last active staff account
    /// and `staff` is false (checked atomically by the storage); `Storage`
    /// (nothing changed).
    pub async fn set_staff(&self, actor: &Actor, username: &Username, staff: bool) -> Result<(), ServiceError> {
        let user = self.users.find_summary(username).await?.ok_or(ServiceError::UnknownUser)?;
        let entry = audit_entry(actor, AuditAction::UserStaff, AuditTarget::User(user.username))
            .with("is_staff", staff.to_string());
        match self.users.set_staff(user.id, staff, &entry).await? {
            AccessChange::Changed => Ok(()),
            AccessChange::NotFound => Err(ServiceError::UnknownUser),
            AccessChange::LastStaff => Err(ServiceError::LastStaff),
        }
    }

    /// Appends `entry` to the audit trail (for a change whose store has no
    /// audited form of its own). Errors: `Storage`.
    pub async fn record(&self, entry: &NewAuditEntry) -> Result<(), ServiceError> {
        Ok(self.trail.append(entry).await?)
    }

    /// The page of the entries `filter` selects that are older than the
    /// entry `before` (from the newest without it), newest first. Errors:
    /// `Storage`.
    pub async fn trail(&self, filter: &AuditFilter, before: Option<i64>) -> Result<AuditPage, ServiceError> {
        let page = KeysetPage::new(AUDIT_PAGE_SIZE);
        let (entries, counted) = self.trail.list(filter, before, page.fetch()).await?;
        let (entries, next) = page.split(entries, |last| last.id);
        Ok(AuditPage { entries, next, tally: Tally::from_capped(counted) })
    }
}

#[cfg(test)]
mod tests {
    use credencial_ports::{AccountRecord, MockAuditTrail, MockUserRepository, RepositoryError};

    use super::*;

    fn summary(id: i64, username: &str) -> AccountRecord {
        AccountRecord {
            id: UserId(id),
            username: username.into(),
            name: String::new(),
            email: String::new(),
            cpf: None,
            is_active: true,
            is_staff: false,
            tax_id_validated: false,
            must_change_password: false,
            created_at: 0,
        }
    }

    fn service(users: MockUserRepository) -> StaffService {
        StaffService::new(Arc::new(users), Arc::new(MockAuditTrail::new()))
    }

    #[tokio::test]
    async fn only_an_active_staff_user_is_a_member() {
        let mut users = MockUserRepository::new();
        users.expect_find_active_staff().returning(|id| Ok((id == UserId(1)).then(|| "admin".to_owned())));
        let service = service(users);
        assert_eq!(
            service.member(UserId(1)).await.expect("ok"),
            Some(Actor::Staff { id: UserId(1), username: "admin".into() })
        );
        assert_eq!(service.member(UserId(2)).await.expect("ok"), None);
    }

    #[tokio::test]
    async fn setting_staff_records_who_and_the_new_value() {
        let mut users = MockUserRepository::new();
        users.expect_find_summary().returning(|_| Ok(Some(summary(5, "bruno"))));
        users
            .expect_set_staff()
            .withf(|id, staff, entry| {
                *id == UserId(5)
                    && *staff
                    && entry.action == AuditAction::UserStaff
                    && entry.target == AuditTarget::User("bruno".into())
                    && entry.actor == Actor::Cli { os_user: "root".into() }
                    && entry.changes == vec![("is_staff".to_owned(), "true".to_owned())]
            })
            .times(1)
            .returning(|_, _, _| Ok(AccessChange::Changed));
        let username = Username::parse("bruno").expect("valid");
        service(users).set_staff(&Actor::Cli { os_user: "root".into() }, &username, true).await.expect("set");
    }

    #[tokio::test]
    async fn the_storage_s_last_staff_refusal_is_the_service_s() {
        let mut users = MockUserRepository::new();
        users.expect_find_summary().returning(|_| Ok(Some(summary(5, "bruno"))));
        users.expect_set_staff().times(1).returning(|_, _, _| Ok(AccessChange::LastStaff));
        let username = Username::parse("bruno").expect("valid");
        let e = service(users).set_staff(&Actor::Cli { os_user: "root".into() }, &username, false).await;
        assert!(matches!(e, Err(ServiceError::LastStaff)), "{e:?}");
    }

    #[tokio::test]
    async fn an_unknown_user_is_refused_and_nothing_is_written() {
        let mut users = MockUserRepository::new();
        users.expect_find_summary().returning(|_| Ok(None));
        users.expect_set_staff().never();
        let username = Username::parse("nobody").expect("valid");
        let e = service(users).set_staff(&Actor::Cli { os_user: "root".into() }, &username, true).await;
        assert!(matches!(e, Err(ServiceError::UnknownUser)));
    }

    #[tokio::test]
    async fn a_failed_write_fails_the_change() {
        let mut users = MockUserRepository::new();
        users.expect_find_summary().returning(|_| Ok(Some(summary(5, "bruno"))));
        users.expect_set_staff().returning(|_, _, _| Err(RepositoryError::Unexpected("down".into())));
        let username = Username::parse("bruno").expect("valid");
        let e = service(users).set_staff(&Actor::Cli { os_user: "root".into() }, &username, false).await;
        assert!(matches!(e, Err(ServiceError::Storage(_))));
    }

    #[tokio::test]
    async fn the_trail_reads_one_more_entry_to_offer_the_next_page() {
        let mut trail = MockAuditTrail::new();
        trail
            .expect_list()
            .withf(|filter, before, limit| {
                filter.actor.as_deref() == Some("admin") && *before == Some(500) && *limit == AUDIT_PAGE_SIZE + 1
            })
            .returning(|_, _, limit| Ok(((0..i64::from(limit)).map(|i| entry(499 - i)).collect(), 1_001)));
        let service = StaffService::new(Arc::new(MockUserRepository::new()), Arc::new(trail));
        let filter = AuditFilter { actor: Some("admin".into()), target: None };
        let page = service.trail(&filter, Some(500)).await.expect("listed");
        assert_eq!(page.entries.len(), AUDIT_PAGE_SIZE as usize);
        assert_eq!(page.next, Some(499 - i64::from(AUDIT_PAGE_SIZE) + 1), "after the last entry shown");
        assert_eq!(page.tally, Tally::MoreThan(1_000));
    }

    #[tokio::test]
    async fn the_last_page_of_the_trail_offers_no_next() {
        let mut trail = MockAuditTrail::new();
        trail.expect_list().returning(|_, _, _| Ok((vec![entry(2), entry(1)], 2)));
        let service = StaffService::new(Arc::new(MockUserRepository::new()), Arc::new(trail));
        let page = service.trail(&AuditFilter::default(), None).await.expect("listed");
        assert_eq!((page.entries.len(), page.next, page.tally), (2, None, Tally::Exactly(2)));
    }

    fn entry(id: i64) -> AuditEntry {
        AuditEntry {
            id,
            at: 0,
            actor_kind: "staff".into(),
            actor: "admin".into(),
            action: "user.create".into(),
            target_kind: "none".into(),
            target: String::new(),
            changes: vec![],
            request_id: None,
        }
    }
}
