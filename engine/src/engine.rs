//! The engine: the [`Engine`] struct, its options, the types its methods return, and the
//! helpers all of its parts share (the locks, the store's read connections, the
//! embedding cache).
//!
//! Its methods live in the child modules, one concern each:
//! - `open`: opening (loading or rebuilding the indexes), `reindex`, saving the vector
//!   index, `flush` and `status`;
//! - `write`: the write path (commit, remember, forget, purge, get) and the watermarks;
//! - `indexer`: indexing what was committed (BM25, vectors, session context);
//! - `first`: what someone waits for, indexed before the rest of a backlog;
//! - `ahead`: embedding before the commit, for a store other nodes follow;
//! - `models`: running the embedding model instances (queries and indexing);
//! - `recall`: recall (filters, vector ranking, fusion, session prior and neighbours,
//!   evidence);
//! - `docs`: the in-memory view of the live memories (time, scope, session) that the
//!   filters and the session signals read;
//! - `standing`: outcomes, supersession, the archive, and the standing's prior on
//!   ranking;
//! - `threads`: addressing (inboxes, threads, holds, the loop guard's log);
//! - `runs`: runs and rewards (a reward moves the weights of what the run used);
//! - `advice`: situations, versioned advice notes, servings and judgements, and the
//!   hybrid shortlist of situation lines for routing;
//! - `curation`, `graph`, `scopes`: similarity and links, the knowledge graph, scopes.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use amber_core::{Memory, Scope};
use amber_retrieval::fusion::DEFAULT_K;
use amber_retrieval::{Bm25Index, ChunkConfig, Embedder, VectorIndex};
use amber_store::{Backend, MemoryStore};

mod advice;
mod ahead;
mod allowed;
mod calibration;
mod curation;
mod degraded;
mod docs;
mod first;
mod follow;
mod graph;
mod health;
mod indexer;
mod instances;
mod loading;
mod migrate;
mod models;
mod open;
mod portable;
mod preferences;
pub use portable::restore;
mod recall;
mod runs;
mod scopes;
mod sources;
mod standing;
mod threads;
mod write;
mod writer;
pub use writer::EngineWriter;

use docs::Docs;
use health::Health;
pub use health::{Degraded, DegradedCause};
pub use migrate::{MODEL_CONFIG_META, Migration, NextModel, Prepared, snapshot as migration_snapshot};
pub use scopes::ScopeInfo;

use crate::{Result, default_amber_home};

/// Memories read from the store per step while rebuilding or catching up.
const SCAN_BATCH: usize = 256;
/// Idle read-only store connections kept for reuse.
const MAX_IDLE_READERS: usize = 4;

