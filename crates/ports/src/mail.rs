//! Outbound mail: the durable outbox and the links mails carry (where they
//! are kept), and the relay that delivers a mail (how it leaves).

use async_trait::async_trait;
use credencial_domain::mail::{LinkPurpose, LinkState, MailKind, OutgoingMail};
use credencial_domain::{Redacted, UserId};

use crate::RepositoryError;

/// A mail the sender claimed, to deliver now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedMail {
    /// The outbox row.
    pub id: i64,
    /// The mail as written.
    pub mail: OutgoingMail,
    /// Earlier tries that failed.
    pub attempts: u32,
    /// When it was written, or put back by staff (Unix seconds).
    pub created_at: i64,
    /// The claim's lease: the token the outcome is marked with.
    pub lease: i64,
}

/// A stored mail row, as both engines read it: id, recipient, kind,
/// subject, text, HTML, attempts, created, lease.
pub type ClaimRow = (i64, String, String, String, String, String, i32, i64, i64);

impl ClaimedMail {
    /// The mail a claimed row holds; `None` for a kind this build does not
    /// know (written by a newer release).
    pub fn from_row((id, to, kind, subject, text, html, attempts, created_at, lease): ClaimRow) -> Option<Self> {
        let mail = OutgoingMail {
            to: Redacted(to),
            subject,
            text: Redacted(text),
            html: Redacted(html),
            kind: MailKind::from_code(&kind)?,
        };
        Some(Self { id, mail, attempts: u32::try_from(attempts).unwrap_or(0), created_at, lease })
    }
}

/// A failed mail row, as both engines read it: id, recipient, kind,
/// created, failed, attempts, last error.
pub type FailedRow = (i64, String, String, i64, i64, i32, String);

impl FailedMail {
    /// The failed mail a row holds; `None` for an unknown kind.
    pub fn from_row((id, to, kind, created_at, failed_at, attempts, last_error): FailedRow) -> Option<Self> {
        Some(Self {
            id,
            to,
            kind: MailKind::from_code(&kind)?,
            created_at,
            failed_at,
            attempts: u32::try_from(attempts).unwrap_or(0),
            last_error,
        })
    }
}

/// A link row, as both engines read it: user, purpose, stamp, expiry,
/// address.
pub type LinkRow = (i64, String, String, i64, String);

impl StoredLink {
    /// The link a row holds; `None` for a purpose this build does not know.
    pub fn from_row((user, purpose, stamp, expires_at, email): LinkRow) -> Option<Self> {
        let purpose = LinkPurpose::from_code(&purpose)?;
        Some(Self { user: UserId(user), state: LinkState { purpose, stamp, expires_at, email } })
    }
}

/// What taking a confirmation link did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// The account's address is the link's and is now confirmed.
    Confirmed(UserId),
    /// The link was taken, but the account's address changed since it was
    /// sent: nothing was confirmed.
    AddressChanged(UserId),
    /// The link confirmed a change of address: the account has the new
    /// address, confirmed.
    Changed(UserId),
    /// The link would change the account's address to one another account
    /// has now: nothing changed.
    Taken(UserId),
    /// No such live link.
    NoLink,
}

/// What a request to change an account's address did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeRequest {
    /// The link and its mail were written; earlier requests' links died.
    Sent,
    /// A link for a change was issued less than the quiet time ago:
    /// nothing was written.
    TooSoon,
    /// Another account has the address: nothing was written.
    Taken,
}

/// An address to put on an account through a link: a requested change
/// being confirmed (from the new address), or a change being undone (from
/// the old one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressSwitch {
    /// The SHA-256 of the link's token.
    pub token_hash: [u8; 32],
    /// The link's purpose: `EmailChange` or `EmailUndo`.
    pub purpose: LinkPurpose,
    /// Whose account.
    pub user: UserId,
    /// The address to set (the link's), confirmed by the link's use.
    pub email: String,
    /// Its key (`EmailKey`), unique among accounts.
    pub email_key: String,
    /// A change: the address the account has now, which must still be its
    /// address, and the link (with its mail, to that address) that undoes
    /// the change. `None` for an undo.
    pub undo: Option<(String, NewLink, OutgoingMail)>,
    /// Now (Unix seconds): the link must be live.
    pub now: i64,
}

/// What an [`AddressSwitch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switched {
    /// The account has the new address, confirmed; its other links died
    /// (a change keeps the links that undo earlier changes).
    Switched,
    /// Another account has the address: nothing changed, the link stays.
    Taken,
    /// No such live link (used, expired, superseded), or the account's
    /// address or activation changed since: nothing changed.
    NoLink,
}

