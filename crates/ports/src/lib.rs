//! Ports: the traits credencial's use cases need from the world.
//!
//! Every trait is `Send + Sync + 'static`, shared through `Arc`, and has a
//! `mockall` fake (`Mock<Trait>`) with the `mocks` feature. No adapter type
//! (sqlx, reqwest) crosses a port: errors are the enums below.

pub mod account;
pub mod account_admin;
pub mod account_search;
pub mod app_passwords;
pub mod audit;
pub mod clock;
pub mod directory;
pub mod email_keys;
pub mod error;
pub mod federation;
pub mod host_session_ends;
pub mod host_user_records;
pub mod host_users;
pub mod login_failures;
pub mod logout_deliveries;
pub mod mail;
pub mod oauth;
pub mod pool;
pub mod profile;
pub mod provider;
pub mod readiness;
pub mod refresh_tokens;
pub mod registries;
pub mod second_factors;
pub mod security_events;
pub mod sessions;
pub mod stored;
pub mod transfer;
pub mod user_data;
pub mod users;

pub use account_admin::{AccountAdminStore, LoginHistory};
pub use app_passwords::{AppPasswordColumns, AppPasswordRecord, AppPasswordStore, NewAppPassword};
pub use audit::AuditTrail;
pub use clock::{Clock, SystemClock};
pub use directory::{ApiClientAccess, ApiTokenState, PreRegistered, UserDirectory};
pub use error::RepositoryError;
pub use federation::{
    FederatedLinkStore, FederationError, IdentityProvider, LinkConflict, LinkRecord, NewProviderLink, Unlinked,
    UpstreamIdToken, UpstreamLoginStart,
};
pub use host_session_ends::{HostLogout, HostSessionEnds};
pub use host_user_records::{HostUserRecords, RecordColumn};
pub use host_users::{HostTableEngine, HostTableStore, HostUserError, HostUserStore, StatementFailure, UpsertOutcome};
pub use login_failures::LoginFailureLog;
pub use logout_deliveries::{ClaimedLogout, LogoutDeliveries, LogoutPostError, LogoutPoster};
pub use mail::{
    AddressSwitch, ChangeRequest, ClaimedMail, Confirmation, FailedMail, FailedTry, MailError, MailStore, Mailer,
    NewLink, StoredLink, Switched,
};
pub use oauth::{AuthorizationCodeStore, NewAuthorizationCode, OAuthClient, OAuthClientRepository, OAuthClientUpdate};
pub use pool::{PoolConnections, PoolStatus, WriterActivity};
pub use profile::{ClientRead, ProfileRepository, Snapshot, SnapshotStore};
pub use provider::{AuthorizationStart, ProviderClient, ProviderError, ProviderSession, ProviderTokens};
pub use readiness::{NotReady, ProbeAnswer, ReadinessProbe, SchemaStatus, READINESS_TIMEOUT};
pub use refresh_tokens::{GraceRotation, NewRefreshToken, RefreshTokenStore, Rotation, TokenRevocation};
pub use registries::{CdpDirectory, CnesRegistry, TaxAuthority};
pub use second_factors::{Ceremony, NewPasskey, PasskeyRecord, PasskeyStore, SecondFactorStore, TotpRecord};
pub use security_events::{SecurityEvent, SecurityEvents};
pub use sessions::{NewSession, ResumedSession, SessionEntry, SessionStore};
pub use transfer::{DataTransfer, TableSpec, TABLES};
pub use user_data::{UpstreamError, UserDataSource};
pub use users::{AccessChange, AccountRecord, DetailsUpdate, NewUser, Registered, UserCredentials, UserRepository};

#[cfg(any(test, feature = "mocks"))]
pub use account_admin::{MockAccountAdminStore, MockLoginHistory};
#[cfg(any(test, feature = "mocks"))]
pub use app_passwords::MockAppPasswordStore;
#[cfg(any(test, feature = "mocks"))]
pub use audit::MockAuditTrail;
#[cfg(any(test, feature = "mocks"))]
pub use clock::MockClock;
#[cfg(any(test, feature = "mocks"))]
pub use directory::MockUserDirectory;
#[cfg(any(test, feature = "mocks"))]
pub use federation::{MockFederatedLinkStore, MockIdentityProvider};
#[cfg(any(test, feature = "mocks"))]
pub use host_session_ends::MockHostSessionEnds;
#[cfg(any(test, feature = "mocks"))]
pub use host_user_records::MockHostUserRecords;
#[cfg(any(test, feature = "mocks"))]
pub use host_users::MockHostUserStore;
#[cfg(any(test, feature = "mocks"))]
pub use login_failures::MockLoginFailureLog;
#[cfg(any(test, feature = "mocks"))]
pub use logout_deliveries::{MockLogoutDeliveries, MockLogoutPoster};
#[cfg(any(test, feature = "mocks"))]
pub use mail::{MockMailStore, MockMailer};
#[cfg(any(test, feature = "mocks"))]
pub use oauth::{MockAuthorizationCodeStore, MockOAuthClientRepository};
#[cfg(any(test, feature = "mocks"))]
pub use pool::{MockPoolStatus, MockWriterActivity};
#[cfg(any(test, feature = "mocks"))]
pub use profile::{MockProfileRepository, MockSnapshotStore};
#[cfg(any(test, feature = "mocks"))]
pub use provider::MockProviderClient;
#[cfg(any(test, feature = "mocks"))]
pub use readiness::MockReadinessProbe;
#[cfg(any(test, feature = "mocks"))]
pub use refresh_tokens::MockRefreshTokenStore;
#[cfg(any(test, feature = "mocks"))]
pub use registries::{MockCdpDirectory, MockCnesRegistry, MockTaxAuthority};
#[cfg(any(test, feature = "mocks"))]
pub use second_factors::{MockPasskeyStore, MockSecondFactorStore};
#[cfg(any(test, feature = "mocks"))]
pub use security_events::MockSecurityEvents;
#[cfg(any(test, feature = "mocks"))]
pub use sessions::MockSessionStore;
#[cfg(any(test, feature = "mocks"))]
pub use user_data::MockUserDataSource;
#[cfg(any(test, feature = "mocks"))]
pub use users::MockUserRepository;
