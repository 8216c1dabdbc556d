//! The engine.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};
use std::time::Instant;

use amber_core::{
    Evidence, Expand, Hit, Memory, MemoryId, Millis, NewMemory, Query, Scope, SearchMode, now_millis,
};
use amber_retrieval::fusion::{DEFAULT_K, reciprocal_rank_fusion};
use amber_retrieval::{
    Bm25Doc, Bm25Filter, Bm25Index, CONTEXT_CHUNK, ChunkConfig, Embedder, FastEmbedder, ModelPaths,
    VectorIndex, chunk_key, split_key, time_window,
};
use amber_store::{Purged, Store};
use sha2::{Digest, Sha256};

mod curation;
mod graph;
mod scopes;

pub use scopes::ScopeInfo;

use crate::layout::{bm25_dir, create_private_dir, db_path, index_dir, vectors_path, vectors_state_path};
use crate::{Error, Result, default_amber_home};

/// Memories read from the store per step while rebuilding or catching up.
const SCAN_BATCH: usize = 256;
/// Texts embedded per embedding-cache write while indexing. The model runs one text at a
/// time (see `amber_retrieval::VECTOR_ID`) and its lock is taken per text, so a recall
/// that shares the model waits at most for one text.
const EMBED_BATCH: usize = 16;
/// Up to this many memories pass a filter, the vector search scans their chunks exactly
/// instead of walking the HNSW graph (exact and fast at this size).
const EXACT_SCAN_MAX_MEMORIES: usize = 5_000;
/// Chunks fetched from the HNSW graph per memory wanted, so that enough distinct
/// memories survive aggregation.
const HNSW_CHUNKS_PER_MEMORY: usize = 4;
/// Bumped when the vector index layout changes.
const VECTOR_FORMAT: u32 = 1;
/// Idle read-only store connections kept for reuse.
const MAX_IDLE_READERS: usize = 4;
/// ONNX Runtime threads of the query embedder: a query is one short text.
const QUERY_THREADS: usize = 1;

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
            graph_weight: 0.5,
            neighbour_weight: 0.5,
            session_weight: 0.3,
            duplicate_factor: 0.5,
            session_context: true,
        }
    }
}

/// What a `remember` did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Remembered {
    /// The stored memory.
    pub memory: Memory,
    /// False when the same content was already in the same scope (and not forgotten:
    /// filing forgotten content again files it anew, see [`Engine::commit_batch`]).
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
    /// Work counters since open.
    pub stats: EngineStats,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
struct VectorState {
    format: u32,
    model: String,
    dim: usize,
    chunking: String,
    watermark: u64,
    count: usize,
}

/// Embedding model behind a lock: one model run at a time per instance.
type SharedEmbedder = Arc<Mutex<Box<dyn Embedder>>>;

/// Vectors of some of a list of texts, each with the text's index in the list.
type Embedded = Vec<(usize, Vec<f32>)>;

/// Time, scope and session of the live memories, for the filters and the neighbour
/// ranking.
#[derive(Default)]
struct Docs {
    /// seq -> time (event time, else filing time).
    time: HashMap<u64, Millis>,
    /// scope -> seqs filed in it (not in its sub-scopes).
    scopes: BTreeMap<Scope, Vec<u64>>,
    /// (scope, session id) -> its index in `session_seqs`.
    session_ids: HashMap<(Scope, String), u32>,
    /// Per session: the seqs filed in it, in filing order.
    session_seqs: Vec<Vec<u64>>,
    /// seq -> its session's index, for memories filed in a session.
    session_of: HashMap<u64, u32>,
}

impl Docs {
    fn load(store: &Store) -> Result<Docs> {
        let mut docs = Docs::default();
        let mut after = 0;
        loop {
            let batch = store.scan_keys(after, 10_000)?;
            let Some(last) = batch.last() else { break };
            after = last.seq;
            for k in batch {
                docs.add(k.seq, k.scope, k.time, k.session_id);
            }
        }
        Ok(docs)
    }

    /// Notes a memory; seqs come in increasing order (filing order).
    fn add(&mut self, seq: u64, scope: Scope, time: Millis, session_id: Option<String>) {
        if let Some(session) = session_id {
            let next = u32::try_from(self.session_seqs.len()).unwrap_or(u32::MAX);
            let i = *self.session_ids.entry((scope.clone(), session)).or_insert(next);
            if i == next {
                self.session_seqs.push(Vec::new());
            }
            if let Some(seqs) = self.session_seqs.get_mut(i as usize) {
                seqs.push(seq);
                self.session_of.insert(seq, i);
            }
        }
        self.scopes.entry(scope).or_default().push(seq);
        self.time.insert(seq, time);
    }

    fn remove(&mut self, seq: u64, scope: &Scope) {
        self.time.remove(&seq);
        if let Some(seqs) = self.scopes.get_mut(scope) {
            seqs.retain(|s| *s != seq);
            if seqs.is_empty() {
                self.scopes.remove(scope);
            }
        }
        // An emptied session keeps its (small) slot until the next load.
        if let Some(i) = self.session_of.remove(&seq)
            && let Some(seqs) = self.session_seqs.get_mut(i as usize)
        {
            seqs.retain(|s| *s != seq);
        }
    }

    /// The first live memory filed after `seq` in this session of this scope.
    fn next_in_session(&self, scope: &Scope, session: &str, seq: u64) -> Option<u64> {
        let i = *self.session_ids.get(&(scope.clone(), session.to_string()))?;
        let seqs = self.session_seqs.get(i as usize)?;
        seqs.get(seqs.partition_point(|s| *s <= seq)).copied()
    }

