//! The experiences and degrees a person registers, each reachable only by
//! its owner.

use async_trait::async_trait;
use credencial_domain::account::{DegreeEntry, EntryId, ExperienceEntry};
use credencial_domain::{Degree, UserId};

use crate::error::RepositoryError;

/// A stored professional experience, as the account pages list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnExperience {
    /// The entry's id (for edit and delete).
    pub id: EntryId,
    /// Establishment.
    pub estabelecimento: String,
    /// Profession.
    pub profissao: String,
    /// Start, `YYYY-MM-DD` (none for some entries taken from CNES).
    pub data_inicio: Option<String>,
    /// End, `YYYY-MM-DD`, if it ended.
    pub data_fim: Option<String>,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
    /// Whether it was supplemented from CNES rather than typed by the person.
    pub from_cnes: bool,
}

/// A stored academic degree, as the account pages list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnDegree {
    /// The entry's id (for edit and delete).
    pub id: EntryId,
    /// Institution.
    pub instituicao: String,
    /// Course.
    pub curso: String,
    /// Degree level (stored by code).
    pub grau: Degree,
    /// Start, `YYYY-MM-DD`.
    pub data_inicio: String,
    /// End, `YYYY-MM-DD`, if it ended.
    pub data_fim: Option<String>,
    /// Municipality.
    pub municipio: String,
    /// Description (may be empty).
    pub descricao: String,
}

/// A person's own `experiencia_profissional` and `formacao_academica`
/// entries. Every method is scoped by the owner: an id of another person's
/// entry behaves exactly like an id that does not exist (nothing is read or
/// touched).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OwnEntryRepository: Send + Sync + 'static {
    /// The user's experiences in the profile answer's order (start, then
    /// id; undated last). Errors: `Unexpected`.
    async fn experiences(&self, user: UserId) -> Result<Vec<OwnExperience>, RepositoryError>;

    /// One experience of the user; `Ok(None)` when `id` is not the user's.
    /// Errors: `Unexpected`.
    async fn experience(&self, user: UserId, id: EntryId) -> Result<Option<OwnExperience>, RepositoryError>;

    /// Adds an experience typed by the user and returns its id.
    /// Errors: `Unexpected` (also when the user does not exist).
    async fn add_experience(&self, user: UserId, entry: &ExperienceEntry) -> Result<EntryId, RepositoryError>;

    /// Replaces the fields of the user's experience `id`; `Ok(false)` when
    /// `id` is not the user's (nothing changed). Errors: `Unexpected`.
    async fn update_experience(
        &self,
        user: UserId,
        id: EntryId,
        entry: &ExperienceEntry,
    ) -> Result<bool, RepositoryError>;

    /// Deletes the user's experience `id`; `Ok(false)` when `id` is not the
    /// user's (nothing deleted). Errors: `Unexpected`.
    async fn delete_experience(&self, user: UserId, id: EntryId) -> Result<bool, RepositoryError>;

    /// The user's degrees in the profile answer's order (start, then id).
    /// Errors: `Unexpected`.
    async fn degrees(&self, user: UserId) -> Result<Vec<OwnDegree>, RepositoryError>;

    /// One degree of the user; `Ok(None)` when `id` is not the user's.
    /// Errors: `Unexpected`.
    async fn degree(&self, user: UserId, id: EntryId) -> Result<Option<OwnDegree>, RepositoryError>;

    /// Adds a degree and returns its id. Errors: `Unexpected` (also when
    /// the user does not exist).
    async fn add_degree(&self, user: UserId, entry: &DegreeEntry) -> Result<EntryId, RepositoryError>;

    /// Replaces the fields of the user's degree `id`; `Ok(false)` when `id`
    /// is not the user's (nothing changed). Errors: `Unexpected`.
    async fn update_degree(&self, user: UserId, id: EntryId, entry: &DegreeEntry) -> Result<bool, RepositoryError>;

    /// Deletes the user's degree `id`; `Ok(false)` when `id` is not the
    /// user's (nothing deleted). Errors: `Unexpected`.
    async fn delete_degree(&self, user: UserId, id: EntryId) -> Result<bool, RepositoryError>;
}
