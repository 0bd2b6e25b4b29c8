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
}

impl SecurityEventKind {
    /// Every kind.
    pub const ALL: [Self; 11] = [
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
        }
    }

    /// The kind a stored code names.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
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
}
