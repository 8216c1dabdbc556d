//! Opening the engine: the store, both indexes and the model's instances (loaded at the
//! same time, [`super::instances`]), and
//! checking each index against the store (rebuilt when missing, corrupt or stale, caught
//! up when behind). Also the full rebuild (`reindex`), saving the vector index (`flush`,
//! on drop) and the `status` snapshot.

use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use amber_core::model::ModelKind;
use amber_retrieval::{Bm25Index, ChunkConfig, Embedder, VectorIndex};
use amber_store::{Backend, SqliteBackend};

use super::health::{BM25_ON_DISK, INDEXING, LOW_SPACE_BYTES, VECTOR_FILE, free_bytes};
use super::models::Models;
use super::{
    Docs, Engine, EngineOptions, EngineStats, EngineWriter, SharedEmbedder, Status, graph, lock, read,
    standing, write,
};
use crate::layout::{bm25_dir, create_private_dir, db_path, index_dir, vectors_path, vectors_state_path};
use crate::{Error, Result};

/// Whether vectors of `id` come from the model `config` names (an engine opened with a
/// given embedder, in tests and evals, may use another).
fn model_line_is_ours(id: &str, config: &amber_core::model::ModelConfig) -> bool {
    match config.kind {
        ModelKind::Local => id == amber_retrieval::VECTOR_ID,
        ModelKind::Openai => id.starts_with("openai:"),
    }
}

/// A model's instances (for indexing, for queries in order of preference) and the
/// clock of the last read they share.
type Instances = (SharedEmbedder, Vec<SharedEmbedder>, Arc<AtomicU64>);

/// Bumped when the vector index layout changes (2: vectors stored as 8-bit integers, no
/// longer f16; an index of format 1 is rebuilt from the embedding cache at start).
const VECTOR_FORMAT: u32 = 2;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
struct VectorState {
    format: u32,
    model: String,
    dim: usize,
    chunking: String,
    watermark: u64,
    count: usize,
    /// A shared store's change log (forgets and moves by other nodes) is applied
    /// through this change in the saved indexes ([`EngineWriter::follow`]).
    #[serde(default)]
    changes: u64,
}

