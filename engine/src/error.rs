//! Engine errors: the store's and retrieval's, plus input validation.

/// An engine result.
pub type Result<T> = std::result::Result<T, Error>;

/// What can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Caller input was refused.
    #[error(transparent)]
    Invalid(#[from] amber_core::InvalidInput),
    /// The store failed.
    #[error(transparent)]
    Store(amber_store::Error),
    /// Retrieval failed.
    #[error(transparent)]
    Retrieval(#[from] amber_retrieval::Error),
    /// A shared store (the team database) holds vectors of another embedding model than
    /// this node's: it is not served from here (a team shares one model).
    #[error(
        "the shared store's vectors are of {store}, this node embeds with {ours}: its scopes are not \
         served from this node until its [model] is the team's (docs/TEAM.md)"
    )]
    ModelMismatch {
        /// The model line the store records (`id:dim`).
        store: String,
        /// This node's.
        ours: String,
    },
    /// Purge was asked for a memory that is not forgotten: forget it first.
    #[error("the memory is not forgotten: forget it before purging it")]
    NotForgotten,
    /// `unarchive` of a memory that an invalidation supersedes.
    #[error("memory {id} is superseded by invalidation {by}: supersede or forget {by} to restore it")]
    Superseded {
        /// The memory.
        id: amber_core::MemoryId,
        /// The invalidation that retires it.
        by: amber_core::MemoryId,
    },
    /// `supersedes` names a memory that does not exist.
    #[error("supersedes: no memory has id {id}")]
    SupersedesUnknown {
        /// The id given.
        id: amber_core::MemoryId,
    },
    /// `supersedes` names a lifefact.
    #[error("supersedes: {id} is a lifefact, and lifefacts are immune to supersession (forget it instead)")]
    SupersedesLifefact {
        /// The lifefact.
        id: amber_core::MemoryId,
    },
    /// The store's writer is held by someone else ([`crate::Engine::writer`]): in the
    /// daemon, by its writer thread, which every write goes through.
    #[error("the store's writer is held elsewhere: writes go through the one writer")]
    WriterTaken,
    /// The data directory could not be prepared.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: std::path::PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl From<amber_store::Error> for Error {
    fn from(e: amber_store::Error) -> Self {
        match e {
            amber_store::Error::Invalid(i) => Error::Invalid(i),
            other => Error::Store(other),
        }
    }
}

impl Error {
    /// True when a shared store (the team database) cannot be reached: retrying later
    /// may succeed, nothing was written.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Store(s) if s.is_unavailable())
    }

    /// True when the embedding model or runtime is missing or broken.
    pub fn is_model_unavailable(&self) -> bool {
        matches!(
            self,
            Error::Retrieval(
                amber_retrieval::Error::ModelUnavailable { .. } | amber_retrieval::Error::Model(_)
            )
        )
    }

    /// True when the embedding model is away (an endpoint that does not answer), not
    /// broken: worth waiting for.
    pub fn is_model_away(&self) -> bool {
        matches!(self, Error::Retrieval(amber_retrieval::Error::EndpointUnavailable { .. }))
    }

    /// True when the error says the disk is full: SQLite's `SQLITE_FULL`, or an I/O error
    /// `ENOSPC` or `EDQUOT` anywhere in its chain (tantivy passes some on as text only).
    pub fn is_disk_full(&self) -> bool {
        if let Error::Store(s) = self
            && s.is_disk_full()
        {
            return true;
        }
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = next {
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::StorageFull
            {
                return true;
            }
            let text = e.to_string();
            if ["No space left on device", "Disk quota exceeded", "database or disk is full"]
                .iter()
                .any(|m| text.contains(m))
            {
                return true;
            }
            next = e.source();
        }
        false
    }
}
