//! Passkeys (WebAuthn, with `webauthn-rs`): registering several per
//! account, naming and removing them, and the two ways of using one: as the
//! second factor after the password, and alone (a discoverable credential:
//! the authenticator names the account).
//!
//! Every ceremony is a challenge kept server-side ([`PasskeyStore`]'s
//! ceremonies: any instance can finish it) under a random id the page
//! carries; finishing takes (deletes) it, so each challenge is answered
//! once, within [`CEREMONY_SECS`]. A passkey is used with user
//! verification (the device's PIN or biometric): two factors in one.

use std::fmt;
use std::sync::Arc;

use credencial_domain::security_event::SecurityEventKind;
use credencial_domain::session::{AuthMethod, SessionToken};
use credencial_domain::{Redacted, UserId};
use credencial_ports::{Ceremony, Clock, NewPasskey, PasskeyRecord, PasskeyStore};
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyAuthentication, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid, Webauthn, WebauthnBuilder,
};

use crate::error::ServiceError;
use crate::second_factor::SecondFactorService;

/// How long a ceremony can be finished after it started: 5 minutes.
pub const CEREMONY_SECS: i64 = 5 * 60;
/// The most passkeys an account keeps.
pub const MAX_PASSKEYS: u32 = 10;
/// The longest name of a passkey, in characters.
pub const MAX_NAME_CHARS: usize = 60;

const CEREMONY_GONE: &str = "a operação com a chave de acesso expirou ou já foi usada";

/// What a ceremony is for (its stored `purpose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Register,
    Login,
    SecondFactor,
}

impl Purpose {
    fn code(self) -> &'static str {
        match self {
            Self::Register => "register",
            Self::Login => "login",
            Self::SecondFactor => "second_factor",
        }
    }
}

/// A ceremony started: what the page hands the browser's script.
#[derive(Debug, Clone)]
pub struct StartedCeremony {
    /// The ceremony's id (the page posts it back).
    pub id: Redacted<String>,
    /// The options for `navigator.credentials.create()` or `.get()`, as
    /// JSON (`{"publicKey": …}`).
    pub options: String,
}

/// A passkey as the security page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyView {
    /// The record's id.
    pub id: i64,
    /// The name the person gave it.
    pub name: String,
    /// When it was registered (Unix seconds).
    pub created_at: i64,
    /// When it was last used (Unix seconds).
    pub last_used_at: Option<i64>,
}

/// A passkey that passed: whose, and how (bound to a device or synced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasskeyLogin {
    /// The account.
    pub user: UserId,
    /// [`AuthMethod::Passkey`] or [`AuthMethod::SyncedPasskey`].
    pub method: AuthMethod,
}

/// The passkey use cases.
pub struct PasskeyService {
    webauthn: Webauthn,
    origin: Url,
    store: Arc<dyn PasskeyStore>,
    factors: Arc<SecondFactorService>,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for PasskeyService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasskeyService").field("origin", &self.origin.as_str()).finish_non_exhaustive()
    }
}

fn invalid(reason: &str) -> ServiceError {
    ServiceError::Invalid(reason.to_owned())
}

fn internal(e: impl fmt::Display) -> ServiceError {
    ServiceError::Internal(e.to_string())
}