/// A mail the sender gave up on, as staff see it. `Debug` leaves the
/// address out.
#[derive(Clone, PartialEq, Eq)]
pub struct FailedMail {
    /// The outbox row.
    pub id: i64,
    /// The recipient's address.
    pub to: String,
    /// What it was about.
    pub kind: MailKind,
    /// When it was written (Unix seconds).
    pub created_at: i64,
    /// When the sender gave up (Unix seconds).
    pub failed_at: i64,
    /// How many tries failed.
    pub attempts: u32,
    /// The relay's last answer (or why it could not be reached).
    pub last_error: String,
}

impl std::fmt::Debug for FailedMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FailedMail").field("id", &self.id).field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// A link to issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLink {
    /// The SHA-256 of the token the mail carries.
    pub token_hash: [u8; 32],
    /// Whose account it acts on.
    pub user: UserId,
    /// What it is for, its stamp and expiry.
    pub state: LinkState,
}

/// A link found by its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLink {
    /// Whose account it acts on.
    pub user: UserId,
    /// What it is for, its stamp and expiry.
    pub state: LinkState,
}

/// Where mail waits to be sent, and the links mails carry.
///
/// A mail is written in the same transaction as the record that causes it
/// (a link and the mail carrying it go in together, or neither). The sender
/// *claims* due mail before delivering it: a claim moves the mail's next
/// try to a lease's end, and that value is the claim's token — marking the
/// outcome (sent, failed, given back) applies only while the row still
/// holds it, so a sender whose lease lapsed (and whose mail another sender
/// claimed) changes nothing. Two senders (two instances on one database)
/// never hold one mail at once; a sender that dies leaves its mail to be
/// claimed again once the lease ends. Only mail of kinds this build knows
/// is claimed (an older instance in a rolling upgrade leaves newer mail
/// alone).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MailStore: Send + Sync + 'static {
    /// Writes `mail`, due at `now`. Errors: `Unexpected`.
    async fn enqueue(&self, mail: &OutgoingMail, now: i64) -> Result<i64, RepositoryError>;

    /// Issues `link` and writes `mail` (which carries it) in one
    /// transaction; unless one of the account's links of the same purpose
    /// was issued less than `quiet_secs` before `now`, or
    /// [`MAX_LIVE_LINKS`] of them are still unexpired, when nothing is
    /// written (`false`: one account's mailbox is not flooded). Older links
    /// stay valid (a request by someone else never kills the person's
    /// link). Errors: `Unexpected`.
    async fn issue_link(
        &self,
        link: &NewLink,
        mail: &OutgoingMail,
        now: i64,
        quiet_secs: i64,
    ) -> Result<bool, RepositoryError>;

    /// The link whose token hashes to `token_hash`, if any (left in
    /// place: a page shows its form first). Errors: `Unexpected`.
    async fn find_link(&self, token_hash: &[u8; 32]) -> Result<Option<StoredLink>, RepositoryError>;

    /// Takes (deletes) the link whose token hashes to `token_hash`, with
    /// `purpose`: at most one caller gets it. Errors: `Unexpected`.
    async fn take_link(
        &self,
        token_hash: &[u8; 32],
        purpose: LinkPurpose,
    ) -> Result<Option<StoredLink>, RepositoryError>;

    /// Takes the address-confirmation link whose token hashes to
    /// `token_hash` if it is live at `now`, and in the same transaction
    /// marks the account's address confirmed when it is still the one the
    /// link was sent to. Errors: `Unexpected`.
    async fn confirm_email(&self, token_hash: &[u8; 32], now: i64) -> Result<Confirmation, RepositoryError>;

    /// Whether `user`'s address is confirmed (`false` for an unknown
    /// account). Errors: `Unexpected`.
    async fn email_verified(&self, user: UserId) -> Result<bool, RepositoryError>;

    /// Deletes every link of `user` (its address changed: links mailed to
    /// the old one must die): how many. Errors: `Unexpected`.
    async fn forget_links(&self, user: UserId) -> Result<u64, RepositoryError>;

    /// Issues `link` (an `EmailChange` link carrying the new address, whose
    /// key is `email_key`) and writes `mail` in one transaction, and
    /// deletes the account's earlier change links (the newest request is
    /// the person's intent); unless another account has the address, or
    /// the account's last change link was issued less than `quiet_secs`
    /// before `now`. Errors: `Unexpected`.
    async fn request_change(
        &self,
        link: &NewLink,
        email_key: &str,
        mail: &OutgoingMail,
        now: i64,
        quiet_secs: i64,
    ) -> Result<ChangeRequest, RepositoryError>;

    /// The address of `user`'s live change request at `now`, if any.
    /// Errors: `Unexpected`.
    async fn pending_change(&self, user: UserId, now: i64) -> Result<Option<String>, RepositoryError>;

    /// Deletes `user`'s change requests: how many. Errors: `Unexpected`.
    async fn cancel_change(&self, user: UserId) -> Result<u64, RepositoryError>;

    /// Applies `switch` in one transaction: takes its live link, sets the
    /// account's address (confirmed), deletes the account's other links
    /// (but, on a change, those that undo earlier changes) and, on a
    /// change, issues the undo link and writes its mail. Errors:
    /// `Unexpected`.
    async fn switch_address(&self, switch: &AddressSwitch) -> Result<Switched, RepositoryError>;

    /// Claims up to `limit` mails due at `now` (the oldest due first),
    /// moving their next try to `lease_until`. Errors: `Unexpected`.
    async fn claim(&self, now: i64, lease_until: i64, limit: u32) -> Result<Vec<ClaimedMail>, RepositoryError>;

    /// Gives claimed mail `id` back, due at `at`, without counting a try
    /// (the sender stopped before trying it), while the claim `lease` holds.
    /// Errors: `Unexpected`.
    async fn postpone(&self, id: i64, lease: i64, at: i64) -> Result<(), RepositoryError>;

    /// Marks mail `id` delivered at `now` while the claim `lease` holds; its
    /// bodies are cleared (a link in them must not outlive the delivery in
    /// the database). Errors: `Unexpected`.
    async fn mark_sent(&self, id: i64, lease: i64, now: i64) -> Result<(), RepositoryError>;

    /// Records a failed try of mail `id` at `now` with `error`, while the
    /// claim `lease` holds: tried again at `retry_at`, or given up (failed,
    /// shown to staff) when `None`. `refused` counts the try as a refusal
    /// (`attempts`); a relay that could not be reached counts nothing.
    /// `forget_body` clears the bodies (a mail whose link died). Errors:
    /// `Unexpected`.
    async fn mark_failed(&self, failure: &FailedTry) -> Result<(), RepositoryError>;

    /// Mail given up on, newest first, `limit` a page after row `before`
    /// (the last row of the previous page). Errors: `Unexpected`.
    async fn failed(&self, before: Option<i64>, limit: u32) -> Result<Vec<FailedMail>, RepositoryError>;

    /// Puts failed mail `id` back in the queue, due at `now` and counted
    /// as written then, its tries from zero: whether there was such a
    /// failed mail with a body to send. Errors: `Unexpected`.
    async fn retry(&self, id: i64, now: i64) -> Result<bool, RepositoryError>;

    /// How many mails wait to be sent (due or not). Errors: `Unexpected`.
    async fn waiting(&self) -> Result<u64, RepositoryError>;

    /// Deletes up to `limit` rows in all: mails delivered before
    /// `sent_before`, then links expired by `now`, the oldest first: how
    /// many. Errors: `Unexpected`.
    async fn purge(&self, sent_before: i64, now: i64, limit: u32) -> Result<u64, RepositoryError>;
}

