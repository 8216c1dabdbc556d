//! Amber's store: SQLite is the source of truth.
//!
//! # Brief overview
//! - Memories are kept verbatim, keyed by a stable id (scope + content hash) and by an
//!   insertion sequence number `seq` that the derived indexes use as their key.
//! - Writing the same content into the same scope again returns the existing memory.
//! - Forgetting keeps the row with a `forgotten_at` time: reads for indexing and recall
//!   skip it, [`Store::get`] still returns it. Purging deletes a forgotten row for good.
//!   Filing the same content again after forgetting files it anew.
//! - The embedding cache maps (model id, chunk hash) to a vector, so rebuilding an index
//!   never re-embeds.
//! - The schema is versioned (`PRAGMA user_version`) and migrated forward on open; a
//!   database written by a newer Amber is refused, never rewritten.
//! - The team store on PostgreSQL (`PgBackend`) is compiled only with the `team`
//!   feature (on by default here; the binaries choose it: docs/PERFORMANCE.md).
//!
//! ```
//! use amber_core::NewMemory;
//! let mut store = amber_store::Store::open_in_memory().unwrap();
//! let (a, created) = store.insert(&NewMemory::new("hello"), 1).unwrap();
//! let (b, again) = store.insert(&NewMemory::new("hello"), 2).unwrap();
//! assert!(created && !again && a.id == b.id);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod advice;
mod backend;
mod documents;
mod error;
mod graph;
mod keys;
mod listing;
#[cfg(feature = "team")]
mod pg;
mod portable;
mod runs;
mod schema;
mod scopes;
mod sessions;
mod standing;
mod store;
mod threads;
mod trust;
mod vectors;
mod verdicts;

pub use backend::{
    Addressing, Advice, Backend, ChunkKey, Documents, Graph, Memories, MemoryStore, Mentions, Portable, Runs,
    Scopes, Sessions, SqliteBackend, Standing, VectorCache, Verdicts,
};
pub use error::{Error, Result};
pub use graph::{FactPage, KgAdded};
pub use keys::Key;
pub use listing::{DocFile, ListFilter};
#[cfg(feature = "team")]
pub use pg::PgBackend;
#[cfg(feature = "team")]
pub use pg::listen::PgListener;
pub use portable::restore;
pub use schema::SCHEMA_VERSION;
pub use scopes::{MoveOne, Moved, PrefixMatch, moved_scope};
pub use sessions::SessionRow;
pub use standing::{Refusal, StandingRow};
pub use store::{Change, Purged, Store, Vector};
pub use threads::{GuardEntry, Hold};

/// The storage boundary's traits, imported anonymously: `use amber_store::prelude::*;`
/// makes every store method callable on a [`Store`] or a `dyn` [`MemoryStore`].
pub mod prelude {
    pub use crate::backend::{
        Addressing as _, Advice as _, Documents as _, Graph as _, Memories as _, Mentions as _,
        Portable as _, Runs as _, Scopes as _, Sessions as _, Standing as _, VectorCache as _, Verdicts as _,
    };
}