impl Engine {
    /// Opens the engine with the local all-MiniLM-L6-v2 model installed by
    /// `scripts/setup.sh` under `opts.amber_home`: one instance for indexing
    /// (`opts.threads`), one single-threaded for queries (unless `opts.query_model` is
    /// false), which also use the indexing instance when it is idle.
    ///
    /// With `opts.model` of kind `openai`, two clients of that endpoint instead (one
    /// for indexing, one for queries). An endpoint that is away at start is waited for
    /// (indexing waits, queries rank without vectors) when the dimension is known from
    /// `model.dimensions` or from this store's record of the same model; otherwise the
    /// start fails, saying so.
    ///
    /// The local model loads on a thread of its own while the store's tables and the
    /// BM25 index are read (a cold start waits for the slower of the two, not for both).
    pub fn open(opts: EngineOptions) -> Result<Engine> {
        if opts.model.kind == ModelKind::Openai {
            // An endpoint may take its dimension from the store's record of it: that is
            // read before the store is opened (and maybe made) here, not beside it.
            let (indexer, query) = super::instances::load_models(&opts, &opts.model)?;
            return Self::start(opts, None, move || Ok((indexer, query, Arc::default())));
        }
        let loading = {
            let opts = opts.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                let models = super::instances::load_models(&opts, &opts.model);
                tracing::info!(secs = t0.elapsed().as_secs_f64(), "model loaded");
                models
            })
        };
        Self::start(opts, None, move || {
            let (indexer, query) = loading.join().map_err(|_| super::instances::load_panicked())??;
            Ok((indexer, query, Arc::default()))
        })
    }

    /// Opens the engine with a given embedder, used both to index and to embed queries.
    pub fn open_with(opts: EngineOptions, embedder: Box<dyn Embedder>) -> Result<Engine> {
        let shared = Arc::new(Mutex::new(embedder));
        Self::start(opts, None, || Ok((shared.clone(), vec![shared], Arc::default())))
    }

    /// Opens a second engine over another store (team scopes on PostgreSQL), with its
    /// derived indexes in `opts.data_dir`, sharing this engine's model instances: no
    /// second copy of the model is loaded.
    pub fn open_sharing(&self, opts: EngineOptions, backend: Arc<dyn Backend>) -> Result<Engine> {
        let m = self.models();
        let models = (m.index.clone(), m.query.clone(), self.last_read.clone());
        Self::start(opts, Some(backend), || Ok(models))
    }

    /// Opens the engine over `backend` (default: the SQLite store in the data directory);
    /// `instances` gives the model's instances (and the last-read clock they share), and
    /// is called once what needs no model is read.
    fn start(
        opts: EngineOptions,
        backend: Option<Arc<dyn Backend>>,
        instances: impl FnOnce() -> Result<Instances>,
    ) -> Result<Engine> {
        let dir = opts.data_dir.clone();
        let io = |source| crate::Error::DataDir { path: dir.clone(), source };
        create_private_dir(&dir).map_err(io)?;
        create_private_dir(&index_dir(&dir)).map_err(io)?;
        let shared = backend.is_some();
        let backend: Arc<dyn Backend> = match backend {
            Some(b) => b,
            None => Arc::new(SqliteBackend::new(db_path(&dir))),
        };
        let mut store = backend.open_writer()?;
        let cache = match &opts.embedding_cache {
            Some(path) => {
                // A folder it names that exists is the user's, kept as it is (`/tmp`
                // made private would lock every other user out of it); one made for it
                // is private.
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
                    create_private_dir(parent).map_err(io)?;
                }
                Some(SqliteBackend::new(path).open_writer()?)
            }
            None => None,
        };
        let cache_separate = cache.is_some();
        // The vector index as it was saved, read on a thread of its own while the store's
        // tables are read here and the model loads: once the model is in it is kept if it
        // was built with it, else dropped (and the usual way below says why and rebuilds).
        let preloading = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                (preload_vectors(&dir), t0.elapsed().as_secs_f64())
            })
        };
        // What needs no model: the store's tables held in memory, the BM25 index.
        let t0 = Instant::now();
        let committed = store.max_seq()?;
        let docs = Docs::load(store.as_ref())?;
        let docs_secs = t0.elapsed().as_secs_f64();
        let demoted = store.duplicate_seqs()?.into_iter().collect();
        let standing = standing::load(store.as_ref())?;
        let names = graph::load_names(store.as_ref())?;
        let store_secs = t0.elapsed().as_secs_f64();
        let mut events = Vec::new();
        let t0 = Instant::now();
        let (bm25, bm25_fresh, bm25_in_ram) = open_bm25(&dir, &mut events)?;
        let bm25_secs = t0.elapsed().as_secs_f64();

        let t0 = Instant::now();
        let (preloaded, preload_secs) = preloading.join().unwrap_or((None, 0.0));
        let preload_wait_secs = t0.elapsed().as_secs_f64();

        let t0 = Instant::now();
        let (index_embedder, query_embedders, last_read) = instances()?;
        let model_wait_secs = t0.elapsed().as_secs_f64();
        let models = Models::new(index_embedder, query_embedders);
        let (model_id, dim, chunking) = (models.id.clone(), models.dim, models.chunking);

        let recorded = store.meta("embedding_model")?;
        let model_line = format!("{model_id}:{dim}");
        if recorded.as_deref() != Some(model_line.as_str()) {
            // A store other nodes share keeps the model it has: its vectors are theirs too.
            if let (true, Some(store)) = (shared, &recorded) {
                return Err(crate::Error::ModelMismatch { store: store.clone(), ours: model_line });
            }
            if let Some(old) = recorded {
                let e =
                    format!("embedding model changed from {old} to {model_line}: vectors will be recomputed");
                tracing::warn!("{e}");
                events.push(e);
            }
            store.set_meta("embedding_model", &model_line)?;
        }
        // What the vectors are of, to be loaded again (a migration's starting point).
        if model_line_is_ours(&model_id, &opts.model) {
            let config = serde_json::to_string(&opts.model).unwrap_or_default();
            if store.meta(super::migrate::MODEL_CONFIG_META)?.as_deref() != Some(config.as_str()) {
                store.set_meta(super::migrate::MODEL_CONFIG_META, &config)?;
            }
        }

        let wanted = VectorState {
            format: VECTOR_FORMAT,
            model: model_id.clone(),
            dim,
            chunking: vector_layout(&chunking, opts.session_context),
            watermark: 0,
            count: 0,
            changes: 0,
        };
        let t0 = Instant::now();
        let (vectors, state) = match preloaded {
            Some((ix, saved)) if built_as(&saved, &wanted) => (ix, Some(saved)),
            _ => open_vectors(&dir, &wanted, &mut events)?,
        };
        let vectors_secs = t0.elapsed().as_secs_f64();
        tracing::info!(
            store_secs,
            docs_secs,
            bm25_secs,
            preload_secs,
            preload_wait_secs,
            model_wait_secs,
            vectors_secs,
            "store and indexes opened"
        );
        let mut engine = Engine {
            opts,
            models: RwLock::new(models),
            backend,
            writer: Mutex::new(Some(store)),
            readers: Mutex::new(Vec::new()),
            cache: Mutex::new(cache),
            cache_separate,
            bm25,
            vectors: RwLock::new(vectors),
            query_turn: AtomicUsize::new(0),
            last_read,
            docs: RwLock::new(docs),
            indexing: Mutex::new(()),
            first: Default::default(),
            stopping: AtomicBool::new(false),
            vectors_unsaved: AtomicBool::new(false),
            committed: AtomicU64::new(committed),
            committed_bytes: AtomicU64::new(0),
            indexed_bytes: AtomicU64::new(0),
            followed: AtomicU64::new(committed),
            followed_at: Mutex::new(Instant::now()),
            // Changes after the saved vector index are applied again by the first
            // `follow` (applying one twice does nothing more).
            changes_followed: AtomicU64::new(state.as_ref().map_or(0, |s| s.changes)),
            bm25_mark: AtomicU64::new(0),
            bm25_rebuild: AtomicBool::new(false),
            vector_mark: AtomicU64::new(state.as_ref().map_or(0, |s| s.watermark)),
            stats: Mutex::new(EngineStats::default()),
            events,
            health: Default::default(),
            demoted: RwLock::new(demoted),
            standing: RwLock::new(standing),
            names: RwLock::new(names),
        };
        if let Some(e) = bm25_in_ram {
            engine.note_failure(BM25_ON_DISK, &e);
        }
        // Indexing at open may fail (a full disk, for one): the engine opens all the same,
        // serves recall from what is indexed and `get` from the store, and the next
        // `index_pending` tries again. Only a missing model stops it.
        let checked = engine.check_bm25(bm25_fresh);
        engine.tolerate(INDEXING, checked)?;
        let dropped = engine.drop_forgotten_vectors();
        engine.tolerate(INDEXING, dropped)?;
        if engine.vector_mark.load(SeqCst) < committed {
            let started = Instant::now();
            let caught = engine.catch_up_vectors(committed);
            if let Ok(n) = &caught {
                tracing::info!(
                    memories = n,
                    secs = started.elapsed().as_secs_f64(),
                    "vector index caught up"
                );
            }
            engine.tolerate(INDEXING, caught.map(|_| ()))?;
        }
        if engine.vectors_unsaved.load(SeqCst) {
            // Noted by save_vectors itself.
            let saved = engine.save_vectors();
            if saved.as_ref().is_err_and(Error::is_model_unavailable) {
                saved?;
            }
        }
        engine.writer()?.apply_unapplied_supersessions();
        Ok(engine)
    }

    /// At open: a failed step is noted (and the engine opens degraded), unless the model
    /// is missing.
    fn tolerate(&self, part: &'static str, out: Result<()>) -> Result<()> {
        match out {
            Err(e) if e.is_model_unavailable() => Err(e),
            Err(e) => {
                self.note_failure(part, &e);
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// At open: a BM25 index whose document count disagrees with the store up to its
    /// watermark is rebuilt (after dropping forgotten memories a crash may have left in
    /// it); one that is behind is caught up.
    /// When that fails, the next [`Engine::index_pending`] finishes the job.
    fn check_bm25(&mut self, fresh: bool) -> Result<()> {
        let committed = self.committed_through();
        let mark = self.bm25.watermark().unwrap_or(0);
        let expected = self.read(|s| s.count_through(mark))?;
        if !fresh && self.bm25.num_docs() != expected {
            // A forget interrupted between the store and the index leaves its memory here.
            let forgotten = self.read(|s| s.forgotten_seqs())?;
            if !forgotten.is_empty() {
                let before = self.bm25.num_docs();
                let removed = forgotten
                    .iter()
                    .try_for_each(|seq| self.bm25.delete(*seq))
                    .and_then(|()| self.bm25.commit(mark));
                if let Err(e) = removed {
                    self.bm25_rebuild.store(true, SeqCst);
                    return Err(e.into());
                }
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
            self.bm25_rebuild.store(true, SeqCst);
            self.rebuild_bm25(committed)
        } else {
            self.bm25_mark.store(mark, SeqCst);
            if mark < committed {
                self.fill_bm25(mark, committed)?;
            }
            Ok(())
        }
    }

    /// Refills BM25 from the store through `through`, in one commit (searches see the old
    /// index until then). The caller holds the indexing lock (or is opening).
    pub(super) fn rebuild_bm25(&self, through: u64) -> Result<()> {
        self.bm25.clear()?;
        self.fill_bm25(0, through)?;
        self.bm25_rebuild.store(false, SeqCst);
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

    /// Writes the vector index and its state file (a failure is noted as degraded). The
    /// caller holds the indexing lock (or is opening).
    pub(super) fn save_vectors(&self) -> Result<()> {
        let out = self.write_vectors();
        self.noted(VECTOR_FILE, out)
    }

    fn write_vectors(&self) -> Result<()> {
        let dir = &self.opts.data_dir;
        let count = {
            let vectors = read(&self.vectors);
            vectors.save(&vectors_path(dir))?;
            vectors.len()
        };
        let m = self.models();
        let state = VectorState {
            format: VECTOR_FORMAT,
            model: m.id.clone(),
            dim: m.dim,
            chunking: vector_layout(&m.chunking, self.opts.session_context),
            watermark: self.vector_mark.load(SeqCst),
            count,
            changes: self.changes_followed.load(SeqCst),
        };
        let path = vectors_state_path(dir);
        let tmp = path.with_extension("json.tmp");
        let io = |source| crate::Error::DataDir { path: path.clone(), source };
        std::fs::write(&tmp, serde_json::to_vec_pretty(&state).unwrap_or_default()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        self.vectors_unsaved.store(false, SeqCst);
        Ok(())
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
    pub fn model_id(&self) -> String {
        self.models().id.clone()
    }

    /// A snapshot of the engine's state (its parts are read one after another, so a
    /// concurrent write may show in some and not yet in others).
    pub fn status(&self) -> Result<Status> {
        let committed_through = self.committed_through();
        let indexed_through = self.indexed_through();
        let (memories, forgotten, raw_captures) =
            self.read(|s| Ok((s.count()?, s.count_forgotten()?, s.count_raw_captures()?)))?;
        let bm25_docs = self.bm25.num_docs();
        let vectors = read(&self.vectors).len();
        let scopes = read(&self.docs).scopes.len();
        let m = self.models();
        let cached_vectors = self.cache_read(|s| s.cached_vector_count(&m.id))?;
        Ok(Status {
            data_dir: self.opts.data_dir.clone(),
            memories,
            forgotten,
            raw_captures,
            scopes,
            model: m.id.clone(),
            dim: m.dim,
            chunking: vector_layout(&m.chunking, self.opts.session_context),
            bm25_docs,
            vectors,
            cached_vectors,
            committed_through,
            indexed_through,
            indexes_complete: indexed_through >= committed_through && bm25_docs == memories,
            index_events: self.events.clone(),
            degraded: self.health.list(),
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

/// Opens the BM25 index: (the index, whether it is new and must be filled, and why it
/// is held in memory when it could neither be opened nor created on disk).
fn open_bm25(dir: &Path, events: &mut Vec<String>) -> Result<(Bm25Index, bool, Option<Error>)> {
    let path = bm25_dir(dir);
    let existed = path.join("meta.json").exists();
    let err = match Bm25Index::open_or_create(&path) {
        Ok(ix) => return Ok((ix, !existed, None)),
        Err(e) => Error::from(e),
    };
    // With no space to rebuild it, an index that failed to open is kept for the next
    // start rather than deleted.
    let low = free_bytes(dir).is_some_and(|free| free < LOW_SPACE_BYTES);
    let err = if err.is_disk_full() || low {
        err
    } else {
        let msg =
            format!("bm25 index at {} is unusable ({err}): rebuilding it from the store", path.display());
        tracing::warn!("{msg}");
        events.push(msg);
        let _ = std::fs::remove_dir_all(&path);
        match Bm25Index::open_or_create(&path) {
            Ok(ix) => return Ok((ix, true, None)),
            Err(e) => Error::from(e),
        }
    };
    let msg = format!("bm25 index at {} cannot be opened or created ({err}): held in memory", path.display());
    tracing::warn!("{msg}");
    events.push(msg);
    Ok((Bm25Index::create_in_ram()?, true, Some(err)))
}

/// Loads the vector index if it matches the model, chunking and format and holds what
/// its state file says; otherwise starts an empty one (to be filled from the store).
/// Whether a saved vector index was built as `wanted` says (format, model, dimension,
/// chunking).
fn built_as(s: &VectorState, wanted: &VectorState) -> bool {
    s.format == wanted.format
        && s.model == wanted.model
        && s.dim == wanted.dim
        && s.chunking == wanted.chunking
}

/// The saved vector index and its state, when both read and agree (checked against the
/// model by the caller); None otherwise ([`open_vectors`] then says why).
fn preload_vectors(dir: &Path) -> Option<(VectorIndex, VectorState)> {
    let state: VectorState = serde_json::from_slice(&std::fs::read(vectors_state_path(dir)).ok()?).ok()?;
    if state.format != VECTOR_FORMAT {
        return None;
    }
    let ix = VectorIndex::load(&vectors_path(dir), state.dim).ok()?;
    (ix.len() == state.count).then_some((ix, state))
}

fn open_vectors(
    dir: &Path,
    wanted: &VectorState,
    events: &mut Vec<String>,
) -> Result<(VectorIndex, Option<VectorState>)> {
    let path = vectors_path(dir);
    let state_path = vectors_state_path(dir);
    let want = |s: &VectorState| built_as(s, wanted);
    let reason = match std::fs::read(&state_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !path.exists() => None,
        Err(e) => Some(format!("its state file is unreadable ({e})")),
        Ok(bytes) => match serde_json::from_slice::<VectorState>(&bytes) {
            Err(e) => Some(format!("its state file is corrupt ({e})")),
            Ok(s) if !want(&s) => Some(format!(
                "it was built with {} {}d {} (format {}), now {} {}d {} (format {})",
                s.model,
                s.dim,
                s.chunking,
                s.format,
                wanted.model,
                wanted.dim,
                wanted.chunking,
                wanted.format
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

impl EngineWriter<'_> {
    /// Rebuilds both indexes from the store (and the filters' view of it). Vectors come
    /// from the embedding cache; only chunks never embedded with this model go to the
    /// model. Recall keeps answering from the old indexes meanwhile: BM25 switches at
    /// its commit, the vector index is built aside and swapped in. Memories committed
    /// during the rebuild are left to the next [`Engine::index_pending`].
    pub fn reindex(&mut self) -> Result<()> {
        let _indexing = lock(&self.engine().indexing);
        tracing::info!("rebuilding the bm25 and vector indexes from the store");
        {
            // The writer's own work: no commit can fall between the scan and the swap.
            let docs = Docs::load(self.store())?;
            *write(&self.docs) = docs;
        }
        let through = self.committed_through();
        self.rebuild_bm25(through)?;
        let Some(fresh) = self.build_vectors(&self.models(), through, None)? else {
            unreachable!("a build without a progress is never stopped")
        };
        *write(&self.vectors) = fresh;
        self.vector_mark.store(through, SeqCst);
        self.save_vectors()
    }
}
