//! The person's own account (`/conta/`): what the overview shows. The
//! other parts of the account (entries, tax-id validation, authorized
//! applications, access report, password) have use cases of their own.

use std::sync::Arc;

use credencial_domain::{Cpf, UserId};
use credencial_ports::{ProfileRepository, UserRepository};

use crate::error::ServiceError;

/// The account overview: who the person is to credencial. The CPF is
/// masked (LGPD: the page does not need the full value).
#[derive(Clone, PartialEq, Eq)]
pub struct AccountOverview {
    /// Login name.
    pub username: String,
    /// Full name.
    pub name: String,
    /// E-mail address.
    pub email: String,
    /// Avatar URL (may be empty).
    pub avatar: String,
    /// The CPF as `529.***.***-25`, if the account has one.
    pub cpf_masked: Option<String>,
    /// Whether the registration was validated through the tax id.
    pub validated: bool,
}

/// Shows the username only: the rest is personal data.
impl std::fmt::Debug for AccountOverview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountOverview").field("username", &self.username).finish_non_exhaustive()
    }
}

/// Use cases of the account overview.
pub struct AccountService {
    users: Arc<dyn UserRepository>,
    profiles: Arc<dyn ProfileRepository>,
}

impl std::fmt::Debug for AccountService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountService").finish_non_exhaustive()
    }
}

impl AccountService {
    /// A service over the user and profile repositories.
    pub fn new(users: Arc<dyn UserRepository>, profiles: Arc<dyn ProfileRepository>) -> Self {
        Self { users, profiles }
    }

    /// The overview of `user`. Errors: `UnknownUser` when the account is
    /// gone or inactive (its session must end), `Storage`.
    pub async fn overview(&self, user: UserId) -> Result<AccountOverview, ServiceError> {
        let summary = self.users.find_summary_by_id(user).await?.filter(|s| s.is_active);
        let (Some(summary), Some(own)) = (summary, self.profiles.own_profile(user).await?) else {
            return Err(ServiceError::UnknownUser);
        };
        Ok(AccountOverview {
            username: summary.username,
            name: own.name,
            email: own.email,
            avatar: own.avatar,
            cpf_masked: own.cpf.as_deref().and_then(|c| Cpf::parse(c).ok()).map(|c| c.masked()),
            validated: own.receita_validated,
        })
    }
}

#[cfg(test)]
mod tests {
    use credencial_domain::profile::OwnProfile;
    use credencial_ports::{AccountRecord, MockProfileRepository, MockUserRepository};

    use super::*;

    fn summary(active: bool) -> AccountRecord {
        AccountRecord {
            id: UserId(7),
            username: "bruno".into(),
            name: "Bruno".into(),
            email: "b@example.org".into(),
            cpf: Some("52998224725".into()),
            is_active: active,
            is_staff: false,
            tax_id_validated: false,
            must_change_password: false,
            created_at: 0,
        }
    }

    fn own() -> OwnProfile {
        OwnProfile {
            name: "Bruno Lima".into(),
            avatar: String::new(),
            cpf: Some("52998224725".into()),
            email: "bruno@example.org".into(),
            receita_validated: false,
            experiences: vec![],
            degrees: vec![],
            govbr_reliability: None,
        }
    }

    fn service(active: bool) -> AccountService {
        let mut users = MockUserRepository::new();
        users.expect_find_summary_by_id().returning(move |_| Ok(Some(summary(active))));
        let mut profiles = MockProfileRepository::new();
        profiles.expect_own_profile().returning(|_| Ok(Some(own())));
        AccountService::new(Arc::new(users), Arc::new(profiles))
    }

    #[tokio::test]
    async fn the_overview_masks_the_cpf_and_names_the_login() {
        let overview = service(true).overview(UserId(7)).await.expect("overview");
        assert_eq!(overview.cpf_masked.as_deref(), Some("529.***.***-25"));
        assert_eq!((overview.username.as_str(), overview.name.as_str()), ("bruno", "Bruno Lima"));
        assert!(!overview.validated);
        assert!(!format!("{overview:?}").contains("529"), "Debug shows no personal data");
    }

    #[tokio::test]
    async fn an_inactive_account_has_no_overview() {
        assert!(matches!(service(false).overview(UserId(7)).await, Err(ServiceError::UnknownUser)));
    }
}
