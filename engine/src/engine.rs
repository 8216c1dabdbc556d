//! The engine.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use amber_core::{Evidence, Hit, Memory, MemoryId, Millis, NewMemory, Query, Scope, SearchMode, now_millis};
use amber_retrieval::fusion::{DEFAULT_K, reciprocal_rank_fusion};
use amber_retrieval::{
    Bm25Doc, Bm25Filter, Bm25Index, ChunkConfig, Embedder, FastEmbedder, ModelPaths, VectorIndex, chunk_key,
    split_key, time_window,
};
use amber_store::Store;
use sha2::{Digest, Sha256};

use crate::layout::{bm25_dir, create_private_dir, db_path, index_dir, vectors_path, vectors_state_path};
use crate::{Result, default_amber_home};

/// Memories read from the store per step while rebuilding or catching up.
const SCAN_BATCH: usize = 256;
/// Texts sent to the model per call while indexing.
const EMBED_BATCH: usize = 64;
/// Up to this many memories pass a filter, the vector search scans their chunks exactly
/// instead of walking the HNSW graph (exact and fast at this size).
const EXACT_SCAN_MAX_MEMORIES: usize = 5_000;
/// Chunks fetched from the HNSW graph per memory wanted, so that enough distinct
/// memories survive aggregation.
const HNSW_CHUNKS_PER_MEMORY: usize = 4;
/// Bumped when the vector index layout changes.
const VECTOR_FORMAT: u32 = 1;

/// How the engine is set up. Every field has a default; see [`EngineOptions::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// The data directory (created 0700 if absent).
    pub data_dir: PathBuf,
    /// Where the model and runtime are installed (default: [`default_amber_home`]).
    pub amber_home: PathBuf,
    /// How long text is cut for the embedding model.
    pub chunking: ChunkConfig,
    /// The reciprocal-rank-fusion constant (default 60).
    pub rrf_k: f32,
    /// Weight of the BM25 ranking in fusion (default 1).
    pub bm25_weight: f32,
    /// Weight of the vector ranking in fusion (default 1).
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
            vector_weight: 1.0,
            exact_weight: 1.0,
            time_weight: 1.0,
            candidates: 100,
            threads: None,
            embedding_cache: None,
        }
    }
}

/// What a `remember` did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Remembered {
    /// The stored memory.
    pub memory: Memory,
    /// False when the same content was already in the same scope.
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
    /// Memories in the store.
    pub memories: u64,
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
    /// True when both indexes cover every memory in the store.
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

/// The store plus its derived indexes.
pub struct Engine {
    opts: EngineOptions,
    store: Store,
    /// A separate embedding cache, when configured; else the store holds it.
    cache: Option<Store>,
    bm25: Bm25Index,
    vectors: VectorIndex,
    embedder: Box<dyn Embedder>,
    /// seq -> time, for filters.
    docs: HashMap<u64, Millis>,
    scopes: BTreeMap<Scope, Vec<u64>>,
    vector_watermark: u64,
    vectors_unsaved: bool,
    stats: EngineStats,
    events: Vec<String>,
}

