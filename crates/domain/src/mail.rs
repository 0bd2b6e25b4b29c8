//! Mail the service sends (issue 24): what one mail is, the links a mail
//! carries (a password reset, an address confirmation, a change of address
//! and its undo) and their rules, and how a mail that could not be
//! delivered is retried.
//!
//! A link is an opaque random token (the shape of a
//! [`SessionToken`](crate::session::SessionToken)); the store keeps only its
//! SHA-256, with what the link is for, whose it is, the password stamp it
//! was issued under and when it expires. A link is taken (deleted) when it
//! is used, so it works once; a reset link is bound to the password stamp,
//! so it dies as soon as the password changes by any route.

use crate::redacted::Redacted;

/// A rendered mail waiting to be sent. `Debug` shows the kind and the
/// subject only: the address and the body (which may carry a link) stay out
/// of logs.
#[derive(Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    /// The recipient's address.
    pub to: Redacted<String>,
    /// The subject line.
    pub subject: String,
    /// The plain-text part.
    pub text: Redacted<String>,
    /// The HTML part.
    pub html: Redacted<String>,
    /// What the mail is about.
    pub kind: MailKind,
}

impl std::fmt::Debug for OutgoingMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingMail").field("kind", &self.kind).field("subject", &self.subject).finish_non_exhaustive()
    }
}

/// What a mail is about, as stored (`code`) and shown to staff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    /// A link to set a new password ("Esqueci minha senha").
    PasswordReset,
    /// A notice that the password was reset through such a link.
    PasswordResetDone,
    /// A notice of a change to the account's security (a factor, the
    /// password, a login from a new device, …).
    SecurityNotice,
    /// A link that confirms the account's address, or a new address the
    /// person asked to change to.
    EmailConfirm,
    /// A notice to the old address that the account's address changed, with
    /// a link that undoes the change.
    EmailUndo,
}

impl MailKind {
    /// Every kind.
    pub const ALL: [Self; 5] =
        [Self::PasswordReset, Self::PasswordResetDone, Self::SecurityNotice, Self::EmailConfirm, Self::EmailUndo];

    /// The stored code.
    pub fn code(self) -> &'static str {
        match self {
            Self::PasswordReset => "password_reset",
            Self::PasswordResetDone => "password_reset_done",
            Self::SecurityNotice => "security_notice",
            Self::EmailConfirm => "email_confirm",
            Self::EmailUndo => "email_undo",
        }
    }

    /// The kind a stored code names.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// What staff read in the panel's list of mail that failed.
    pub fn label(self) -> &'static str {
        match self {
            Self::PasswordReset => "Link para redefinir a senha",
            Self::PasswordResetDone => "Aviso de senha redefinida",
            Self::SecurityNotice => "Aviso de segurança",
            Self::EmailConfirm => "Confirmação do e-mail",
            Self::EmailUndo => "Aviso de e-mail alterado (com link para desfazer)",
        }
    }
}

/// What a link sent by mail is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPurpose {
    /// Setting a new password without the old one.
    PasswordReset,
    /// Confirming that the person receives mail at the account's address.
    EmailConfirm,
    /// Confirming a new address the person asked to change to: the change
    /// takes effect when the link is used. The link carries the new address.
    EmailChange,
    /// Undoing a change of address, from the old address: the link carries
    /// the old address and puts it back.
    EmailUndo,
}

impl LinkPurpose {
    /// Every purpose.
    pub const ALL: [Self; 4] = [Self::PasswordReset, Self::EmailConfirm, Self::EmailChange, Self::EmailUndo];