/// How the engine is set up. Every field has a default; see [`EngineOptions::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// The data directory (created 0700 if absent).
    pub data_dir: PathBuf,
    /// Where the model and runtime are installed (default: [`default_amber_home`]).
    pub amber_home: PathBuf,
    /// How long text is cut for the embedding model.
    pub chunking: ChunkConfig,
    /// The reciprocal-rank-fusion constant (default 5, see [`DEFAULT_K`]).
    pub rrf_k: f32,
    /// Weight of the BM25 ranking in fusion (default 1).
    pub bm25_weight: f32,
    /// Weight of the vector ranking in fusion (default 0.7, measured on the dev splits:
    /// see docs/EVAL.md, "Vector weight").
    pub vector_weight: f32,
    /// Weight of the exact-identifier ranking in fusion (default 1): memories that hold
    /// a code, path or identifier named in the query.
    pub exact_weight: f32,
    /// Weight of the time ranking in fusion (default 1): when the query names a time
    /// ("last Saturday", "in April", "two weeks ago") and sets no explicit time filter,
    /// the candidates inside that window, in fused order, form one more ranking. 0 turns
    /// it off.
    pub time_weight: f32,
    /// How deep each signal's ranking goes before fusion (default 100; at least 3k).
    pub candidates: usize,
    /// Threads for the embedding model (default: one per core).
    pub threads: Option<usize>,
    /// Keep the embedding cache in this SQLite file instead of the store, so several
    /// stores (fresh eval runs, benchmarks) share one cache (default: in the store).
    pub embedding_cache: Option<PathBuf>,
    /// Load a second model instance for queries (default true), so a recall does not wait
    /// for indexing, and two recalls embed their queries at once (the second on the
    /// indexing model when it is idle). False saves its memory (see
    /// docs/PERFORMANCE.md); recalls then take turns with indexing and with each other
    /// on one model.
    pub query_model: bool,
    /// Which embedding model (`[model]`: the local MiniLM by default, or an
    /// OpenAI-compatible endpoint).
    pub model: amber_core::model::ModelConfig,
    /// Weight of the graph ranking in fusion (default 0.5, measured on LoCoMo: see
    /// docs/EVAL.md), for queries with `expand: graph`.
    pub graph_weight: f32,
    /// Session neighbours (default 0.5, measured on LoCoMo: see docs/EVAL.md, "RRF k and
    /// session neighbours"): a memory filed just before or just after a candidate in the
    /// same session gains this times the candidate's fused score. An answer is often the
    /// turn after the question that names its topic. 0 turns it off.
    pub neighbour_weight: f32,
    /// Session prior (default 0.3, measured on LoCoMo and LongMemEval turns: see
    /// docs/EVAL.md, "Session prior"): a candidate filed in a session gains this times
    /// the best fused score among the candidates of its session, so of two equal matches
    /// the one in the conversation that matches best ranks first. 0 turns it off.
    pub session_weight: f32,
    /// Factor on the fused score of a memory that curation marked as a duplicate of an
    /// older one (default 0.5): it is ranked down, not removed.
    pub duplicate_factor: f32,
    /// Session context (default on, measured on LoCoMo and LongMemEval turns: see
    /// docs/EVAL.md, "Session context"): a memory filed in a session that fits in one
    /// chunk gets a second vector, of its text followed by the end of the memory filed
    /// just before it in that session (the question a reply answers); its best chunk is
    /// the better of the two. BM25 sees the memory alone. The memory itself stays
    /// verbatim; forgetting the earlier memory re-embeds the later one without it.
    pub session_context: bool,
    /// How much a memory's standing (weight times age factor) moves its fused score
    /// (default 0.5, see docs/EVAL.md "Standing"): the score is multiplied by
    /// `1 − s + s × weight × age`. 0 turns the prior off (archiving still applies).
    pub standing_strength: f32,
    /// How much a memory's filing moves its fused score (default 1, see
    /// `amber_core::filing` and docs/EVAL.md "Mixed stores"): the score is multiplied by
    /// `1 − f + f × prior(filing)`, so what the person filed outranks an equal raw
    /// capture. 0 turns it off.
    pub filing_strength: f32,
    /// The lowest age factor (default 0.75, measured on the dev splits: see
    /// docs/EVAL.md "Standing"). A memory not relied on for a while loses standing at
    /// its type's lifespan rate, down to this: with the default strength a memory
    /// however old keeps 87.5% of its score. 1 turns age off.
    pub age_floor: f32,
    /// Embed before committing (default off): a write puts its chunks' vectors in the
    /// embedding cache, then commits, so other nodes that follow a shared store (team
    /// scopes on PostgreSQL, see `EngineWriter::follow`) find them cached and embed nothing
    /// again. Costs the write the model's time; a model failure here is logged and the
    /// write goes on (whoever indexes it embeds it).
    pub embed_before_commit: bool,
    /// How much lower the CPU priority of indexing is than the caller's (a nice value
    /// added, 0 to 19; default [`crate::priority::BACKGROUND_NICE`]): the indexing model
    /// instance's threads, and the indexer thread when it calls
    /// [`crate::priority::lower_this_thread`] with [`Engine::background_nice`]. 0 keeps
    /// indexing at the caller's priority.
    pub background_nice: i32,
}

impl EngineOptions {
    /// Defaults for a data directory.
    pub fn new(data_dir: impl Into<PathBuf>) -> EngineOptions {
        EngineOptions {
            data_dir: data_dir.into(),
            amber_home: default_amber_home(),
            chunking: ChunkConfig::default(),
            rrf_k: DEFAULT_K,
            bm25_weight: 1.0,
            vector_weight: 0.7,
            exact_weight: 1.0,
            time_weight: 1.0,
            candidates: 100,
            threads: None,
            embedding_cache: None,
            query_model: true,
            model: amber_core::model::ModelConfig::default(),
            graph_weight: 0.5,
            neighbour_weight: 0.5,
            session_weight: 0.3,
            duplicate_factor: 0.5,
            session_context: true,
            standing_strength: 0.5,
            filing_strength: 1.0,
            age_floor: 0.75,
            embed_before_commit: false,
            background_nice: crate::priority::BACKGROUND_NICE,
        }
    }
}

/// What a `remember` did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Remembered {
    /// The stored memory.
    pub memory: Memory,
    /// False when the same content was already in the same scope (and not forgotten:
    /// filing forgotten content again files it anew, see [`EngineWriter::commit_batch`]).
    pub created: bool,
}