/// The most unexpired links of one purpose an account may hold.
pub const MAX_LIVE_LINKS: i64 = 3;

/// One failed try, as [`MailStore::mark_failed`] records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedTry {
    /// The outbox row.
    pub id: i64,
    /// The claim's lease.
    pub lease: i64,
    /// The relay's answer.
    pub error: String,
    /// When to try again; `None`: given up.
    pub retry_at: Option<i64>,
    /// Whether the relay refused the mail (counted in `attempts`).
    pub refused: bool,
    /// Whether to clear the bodies.
    pub forget_body: bool,
    /// Now.
    pub now: i64,
}

/// The codes of every kind this build knows, as an SQL list
/// (`'password_reset', …`): the claim's filter.
pub fn known_kinds_sql() -> String {
    MailKind::ALL.iter().map(|k| format!("'{}'", k.code())).collect::<Vec<_>>().join(", ")
}

/// Why a relay did not take a mail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// The relay could not be reached or answered with a temporary error:
    /// tried again later.
    #[error("the mail relay is unavailable: {0}")]
    Unavailable(String),
    /// The relay refused the mail for good (a bad address, a refused
    /// sender): tried again later all the same, in case staff fix the
    /// setting, and shown to staff once the tries run out.
    #[error("the mail relay refused the mail: {0}")]
    Refused(String),
}

/// Delivers one mail: an SMTP relay, or the demo's sandbox mailbox.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    /// Hands `mail` to the relay. Errors: [`MailError`].
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailError>;
}