    /// The live memories filed just before and just after `seq` in its session (same
    /// scope), if it was filed in one.
    fn neighbours(&self, seq: u64) -> [Option<u64>; 2] {
        let Some(seqs) = self.session_of.get(&seq).and_then(|&i| self.session_seqs.get(i as usize)) else {
            return [None, None];
        };
        match seqs.binary_search(&seq) {
            Ok(i) => [i.checked_sub(1).map(|j| seqs[j]), seqs.get(i + 1).copied()],
            Err(_) => [None, None],
        }
    }
}

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
/// - [`Engine::commit_batch`] holds only the SQLite write connection, for one
///   transaction, so it never waits behind indexing (the embedding cache, when in the
///   store, shares that connection for short transactions).
/// - Index writers ([`Engine::index_pending`], [`Engine::forget`], [`Engine::reindex`],
///   [`Engine::flush`]) serialize on an internal lock; [`Engine::purge`] saves the
///   vector index if it changed (under that lock), then deletes a row on the write
///   connection.
/// - [`Engine::open`] loads the model twice, one instance for indexing and one (single
///   thread) for queries, so a recall does not wait behind indexing; a query takes the
///   first free instance (the query one, else the indexing one when idle), so two
///   recalls embed at once. [`Engine::open_with`] shares its one embedder: a recall may
///   then wait for the text being embedded (one text per model run).
pub struct Engine {
    opts: EngineOptions,
    model_id: String,
    dim: usize,
    chunking: ChunkConfig,
    db: PathBuf,
    /// The one connection that writes the store.
    writer: Mutex<Store>,
    /// Idle read-only connections to the store.
    readers: Mutex<Vec<Store>>,
    /// A separate embedding cache, when configured; else the store holds it.
    cache: Option<Mutex<Store>>,
    bm25: Bm25Index,
    vectors: RwLock<VectorIndex>,
    index_embedder: SharedEmbedder,
    /// The instances a query may use, in order of preference: the query model (if
    /// loaded), then the indexing model. A query takes the first one free.
    query_embedders: Vec<SharedEmbedder>,
    /// Which instance a query waits for when none is free (round robin).
    query_turn: AtomicUsize,
    docs: RwLock<Docs>,
    /// Held by whatever changes the indexes.
    indexing: Mutex<()>,
    vectors_unsaved: AtomicBool,
    /// The highest seq committed to the store.
    committed: AtomicU64,
    /// Every live memory up to this seq is in BM25 (committed there).
    bm25_mark: AtomicU64,
    /// Every live memory up to this seq is in the vector index.
    vector_mark: AtomicU64,
    stats: Mutex<EngineStats>,
    events: Vec<String>,
    /// Seqs of memories marked as duplicates of older ones (ranked down by recall).
    demoted: RwLock<HashSet<u64>>,
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

fn chunk_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Engine {
    /// Opens the engine with the local all-MiniLM-L6-v2 model installed by
    /// `scripts/setup.sh` under `opts.amber_home`: one instance for indexing
    /// (`opts.threads`), one single-threaded for queries (unless `opts.query_model` is
    /// false), which also use the indexing instance when it is idle.
    pub fn open(opts: EngineOptions) -> Result<Engine> {
        let paths = ModelPaths::under(&opts.amber_home);
        if !opts.query_model {
            let only = FastEmbedder::load(&paths, opts.chunking, opts.threads)?;
            return Self::open_with(opts, Box::new(only));
        }
        // Two instances may run at once: neither spins while idle.
        let indexer = FastEmbedder::load_tuned(&paths, opts.chunking, opts.threads, false)?;
        let querier = FastEmbedder::load_tuned(&paths, opts.chunking, Some(QUERY_THREADS), false)?;
        let indexer: SharedEmbedder = Arc::new(Mutex::new(Box::new(indexer)));
        // A query runs on the query model, or on the indexing model when that one is
        // idle: two queries at once use both cores.
        Self::start(opts, indexer.clone(), vec![Arc::new(Mutex::new(Box::new(querier))), indexer])
    }

    /// Opens the engine with a given embedder, used both to index and to embed queries.
    pub fn open_with(opts: EngineOptions, embedder: Box<dyn Embedder>) -> Result<Engine> {
        let shared = Arc::new(Mutex::new(embedder));
        Self::start(opts, shared.clone(), vec![shared])
    }

    fn start(
        opts: EngineOptions,
        index_embedder: SharedEmbedder,
        query_embedders: Vec<SharedEmbedder>,
    ) -> Result<Engine> {
        let dir = opts.data_dir.clone();
        let io = |source| crate::Error::DataDir { path: dir.clone(), source };
        create_private_dir(&dir).map_err(io)?;
        create_private_dir(&index_dir(&dir)).map_err(io)?;
        let db = db_path(&dir);
        let mut store = Store::open(&db)?;
        let cache = match &opts.embedding_cache {
            Some(path) => {
                if let Some(parent) = path.parent() {
                    create_private_dir(parent).map_err(io)?;
                }
                Some(Mutex::new(Store::open(path)?))
            }
            None => None,
        };
        let (model_id, dim, chunking) = {
            let e = lock(&index_embedder);
            (e.model_id().to_string(), e.dim(), e.chunk_config())
        };

        let mut events = Vec::new();
        let recorded = store.meta("embedding_model")?;
        let model_line = format!("{model_id}:{dim}");
        if recorded.as_deref() != Some(model_line.as_str()) {
            if let Some(old) = recorded {
                let e =
                    format!("embedding model changed from {old} to {model_line}: vectors will be recomputed");
                tracing::warn!("{e}");
                events.push(e);
            }
            store.set_meta("embedding_model", &model_line)?;
        }

        let (bm25, bm25_fresh) = open_bm25(&dir, &mut events)?;
        let wanted = VectorState {
            format: VECTOR_FORMAT,
            model: model_id.clone(),
            dim,
            chunking: vector_layout(&chunking, opts.session_context),
            watermark: 0,
            count: 0,
        };
        let (vectors, state) = open_vectors(&dir, &wanted, &mut events)?;
        let committed = store.max_seq()?;
        let docs = Docs::load(&store)?;
        let demoted = store.duplicate_seqs()?.into_iter().collect();
        let names = graph::load_names(&store)?;
        let mut engine = Engine {
            opts,
            model_id,
            dim,
            chunking,
            db,
            writer: Mutex::new(store),
            readers: Mutex::new(Vec::new()),
            cache,
            bm25,
            vectors: RwLock::new(vectors),
            index_embedder,
            query_embedders,
            query_turn: AtomicUsize::new(0),
            docs: RwLock::new(docs),
            indexing: Mutex::new(()),
            vectors_unsaved: AtomicBool::new(false),
            committed: AtomicU64::new(committed),
            bm25_mark: AtomicU64::new(0),
            vector_mark: AtomicU64::new(state.map(|s| s.watermark).unwrap_or(0)),
            stats: Mutex::new(EngineStats::default()),
            events,
            demoted: RwLock::new(demoted),
            names: RwLock::new(names),
        };
        engine.check_bm25(bm25_fresh)?;
        engine.drop_forgotten_vectors()?;
        if engine.vector_mark.load(SeqCst) < committed {
            let started = Instant::now();
            let n = engine.catch_up_vectors(committed)?;
            tracing::info!(memories = n, secs = started.elapsed().as_secs_f64(), "vector index caught up");
        }
        if engine.vectors_unsaved.load(SeqCst) {
            engine.save_vectors()?;
        }
        Ok(engine)
    }

    /// At open: a BM25 index whose document count disagrees with the store up to its
    /// watermark is rebuilt (after dropping forgotten memories a crash may have left in
    /// it); one that is behind is caught up.
    fn check_bm25(&mut self, fresh: bool) -> Result<()> {
        let committed = self.committed_through();
        let mark = self.bm25.watermark().unwrap_or(0);
        let expected = self.read(|s| s.count_through(mark))?;
        if !fresh && self.bm25.num_docs() != expected {
            // A forget interrupted between the store and the index leaves its memory here.
            let forgotten = self.read(|s| s.forgotten_seqs())?;
            if !forgotten.is_empty() {
                let before = self.bm25.num_docs();
                forgotten.iter().for_each(|seq| self.bm25.delete(*seq));
                self.bm25.commit(mark)?;
                let removed = before - self.bm25.num_docs();
                if removed > 0 {
                    let e = format!("removed {removed} forgotten memories from the bm25 index");
                    tracing::warn!("{e}");
                    self.events.push(e);
                }
            }
        }
        if !fresh && self.bm25.num_docs() != expected {
            let e = format!(
                "bm25 index holds {} documents but the store has {expected} up to seq {mark}: rebuilding it",
                self.bm25.num_docs()
            );
            tracing::warn!("{e}");
            self.events.push(e);
            self.bm25.clear()?;
            self.fill_bm25(0, committed)?;
        } else {
            self.bm25_mark.store(mark, SeqCst);
            if mark < committed {
                self.fill_bm25(mark, committed)?;
            }
        }
        Ok(())
    }

    /// At open: removes the vectors of forgotten memories that a forget interrupted
    /// between the store and the index left behind.
    fn drop_forgotten_vectors(&mut self) -> Result<()> {
        let forgotten = self.read(|s| s.forgotten_seqs())?;
        let mut removed = 0;
        {
            let mut vectors = write(&self.vectors);
            for seq in forgotten {
                removed += vectors.remove_memory(seq)?;
            }
        }
        if removed > 0 {
            let successors = self.successors_of_forgotten()?;
            self.refresh_vector_context(&successors)?;
            let e = format!("removed {removed} vectors of forgotten memories from the vector index");
            tracing::warn!("{e}");
            self.events.push(e);
            self.vectors_unsaved.store(true, SeqCst);
        }
        Ok(())
    }

    /// Runs `f` on an idle read-only connection (opening one when none is idle).
    fn read<R>(&self, f: impl FnOnce(&Store) -> amber_store::Result<R>) -> Result<R> {
        let idle = lock(&self.readers).pop();
        let conn = match idle {
            Some(c) => c,
            None => Store::open_reader(&self.db)?,
        };
        let out = f(&conn);
        let mut pool = lock(&self.readers);
        if pool.len() < MAX_IDLE_READERS {
            pool.push(conn);
        }
        Ok(out?)
    }

    /// Reads the embedding cache.
    fn cache_read<R>(&self, f: impl FnOnce(&Store) -> amber_store::Result<R>) -> Result<R> {
        match &self.cache {
            Some(cache) => Ok(f(&lock(cache))?),
            None => self.read(f),
        }
    }

    /// Writes the embedding cache.
    fn cache_write(&self, f: impl FnOnce(&mut Store) -> amber_store::Result<()>) -> Result<()> {
        match &self.cache {
            Some(cache) => Ok(f(&mut lock(cache))?),
            None => Ok(f(&mut lock(&self.writer))?),
        }
    }

    /// Adds the live memories in `(after, through]` to BM25 and commits with watermark
    /// `through`; on failure nothing since the last commit is kept. The caller holds the
    /// indexing lock (or is opening).
    fn fill_bm25(&self, after: u64, through: u64) -> Result<usize> {
        let out = self.try_fill_bm25(after, through);
        if out.is_err()
            && let Err(e) = self.bm25.rollback()
        {
            tracing::warn!(cause = %e, "could not roll back the bm25 index");
        }
        out
    }

    fn try_fill_bm25(&self, after: u64, through: u64) -> Result<usize> {
        let started = Instant::now();
        let mut cursor = after;
        let mut n = 0usize;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            for m in &batch {
                self.bm25.add(&Bm25Doc {
                    seq: m.seq,
                    scope: &m.scope,
                    time: m.time(),
                    content: &m.content,
                })?;
            }
            n += batch.len();
        }
        self.bm25.commit(through)?;
        self.bm25_mark.store(through, SeqCst);
        tracing::debug!(memories = n, secs = started.elapsed().as_secs_f64(), "bm25 index caught up");
        Ok(n)
    }