    /// The stored code.
    pub fn code(self) -> &'static str {
        match self {
            Self::PasswordReset => "password_reset",
            Self::EmailConfirm => "email_confirm",
            Self::EmailChange => "email_change",
            Self::EmailUndo => "email_undo",
        }
    }

    /// The purpose a stored code names.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// How long a link of this purpose works after it is issued.
    pub fn lifetime_secs(self) -> i64 {
        match self {
            // At most 30 minutes (issue 24).
            Self::PasswordReset => 30 * 60,
            // A day (issue 24).
            Self::EmailConfirm | Self::EmailChange => 24 * 3600,
            // A week: the old address's owner may read mail seldom (issue 24).
            Self::EmailUndo => 7 * 24 * 3600,
        }
    }
}

/// Why a link that was found does not work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRefusal {
    /// Its time ran out.
    Expired,
    /// The password changed after it was issued (a reset by another link,
    /// a change on the password page, a staff reset).
    Superseded,
}

/// A link as stored, checked before it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState {
    /// What the link is for.
    pub purpose: LinkPurpose,
    /// The password stamp of the account when the link was issued.
    pub stamp: String,
    /// Until when it works (Unix seconds, exclusive).
    pub expires_at: i64,
    /// The address a confirmation link confirms, the new address of a
    /// change, the old address an undo puts back (`""` for a reset link).
    pub email: String,
}

impl LinkState {
    /// Whether the link still works at `now`, for an account whose
    /// password currently gives `current_stamp`.
    pub fn check(&self, now: i64, current_stamp: &crate::PasswordStamp) -> Result<(), LinkRefusal> {
        if now >= self.expires_at {
            return Err(LinkRefusal::Expired);
        }
        if !current_stamp.matches(&self.stamp) {
            return Err(LinkRefusal::Superseded);
        }
        Ok(())
    }
}

/// Why a try to deliver a mail failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendFailure {
    /// The relay could not be reached or answered "try later".
    Unavailable,
    /// The relay refused the mail for good (a bad address, a refused
    /// sender).
    Refused,
}

/// How many times the sender tries a mail the relay refuses before it
/// gives up and shows it to staff as failed.
pub const MAX_REFUSALS: u32 = 8;

/// How long the sender keeps trying a mail while the relay is unavailable
/// before it gives up: a day.
pub const GIVE_UP_AFTER_SECS: i64 = 24 * 3600;

/// How long the sender waits before the next try of a mail that failed
/// with `failure`, the mail being `age_secs` old (since it was written or
/// put back by staff) and refused `refusals` times so far (this try
/// included); `None` when it gives up.
///
/// While the relay is unavailable a mail is tried again soon — after half
/// its age, at least 5 s and at most 30 s — so that mail waits at most
/// half a minute once the relay is back; it gives up after
/// [`GIVE_UP_AFTER_SECS`]. A refusal is tried again after one minute,
/// doubling up to an hour, [`MAX_REFUSALS`] times in all (a relay's
/// setting may be fixed meanwhile); tries while the relay was unavailable
/// do not count toward them.
pub fn retry_delay_secs(failure: SendFailure, refusals: u32, age_secs: i64) -> Option<i64> {
    match failure {
        SendFailure::Unavailable if age_secs >= GIVE_UP_AFTER_SECS => None,
        SendFailure::Unavailable => Some((age_secs / 2).clamp(5, 30)),
        SendFailure::Refused if refusals >= MAX_REFUSALS => None,
        SendFailure::Refused => Some((60_i64 << refusals.saturating_sub(1).min(6)).min(3600)),
    }
}

/// The longest first name a mail greets a person by, in characters.
pub const MAX_GREETING_NAME_CHARS: usize = 40;