impl PasskeyService {
    /// Passkeys of the relying party at `origin` (its host is the RP id:
    /// a domain name, `localhost` included; never an IP address), shown to
    /// people as `name`, kept in `store`; the first factor's recovery codes
    /// come from `factors`. Errors: `Invalid` for an origin WebAuthn cannot
    /// serve.
    pub fn new(
        origin: &Url,
        name: &str,
        store: Arc<dyn PasskeyStore>,
        factors: Arc<SecondFactorService>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ServiceError> {
        let rp_id = match origin.host_str() {
            Some(host) if !host.is_empty() && host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_err() => {
                host.to_owned()
            }
            _ => return Err(invalid("a origem das chaves de acesso precisa de um nome de domínio (não um IP)")),
        };
        let webauthn = WebauthnBuilder::new(&rp_id, origin)
            .and_then(|b| b.rp_name(name).timeout(std::time::Duration::from_secs(CEREMONY_SECS as u64)).build())
            .map_err(|e| ServiceError::Invalid(format!("origem das chaves de acesso inválida: {e}")))?;
        Ok(Self { webauthn, origin: origin.clone(), store, factors, clock })
    }

    /// The origin pages must be served from for passkeys to work.
    pub fn origin(&self) -> &Url {
        &self.origin
    }

    /// `user`'s passkeys, oldest first. Errors: `Storage`.
    pub async fn list(&self, user: UserId) -> Result<Vec<PasskeyView>, ServiceError> {
        let records = self.store.passkeys(user, MAX_PASSKEYS).await?;
        Ok(records
            .into_iter()
            .map(|r| PasskeyView { id: r.id, name: r.name, created_at: r.created_at, last_used_at: r.last_used_at })
            .collect())
    }

    /// Removes `user`'s passkey `id` (another person's id removes nothing):
    /// whether it was there. Errors: `Storage`.
    pub async fn remove(&self, user: UserId, id: i64) -> Result<bool, ServiceError> {
        let Some(passkey) = self.store.passkeys(user, MAX_PASSKEYS).await?.into_iter().find(|p| p.id == id) else {
            return Ok(false);
        };
        self.factors.record(user, SecurityEventKind::PasskeyRemoved, &passkey.name).await?;
        let removed = self.store.remove_passkey(user, id).await?;
        if removed {
            tracing::info!(user = user.0, passkey = id, "passkey removed");
        }
        Ok(removed)
    }

    async fn keep(
        &self,
        purpose: Purpose,
        user: Option<UserId>,
        state: &impl serde::Serialize,
    ) -> Result<Redacted<String>, ServiceError> {
        // A ceremony's id is made and stored as a session's: 256 random
        // bits, only their SHA-256 kept.
        let id = SessionToken::generate();
        let ceremony = Ceremony {
            id_hash: id.hash(),
            user,
            purpose: purpose.code().to_owned(),
            state: serde_json::to_string(state).map_err(internal)?,
            expires_at: self.clock.now().saturating_add(CEREMONY_SECS),
        };
        self.store.put_ceremony(&ceremony).await?;
        Ok(Redacted(id.expose().to_owned()))
    }

    /// Takes the ceremony `id` for `purpose` of `user`: its state. Errors:
    /// `Invalid` when there is none (expired, used, never started), or it
    /// is another purpose's or another person's; `Storage`, `Internal`.
    async fn take<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        purpose: Purpose,
        user: Option<UserId>,
    ) -> Result<T, ServiceError> {
        let id = SessionToken::from_cookie(id).ok_or_else(|| invalid(CEREMONY_GONE))?;
        let ceremony =
            self.store.take_ceremony(&id.hash(), self.clock.now()).await?.ok_or_else(|| invalid(CEREMONY_GONE))?;
        if ceremony.purpose != purpose.code() || ceremony.user != user {
            return Err(invalid(CEREMONY_GONE));
        }
        serde_json::from_str(&ceremony.state).map_err(internal)
    }

    fn passkey_of(record: &PasskeyRecord) -> Result<Passkey, ServiceError> {
        serde_json::from_str(&record.data).map_err(internal)
    }

    // ------------------------------------------------------ registration

