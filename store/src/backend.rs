//! The storage boundary: everything the engine (and, through it, the tiers and the
//! daemon) needs of a store, as one trait. The SQLite [`Store`] implements it by
//! delegating to its own methods; a second backend (PostgreSQL, for team scopes)
//! implements the same trait, so no SQL dialect appears outside this crate. A
//! [`Backend`] opens a store's write connection and its read connections.

mod graph;
mod memories;
mod open;
mod portable;
mod records;
mod runs;
pub use graph::{Graph, Mentions};
pub use memories::{ChunkKey, Documents, Memories, Scopes, VectorCache};
pub use open::{Backend, SqliteBackend};
pub use portable::Portable;
pub use records::{Addressing, Sessions, Standing};
pub use runs::{Advice, Runs, Verdicts};

/// Declares [`MemoryStore`] as the sum of the concerns' traits and implements it for
/// every type that has them all (the list written once).
macro_rules! memory_store {
    ($($concern:ident),+) => {
        /// What the engine needs of a store: every concern's trait (`memories`, `graph`,
        /// `records`, `runs`, `portable` here), each implemented once per backend in the file that owns
        /// its tables, so nothing is forwarded by hand. Methods that change something take
        /// `&mut self` and are atomic (one transaction each); the rest read a consistent
        /// snapshot.
        pub trait MemoryStore: $($concern +)+ Send {}

        impl<T: $($concern +)+ Send> MemoryStore for T {}
    };
}

memory_store!(
    Memories,
    VectorCache,
    Documents,
    Scopes,
    Graph,
    Mentions,
    Sessions,
    Standing,
    Addressing,
    Runs,
    Advice,
    Verdicts,
    Portable
);