/// The first name a mail greets its reader by, or `None` for a neutral
/// greeting.
///
/// Anyone can sign up with someone else's address, and the confirmation
/// mail then goes to that person from the service's own address: a name
/// written into it is text an attacker chose, in an official mail. A name
/// like `https://evil.example/login`, `www.evil.example` or
/// `evil.example/entrar` would read as the service's own link (mail
/// programs make such text a link). So a mail greets by the name's first
/// word only when the whole name is a plain name — letters (any script,
/// with combining accents), spaces, hyphens and apostrophes, with a
/// letter in the first word, which is at most
/// [`MAX_GREETING_NAME_CHARS`] long — and neutrally otherwise. No link, no
/// domain, no address, no digits, no markup can pass.
pub fn greeting_name(name: &str) -> Option<&str> {
    let allowed = |c: char| {
        c.is_alphabetic() || matches!(c, ' ' | '-' | '\'' | '\u{2019}') || ('\u{300}'..='\u{36f}').contains(&c)
    };
    if !name.chars().all(allowed) {
        return None;
    }
    let first = name.split(' ').find(|word| !word.is_empty())?;
    let plain = first.chars().any(char::is_alphabetic) && first.chars().count() <= MAX_GREETING_NAME_CHARS;
    plain.then_some(first)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::PasswordStamp;

    #[test]
    fn a_mail_greets_by_the_first_name_of_a_plain_name_only() {
        for (name, want) in [
            ("Ana Beatriz Souza", Some("Ana")),
            ("  Ana", Some("Ana")),
            ("Maria-José d'Ávila", Some("Maria-José")),
            ("João D\u{2019}Angelo", Some("João")),
            ("Jose\u{301} Silva", Some("Jose\u{301}")),
            ("Иван Петров", Some("Иван")),
            ("lia", Some("lia")),
            ("", None),
            ("   ", None),
            ("- ' Ana", None),
            ("https://evil.example/login", None),
            ("Ana https://evil.example/login", None),
            ("www.evil.example", None),
            ("evil.example/entrar", None),
            ("Ana evil.example", None),
            ("ana@example.org", None),
            ("Ana <b>Souza</b>", None),
            ("Ana\tSouza", None),
            ("Ana\nAcesse evil", None),
            ("Ana 2", None),
            ("Maria J. Souza", None),
            ("Ana:Souza", None),
        ] {
            assert_eq!(greeting_name(name), want, "{name:?}");
        }
        assert_eq!(greeting_name(&"a".repeat(40)), Some("a".repeat(40).as_str()));
        assert_eq!(greeting_name(&"a".repeat(41)), None, "too long to be a first name");
    }

    proptest! {
        #[test]
        fn what_a_mail_greets_by_never_holds_a_link_a_domain_or_markup(name in "\\PC{0,60}") {
            if let Some(first) = greeting_name(&name) {
                for piece in ["://", "www.", ".", "/", "@", "<", ">", ":", "&"] {
                    prop_assert!(!first.contains(piece), "{first:?} from {name:?}");
                }
                let mark = |c: char| "-'\u{2019}".contains(c) || ('\u{300}'..='\u{36f}').contains(&c);
                let plain = first.chars().all(|c| c.is_alphabetic() || mark(c));
                prop_assert!(plain, "{:?} from {:?}", first, name);
                prop_assert!(name.split(' ').any(|word| word == first), "a word of the name");
            }
        }

        #[test]
        fn a_name_of_letters_and_spaces_is_greeted_by_its_first_word(
            words in proptest::collection::vec("[A-Za-zÀ-ÿ&&[^×÷]]{1,20}", 1..4)
        ) {
            let name = words.join(" ");
            prop_assert_eq!(greeting_name(&name), Some(words[0].as_str()));
        }

        #[test]
        fn a_name_holding_a_dot_a_slash_or_a_colon_is_never_greeted(
            before in "[A-Za-z ]{0,10}", mark in "[./:]", after in "[A-Za-z ]{0,10}"
        ) {
            let name = format!("{before}{mark}{after}");
            prop_assert_eq!(greeting_name(&name), None);
        }
    }

    #[test]
    fn every_kind_and_purpose_reads_back_from_its_code() {
        for kind in MailKind::ALL {
            assert_eq!(MailKind::from_code(kind.code()), Some(kind));
            assert!(!kind.label().is_empty());
        }
        for purpose in LinkPurpose::ALL {
            assert_eq!(LinkPurpose::from_code(purpose.code()), Some(purpose));
        }
        assert_eq!(MailKind::from_code("nope"), None);
        assert_eq!(LinkPurpose::from_code(""), None);
    }

    #[test]
    fn a_reset_link_works_for_thirty_minutes_under_the_stamp_it_was_issued_with() {
        assert!(LinkPurpose::PasswordReset.lifetime_secs() <= 30 * 60);
        assert_eq!(LinkPurpose::EmailConfirm.lifetime_secs(), 24 * 3600);
        assert_eq!(LinkPurpose::EmailChange.lifetime_secs(), 24 * 3600);
        assert_eq!(LinkPurpose::EmailUndo.lifetime_secs(), 7 * 24 * 3600);
        let stamp = PasswordStamp::of("pbkdf2_sha256$1000$salt$hash");
        let issued = 1_000;
        let link = LinkState {
            purpose: LinkPurpose::PasswordReset,
            stamp: stamp.as_str().to_owned(),
            expires_at: issued + LinkPurpose::PasswordReset.lifetime_secs(),
            email: String::new(),
        };
        assert_eq!(link.check(issued, &stamp), Ok(()));
        assert_eq!(link.check(link.expires_at - 1, &stamp), Ok(()));
        assert_eq!(link.check(link.expires_at, &stamp), Err(LinkRefusal::Expired));
        let changed = PasswordStamp::of("pbkdf2_sha256$1000$other$hash");
        assert_eq!(link.check(issued, &changed), Err(LinkRefusal::Superseded));
    }

    #[test]
    fn an_unavailable_relay_is_tried_again_within_half_a_minute_for_a_day() {
        let u = SendFailure::Unavailable;
        assert_eq!(retry_delay_secs(u, 0, 0), Some(5));
        assert_eq!(retry_delay_secs(u, 0, 20), Some(10));
        assert_eq!(retry_delay_secs(u, 0, 40), Some(20));
        assert_eq!(retry_delay_secs(u, 0, 3600), Some(30));
        assert_eq!(retry_delay_secs(u, 7, GIVE_UP_AFTER_SECS - 1), Some(30), "never longer than half a minute");
        assert_eq!(retry_delay_secs(u, 0, GIVE_UP_AFTER_SECS), None, "a day later it gives up");
    }

    #[test]
    fn a_refusal_backs_off_from_a_minute_to_an_hour_and_stops_after_the_last_try() {
        let r = SendFailure::Refused;
        assert_eq!(retry_delay_secs(r, 1, 0), Some(60));
        assert_eq!(retry_delay_secs(r, 2, 0), Some(120));
        assert_eq!(retry_delay_secs(r, 3, 0), Some(240));
        assert_eq!(retry_delay_secs(r, 7, 0), Some(3600));
        assert_eq!(retry_delay_secs(r, MAX_REFUSALS - 1, 0), Some(3600));
        assert_eq!(retry_delay_secs(r, MAX_REFUSALS, 0), None);
        let waited: i64 = (1..MAX_REFUSALS).map(|a| retry_delay_secs(r, a, 0).expect("tries left")).sum();
        assert!(waited > 2 * 3600 && waited < 12 * 3600, "a few hours in all: {waited}");
    }

    #[test]
    fn debug_shows_neither_the_address_nor_the_body() {
        let mail = OutgoingMail {
            to: Redacted("ana@example.org".into()),
            subject: "Redefinir a senha".into(),
            text: Redacted("https://id.example/conta/recuperar/SECRET/".into()),
            html: Redacted("<a href=\"https://id.example/conta/recuperar/SECRET/\">".into()),
            kind: MailKind::PasswordReset,
        };
        let shown = format!("{mail:?}");
        assert!(shown.contains("Redefinir a senha") && shown.contains("PasswordReset"));
        assert!(!shown.contains("ana@") && !shown.contains("SECRET"), "{shown}");
    }
}
