//! Changing the embedding model without downtime. A migration re-embeds every live
//! memory with the next model, from the store, in two phases:
//! 1. **Filling the cache** (no lock held): each memory's chunks, cut by the next
//!    model's window, are embedded into the embedding cache under the next model's id.
//!    Recall and indexing go on with the current model and index meanwhile. Interrupted
//!    (a stop, a crash), it resumes from the cache: what was embedded is not again.
//! 2. **The switch**, in two steps. Its long part with nothing locked: the next model's
//!    vector index is built aside from the cache (memories committed since phase 1
//!    began are embedded now) while the current index keeps a journal of the memories
//!    whose vectors change. Its short part under the indexing lock (on the daemon's
//!    writer): the memories filed since and those the journal names are redone in the
//!    new index, then the model and the index are swapped at once, the new index saved
//!    over the old one, and the store records the model.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicU64};

use amber_core::model::ModelConfig;
use amber_retrieval::VectorIndex;

use super::models::Models;
use super::{Engine, EngineOptions, EngineWriter, SCAN_BATCH, lock, write};
use crate::Result;

/// Memories re-embedded between progress updates (and checks of `stop`).
const PROGRESS_BATCH: usize = 64;

/// The store's record of the model configuration the vectors are of.
pub const MODEL_CONFIG_META: &str = "model_config";

/// A loaded model, ready to migrate to.
pub struct NextModel {
    models: Arc<Models>,
    config: ModelConfig,
}

impl NextModel {
    /// Loads the model `config` names (its instances as [`Engine::open`] loads them).
    pub fn load(opts: &EngineOptions, config: &ModelConfig) -> Result<NextModel> {
        let (index, query) = super::instances::load_models(opts, config)?;
        Ok(NextModel { models: Models::new(index, query), config: config.clone() })
    }

    /// Its vector id.
    pub fn id(&self) -> &str {
        &self.models.id
    }
}

/// The next model's index, built from the cache through `through` (see
/// [`Engine::prepare_switch`]), waiting for the switch.
pub struct Prepared {
    next: NextModel,
    index: VectorIndex,
    through: u64,
}

/// How far a migration is; shared with whoever reports it.
#[derive(Debug, Default)]
pub struct Migration {
    /// Live memories to re-embed (counted when phase 1 starts).
    pub total: AtomicU64,
    /// Memories re-embedded so far (phase 1), then counted again in phase 2.
    pub done: AtomicU64,
    /// 1 while filling the cache, 2 while switching, 3 when switched.
    pub phase: AtomicU64,
    /// Set to stop at the next batch (resumed later from the cache).
    pub stop: AtomicBool,
    /// Why it failed, if it did.
    pub error: Mutex<Option<String>>,
}