    /// Starts registering a passkey for `user`, shown on the device as
    /// `account` (the username) and `display_name`. The options ask for a
    /// discoverable credential (so that it can log in alone) and user
    /// verification, and exclude the account's passkeys. Errors: `Invalid`
    /// when the account has [`MAX_PASSKEYS`]; `Storage`, `Internal`.
    pub async fn start_registration(
        &self,
        user: UserId,
        account: &str,
        display_name: &str,
    ) -> Result<StartedCeremony, ServiceError> {
        let existing = self.store.passkeys(user, MAX_PASSKEYS).await?;
        if existing.len() >= MAX_PASSKEYS as usize {
            return Err(invalid("a conta já tem o número máximo de chaves de acesso"));
        }
        let handle = match existing.first().and_then(|r| Uuid::from_slice(&r.user_handle).ok()) {
            Some(handle) => handle,
            None => Uuid::new_v4(),
        };
        let exclude = existing.iter().map(|r| r.credential_id.clone()).collect::<Vec<_>>();
        let (options, state) =
            self.webauthn.start_passkey_registration(handle, account, display_name, Some(exclude)).map_err(internal)?;
        let mut options = serde_json::to_value(&options).map_err(internal)?;
        // A discoverable credential: the login by passkey alone finds it
        // with no username typed. Only the request changes; the checks of
        // the answer are the library's.
        if let Some(selection) =
            options.pointer_mut("/publicKey/authenticatorSelection").and_then(|v| v.as_object_mut())
        {
            selection.insert("residentKey".into(), "required".into());
            selection.insert("requireResidentKey".into(), true.into());
        }
        let id = self.keep(Purpose::Register, Some(user), &(handle, state)).await?;
        Ok(StartedCeremony { id, options: options.to_string() })
    }

