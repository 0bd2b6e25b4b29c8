//! An upstream identity provider (gov.br, or any OpenID provider) that
//! people log in through: where to send the browser, and what the provider
//! says about who came back; and the store of the accounts' links to the
//! providers.

use async_trait::async_trait;
use credencial_domain::federation::id_token::IdTokenRejection;
use credencial_domain::federation::{Candidate, Found, Reliability, ReliabilityLevel};
use credencial_domain::{Cpf, EmailKey, Redacted, UserId};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::error::RepositoryError;
use crate::user_data::UpstreamError;
use crate::users::NewUser;

/// A login started at an upstream: the URL to send the browser to, and
/// what to keep on the server until it comes back. `Debug` shows none of
/// it (the URL carries the `state` and the `nonce`).
#[derive(Clone, PartialEq, Eq)]
pub struct UpstreamLoginStart {
    /// The provider's authorization URL (code flow, PKCE S256, `state`,
    /// `nonce`, the provider's scopes, this service's redirect URI).
    pub url: String,
    /// The `state` sent: the callback must bring it back.
    pub state: Redacted<String>,
    /// The `nonce` sent: the ID token must carry it.
    pub nonce: Redacted<String>,
    /// The PKCE verifier, for the code's redemption.
    pub pkce_verifier: Redacted<String>,
}

impl std::fmt::Debug for UpstreamLoginStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamLoginStart").finish_non_exhaustive()
    }
}

/// The ID token that ended a login at an upstream, verified for it: its
/// claims, and the token as the provider sent it (what the provider's
/// logout takes back as `id_token_hint`). `Debug` shows neither (both
/// carry personal data).
#[derive(Clone, PartialEq, Eq)]
pub struct UpstreamIdToken {
    /// The verified claims.
    pub claims: Map<String, Value>,
    /// The compact JWT, as sent.
    pub token: Redacted<String>,
}

impl std::fmt::Debug for UpstreamIdToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamIdToken").finish_non_exhaustive()
    }
}

/// Why an upstream login failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FederationError {
    /// The provider answered the token request with an OAuth2 error
    /// (`invalid_grant` for an expired or replayed code, …).
    #[error("the provider refused: {0}")]
    Refused(String),
    /// The ID token's signature does not verify with the provider's keys
    /// (after one refresh of the key set for a key id it did not know), or
    /// it is signed with an algorithm the settings do not allow.
    #[error("the ID token's signature does not verify")]
    Signature,
    /// The ID token verified but is not for this login.
    #[error(transparent)]
    Rejected(#[from] IdTokenRejection),
    /// The provider is down, slow, or answered something unusable
    /// (discovery, keys, or token answer).
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// One upstream identity provider.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdentityProvider: Send + Sync + 'static {
    /// Starts a login: fresh `state`, `nonce` and PKCE verifier, and the
    /// provider's authorization URL (from its discovery document, fetched
    /// and cached) for the browser to go to, coming back to
    /// `redirect_uri`.
    async fn start(&self, redirect_uri: &str) -> Result<UpstreamLoginStart, FederationError>;

    /// Redeems the callback's `code` with the kept PKCE verifier and
    /// answers the ID token, verified for this login (signature with the
    /// provider's keys, issuer, audience, lifetime, `nonce`, `at_hash`) at
    /// `now`, with its claims.
    async fn finish(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        redirect_uri: &str,
        now: i64,
    ) -> Result<UpstreamIdToken, FederationError>;

    /// The provider's logout URL that sends the browser back to
    /// `post_logout_redirect_uri` (which must be registered there), when
    /// the provider has one: its discovery document's
    /// `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0),
    /// with `id_token_hint` when given, or the logout page its settings
    /// name (gov.br's), which takes no hint.
    async fn logout_url<'a>(
        &self,
        post_logout_redirect_uri: &str,
        id_token_hint: Option<&'a str>,
    ) -> Result<Option<String>, FederationError>;
}

/// What [`FederatedLinkStore::unlink`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlinked {
    /// The link went.
    Removed,
    /// The account had no link of that provider.
    NotLinked,
    /// It is the account's last link, which may not go.
    LastWayIn,
}

impl Unlinked {
    /// What an unlink may do to an account with `links` links, one of
    /// them the provider's when `mine`: `Removed` when the link may go
    /// (the store then deletes it), else why it stays.
    pub fn rule(links: i64, mine: bool, last_may_go: bool) -> Self {
        match (mine, links < 2 && !last_may_go) {
            (false, _) => Self::NotLinked,
            (true, true) => Self::LastWayIn,
            (true, false) => Self::Removed,
        }
    }
}

/// A link between an account and an upstream provider's subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRecord {
    /// The provider's id (its settings' `id`).
    pub provider: String,
    /// The provider's subject identifier.
    pub subject: String,
    /// When the link was made (seconds since the Unix epoch).
    pub linked_at: i64,
    /// Whether the link proves the account's CPF (gov.br's).
    pub proves_cpf: bool,
    /// gov.br's level and seals as last read, with when.
    pub reliability: Option<Reliability>,
}

/// A link to make: the provider, its subject, whether it proves the
/// account's CPF, and gov.br's level and seals as this login read them.
#[derive(Debug, Clone, Copy)]
pub struct NewProviderLink<'a> {
    /// The provider's id.
    pub provider: &'a str,
    /// The provider's subject identifier.
    pub subject: &'a str,
    /// Whether the link proves the account's CPF.
    pub proves_cpf: bool,
    /// gov.br's level and seals, when the provider sent them.
    pub reliability: Option<&'a Reliability>,
    /// Now (seconds since the Unix epoch).
    pub now: i64,
}