impl Engine {
    /// Phase 1 of a migration to `next` (see the module's doc): every live memory's
    /// vectors of the next model into the embedding cache (derived data, as indexing
    /// writes it), nothing locked. Returns false when stopped early by `progress.stop`.
    pub fn migrate_cache(&self, next: &NextModel, progress: &Migration) -> Result<bool> {
        let m = next.models.clone();
        // Phase 1: the cache, with nothing locked.
        let through = self.committed_through();
        progress.phase.store(1, SeqCst);
        progress.total.store(self.read(|s| s.count())?, SeqCst);
        progress.done.store(0, SeqCst);
        let mut cursor = 0;
        loop {
            if progress.stop.load(SeqCst) {
                return Ok(false);
            }
            let batch = self.read(|s| s.scan(cursor, through, PROGRESS_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            self.embed_memories_with(&m, &batch)?;
            progress.done.fetch_add(batch.len() as u64, SeqCst);
        }
        Ok(!progress.stop.load(SeqCst))
    }

    /// Phase 2 of a migration, its long part (no lock held, off the writer): the next
    /// model's index built from the cache for every live memory committed so far
    /// (memories filed since phase 1 began are embedded now). The current index starts a
    /// journal of the memories whose vectors change meanwhile; [`EngineWriter::switch_model`]
    /// redoes those.
    /// None when stopped by `progress.stop` (the journal ended; a later migration
    /// resumes from the cache).
    pub fn prepare_switch(&self, next: NextModel, progress: &Migration) -> Result<Option<Prepared>> {
        progress.phase.store(2, SeqCst);
        // The journal first: a change after the scan's bound is read is noted.
        write(&self.vectors).start_journal();
        let through = self.committed_through();
        progress.total.store(self.read(|s| s.count())?, SeqCst);
        progress.done.store(0, SeqCst);
        let Some(index) = self.build_vectors(&next.models, through, Some(progress))? else {
            write(&self.vectors).take_journal();
            return Ok(None);
        };
        Ok(Some(Prepared { next, index, through }))
    }

    /// A vector index of `m`'s vectors of every live memory through `through`, from the
    /// cache (or the model), counting in `progress.done`; None when `progress.stop` is
    /// set. Used by a migration's build and by [`EngineWriter::reindex`] (no progress).
    pub(super) fn build_vectors(
        &self,
        m: &Models,
        through: u64,
        progress: Option<&Migration>,
    ) -> Result<Option<VectorIndex>> {
        let mut index = VectorIndex::new(m.dim)?;
        let mut cursor = 0;
        loop {
            if progress.is_some_and(|p| p.stop.load(SeqCst)) {
                return Ok(None);
            }
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            index.add_many(&self.embed_memories_with(m, &batch)?)?;
            if let Some(p) = progress {
                p.done.fetch_add(batch.len() as u64, SeqCst);
            }
        }
        Ok(Some(index))
    }

    /// Values of the store's metadata in `data_dir` before an engine opens it, one per
    /// key (all None when there is no store yet), read on one connection.
    pub fn stored_meta(data_dir: &std::path::Path, keys: &[&str]) -> Result<Vec<Option<String>>> {
        let db = crate::layout::db_path(data_dir);
        if !db.is_file() {
            return Ok(vec![None; keys.len()]);
        }
        use amber_store::Backend;
        let store = amber_store::SqliteBackend::new(db).open_writer()?;
        Ok(keys.iter().map(|k| store.meta(k)).collect::<std::result::Result<_, _>>()?)
    }

    /// The model configuration the store's vectors are of, as recorded at open or by the
    /// last migration (None in a store older than the record).
    pub fn recorded_model(&self) -> Result<Option<ModelConfig>> {
        let line = self.read(|s| s.meta(MODEL_CONFIG_META))?;
        Ok(line.and_then(|l| serde_json::from_str(&l).ok()))
    }
}

/// Counts of a migration, for `status`.
pub fn snapshot(p: &Migration) -> (u64, u64, u64) {
    (p.phase.load(SeqCst), p.done.load(SeqCst), p.total.load(SeqCst))
}

impl EngineWriter<'_> {
    /// Phase 2 of a migration, its short part: under the indexing lock, the prepared
    /// index catches up (the memories filed since it was built, and those whose vectors
    /// changed in the current index meanwhile: forgotten, moved, their session context
    /// changed), then the model and the index are swapped at once; the new index is
    /// saved over the old one and the store records the model. A write: the daemon runs
    /// it on its writer.
    pub fn switch_model(&mut self, prepared: Prepared, progress: &Migration) -> Result<()> {
        let Prepared { next, index: mut fresh, through: built } = prepared;
        let m = next.models.clone();
        let _indexing = lock(&self.engine().indexing);
        let through = self.committed_through();
        // The memories to redo: those the journal names (a forgotten one among them
        // only leaves), and every live one the current index had not indexed when the
        // build began (its session context may have changed without the index
        // knowing). Without a journal (the current index was replaced meanwhile, by a
        // reindex), the whole build is redone, the way a reindex builds.
        let (touched, from) = match write(&self.vectors).take_journal() {
            Some(t) => (t, built.min(self.vector_mark.load(SeqCst))),
            None => {
                let Some(index) = self.build_vectors(&m, through, None)? else {
                    unreachable!("a build without a progress is never stopped")
                };
                fresh = index;
                (Default::default(), through)
            }
        };
        let mut touched: Vec<u64> = touched.into_iter().collect();
        touched.sort_unstable();
        let mut redone = 0;
        let mut redo = |fresh: &mut VectorIndex, batch: &[amber_core::Memory], gone: &[u64]| -> Result<()> {
            for seq in gone {
                fresh.remove_memory(*seq)?;
            }
            for (key, v) in self.embed_memories_with(&m, batch)? {
                fresh.add(key, &v)?;
            }
            redone += gone.len();
            Ok(())
        };
        for seqs in touched.chunks(SCAN_BATCH) {
            let live = self.read(|s| s.get_by_seqs(seqs))?;
            redo(&mut fresh, &live, seqs)?;
        }
        let mut cursor = from;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            let seqs: Vec<u64> = batch.iter().map(|x| x.seq).collect();
            redo(&mut fresh, &batch, &seqs)?;
        }
        let old = {
            // Under the vectors' write lock: a recall ranks with one model's vectors.
            let mut vectors = write(&self.vectors);
            *vectors = fresh;
            std::mem::replace(&mut *write(&self.models), m.clone())
        };
        self.vector_mark.store(through, SeqCst);
        self.save_vectors()?;
        {
            let store = self.store();
            store.set_meta("embedding_model", &format!("{}:{}", m.id, m.dim))?;
            store.set_meta(MODEL_CONFIG_META, &serde_json::to_string(&next.config).unwrap_or_default())?;
        }
        progress.phase.store(3, SeqCst);
        tracing::info!(from = %old.id, to = %m.id, memories = through, redone, "embedding model switched");
        Ok(())
    }
}