/// Work counters since the engine was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct EngineStats {
    /// Chunks sent to the model while indexing (cache misses).
    pub chunks_embedded: u64,
    /// Chunks whose vector came from the cache.
    pub chunks_from_cache: u64,
    /// Queries sent to the model.
    pub queries_embedded: u64,
    /// Queries whose vector was the one of the same text asked a moment before (the
    /// last 256 questions are kept).
    pub queries_from_recent: u64,
    /// Memories indexed ahead of a backlog because someone waited for them (the
    /// person's and the hooks' writes, a client's own files).
    pub indexed_first: u64,
    /// Embedding-cache writes given up because the store's write lock stayed taken past
    /// the busy timeout (the vectors were indexed, not cached).
    pub cache_writes_skipped: u64,
    /// Seconds spent in the model.
    pub embed_seconds: f64,
}

/// A snapshot of the engine's state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    /// The data directory.
    pub data_dir: PathBuf,
    /// Live memories in the store (not forgotten).
    pub memories: u64,
    /// Forgotten memories still in the store (not purged).
    pub forgotten: u64,
    /// Live raw captures among `memories` (type `event` filed in a session or by a
    /// capture): evidence for `recall`, never briefed nor interjected.
    pub raw_captures: u64,
    /// Distinct scopes.
    pub scopes: usize,
    /// The embedding model id.
    pub model: String,
    /// Its dimension.
    pub dim: usize,
    /// The chunking in force.
    pub chunking: String,
    /// Documents in the BM25 index.
    pub bm25_docs: u64,
    /// Vectors (chunks) in the vector index.
    pub vectors: usize,
    /// Vectors in the embedding cache for this model.
    pub cached_vectors: u64,
    /// The highest seq committed to the store.
    pub committed_through: u64,
    /// The seq through which both indexes hold every live memory.
    pub indexed_through: u64,
    /// True when both indexes cover every live memory in the store.
    pub indexes_complete: bool,
    /// What happened to the indexes when the engine opened (rebuilds and why).
    pub index_events: Vec<String>,
    /// What is degraded now (empty when all is well): indexing that keeps failing (a
    /// full disk, for one), a vector index that could not be saved, a BM25 index held in
    /// memory. Each is retried, and leaves the list when it succeeds.
    pub degraded: Vec<Degraded>,
    /// Work counters since open.
    pub stats: EngineStats,
}

/// Embedding model behind a lock: one model run at a time per instance.
type SharedEmbedder = Arc<Mutex<Box<dyn Embedder>>>;