    /// Embeds the live memories in `(vector watermark, through]` batch by batch, adding
    /// each batch's vectors under a short write lock. The caller holds the indexing lock
    /// (or is opening).
    fn catch_up_vectors(&self, through: u64) -> Result<usize> {
        let mut cursor = self.vector_mark.load(SeqCst);
        let mut n = 0usize;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            let vectors = self.embed_memories(&batch)?;
            {
                let mut index = write(&self.vectors);
                for (key, v) in &vectors {
                    index.add(*key, v)?;
                }
            }
            self.vectors_unsaved.store(true, SeqCst);
            self.vector_mark.store(cursor, SeqCst);
            n += batch.len();
        }
        if self.vector_mark.swap(through, SeqCst) != through {
            self.vectors_unsaved.store(true, SeqCst);
        }
        Ok(n)
    }

    /// Re-embeds live memories whose session context changed (the memory before them
    /// was forgotten): their vectors are replaced by those of their current context
    /// (from the cache or the model). Only those already in the vector index; later ones
    /// get their context when they are indexed. The caller holds the indexing lock (or
    /// is opening).
    fn refresh_vector_context(&self, seqs: &[u64]) -> Result<()> {
        let mark = self.vector_mark.load(SeqCst);
        let seqs: Vec<u64> = seqs.iter().copied().filter(|s| *s <= mark).collect();
        if !self.opts.session_context || seqs.is_empty() {
            return Ok(());
        }
        let memories = self.read(|s| s.get_by_seqs(&seqs))?;
        let vectors = self.embed_memories(&memories)?;
        let mut index = write(&self.vectors);
        for m in &memories {
            index.remove_memory(m.seq)?;
        }
        for (key, v) in &vectors {
            index.add(*key, v)?;
        }
        self.vectors_unsaved.store(true, SeqCst);
        Ok(())
    }

    /// The live memories that follow a forgotten one in its session: their session
    /// context may still hold its text if a forget was interrupted.
    fn successors_of_forgotten(&self) -> Result<Vec<u64>> {
        if !self.opts.session_context {
            return Ok(Vec::new());
        }
        let forgotten = self.read(|s| s.forgotten_session_keys())?;
        let docs = read(&self.docs);
        let mut out: Vec<u64> = forgotten
            .iter()
            .filter_map(|k| docs.next_in_session(&k.scope, k.session_id.as_deref()?, k.seq))
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The session context of each of `memories` that has one: the end of the live
    /// memory filed just before it in its session (its last chunk, at most one model
    /// window). Empty when session context is off.
    fn contexts(&self, memories: &[Memory]) -> Result<HashMap<u64, String>> {
        if !self.opts.session_context {
            return Ok(HashMap::new());
        }
        let before: Vec<(u64, u64)> = {
            let docs = read(&self.docs);
            memories.iter().filter_map(|m| docs.neighbours(m.seq)[0].map(|p| (m.seq, p))).collect()
        };
        if before.is_empty() {
            return Ok(HashMap::new());
        }
        let batch: HashMap<u64, &Memory> = memories.iter().map(|m| (m.seq, m)).collect();
        let missing: Vec<u64> = before.iter().map(|x| x.1).filter(|p| !batch.contains_key(p)).collect();
        let fetched: HashMap<u64, Memory> = if missing.is_empty() {
            HashMap::new()
        } else {
            self.read(|s| s.get_by_seqs(&missing))?.into_iter().map(|m| (m.seq, m)).collect()
        };
        let embedder = lock(&self.index_embedder);
        let mut out = HashMap::with_capacity(before.len());
        for (seq, p) in before {
            let Some(prev) = batch.get(&p).copied().or_else(|| fetched.get(&p)) else { continue };
            let tail = embedder.chunk(&prev.content).last().map_or(0, |span| span.start);
            out.insert(seq, prev.content[tail..].to_string());
        }
        Ok(out)
    }

    /// Chunks the memories and gets each chunk's vector, from the cache or the model
    /// (misses only, cached afterwards), with the session context vector of those that
    /// have one: (vector-index key, vector).
    fn embed_memories(&self, memories: &[Memory]) -> Result<Vec<(u64, Vec<f32>)>> {
        let contexts = self.contexts(memories)?;
        let spans: Vec<Vec<std::ops::Range<usize>>> = {
            let embedder = lock(&self.index_embedder);
            memories.iter().map(|m| embedder.chunk(&m.content)).collect()
        };
        // A memory of one chunk with a session context gets a second vector: its text
        // followed by the context (the model truncates the context, never the memory).
        let with_context: Vec<(u64, String)> = memories
            .iter()
            .zip(&spans)
            .filter(|(_, spans)| spans.len() == 1)
            .filter_map(|(m, _)| contexts.get(&m.seq).map(|c| (m.seq, format!("{}\n{c}", m.content))))
            .collect();
        let with_context: HashMap<u64, &str> =
            with_context.iter().map(|(seq, t)| (*seq, t.as_str())).collect();
        // (seq, chunk index, chunk text, hash)
        let mut chunks: Vec<(u64, usize, &str, [u8; 32])> = Vec::new();
        for (m, spans) in memories.iter().zip(spans) {
            for (i, span) in spans.into_iter().take(amber_retrieval::MAX_CHUNKS_PER_MEMORY).enumerate() {
                let text = &m.content[span];
                chunks.push((m.seq, i, text, chunk_hash(text)));
            }
            if let Some(text) = with_context.get(&m.seq) {
                chunks.push((m.seq, CONTEXT_CHUNK, text, chunk_hash(text)));
            }
        }
        let hashes: Vec<[u8; 32]> = chunks.iter().map(|c| c.3).collect();
        let mut cached = self.cache_read(|s| s.cached_vectors(&self.model_id, &hashes))?;
        let mut missing: Vec<(&str, [u8; 32])> = Vec::new();
        let mut seen = HashSet::new();
        for c in &chunks {
            if !cached.contains_key(&c.3) && seen.insert(c.3) {
                missing.push((c.2, c.3));
            }
        }
        lock(&self.stats).chunks_from_cache += (chunks.len() - missing.len()) as u64;
        for group in missing.chunks(EMBED_BATCH) {
            let t0 = Instant::now();
            let texts: Vec<&str> = group.iter().map(|(t, _)| *t).collect();
            let vecs = self.embed_texts(&texts)?;
            if vecs.len() != group.len() {
                return Err(amber_retrieval::Error::Model(format!(
                    "the model returned {} vectors for {} texts",
                    vecs.len(),
                    group.len()
                ))
                .into());
            }
            {
                let mut stats = lock(&self.stats);
                stats.embed_seconds += t0.elapsed().as_secs_f64();
                stats.chunks_embedded += group.len() as u64;
            }
            let rows: Vec<([u8; 32], &[f32])> =
                group.iter().zip(&vecs).map(|((_, h), v)| (*h, v.as_slice())).collect();
            self.cache_write(|s| s.put_vectors(&self.model_id, &rows))?;
            for ((_, h), v) in group.iter().zip(vecs) {
                cached.insert(*h, v);
            }
        }
        Ok(chunks
            .iter()
            .filter_map(|(seq, i, _, h)| cached.get(h).map(|v| (chunk_key(*seq, *i), v.clone())))
            .collect())
    }

    /// Embeds texts for indexing, one per model run, taking each model's lock per text
    /// (a query waits at most for one text). With a query model loaded, both instances
    /// work through the texts at once, one thread each, so indexing uses both cores even
    /// for short texts (one model run of a short text barely uses a second thread).
    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let models = &self.query_embedders;
        if models.len() < 2 || texts.len() < 2 {
            let mut out = Vec::with_capacity(texts.len());
            for text in texts {
                out.extend(lock(&self.index_embedder).embed(&[*text])?);
            }
            return Ok(out);
        }
        let next = AtomicUsize::new(0);
        let work = |model: &SharedEmbedder| -> Result<Embedded> {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(text) = texts.get(i) else { return Ok(done) };
                let v = lock(model).embed(&[*text])?.pop();
                done.extend(v.map(|v| (i, v)));
            }
        };
        let parts: Vec<Result<Embedded>> = std::thread::scope(|s| {
            let helpers: Vec<_> = models[1..].iter().map(|m| s.spawn(|| work(m))).collect();
            let mut parts = vec![work(&models[0])];
            for h in helpers {
                parts.push(h.join().unwrap_or_else(|_| {
                    Err(amber_retrieval::Error::Model("an embedding thread panicked".into()).into())
                }));
            }
            parts
        });
        let mut out: Embedded = Vec::with_capacity(texts.len());
        for part in parts {
            out.extend(part?);
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out.into_iter().map(|(_, v)| v).collect())
    }

    /// Writes the vector index and its state file. The caller holds the indexing lock
    /// (or is opening).
    fn save_vectors(&self) -> Result<()> {
        let dir = &self.opts.data_dir;
        let count = {
            let vectors = read(&self.vectors);
            vectors.save(&vectors_path(dir))?;
            vectors.len()
        };
        let state = VectorState {
            format: VECTOR_FORMAT,
            model: self.model_id.clone(),
            dim: self.dim,
            chunking: vector_layout(&self.chunking, self.opts.session_context),
            watermark: self.vector_mark.load(SeqCst),
            count,
        };
        let path = vectors_state_path(dir);
        let tmp = path.with_extension("json.tmp");
        let io = |source| crate::Error::DataDir { path: path.clone(), source };
        std::fs::write(&tmp, serde_json::to_vec_pretty(&state).unwrap_or_default()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        self.vectors_unsaved.store(false, SeqCst);
        Ok(())
    }

    /// Commits memories to the store in one transaction (all or nothing): durable when
    /// this returns. Does not index them: [`Engine::index_pending`] does, and until then
    /// recall does not find them (get does).
    ///
    /// Content already filed in the same scope returns the existing memory with
    /// `created: false`. Content identical to a *forgotten* memory is filed anew: it
    /// replaces the forgotten one (same id, a new `seq` and `created_at`, this write's
    /// type, source and metadata, no longer forgotten), is indexed like any new memory
    /// and comes back with `created: true`.
    pub fn commit_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let mut store = lock(&self.writer);
        let stored = store.insert_batch(&memories, now_millis())?;
        // Noted while the write connection is held, so a forget (which needs it) of one
        // of these memories cannot slip in before it.
        let mut max = None;
        {
            let mut docs = write(&self.docs);
            for (m, created) in &stored {
                if *created {
                    docs.add(m.seq, m.scope.clone(), m.time(), m.session_id.clone());
                    max = max.max(Some(m.seq));
                }
            }
        }
        if let Some(max) = max {
            self.committed.fetch_max(max, SeqCst);
        }
        let created: Vec<&Memory> = stored.iter().filter(|(_, c)| *c).map(|(m, _)| m).collect();
        self.link_new_memories(&mut store, &created);
        drop(store);
        Ok(stored.into_iter().map(|(memory, created)| Remembered { memory, created }).collect())
    }

    /// Indexes (BM25, then vectors) every memory committed but not yet indexed, by
    /// anyone, and returns the seq indexed through. The vector index file is written by
    /// [`Engine::flush`].
    pub fn index_pending(&self) -> Result<u64> {
        let _indexing = lock(&self.indexing);
        let through = self.committed_through();
        let mark = self.bm25_mark.load(SeqCst);
        if mark < through {
            self.fill_bm25(mark, through)?;
        }
        if self.vector_mark.load(SeqCst) < through {
            self.catch_up_vectors(through)?;
        }
        Ok(self.indexed_through())
    }

    /// Files one memory: committed to the store, then indexed, when this returns.
    /// See [`Engine::commit_batch`] for what a repeat or a forgotten memory does.
    pub fn remember(&self, memory: NewMemory) -> Result<Remembered> {
        Ok(self.remember_batch(vec![memory])?.remove(0))
    }

    /// Files many memories in one transaction (all or nothing), then indexes them:
    /// [`Engine::commit_batch`] plus [`Engine::index_pending`].
    /// When this returns, every returned memory is recallable (a repeat may have been
    /// committed, not yet indexed, by another caller: it is indexed too).
    pub fn remember_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        let out = self.commit_batch(memories)?;
        if !out.is_empty() {
            self.index_pending()?;
        }
        Ok(out)
    }

    /// The highest seq committed to the store.
    pub fn committed_through(&self) -> u64 {
        self.committed.load(SeqCst)
    }

    /// The seq through which every live memory is in both indexes (recallable).
    pub fn indexed_through(&self) -> u64 {
        self.bm25_mark.load(SeqCst).min(self.vector_mark.load(SeqCst))
    }

    /// The memory with this id, forgotten ones included (with `forgotten_at` set).
    pub fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        self.read(|s| s.get(id))
    }

    /// Forgets a memory: recall stops returning it; its content stays in the store (and
    /// [`Engine::get`] returns it) until [`Engine::purge`]. The store is updated first,
    /// in one transaction, then the memory leaves the indexes. Idempotent: forgetting it
    /// again keeps the first `forgotten_at` (and completes an index removal that failed).
    /// Returns the memory with `forgotten_at` set, or None when no memory has this id.
    pub fn forget(&self, id: &MemoryId) -> Result<Option<Memory>> {
        let _indexing = lock(&self.indexing);
        let Some((memory, _)) = lock(&self.writer).forget(id, now_millis())? else { return Ok(None) };
        // The memory after it in its session had it as session context: re-embedded
        // without it (its context becomes the memory before the forgotten one).
        let next = {
            let mut docs = write(&self.docs);
            let [_, next] = docs.neighbours(memory.seq);
            docs.remove(memory.seq, &memory.scope);
            next
        };
        self.bm25.delete(memory.seq);
        self.bm25.commit(self.bm25_mark.load(SeqCst))?;
        if write(&self.vectors).remove_memory(memory.seq)? > 0 {
            self.vectors_unsaved.store(true, SeqCst);
        }
        self.refresh_vector_context(&next.into_iter().collect::<Vec<_>>())?;
        Ok(Some(memory))
    }

    /// Deletes a forgotten memory's row for good. Ok(true) when deleted, Ok(false) when
    /// no memory has this id, [`Error::NotForgotten`] (and nothing deleted) when the
    /// memory is not forgotten. The embedding cache keeps its vectors (keyed by chunk
    /// hash, no text).
    pub fn purge(&self, id: &MemoryId) -> Result<bool> {
        // The vector index on disk may still hold the memory's vectors (or a session
        // context made from it) until it is saved: saved first, so that no index file
        // outlives the row.
        self.flush()?;
        match lock(&self.writer).purge(id)? {
            Purged::Deleted => Ok(true),
            Purged::NotFound => Ok(false),
            Purged::NotForgotten => Err(Error::NotForgotten),
        }
    }

    /// Seqs that pass the query's filters, or None when it has none.
    fn allowed(&self, q: &Query) -> Option<Vec<u64>> {
        let scopes = q.scopes();
        if scopes.is_empty() && q.since.is_none() && q.until.is_none() {
            return None;
        }
        let docs = read(&self.docs);
        let in_time = |seq: &u64| {
            let t = docs.time.get(seq).copied().unwrap_or(0);
            q.since.is_none_or(|s| t >= s) && q.until.is_none_or(|u| t <= u)
        };
        let mut out: Vec<u64> = if scopes.is_empty() {
            docs.time.keys().copied().filter(in_time).collect()
        } else {
            // A scope within another one listed is already covered by it.
            let mut roots: Vec<&Scope> = Vec::new();
            for s in &scopes {
                if !scopes.iter().any(|o| o != s && s.is_within(o)) && !roots.contains(s) {
                    roots.push(s);
                }
            }
            roots
                .into_iter()
                .flat_map(|scope| {
                    docs.scopes
                        .range(scope.clone()..)
                        .take_while(|(s, _)| s.as_str().starts_with(scope.as_str()))
                        .filter(|(s, _)| s.is_within(scope))
                        .flat_map(|(_, seqs)| seqs.iter().copied())
                })
                .filter(in_time)
                .collect()
        };
        out.sort_unstable();
        Some(out)
    }

    /// Ranks memories by their best chunk's cosine to `qv`: (seq, cosine, chunk), best first.
    fn vector_ranking(
        &self,
        qv: &[f32],
        allowed: Option<&[u64]>,
        want: usize,
    ) -> Result<Vec<(u64, f32, usize)>> {
        let vectors = read(&self.vectors);
        let mut best: HashMap<u64, (f32, usize)> = HashMap::new();
        let mut note = |seq: u64, chunk: usize, cos: f32| {
            let e = best.entry(seq).or_insert((f32::MIN, 0));
            if cos > e.0 {
                *e = (cos, chunk);
            }
        };
        match allowed {
            Some(seqs) if seqs.len() <= EXACT_SCAN_MAX_MEMORIES => {
                for &seq in seqs {
                    for i in 0..amber_retrieval::MAX_CHUNKS_PER_MEMORY {
                        let Some(v) = vectors.get(chunk_key(seq, i)) else { break };
                        note(seq, i, amber_retrieval::cosine(qv, &v));
                    }
                    if let Some(v) = vectors.get(chunk_key(seq, CONTEXT_CHUNK)) {
                        note(seq, CONTEXT_CHUNK, amber_retrieval::cosine(qv, &v));
                    }
                }
            }
            _ => {
                let set: Option<HashSet<u64>> = allowed.map(|seqs| seqs.iter().copied().collect());
                let in_set = |key: u64| set.as_ref().is_none_or(|s| s.contains(&split_key(key).0));
                let filter: Option<&dyn Fn(u64) -> bool> = set.is_some().then_some(&in_set);
                for (key, cos) in vectors.search(qv, want * HNSW_CHUNKS_PER_MEMORY, filter)? {
                    let (seq, i) = split_key(key);
                    note(seq, i, cos);
                }
            }
        }
        let mut ranked: Vec<(u64, f32, usize)> = best.into_iter().map(|(s, (c, i))| (s, c, i)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(want);
        Ok(ranked)
    }

    /// Embeds a query text (one model call, on the first free query instance; when all
    /// are busy, it waits for one in turn).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let free = self.query_embedders.iter().find_map(|m| match m.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        });
        let mut embedder = match free {
            Some(g) => g,
            None => {
                let turn = self.query_turn.fetch_add(1, Ordering::Relaxed);
                lock(&self.query_embedders[turn % self.query_embedders.len()])
            }
        };
        let t0 = Instant::now();
        let v = embedder.embed(&[text])?.remove(0);
        drop(embedder);
        let mut stats = lock(&self.stats);
        stats.embed_seconds += t0.elapsed().as_secs_f64();
        stats.queries_embedded += 1;
        Ok(v)
    }

    /// The best `q.k` memories for a query, with per-signal evidence. Never returns a
    /// forgotten memory; finds what was indexed when it ran (see
    /// [`Engine::indexed_through`]).
    pub fn recall(&self, q: &Query) -> Result<Vec<Hit>> {
        q.validate()?;
        let want = self.opts.candidates.max(q.k * 3);
        let allowed = self.allowed(q);
        if allowed.as_ref().is_some_and(|a| a.is_empty()) {
            return Ok(Vec::new());
        }
        let scopes = q.scopes();
        let filter = Bm25Filter { scopes: &scopes, since: q.since, until: q.until };
        let (bm25, exact) = if q.mode != SearchMode::Vector {
            (self.bm25.search(&q.text, &filter, want)?, self.bm25.search_identifiers(&q.text, &filter, want)?)
        } else {
            (Vec::new(), Vec::new())
        };
        let qv = if q.mode != SearchMode::Bm25 { Some(self.embed_query(&q.text)?) } else { None };
        let vector: Vec<(u64, f32, usize)> = match &qv {
            Some(qv) => self.vector_ranking(qv, allowed.as_deref(), want)?,
            None => Vec::new(),
        };
        let graph_candidates: Vec<u64> = if q.expand == Expand::Graph {
            self.graph_ranking(q, qv.as_deref(), allowed.as_deref())?
        } else {
            Vec::new()
        };
        let bm25_keys: Vec<u64> = bm25.iter().map(|x| x.0).collect();
        let vector_keys: Vec<u64> = vector.iter().map(|x| x.0).collect();
        let exact_keys: Vec<u64> = exact.iter().map(|x| x.0).collect();
        let mut lists = vec![
            (&bm25_keys[..], self.opts.bm25_weight),
            (&vector_keys[..], self.opts.vector_weight),
            (&exact_keys[..], self.opts.exact_weight),
        ];
        let mut fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
        // Graph expansion, like the time ranking: the candidates connected to what the
        // query names, in fused order, then those the other signals missed (by cosine),
        // form one more ranking.
        let graph_keys: Vec<u64> = if graph_candidates.is_empty() {
            Vec::new()
        } else {
            let connected: HashSet<u64> = graph_candidates.iter().copied().collect();
            let mut keys: Vec<u64> = fused.iter().map(|f| f.key).filter(|k| connected.contains(k)).collect();
            let listed: HashSet<u64> = keys.iter().copied().collect();
            keys.extend(graph_candidates.iter().copied().filter(|k| !listed.contains(k)));
            keys.truncate(want);
            keys
        };
        let graph_list = (!graph_keys.is_empty()).then(|| {
            lists.push((&graph_keys[..], self.opts.graph_weight));
            fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
            lists.len() - 1
        });
        // A time the query names, when it sets no explicit filter: the candidates inside
        // that window, in fused order, are one more ranking.
        let window = (q.since.is_none() && q.until.is_none() && self.opts.time_weight > 0.0)
            .then(|| time_window(&q.text, q.now.unwrap_or_else(now_millis)))
            .flatten();
        let time_keys: Vec<u64> = match &window {
            Some(w) => {
                let docs = read(&self.docs);
                fused
                    .iter()
                    .map(|f| f.key)
                    .filter(|seq| docs.time.get(seq).is_some_and(|t| (w.from..=w.to).contains(t)))
                    .collect()
            }
            None => Vec::new(),
        };
        let time_list = (!time_keys.is_empty()).then(|| {
            tracing::debug!(expression = %window.as_ref().map(|w| w.expression.as_str()).unwrap_or(""), "time window");
            lists.push((&time_keys[..], self.opts.time_weight));
            fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
            lists.len() - 1
        });
        let session = self.session_bonus(&mut fused, want);
        let bonus = self.neighbour_bonus(&mut fused, allowed.as_deref(), want, lists.len());
        {
            let demoted = read(&self.demoted);
            if !demoted.is_empty() && fused.iter().any(|f| demoted.contains(&f.key)) {
                for f in fused.iter_mut().filter(|f| demoted.contains(&f.key)) {
                    f.score *= self.opts.duplicate_factor;
                }
                fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
            }
        }
        let top: Vec<_> = fused.into_iter().take(q.k).collect();
        let seqs: Vec<u64> = top.iter().map(|f| f.key).collect();
        // Forgotten memories are dropped here too, should an index still hold one.
        let mut memories: HashMap<u64, Memory> =
            self.read(|s| s.get_by_seqs(&seqs))?.into_iter().map(|m| (m.seq, m)).collect();
        let mut hits = Vec::with_capacity(top.len());
        for f in top {
            let Some(memory) = memories.remove(&f.key) else { continue };
            let b = f.ranks[0].map(|r| bm25[r - 1]);
            let v = f.ranks[1].map(|r| vector[r - 1]);
            hits.push(Hit {
                memory,
                evidence: Evidence {
                    bm25_rank: f.ranks[0],
                    bm25_score: b.map(|x| x.1),
                    vector_rank: f.ranks[1],
                    exact_rank: f.ranks[2],
                    neighbour_bonus: bonus.get(&f.key).copied(),
                    session_bonus: session.get(&f.key).copied(),
                    graph_rank: graph_list.and_then(|i| f.ranks[i]),
                    time_rank: time_list.and_then(|i| f.ranks[i]),
                    best_chunk_cosine: v.map(|x| x.1),
                    // The context vector exists for one-chunk memories only: it is
                    // reported as the chunk after their one chunk.
                    best_chunk: v.map(|x| if x.2 == CONTEXT_CHUNK { 1 } else { x.2 }),
                    fused: f.score,
                },
            });
        }
        Ok(hits)
    }

    /// Session prior: each candidate filed in a session gains `session_weight` times the
    /// best fused score among the top `want` candidates of its session (scope and
    /// session id), so of two equal matches the one in the conversation that matches the
    /// query best ranks first. Re-sorts `fused` and returns each memory's bonus.
    fn session_bonus(
        &self,
        fused: &mut [amber_retrieval::fusion::Fused<u64>],
        want: usize,
    ) -> HashMap<u64, f32> {
        if self.opts.session_weight <= 0.0 {
            return HashMap::new();
        }
        let docs = read(&self.docs);
        let mut best: HashMap<u32, f32> = HashMap::new();
        for f in fused.iter().take(want) {
            if let Some(&session) = docs.session_of.get(&f.key) {
                // `fused` is sorted: the first seen is the session's best.
                best.entry(session).or_insert(f.score);
            }
        }
        let mut bonus = HashMap::new();
        for f in fused.iter_mut() {
            if let Some(b) = docs.session_of.get(&f.key).and_then(|s| best.get(s)) {
                let b = self.opts.session_weight * b;
                f.score += b;
                bonus.insert(f.key, b);
            }
        }
        if !bonus.is_empty() {
            fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        }
        bonus
    }

    /// Session neighbours: a memory filed just before or just after one of the top `want`
    /// candidates, in the same session (and passing the query's filters), gains
    /// `neighbour_weight` times that candidate's fused score (the best such candidate's),
    /// and joins the candidates if it was not one. An answer is often the turn after the
    /// question that names its topic, or the one before the reply that does. Re-sorts
    /// `fused` and returns the bonus of each memory that gained one.
    fn neighbour_bonus(
        &self,
        fused: &mut Vec<amber_retrieval::fusion::Fused<u64>>,
        allowed: Option<&[u64]>,
        want: usize,
        n_lists: usize,
    ) -> HashMap<u64, f32> {
        let mut bonus: HashMap<u64, f32> = HashMap::new();
        if self.opts.neighbour_weight <= 0.0 {
            return bonus;
        }
        {
            let docs = read(&self.docs);
            for f in fused.iter().take(want) {
                for n in docs.neighbours(f.key).into_iter().flatten() {
                    if allowed.is_none_or(|a| a.binary_search(&n).is_ok()) {
                        let b = bonus.entry(n).or_insert(0.0);
                        *b = b.max(self.opts.neighbour_weight * f.score);
                    }
                }
            }
        }
        if bonus.is_empty() {
            return bonus;
        }
        let mut seen = HashSet::with_capacity(fused.len());
        for f in fused.iter_mut() {
            seen.insert(f.key);
            if let Some(b) = bonus.get(&f.key) {
                f.score += b;
            }
        }
        let mut added: Vec<_> = bonus
            .iter()
            .filter(|(k, _)| !seen.contains(k))
            .map(|(&key, &score)| amber_retrieval::fusion::Fused { key, score, ranks: vec![None; n_lists] })
            .collect();
        fused.append(&mut added);
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        bonus
    }

    /// Rebuilds both indexes from the store (and the filters' view of it). Vectors come
    /// from the embedding cache; only chunks never embedded with this model go to the
    /// model. Recall keeps answering from the old indexes meanwhile: BM25 switches at
    /// its commit, the vector index is built aside and swapped in. Memories committed
    /// during the rebuild are left to the next [`Engine::index_pending`].
    pub fn reindex(&self) -> Result<()> {
        let _indexing = lock(&self.indexing);
        tracing::info!("rebuilding the bm25 and vector indexes from the store");
        {
            // With the write connection held, no commit can fall between the scan and the swap.
            let store = lock(&self.writer);
            *write(&self.docs) = Docs::load(&store)?;
        }
        let through = self.committed_through();
        self.bm25.clear()?;
        self.fill_bm25(0, through)?;
        let mut fresh = VectorIndex::new(self.dim)?;
        let mut cursor = 0;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            for (key, v) in self.embed_memories(&batch)? {
                fresh.add(key, &v)?;
            }
        }
        *write(&self.vectors) = fresh;
        self.vector_mark.store(through, SeqCst);
        self.save_vectors()
    }

    /// Writes the vector index if it changed since the last save. Called on drop too;
    /// a crash before it only costs a catch-up (from the cache) at the next open.
    pub fn flush(&self) -> Result<()> {
        let _indexing = lock(&self.indexing);
        if self.vectors_unsaved.load(SeqCst) { self.save_vectors() } else { Ok(()) }
    }

    /// Work counters since open.
    pub fn stats(&self) -> EngineStats {
        *lock(&self.stats)
    }

    /// The options in force.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// The embedding model id.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// A snapshot of the engine's state (its parts are read one after another, so a
    /// concurrent write may show in some and not yet in others).
    pub fn status(&self) -> Result<Status> {
        let committed_through = self.committed_through();
        let indexed_through = self.indexed_through();
        let (memories, forgotten) = self.read(|s| Ok((s.count()?, s.count_forgotten()?)))?;
        let bm25_docs = self.bm25.num_docs();
        let vectors = read(&self.vectors).len();
        let scopes = read(&self.docs).scopes.len();
        let cached_vectors = self.cache_read(|s| s.cached_vector_count(&self.model_id))?;
        Ok(Status {
            data_dir: self.opts.data_dir.clone(),
            memories,
            forgotten,
            scopes,
            model: self.model_id.clone(),
            dim: self.dim,
            chunking: vector_layout(&self.chunking, self.opts.session_context),
            bm25_docs,
            vectors,
            cached_vectors,
            committed_through,
            indexed_through,
            indexes_complete: indexed_through >= committed_through && bm25_docs == memories,
            index_events: self.events.clone(),
            stats: self.stats(),
        })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::warn!(cause = %e, "could not save the vector index; it will be caught up at the next open");
        }
    }
}