    /// Finishes registering a passkey of `user` named `name`, from the
    /// browser's `credential` (JSON) for ceremony `id`. `Ok(Some(codes))`
    /// when it is the account's first factor (its recovery codes, to show
    /// once); `Ok(None)` otherwise. Errors: `Invalid` for a name empty or too
    /// long, a ceremony gone or another's, an answer that does not verify,
    /// a credential already registered, too many passkeys; `Storage`,
    /// `Internal`.
    pub async fn finish_registration(
        &self,
        user: UserId,
        id: &str,
        credential: &str,
        name: &str,
    ) -> Result<Option<Vec<Redacted<String>>>, ServiceError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(invalid("dê à chave de acesso um nome de até 60 caracteres"));
        }
        let (handle, state): (Uuid, PasskeyRegistration) = self.take(id, Purpose::Register, Some(user)).await?;
        let credential: RegisterPublicKeyCredential =
            serde_json::from_str(credential).map_err(|_| invalid("a resposta da chave de acesso é inválida"))?;
        let passkey = self
            .webauthn
            .finish_passkey_registration(&credential, &state)
            .map_err(|e| ServiceError::Invalid(format!("a chave de acesso não foi aceita ({e})")))?;
        let first = !self.factors.has_factor(user).await?;
        let new = NewPasskey {
            user,
            credential_id: AsRef::<[u8]>::as_ref(passkey.cred_id()).to_vec(),
            user_handle: handle.as_bytes().to_vec(),
            name: name.to_owned(),
            data: serde_json::to_string(&passkey).map_err(internal)?,
            now: self.clock.now(),
        };
        self.factors.record(user, SecurityEventKind::PasskeyAdded, name).await?;
        if !self.store.add_passkey(&new, MAX_PASSKEYS).await? {
            return Err(invalid("esta chave de acesso já está cadastrada, ou a conta já tem o máximo de chaves"));
        }
        tracing::info!(user = user.0, "passkey registered");
        // The first factor brings the recovery codes (none are left once the
        // last factor goes: `forget_codes_without_factor`, `remove_all`).
        match first {
            true => Ok(Some(self.factors.new_recovery_codes(user).await?)),
            false => Ok(None),
        }
    }

    // ------------------------------------------------------------- use

    /// Starts a login by passkey alone: a challenge any of this site's
    /// discoverable credentials can answer. Errors: `Storage`, `Internal`.
    pub async fn start_login(&self) -> Result<StartedCeremony, ServiceError> {
        let (options, state) = self.webauthn.start_discoverable_authentication().map_err(internal)?;
        let mut options = serde_json::to_value(&options).map_err(internal)?;
        // The library marks the request for conditional mediation (the
        // autofill); our page asks on a button, a modal request.
        if let Some(object) = options.as_object_mut() {
            object.remove("mediation");
        }
        let id = self.keep(Purpose::Login, None, &state).await?;
        Ok(StartedCeremony { id, options: options.to_string() })
    }

    /// Starts the second factor of `user` by one of their passkeys;
    /// `Ok(None)` when they have none. Errors: `Storage`, `Internal`.
    pub async fn start_second_factor(&self, user: UserId) -> Result<Option<StartedCeremony>, ServiceError> {
        let records = self.store.passkeys(user, MAX_PASSKEYS).await?;
        if records.is_empty() {
            return Ok(None);
        }
        let passkeys = records.iter().map(Self::passkey_of).collect::<Result<Vec<_>, _>>()?;
        let (options, state) = self.webauthn.start_passkey_authentication(&passkeys).map_err(internal)?;
        let id = self.keep(Purpose::SecondFactor, Some(user), &state).await?;
        Ok(Some(StartedCeremony { id, options: serde_json::to_string(&options).map_err(internal)? }))
    }

    /// Finishes a login by passkey alone (ceremony `id`, the browser's
    /// `credential` JSON): the account whose passkey answered, when the
    /// answer verifies (signature over this challenge, this origin, user
    /// verification) and the passkey is registered with that user handle;
    /// `Ok(None)` when not. Errors: `Invalid` for a ceremony gone or an
    /// answer that cannot be read; `Storage`, `Internal`.
    pub async fn finish_login(&self, id: &str, credential: &str) -> Result<Option<PasskeyLogin>, ServiceError> {
        let state: DiscoverableAuthentication = self.take(id, Purpose::Login, None).await?;
        let credential = read_assertion(credential)?;
        let Ok((handle, credential_id)) = self.webauthn.identify_discoverable_authentication(&credential) else {
            return Ok(None);
        };
        let Some(record) = self.store.passkey_by_credential(credential_id).await? else {
            return Ok(None);
        };
        if record.user_handle != handle.as_bytes() {
            return Ok(None);
        }
        let mut passkey = Self::passkey_of(&record)?;
        let Ok(result) = self.webauthn.finish_discoverable_authentication_v2(&credential, state, &passkey) else {
            return Ok(None);
        };
        self.used(&record, &mut passkey, &result).await
    }

    /// Finishes `user`'s second factor by passkey (ceremony `id`, the
    /// browser's `credential` JSON); `Ok(None)` when the answer does not
    /// verify. Errors: as [`finish_login`](Self::finish_login), and
    /// `Invalid` for another person's ceremony.
    pub async fn finish_second_factor(
        &self,
        user: UserId,
        id: &str,
        credential: &str,
    ) -> Result<Option<PasskeyLogin>, ServiceError> {
        let state: PasskeyAuthentication = self.take(id, Purpose::SecondFactor, Some(user)).await?;
        let credential = read_assertion(credential)?;
        let Ok(result) = self.webauthn.finish_passkey_authentication(&credential, &state) else {
            return Ok(None);
        };
        let Some(record) = self.store.passkey_by_credential(AsRef::<[u8]>::as_ref(result.cred_id())).await? else {
            return Ok(None);
        };
        if record.user != user {
            return Ok(None);
        }
        let mut passkey = Self::passkey_of(&record)?;
        self.used(&record, &mut passkey, &result).await
    }

    /// Records a use of `record` that answered `result`: its last use, and
    /// the credential when its counter or flags moved.
    async fn used(
        &self,
        record: &PasskeyRecord,
        passkey: &mut Passkey,
        result: &webauthn_rs::prelude::AuthenticationResult,
    ) -> Result<Option<PasskeyLogin>, ServiceError> {
        let data = match passkey.update_credential(result) {
            Some(true) => Some(serde_json::to_string(passkey).map_err(internal)?),
            _ => None,
        };
        self.store.passkey_used(record.id, data, self.clock.now()).await?;
        let method = if result.backup_eligible() { AuthMethod::SyncedPasskey } else { AuthMethod::Passkey };
        Ok(Some(PasskeyLogin { user: record.user, method }))
    }

    /// Deletes up to `limit` expired ceremonies: how many. Errors:
    /// `Storage`.
    pub async fn purge_ceremonies(&self, limit: u32) -> Result<u64, ServiceError> {
        Ok(self.store.purge_ceremonies(self.clock.now(), limit).await?)
    }
}

fn read_assertion(credential: &str) -> Result<PublicKeyCredential, ServiceError> {
    serde_json::from_str(credential).map_err(|_| invalid("a resposta da chave de acesso é inválida"))
}
