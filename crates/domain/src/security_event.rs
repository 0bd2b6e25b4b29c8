//! What a person's security activity lists (`/conta/seguranca/`): their
//! logins and every change to their factors, password and sessions.

/// A kind of security event, as stored (`code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityEventKind {
    /// A login completed (its `amr` is the detail).
    Login,
    /// An authenticator app turned on.
    TotpEnabled,
    /// The authenticator app turned off.
    TotpDisabled,
    /// A passkey registered (its name is the detail).
    PasskeyAdded,
    /// A passkey removed (its name is the detail).
    PasskeyRemoved,
    /// A new set of recovery codes (the old set died).
    RecoveryCodesRenewed,
    /// The person changed their password.
    PasswordChanged,
    /// Staff set a temporary password.
    PasswordReset,
    /// Staff removed every factor.
    FactorsReset,
    /// The person ended their other sessions.
    OtherSessionsEnded,
    /// The person set a new password through a link sent by mail
    /// ("Esqueci minha senha").
    PasswordRecovered,
    /// The person changed the account's e-mail address (the old one is
    /// the detail).
    EmailChanged,
    /// Staff deactivated the account.
    AccountDeactivated,
    /// A change of address was undone through the link mailed to the old
    /// address (the address that was undone is the detail).
    EmailChangeUndone,
    /// The account was linked to an upstream provider (its name is the
    /// detail).
    ProviderLinked,
    /// The person unlinked an upstream provider (its name is the detail).
    ProviderUnlinked,
    /// Wrong second-factor codes spent the account's budget: the second
    /// step is locked for a while.
    SecondFactorLocked,
    /// The person made an application password (its name is the detail).
    AppPasswordCreated,
    /// The person revoked an application password (its name is the
    /// detail).
    AppPasswordRevoked,
}

impl SecurityEventKind {
    /// Every kind.
    pub const ALL: [Self; 19] = [
        Self::Login,
        Self::TotpEnabled,
        Self::TotpDisabled,
        Self::PasskeyAdded,
        Self::PasskeyRemoved,
        Self::RecoveryCodesRenewed,
        Self::PasswordChanged,
        Self::PasswordReset,
        Self::FactorsReset,
        Self::OtherSessionsEnded,
        Self::PasswordRecovered,
        Self::EmailChanged,
        Self::AccountDeactivated,
        Self::EmailChangeUndone,
        Self::ProviderLinked,
        Self::ProviderUnlinked,
        Self::SecondFactorLocked,
        Self::AppPasswordCreated,
        Self::AppPasswordRevoked,
    ];

    /// The stored code.
    pub fn code(self) -> &'static str {
        match self {
            Self::Login => "login",
            Self::TotpEnabled => "totp_enabled",
            Self::TotpDisabled => "totp_disabled",
            Self::PasskeyAdded => "passkey_added",
            Self::PasskeyRemoved => "passkey_removed",
            Self::RecoveryCodesRenewed => "recovery_codes_renewed",
            Self::PasswordChanged => "password_changed",
            Self::PasswordReset => "password_reset",
            Self::FactorsReset => "factors_reset",
            Self::OtherSessionsEnded => "other_sessions_ended",
            Self::PasswordRecovered => "password_recovered",
            Self::EmailChanged => "email_changed",
            Self::AccountDeactivated => "account_deactivated",
            Self::EmailChangeUndone => "email_change_undone",
            Self::ProviderLinked => "provider_linked",
            Self::ProviderUnlinked => "provider_unlinked",
            Self::SecondFactorLocked => "second_factor_locked",
            Self::AppPasswordCreated => "app_password_created",
            Self::AppPasswordRevoked => "app_password_revoked",
        }
    }

    /// The kind a stored code names.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// Whether an event of `kind` (with `detail`) is told to the person by
/// mail, and how: `Some(false)` for a change, `Some(true)` for a login that
/// may be from a new device (told only when the device is new), `None` for
/// no mail. A login with a recovery code is always told (a code was used
/// up); a reset through a mailed link, and a change of address (the old
/// address gets a mail with a link that undoes it), have their own mails.
pub fn notice_for(kind: SecurityEventKind, detail: &str) -> Option<bool> {
    use SecurityEventKind as K;
    match kind {
        K::Login if detail.split_whitespace().any(|m| m == "rec") => Some(false),
        K::Login => Some(true),
        K::PasswordRecovered | K::EmailChanged => None,
        K::TotpEnabled
        | K::TotpDisabled
        | K::PasskeyAdded
        | K::PasskeyRemoved
        | K::RecoveryCodesRenewed
        | K::PasswordChanged
        | K::PasswordReset
        | K::FactorsReset
        | K::OtherSessionsEnded
        | K::AccountDeactivated
        | K::EmailChangeUndone
        | K::ProviderLinked
        | K::ProviderUnlinked
        | K::SecondFactorLocked
        | K::AppPasswordCreated
        | K::AppPasswordRevoked => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_code_and_codes_are_distinct() {
        for kind in SecurityEventKind::ALL {
            assert_eq!(SecurityEventKind::from_code(kind.code()), Some(kind));
        }
        let mut codes: Vec<_> = SecurityEventKind::ALL.iter().map(|k| k.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), SecurityEventKind::ALL.len());
        assert_eq!(SecurityEventKind::from_code("nope"), None);
    }

    #[test]
    fn every_change_is_told_a_login_only_from_a_new_device_or_with_a_recovery_code() {
        for kind in SecurityEventKind::ALL {
            let told = notice_for(kind, "pwd");
            match kind {
                SecurityEventKind::Login => assert_eq!(told, Some(true)),
                SecurityEventKind::PasswordRecovered | SecurityEventKind::EmailChanged => {
                    assert_eq!(told, None, "its own mail")
                }
                _ => assert_eq!(told, Some(false), "{kind:?}"),
            }
        }
        assert_eq!(notice_for(SecurityEventKind::Login, "pwd rec"), Some(false), "a recovery code used");
    }
}