/// What the vectors of a memory are, as recorded with the vector index: a change
/// rebuilds it (from the embedding cache where it can).
fn vector_layout(chunking: &ChunkConfig, session_context: bool) -> String {
    if session_context { format!("{} + session context", chunking.label()) } else { chunking.label() }
}

fn open_bm25(dir: &Path, events: &mut Vec<String>) -> Result<(Bm25Index, bool)> {
    let path = bm25_dir(dir);
    let existed = path.join("meta.json").exists();
    match Bm25Index::open_or_create(&path) {
        Ok(ix) => Ok((ix, !existed)),
        Err(e) => {
            let msg =
                format!("bm25 index at {} is unusable ({e}): rebuilding it from the store", path.display());
            tracing::warn!("{msg}");
            events.push(msg);
            let _ = std::fs::remove_dir_all(&path);
            Ok((Bm25Index::open_or_create(&path)?, true))
        }
    }
}

/// Loads the vector index if it matches the model, chunking and format and holds what
/// its state file says; otherwise starts an empty one (to be filled from the store).
fn open_vectors(
    dir: &Path,
    wanted: &VectorState,
    events: &mut Vec<String>,
) -> Result<(VectorIndex, Option<VectorState>)> {
    let path = vectors_path(dir);
    let state_path = vectors_state_path(dir);
    let want = |s: &VectorState| {
        s.format == wanted.format
            && s.model == wanted.model
            && s.dim == wanted.dim
            && s.chunking == wanted.chunking
    };
    let reason = match std::fs::read(&state_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !path.exists() => None,
        Err(e) => Some(format!("its state file is unreadable ({e})")),
        Ok(bytes) => match serde_json::from_slice::<VectorState>(&bytes) {
            Err(e) => Some(format!("its state file is corrupt ({e})")),
            Ok(s) if !want(&s) => Some(format!(
                "it was built with {} {}d {} (format {}), now {} {}d {}",
                s.model, s.dim, s.chunking, s.format, wanted.model, wanted.dim, wanted.chunking
            )),
            Ok(s) => match VectorIndex::load(&path, wanted.dim) {
                Ok(ix) if ix.len() == s.count => return Ok((ix, Some(s))),
                Ok(ix) => Some(format!("it holds {} vectors, its state says {}", ix.len(), s.count)),
                Err(e) => Some(format!("it does not load ({e})")),
            },
        },
    };
    if let Some(reason) = reason {
        let msg = format!("vector index at {} rebuilt from the store: {reason}", path.display());
        tracing::warn!("{msg}");
        events.push(msg);
    }
    Ok((VectorIndex::new(wanted.dim)?, None))
}
