//! Amber's engine: the store and the derived indexes behind one API.
//!
//! # Brief overview
//! The daemon and the eval harness remember and recall through [`Engine`] (the CLI and
//! the tiers never open the store), so there is one code path for everything Amber serves.
//!
//! - A write commits to SQLite first (the source of truth), then indexes: BM25 (tantivy)
//!   and chunk vectors (usearch), with vectors taken from the embedding cache in the
//!   store when the same chunk was embedded before. The two steps are also separate
//!   calls ([`EngineWriter::commit_batch`], [`Engine::index_pending`]) for a writer that
//!   acknowledges at the commit and indexes behind it.
//! - [`Engine`] is `Send + Sync` and its methods take `&self`: recalls run concurrently
//!   with each other and with writes. Writes to the store are methods of the one
//!   [`EngineWriter`] ([`Engine::writer`]; as tantivy's `IndexWriter` of its `Index`),
//!   which holds the write connection: code handed `&Engine` cannot write the store.
//! - Forgetting hides a memory from recall and keeps its content; purging deletes a
//!   forgotten memory for good.
//! - A recall runs BM25 and the vector search with the same filters and fuses the two
//!   rankings by reciprocal rank; each hit carries its per-signal evidence.
//! - On open, an index that is missing, corrupt or stale (another format, model or
//!   chunking, or counts that disagree with the store) is rebuilt from the store, with a
//!   log line saying why; an index that is merely behind is caught up. When that cannot
//!   be done (a full disk), the engine opens all the same: recall answers from what is
//!   indexed, `get` from the store, [`Status::degraded`] says what is missing, and
//!   [`Engine::index_pending`] finishes the job later. A BM25 index that can neither be
//!   opened nor rebuilt on disk is held in memory.
//!
//! ```no_run
//! use amber_core::{NewMemory, Query};
//! use amber_engine::{Engine, EngineOptions};
//! let engine = Engine::open(EngineOptions::new("/tmp/amber-data")).unwrap();
//! engine.writer().unwrap().remember(NewMemory::new("the CI cache lives in target/")).unwrap();
//! let hits = engine.recall(&Query::new("where is the build cache?")).unwrap();
//! println!("{}", hits[0].memory.content);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod engine;
mod error;
mod layout;
pub mod priority;

pub use amber_core::calibration::Calibration;
pub use amber_retrieval::{ChunkConfig, Embedder, FastEmbedder, ModelPaths, SETUP_HINT};
pub use amber_store::{GuardEntry, Hold, MoveOne, Moved, PrefixMatch, SessionRow};
pub use engine::{
    Degraded, DegradedCause, Engine, EngineOptions, EngineStats, EngineWriter, MODEL_CONFIG_META, Migration,
    NextModel, Prepared, Remembered, ScopeInfo, Status, migration_snapshot, restore,
};
pub use error::{Error, Result};
pub use layout::{default_amber_home, default_data_dir};
