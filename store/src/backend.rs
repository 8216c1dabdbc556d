//! The storage boundary: everything the engine (and, through it, the tiers and the
//! daemon) needs of a store, as one trait. The SQLite [`Store`] implements it by
//! delegating to its own methods; a second backend (PostgreSQL, for team scopes)
//! implements the same trait, so no SQL dialect appears outside this crate. A
//! [`Backend`] opens a store's write connection and its read connections.

mod graph;
mod memories;
mod open;
mod records;
mod runs;
pub use graph::{Graph, Mentions};
pub use memories::{Documents, Memories, Scopes, VectorCache};
pub use open::{Backend, SqliteBackend};
pub use records::{Addressing, Sessions, Standing};
pub use runs::{Advice, Runs};

/// What the engine needs of a store: every concern's trait (`memories`, `graph`,
/// `records`, `runs` here), each implemented once per backend in the file that owns its
/// tables, so nothing is forwarded by hand. Methods that change something take `&mut self`
/// and are atomic (one transaction each); the rest read a consistent snapshot.
pub trait MemoryStore:
    Memories
    + VectorCache
    + Documents
    + Scopes
    + Graph
    + Mentions
    + Sessions
    + Standing
    + Addressing
    + Runs
    + Advice
    + Send
{
}

impl<T> MemoryStore for T where
    T: Memories
        + VectorCache
        + Documents
        + Scopes
        + Graph
        + Mentions
        + Sessions
        + Standing
        + Addressing
        + Runs
        + Advice
        + Send
{
}
