//! Store errors.

use std::path::PathBuf;

/// A store result.
pub type Result<T> = std::result::Result<T, Error>;

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// SQLite failed.
    #[error("sqlite error on {path}: {source}")]
    Sqlite {
        /// The database file (or `:memory:`).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer Amber.
    #[error(
        "the store at {path} has schema version {found}, newer than this amber knows ({known}): \
         upgrade amber; the store was left untouched"
    )]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// The version on disk.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// Input that fails validation.
    #[error(transparent)]
    Invalid(#[from] amber_core::InvalidInput),
    /// PostgreSQL refused or failed a statement (the team store; `team` feature).
    #[cfg(feature = "team")]
    #[error("postgres error on {location}: {}", pg_detail(source))]
    Postgres {
        /// The server and database (the URL without its password).
        location: String,
        /// The underlying error.
        #[source]
        source: postgres::Error,
    },
    /// The PostgreSQL server cannot be reached or the connection broke; the next call
    /// connects again.
    #[error("the team store at {location} is unavailable: {detail}")]
    Unavailable {
        /// The server and database (the URL without its password).
        location: String,
        /// What failed.
        detail: String,
    },
    /// The team database was written by a newer Amber.
    #[error(
        "the team store at {location} has schema version {found}, newer than this amber knows ({known}): \
         upgrade amber; the store was left untouched"
    )]
    SchemaTooNewAt {
        /// The server and database (the URL without its password).
        location: String,
        /// The version in the database.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// A method this backend does not implement yet.
    #[error("{0}")]
    Unsupported(String),
    /// A row that does not decode (a bug or a hand-edited database).
    #[error("corrupt row in {path}: {detail}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What did not decode.
        detail: String,
    },
}

/// A PostgreSQL error with the server's message (its `Display` says only "db error").
#[cfg(feature = "team")]
fn pg_detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{}: {} ({})", db.severity(), db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                s.push_str(&format!("; {detail}"));
            }
            s
        }
        None => e.to_string(),
    }
}

impl Error {
    /// True when retrying the same call may succeed (the database was busy or locked;
    /// on PostgreSQL, a serialization failure, a deadlock, or a lock not available).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. } => {
                matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            }
            #[cfg(feature = "team")]
            Error::Postgres { source, .. } => {
                use postgres::error::SqlState;
                matches!(
                    source.code(),
                    Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE
                        || *c == SqlState::T_R_DEADLOCK_DETECTED
                        || *c == SqlState::LOCK_NOT_AVAILABLE
                )
            }
            _ => false,
        }
    }

    /// True when the store's server cannot be reached or the connection broke (the
    /// team store); a later call may succeed.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable { .. })
    }

    /// True when another connection held SQLite's write lock past the busy timeout.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            Error::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    /// True when the disk (or its quota) is full.
    pub fn is_disk_full(&self) -> bool {
        matches!(
            self,
            Error::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
                if e.code == rusqlite::ErrorCode::DiskFull
        )
    }
}