/// Why a link, or an account with its link, was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum LinkConflict {
    /// The provider's subject is linked already (to any account).
    #[error("the subject is linked to an account already")]
    SubjectLinked,
    /// The account has a link of that provider already.
    #[error("the account is linked to that provider already")]
    AccountLinked,
    /// The CPF is another account's.
    #[error("the CPF is another account's")]
    CpfTaken,
    /// The address is another account's.
    #[error("the e-mail address is another account's")]
    EmailTaken,
    /// The username is another account's.
    #[error("the username is another account's")]
    UsernameTaken,
}

impl LinkConflict {
    /// The conflict a unique constraint's refusal names: SQLite's message
    /// (`UNIQUE constraint failed: users.cpf`) or PostgreSQL's constraint
    /// name (`users_cpf_key`).
    pub fn from_constraint(text: &str) -> Self {
        if text.contains("federated_links") {
            if text.contains("user_id") || text.contains("user_idx") {
                Self::AccountLinked
            } else {
                Self::SubjectLinked
            }
        } else if text.contains("cpf") {
            Self::CpfTaken
        } else if text.contains("email") {
            Self::EmailTaken
        } else {
            Self::UsernameTaken
        }
    }
}

/// The accounts' links to upstream providers.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait FederatedLinkStore: Send + Sync + 'static {
    /// What a brokered login needs to decide ([`linking::decide`]): the
    /// account linked to `subject` of `provider`, the account holding
    /// `cpf`, and the account holding the address of `email_key`, each
    /// by an index.
    ///
    /// [`linking::decide`]: credencial_domain::federation::linking::decide
    async fn find<'a>(
        &self,
        provider: &str,
        subject: &str,
        cpf: Option<&'a Cpf>,
        email_key: Option<&'a EmailKey>,
    ) -> Result<Found, RepositoryError>;

    /// Links `user` as `link` says; the conflict, with nothing written,
    /// when the subject is linked already (to anyone) or the account has a
    /// link of that provider.
    async fn link<'a>(
        &self,
        user: UserId,
        link: NewProviderLink<'a>,
    ) -> Result<Result<(), LinkConflict>, RepositoryError>;

    /// Creates the account `user` and links it as `link` says, both or
    /// neither; the conflict, with nothing written, when the subject is
    /// linked (another login got there first: looking again finds its
    /// account) or the username, CPF or address is another account's.
    async fn create_linked<'a>(
        &self,
        user: NewUser,
        link: NewProviderLink<'a>,
    ) -> Result<Result<UserId, LinkConflict>, RepositoryError>;

    /// Keeps `reliability` as the level and seals of `subject` of
    /// `provider` (none: this login read no level, and none is kept);
    /// `false` when no such link exists.
    async fn record_level<'a>(
        &self,
        provider: &str,
        subject: &str,
        reliability: Option<&'a Reliability>,
    ) -> Result<bool, RepositoryError>;

    /// The links of `user`, by provider id.
    async fn links_of(&self, user: UserId) -> Result<Vec<LinkRecord>, RepositoryError>;

    /// Removes the link of `user` to `provider`, unless it is the
    /// account's last link and `last_may_go` is false (the account has no
    /// password: the last link is its only way in). One transaction that
    /// holds the account, so that concurrent unlinks never remove its last
    /// way in.
    async fn unlink(&self, user: UserId, provider: &str, last_may_go: bool) -> Result<Unlinked, RepositoryError>;
}

/// The stored text of the seals of `reliability` (a JSON array; `[]`
/// without a level).
pub fn seals_text(reliability: Option<&Reliability>) -> String {
    let seals = reliability.map(|r| r.seals.as_slice()).unwrap_or_default();
    serde_json::to_string(seals).unwrap_or_else(|_| "[]".to_owned())
}

/// The columns of a link as both stores select them, in this order:
/// [`LINK_COLUMNS`].
pub type LinkColumns = (String, String, i64, bool, Option<String>, String, Option<i64>);

/// The columns a store selects for a [`LinkColumns`] row.
pub const LINK_COLUMNS: &str = "provider, subject, linked_at, proves_cpf, level, seals, level_read_at";

/// The link a [`LinkColumns`] row holds; a level or seals the store
/// should never hold are an error.
pub fn link_record(columns: LinkColumns) -> Result<LinkRecord, RepositoryError> {
    let (provider, subject, linked_at, proves_cpf, level, seals, read_at) = columns;
    Ok(LinkRecord { provider, subject, linked_at, proves_cpf, reliability: reliability_of(level, &seals, read_at)? })
}

/// The columns of an account a brokered login finds, as both stores
/// select them: its id, whether it is active, whether its CPF is proven,
/// and whether its address was confirmed.
pub type CandidateColumns = (i64, bool, bool, bool);

/// The account a [`CandidateColumns`] row holds.
pub fn candidate((id, active, cpf_proven, email_confirmed): CandidateColumns) -> Candidate {
    Candidate { user: UserId(id), active, cpf_proven, email_confirmed }
}

/// The level, seals and time of reading a store keeps, read back: `None`
/// without a level.
fn reliability_of(
    level: Option<String>,
    seals: &str,
    read_at: Option<i64>,
) -> Result<Option<Reliability>, RepositoryError> {
    let Some(level) = level else { return Ok(None) };
    let level = ReliabilityLevel::from_name(&level)
        .ok_or_else(|| RepositoryError::Unexpected(format!("federated_links: unknown level {level:?}")))?;
    let seals =
        serde_json::from_str(seals).map_err(|e| RepositoryError::Unexpected(format!("federated_links: seals: {e}")))?;
    Ok(Some(Reliability { level, seals, read_at: read_at.unwrap_or_default() }))
}