fn chunk_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Engine {
    /// Opens the engine with the local all-MiniLM-L6-v2 model installed by
    /// `scripts/setup.sh` under `opts.amber_home`.
    pub fn open(opts: EngineOptions) -> Result<Engine> {
        let embedder = FastEmbedder::load(&ModelPaths::under(&opts.amber_home), opts.chunking, opts.threads)?;
        Self::open_with(opts, Box::new(embedder))
    }

    /// Opens the engine with a given embedder.
    pub fn open_with(opts: EngineOptions, embedder: Box<dyn Embedder>) -> Result<Engine> {
        let dir = opts.data_dir.clone();
        let io = |source| crate::Error::DataDir { path: dir.clone(), source };
        create_private_dir(&dir).map_err(io)?;
        create_private_dir(&index_dir(&dir)).map_err(io)?;
        let mut store = Store::open(&db_path(&dir))?;
        let cache = match &opts.embedding_cache {
            Some(path) => {
                if let Some(parent) = path.parent() {
                    create_private_dir(parent).map_err(io)?;
                }
                Some(Store::open(path)?)
            }
            None => None,
        };

        let mut events = Vec::new();
        let recorded = store.meta("embedding_model")?;
        let model_line = format!("{}:{}", embedder.model_id(), embedder.dim());
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
        let (vectors, state) = open_vectors(&dir, embedder.as_ref(), &mut events)?;
        let mut engine = Engine {
            opts,
            store,
            cache,
            bm25,
            vectors,
            embedder,
            docs: HashMap::new(),
            scopes: BTreeMap::new(),
            vector_watermark: 0,
            vectors_unsaved: false,
            stats: EngineStats::default(),
            events,
        };
        engine.load_docs()?;

        // BM25: rebuild if its count disagrees with the store up to its watermark, else catch up.
        let bm25_mark = engine.bm25.watermark().unwrap_or(0);
        let expected = engine.store.count_through(bm25_mark)?;
        if !bm25_fresh && engine.bm25.num_docs() != expected {
            let e = format!(
                "bm25 index holds {} documents but the store has {expected} up to seq {bm25_mark}: rebuilding it",
                engine.bm25.num_docs()
            );
            tracing::warn!("{e}");
            engine.events.push(e);
            engine.bm25.clear()?;
            engine.catch_up_bm25(0)?;
        } else {
            engine.catch_up_bm25(bm25_mark)?;
        }

        // Vectors: the state file says what the index holds; anything newer is caught up.
        engine.vector_watermark = state.map(|s| s.watermark).unwrap_or(0);
        if engine.vector_watermark < engine.store.max_seq()? {
            engine.catch_up_vectors()?;
        }
        Ok(engine)
    }

    fn load_docs(&mut self) -> Result<()> {
        let mut after = 0;
        loop {
            let batch = self.store.scan_keys(after, 10_000)?;
            let Some(last) = batch.last() else { break };
            after = last.0;
            for (seq, scope, time) in batch {
                self.note_doc(seq, scope, time);
            }
        }
        Ok(())
    }

    fn note_doc(&mut self, seq: u64, scope: Scope, time: Millis) {
        self.scopes.entry(scope).or_default().push(seq);
        self.docs.insert(seq, time);
    }

    fn catch_up_bm25(&mut self, after: u64) -> Result<()> {
        let max = self.store.max_seq()?;
        if after >= max {
            return Ok(());
        }
        let started = Instant::now();
        let mut cursor = after;
        let mut n = 0usize;
        loop {
            let batch = self.store.scan(cursor, SCAN_BATCH)?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            self.add_to_bm25(&batch)?;
            n += batch.len();
        }
        self.bm25.commit(cursor)?;
        tracing::info!(memories = n, secs = started.elapsed().as_secs_f64(), "bm25 index caught up");
        Ok(())
    }

    /// Adds memories to the BM25 index (visible after the next commit).
    fn add_to_bm25(&mut self, memories: &[Memory]) -> Result<()> {
        for m in memories {
            self.bm25.add(&Bm25Doc { seq: m.seq, scope: &m.scope, time: m.time(), content: &m.content })?;
        }
        Ok(())
    }

    fn catch_up_vectors(&mut self) -> Result<()> {
        let started = Instant::now();
        let mut n = 0usize;
        loop {
            let batch = self.store.scan(self.vector_watermark, SCAN_BATCH)?;
            let Some(last) = batch.last() else { break };
            let last = last.seq;
            self.index_vectors(&batch)?;
            self.vector_watermark = last;
            n += batch.len();
        }
        self.save_vectors()?;
        tracing::info!(memories = n, secs = started.elapsed().as_secs_f64(), "vector index caught up");
        Ok(())
    }

    /// Chunks, embeds (through the cache) and adds the memories' vectors.
    fn index_vectors(&mut self, memories: &[Memory]) -> Result<()> {
        let model = self.embedder.model_id().to_string();
        // (seq, chunk index, chunk text, hash)
        let mut chunks: Vec<(u64, usize, &str, [u8; 32])> = Vec::new();
        for m in memories {
            let spans = self.embedder.chunk(&m.content);
            for (i, span) in spans.into_iter().take(amber_retrieval::MAX_CHUNKS_PER_MEMORY).enumerate() {
                let text = &m.content[span];
                chunks.push((m.seq, i, text, chunk_hash(text)));
            }
        }
        let hashes: Vec<[u8; 32]> = chunks.iter().map(|c| c.3).collect();
        let mut cached = self.cache.as_ref().unwrap_or(&self.store).cached_vectors(&model, &hashes)?;
        let mut missing: Vec<(&str, [u8; 32])> = Vec::new();
        let mut seen = HashSet::new();
        for c in &chunks {
            if !cached.contains_key(&c.3) && seen.insert(c.3) {
                missing.push((c.2, c.3));
            }
        }
        self.stats.chunks_from_cache += (chunks.len() - missing.len()) as u64;
        // The model pads each batch to its longest text: batching texts of similar length
        // wastes less work on padding.
        missing.sort_by_key(|(t, _)| t.len());
        for group in missing.chunks(EMBED_BATCH) {
            let texts: Vec<&str> = group.iter().map(|(t, _)| *t).collect();
            let t0 = Instant::now();
            let vecs = self.embedder.embed(&texts)?;
            self.stats.embed_seconds += t0.elapsed().as_secs_f64();
            self.stats.chunks_embedded += texts.len() as u64;
            let rows: Vec<([u8; 32], &[f32])> =
                group.iter().zip(&vecs).map(|((_, h), v)| (*h, v.as_slice())).collect();
            self.cache.as_mut().unwrap_or(&mut self.store).put_vectors(&model, &rows)?;
            for ((_, h), v) in group.iter().zip(vecs) {
                cached.insert(*h, v);
            }
        }
        for (seq, i, _, h) in &chunks {
            if let Some(v) = cached.get(h) {
                self.vectors.add(chunk_key(*seq, *i), v)?;
            }
        }
        self.vectors_unsaved = true;
        Ok(())
    }

    fn save_vectors(&mut self) -> Result<()> {
        let dir = self.opts.data_dir.clone();
        self.vectors.save(&vectors_path(&dir))?;
        let state = VectorState {
            format: VECTOR_FORMAT,
            model: self.embedder.model_id().to_string(),
            dim: self.embedder.dim(),
            chunking: self.embedder.chunk_config().label(),
            watermark: self.vector_watermark,
            count: self.vectors.len(),
        };
        let path = vectors_state_path(&dir);
        let tmp = path.with_extension("json.tmp");
        let io = |source| crate::Error::DataDir { path: path.clone(), source };
        std::fs::write(&tmp, serde_json::to_vec_pretty(&state).unwrap_or_default()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        self.vectors_unsaved = false;
        Ok(())
    }

    /// Files one memory: committed to the store when this returns, then indexed.
    pub fn remember(&mut self, memory: NewMemory) -> Result<Remembered> {
        Ok(self.remember_batch(vec![memory])?.remove(0))
    }

    /// Files many memories in one transaction (all or nothing), then indexes the new ones.
    pub fn remember_batch(&mut self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let stored = self.store.insert_batch(&memories, now_millis())?;
        let fresh: Vec<Memory> =
            stored.iter().filter(|(_, created)| *created).map(|(m, _)| m.clone()).collect();
        if let Some(max) = fresh.iter().map(|m| m.seq).max() {
            self.add_to_bm25(&fresh)?;
            self.bm25.commit(max)?;
            self.index_vectors(&fresh)?;
            self.vector_watermark = self.vector_watermark.max(max);
            for m in fresh {
                let time = m.time();
                self.note_doc(m.seq, m.scope, time);
            }
        }
        Ok(stored.into_iter().map(|(memory, created)| Remembered { memory, created }).collect())
    }

    /// The memory with this id.
    pub fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        Ok(self.store.get(id)?)
    }

    /// Seqs that pass the query's filters, or None when it has none.
    fn allowed(&self, q: &Query) -> Option<Vec<u64>> {
        if q.scope.is_none() && q.since.is_none() && q.until.is_none() {
            return None;
        }
        let in_time = |seq: &u64| {
            let t = self.docs.get(seq).copied().unwrap_or(0);
            q.since.is_none_or(|s| t >= s) && q.until.is_none_or(|u| t <= u)
        };
        let mut out: Vec<u64> = match &q.scope {
            Some(scope) => self
                .scopes
                .range(scope.clone()..)
                .take_while(|(s, _)| s.as_str().starts_with(scope.as_str()))
                .filter(|(s, _)| s.is_within(scope))
                .flat_map(|(_, seqs)| seqs.iter().copied())
                .filter(in_time)
                .collect(),
            None => self.docs.keys().copied().filter(in_time).collect(),
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
                        let Some(v) = self.vectors.get(chunk_key(seq, i)) else { break };
                        note(seq, i, amber_retrieval::cosine(qv, &v));
                    }
                }
            }
            _ => {
                let set: Option<HashSet<u64>> = allowed.map(|seqs| seqs.iter().copied().collect());
                let in_set = |key: u64| set.as_ref().is_none_or(|s| s.contains(&split_key(key).0));
                let filter: Option<&dyn Fn(u64) -> bool> = set.is_some().then_some(&in_set);
                for (key, cos) in self.vectors.search(qv, want * HNSW_CHUNKS_PER_MEMORY, filter)? {
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

    /// Embeds a query text (one model call).
    pub fn embed_query(&mut self, text: &str) -> Result<Vec<f32>> {
        let t0 = Instant::now();
        let v = self.embedder.embed(&[text])?.remove(0);
        self.stats.embed_seconds += t0.elapsed().as_secs_f64();
        self.stats.queries_embedded += 1;
        Ok(v)
    }

    /// The best `q.k` memories for a query, with per-signal evidence.
    pub fn recall(&mut self, q: &Query) -> Result<Vec<Hit>> {
        q.validate()?;
        let want = self.opts.candidates.max(q.k * 3);
        let allowed = self.allowed(q);
        if allowed.as_ref().is_some_and(|a| a.is_empty()) {
            return Ok(Vec::new());
        }
        let filter = Bm25Filter { scope: q.scope.as_ref(), since: q.since, until: q.until };
        let (bm25, exact) = if q.mode != SearchMode::Vector {
            (self.bm25.search(&q.text, &filter, want)?, self.bm25.search_identifiers(&q.text, &filter, want)?)
        } else {
            (Vec::new(), Vec::new())
        };
        let vector: Vec<(u64, f32, usize)> = if q.mode != SearchMode::Bm25 {
            let qv = self.embed_query(&q.text)?;
            self.vector_ranking(&qv, allowed.as_deref(), want)?
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
        // A time the query names, when it sets no explicit filter: the candidates inside
        // that window, in fused order, are one more ranking.
        let window = (q.since.is_none() && q.until.is_none() && self.opts.time_weight > 0.0)
            .then(|| time_window(&q.text, q.now.unwrap_or_else(now_millis)))
            .flatten();
        let time_keys: Vec<u64> = match &window {
            Some(w) => fused
                .iter()
                .map(|f| f.key)
                .filter(|seq| self.docs.get(seq).is_some_and(|t| (w.from..=w.to).contains(t)))
                .collect(),
            None => Vec::new(),
        };
        if !time_keys.is_empty() {
            tracing::debug!(expression = %window.as_ref().map(|w| w.expression.as_str()).unwrap_or(""), "time window");
            lists.push((&time_keys[..], self.opts.time_weight));
            fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
        }
        let top: Vec<_> = fused.into_iter().take(q.k).collect();
        let seqs: Vec<u64> = top.iter().map(|f| f.key).collect();
        let mut memories: HashMap<u64, Memory> =
            self.store.get_by_seqs(&seqs)?.into_iter().map(|m| (m.seq, m)).collect();
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
                    time_rank: f.ranks.get(3).copied().flatten(),
                    best_chunk_cosine: v.map(|x| x.1),
                    best_chunk: v.map(|x| x.2),
                    fused: f.score,
                },
            });
        }
        Ok(hits)
    }

    /// Rebuilds both indexes from the store. Vectors come from the embedding cache;
    /// only chunks never embedded with this model go to the model.
    pub fn reindex(&mut self) -> Result<()> {
        tracing::info!("rebuilding the bm25 and vector indexes from the store");
        self.bm25.clear()?;
        self.catch_up_bm25(0)?;
        self.vectors = VectorIndex::new(self.embedder.dim())?;
        self.vector_watermark = 0;
        self.catch_up_vectors()
    }

    /// Writes the vector index if it changed since the last save. Called on drop too;
    /// a crash before it only costs a catch-up (from the cache) at the next open.
    pub fn flush(&mut self) -> Result<()> {
        if self.vectors_unsaved { self.save_vectors() } else { Ok(()) }
    }

    /// Work counters since open.
    pub fn stats(&self) -> EngineStats {
        self.stats
    }

    /// The store (read-only), for callers that report on it.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The options in force.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// The embedding model id.
    pub fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// A snapshot of the engine's state.
    pub fn status(&self) -> Result<Status> {
        let memories = self.store.count()?;
        let max = self.store.max_seq()?;
        Ok(Status {
            data_dir: self.opts.data_dir.clone(),
            memories,
            scopes: self.scopes.len(),
            model: self.embedder.model_id().to_string(),
            dim: self.embedder.dim(),
            chunking: self.embedder.chunk_config().label(),
            bm25_docs: self.bm25.num_docs(),
            vectors: self.vectors.len(),
            cached_vectors: self
                .cache
                .as_ref()
                .unwrap_or(&self.store)
                .cached_vector_count(self.embedder.model_id())?,
            indexes_complete: self.bm25.watermark().unwrap_or(0) >= max
                && self.vector_watermark >= max
                && self.bm25.num_docs() == memories,
            index_events: self.events.clone(),
            stats: self.stats,
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
    embedder: &dyn Embedder,
    events: &mut Vec<String>,
) -> Result<(VectorIndex, Option<VectorState>)> {
    let path = vectors_path(dir);
    let state_path = vectors_state_path(dir);
    let want = |s: &VectorState| {
        s.format == VECTOR_FORMAT
            && s.model == embedder.model_id()
            && s.dim == embedder.dim()
            && s.chunking == embedder.chunk_config().label()
    };
    let reason = match std::fs::read(&state_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !path.exists() => None,
        Err(e) => Some(format!("its state file is unreadable ({e})")),
        Ok(bytes) => match serde_json::from_slice::<VectorState>(&bytes) {
            Err(e) => Some(format!("its state file is corrupt ({e})")),
            Ok(s) if !want(&s) => Some(format!(
                "it was built with {} {}d {} (format {}), now {} {}d {}",
                s.model,
                s.dim,
                s.chunking,
                s.format,
                embedder.model_id(),
                embedder.dim(),
                embedder.chunk_config().label()
            )),
            Ok(s) => match VectorIndex::load(&path, embedder.dim()) {
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
    Ok((VectorIndex::new(embedder.dim())?, None))
}