/// The store plus its derived indexes.
///
/// `Send + Sync`, and every method takes `&self`: share one engine between threads
/// (`Arc<Engine>`).
///
/// - Reads ([`Engine::recall`], [`Engine::get`], [`Engine::status`]) run concurrently with
///   each other and with writes: recall holds no engine-wide lock while it embeds the
///   query or searches. SQLite reads go through a small pool of read-only connections
///   (WAL), BM25 searches see its last commit, and the vector index is behind a
///   read-write lock that writers take only to insert or remove already computed vectors.
/// - Every change to the store is a method of the one [`EngineWriter`] ([`Engine::writer`]),
///   which holds the store's write connection: code that holds `&Engine` reads.
///   [`EngineWriter::commit_batch`] holds only that connection, for one transaction, so
///   it never waits behind indexing; indexing writes the embedding cache on a connection
///   of its own.
/// - Index writers ([`Engine::index_pending`], [`EngineWriter::forget`], [`EngineWriter::reindex`],
///   [`Engine::flush`]) serialize on an internal lock; [`EngineWriter::purge`] saves the
///   vector index if it changed (under that lock), then deletes a row on the write
///   connection.
/// - [`Engine::open`] loads the model twice, one instance for indexing and one (single
///   thread) for queries, so a recall does not wait behind indexing; a query takes the
///   first free instance (the query one, else the indexing one when idle), so two
///   recalls embed at once. [`Engine::open_with`] shares its one embedder: a recall may
///   then wait for the text being embedded (one text per model run).
pub struct Engine {
    opts: EngineOptions,
    /// The embedding model in force and its instances: swapped whole when a migration
    /// to another model completes ([`EngineWriter::switch_model`]).
    models: RwLock<Arc<models::Models>>,
    /// Opens the store's connections (the storage boundary: `amber_store::Backend`).
    backend: Arc<dyn Backend>,
    /// The one connection that writes the store, while no [`EngineWriter`] holds it.
    writer: Mutex<Option<Box<dyn MemoryStore>>>,
    /// Idle read-only connections to the store.
    readers: Mutex<Vec<Box<dyn MemoryStore>>>,
    /// The embedding cache's own write connection, so that indexing never borrows the
    /// writer's: to a separate file when configured (opened with the engine), else a
    /// second connection to the store (opened when first written).
    cache: Mutex<Option<Box<dyn MemoryStore>>>,
    /// The embedding cache is a file of its own (else the store holds it).
    cache_separate: bool,
    bm25: Bm25Index,
    vectors: RwLock<VectorIndex>,
    /// Which instance a query waits for when none is free (round robin).
    query_turn: AtomicUsize,
    /// When a recall last ran (ms on the models module's clock), shared by engines that share
    /// the model instances: indexing leaves the query instance alone while reads come.
    last_read: Arc<AtomicU64>,
    docs: RwLock<Docs>,
    /// Held by whatever changes the indexes.
    indexing: Mutex<()>,
    /// What is indexed before the rest of a backlog ([`Engine::index_first`]).
    first: Mutex<first::First>,
    /// Set when the daemon stops: a pass ends after its current slice.
    stopping: AtomicBool,
    vectors_unsaved: AtomicBool,
    /// The highest seq committed to the store.
    committed: AtomicU64,
    /// Bytes of content committed through this engine since it opened, and of those the
    /// indexes cover: their difference is how much indexing is behind in text, which a
    /// count of memories does not say (one memory may be a megabyte).
    committed_bytes: AtomicU64,
    indexed_bytes: AtomicU64,
    /// Every live memory up to this seq, whoever committed it, is in `docs` (a shared
    /// store has other writers: [`EngineWriter::follow`]).
    followed: AtomicU64,
    /// A shared store's change log is applied through this change ([`EngineWriter::follow`]).
    changes_followed: AtomicU64,
    /// When [`EngineWriter::follow`] last reloaded the standings and the graph's names.
    followed_at: Mutex<std::time::Instant>,
    /// Every live memory up to this seq is in BM25 (committed there).
    bm25_mark: AtomicU64,
    /// BM25 disagrees with the store and its rebuild at open failed: the next
    /// [`Engine::index_pending`] rebuilds it.
    bm25_rebuild: AtomicBool,
    /// Every live memory up to this seq is in the vector index.
    vector_mark: AtomicU64,
    stats: Mutex<EngineStats>,
    events: Vec<String>,
    /// What is degraded, and since when.
    health: Health,
    /// Seqs of memories marked as duplicates of older ones (ranked down by recall).
    demoted: RwLock<HashSet<u64>>,
    /// Standings that differ from a new memory's (weights moved by outcomes, archived,
    /// relied on), by seq.
    standing: RwLock<standing::Standings>,
    /// The knowledge graph's entity names, by scope.
    names: RwLock<HashMap<Scope, amber_retrieval::NameMatcher>>,
}

// The daemon shares one engine between threads.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Engine>();
};

/// Locks a mutex, going on after a panic in another holder: every guarded value stays
/// consistent (a SQLite transaction rolls back when dropped; the indexes are derived).
fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Engine {
    /// Runs `f` on an idle read-only connection (opening one when none is idle).
    fn read<R>(&self, f: impl FnOnce(&dyn MemoryStore) -> amber_store::Result<R>) -> Result<R> {
        let idle = lock(&self.readers).pop();
        let conn = match idle {
            Some(c) => c,
            None => self.backend.open_reader()?,
        };
        let out = f(conn.as_ref());
        let mut pool = lock(&self.readers);
        if pool.len() < MAX_IDLE_READERS {
            pool.push(conn);
        }
        Ok(out?)
    }

    /// Reads the embedding cache.
    fn cache_read<R>(&self, f: impl FnOnce(&dyn MemoryStore) -> amber_store::Result<R>) -> Result<R> {
        if !self.cache_separate {
            return self.read(f);
        }
        self.cache_write(|s| f(s))
    }

    /// Writes the embedding cache, on its own connection (never the writer's).
    fn cache_write<R>(&self, f: impl FnOnce(&mut dyn MemoryStore) -> amber_store::Result<R>) -> Result<R> {
        let mut cache = lock(&self.cache);
        let conn = match cache.as_mut() {
            Some(c) => c,
            None => cache.insert(self.backend.open_writer()?),
        };
        Ok(f(conn.as_mut())?)
    }
}
