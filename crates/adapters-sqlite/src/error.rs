//! Turning sqlx errors into the ports' error type.

use credencial_ports::RepositoryError;

/// Maps a sqlx error to `Conflict` for unique violations, `Unexpected`
/// otherwise (a `database is locked` past the busy timeout included: the
/// service answers 503, never a wrong answer).
pub(crate) fn to_repository_error(e: sqlx::Error) -> RepositoryError {
    if let sqlx::Error::Database(db) = &e {
        if db.is_unique_violation() {
            return RepositoryError::Conflict(db.message().to_owned());
        }
    }
    RepositoryError::Unexpected(e.to_string())
}

/// Whether `e` is the violation of a unique constraint or index.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Whether `e` is a constraint's refusal (unique, foreign key, not null,
/// check): SQLite undoes that statement alone and the transaction stands,
/// unlike an I/O error, which may roll the whole transaction back.
pub(crate) fn is_constraint_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if !matches!(db.kind(), sqlx::error::ErrorKind::Other))
}
