//! The experiences and degrees a person registers, each reachable only by
//! its owner.

use async_trait::async_trait;
use credencial_domain::account::{Entry, EntryForm, EntryId, EntryKind};
use credencial_domain::{Degree, UserId};

use crate::error::RepositoryError;

/// A stored experience or degree, as the account pages list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnEntry {
    /// The entry's id (for edit and delete).
    pub id: EntryId,
    /// Which list it is in.
    pub kind: EntryKind,
    /// Establishment (experience) or institution (degree).
    pub place: String,
    /// Profession (experience) or course (degree).
    pub subject: String,
    /// The degree's level (stored by code); `None` for an experience.
    pub grau: Option<Degree>,
    /// Start, `YYYY-MM-DD` (none for experiences taken from CNES).
    pub data_inicio: Option<String>,
    /// End, `YYYY-MM-DD`, if it ended.
    pub data_fim: Option<String>,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
    /// Whether it was supplemented from CNES rather than typed by the
    /// person (experiences only).
    pub from_cnes: bool,
}

impl OwnEntry {
    /// The entry as its edit form shows it.
    pub fn form(&self) -> EntryForm<'_> {
        EntryForm {
            place: &self.place,
            subject: &self.subject,
            grau_formacao: self.grau.map_or("", Degree::code),
            data_inicio: self.data_inicio.as_deref().unwrap_or(""),
            data_fim: self.data_fim.as_deref().unwrap_or(""),
            municipio: &self.municipio,
            descricao: &self.descricao,
        }
    }
}

/// A person's own `experiencia_profissional` and `formacao_academica`
/// entries, one kind at a time. Every method is scoped by the owner: an id
/// of another person's entry, or of an entry of the other kind, behaves
/// exactly like an id that does not exist (nothing is read or touched).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OwnEntryRepository: Send + Sync + 'static {
    /// The user's entries of `kind` in the profile answer's order (start,
    /// then id; undated last). Errors: `Unexpected`.
    async fn list(&self, user: UserId, kind: EntryKind) -> Result<Vec<OwnEntry>, RepositoryError>;

    /// One entry of `kind` of the user; `Ok(None)` when `id` is not one.
    /// Errors: `Unexpected`.
    async fn find(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<Option<OwnEntry>, RepositoryError>;

    /// Adds `entry` (to the list of its kind) as typed by the user and
    /// returns its id. Errors: `Unexpected` (also when the user does not
    /// exist).
    async fn add(&self, user: UserId, entry: &Entry) -> Result<EntryId, RepositoryError>;

    /// Replaces the fields of the user's entry `id` (of `entry`'s kind),
    /// which from then on counts as typed by the user; `Ok(false)` when
    /// `id` is not one (nothing changed). Errors: `Unexpected`.
    async fn update(&self, user: UserId, id: EntryId, entry: &Entry) -> Result<bool, RepositoryError>;

    /// Deletes the user's entry `id` of `kind`; `Ok(false)` when `id` is not
    /// one (nothing deleted). Errors: `Unexpected`.
    async fn delete(&self, user: UserId, kind: EntryKind, id: EntryId) -> Result<bool, RepositoryError>;
}
