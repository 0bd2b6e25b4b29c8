//! The person's own entries (`/conta/experiencias/`, `/conta/formacoes/`):
//! list, add, edit and delete experiences and degrees. What is saved here
//! is what the next profile read answers (own data is never cached).

use std::sync::Arc;

use credencial_domain::account::{Entry, EntryForm, EntryId, EntryKind, FieldErrors};
use credencial_domain::UserId;
use credencial_ports::account::{OwnEntry, OwnEntryRepository};
use credencial_ports::UserRepository;

use crate::error::ServiceError;

/// What became of a submitted entry form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntrySave {
    /// Stored; the entry's id.
    Saved(EntryId),
    /// Refused field by field; nothing was stored.
    Refused(FieldErrors),
    /// The entry is not one of the person's (another person's, deleted, or
    /// never there); nothing was stored.
    NotFound,
}

/// Use cases of the person's experiences and degrees. Every one of them
/// first makes sure the account is still active (a deactivated account's
/// session must end, as on the overview).
pub struct OwnEntryService {
    users: Arc<dyn UserRepository>,
    entries: Arc<dyn OwnEntryRepository>,
}

impl std::fmt::Debug for OwnEntryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnEntryService").finish_non_exhaustive()
    }
}

impl OwnEntryService {
    /// A service over the user and entry repositories.
    pub fn new(users: Arc<dyn UserRepository>, entries: Arc<dyn OwnEntryRepository>) -> Self {
        Self { users, entries }
    }

    /// `UnknownUser` unless `user` exists and is active.
    async fn ensure_active(&self, user: UserId) -> Result<(), ServiceError> {
        match self.users.find_summary_by_id(user).await? {
            Some(summary) if summary.is_active => Ok(()),
            _ => Err(ServiceError::UnknownUser),
        }
    }

    /// The person's entries of `kind`, in the profile answer's order.
    /// Errors: `UnknownUser` (the account is gone or inactive), `Storage`.
    pub async fn list(&self, user: UserId, kind: EntryKind) -> Result<Vec<OwnEntry>, ServiceError> {
        self.ensure_active(user).await?;
        Ok(self.entries.list(user, kind).await?)
    }

    /// One of the person's entries of `kind`; `None` when `id` is not one
    /// of them. Errors: `UnknownUser`, `Storage`.
    pub async fn find(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<Option<OwnEntry>, ServiceError> {
        self.ensure_active(user).await?;
        Ok(self.entries.find(user, kind, id).await?)
    }

    /// Adds the entry typed in `form`, or says which fields are refused.
    /// Errors: `UnknownUser`, `Storage`.
    pub async fn add(&self, user: UserId, kind: EntryKind, form: &EntryForm<'_>) -> Result<EntrySave, ServiceError> {
        self.ensure_active(user).await?;
        let entry = match Entry::parse(kind, form) {
            Ok(entry) => entry,
            Err(errors) => return Ok(EntrySave::Refused(errors)),
        };
        let id = self.entries.add(user, &entry).await?;
        tracing::info!(user = user.0, entry = id.0, ?kind, "own entry added");
        Ok(EntrySave::Saved(id))
    }

    /// Replaces the person's entry `id` with what `form` holds. An `id` that
    /// is not theirs is `NotFound` whatever the form holds (a refused form
    /// does not tell that the entry exists). Errors: `UnknownUser`,
    /// `Storage`.
    pub async fn update(
        &self,
        user: UserId,
        kind: EntryKind,
        id: EntryId,
        form: &EntryForm<'_>,
    ) -> Result<EntrySave, ServiceError> {
        self.ensure_active(user).await?;
        let entry = match Entry::parse(kind, form) {
            Ok(entry) => entry,
            Err(errors) => {
                return Ok(match self.entries.find(user, kind, id).await? {
                    Some(_) => EntrySave::Refused(errors),
                    None => EntrySave::NotFound,
                })
            }
        };
        if !self.entries.update(user, id, &entry).await? {
            return Ok(EntrySave::NotFound);
        }
        tracing::info!(user = user.0, entry = id.0, ?kind, "own entry changed");
        Ok(EntrySave::Saved(id))
    }

    /// Deletes the person's entry `id` of `kind`; `false` when it is not
    /// one of theirs (nothing deleted). Errors: `UnknownUser`, `Storage`.
    pub async fn delete(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<bool, ServiceError> {
        self.ensure_active(user).await?;
        let deleted = self.entries.delete(user, kind, id).await?;
        if deleted {
            tracing::info!(user = user.0, entry = id.0, ?kind, "own entry deleted");
        }
        Ok(deleted)
    }
}
