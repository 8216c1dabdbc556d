//! Changing the embedding model without downtime. A migration re-embeds every live
//! memory with the next model, from the store, in two phases:
//! 1. **Filling the cache** (no lock held): each memory's chunks, cut by the next
//!    model's window, are embedded into the embedding cache under the next model's id.
//!    Recall and indexing go on with the current model and index meanwhile. Interrupted
//!    (a stop, a crash), it resumes from the cache: what was embedded is not again.
//! 2. **The switch** (under the indexing lock, so no index writer runs): the next
//!    model's vector index is built from the cache (memories committed since phase 1
//!    began are embedded now), then the model and the index are swapped at once, the
//!    new index saved over the old one, and the store records the model.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicU64};

use amber_core::model::ModelConfig;
use amber_retrieval::VectorIndex;

use super::models::Models;
use super::{Engine, EngineOptions, SCAN_BATCH, lock, write};
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
        let (index, query) = super::open::load_models(opts, config)?;
        Ok(NextModel { models: Models::new(index, query), config: config.clone() })
    }

    /// Its vector id.
    pub fn id(&self) -> &str {
        &self.models.id
    }
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

    /// Phase 2 of a migration: the next model's index built from the cache (what was
    /// filed since phase 1 embedded now) and swapped in with the model, under the
    /// indexing lock; the store records the model. A write: the daemon runs it on its
    /// writer.
    pub fn switch_model(&self, next: NextModel, progress: &Migration) -> Result<()> {
        let m = next.models.clone();
        progress.phase.store(2, SeqCst);
        let _indexing = lock(&self.indexing);
        let through = self.committed_through();
        let mut fresh = VectorIndex::new(m.dim)?;
        let mut cursor = 0;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            for (key, v) in self.embed_memories_with(&m, &batch)? {
                fresh.add(key, &v)?;
            }
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
            let mut store = lock(&self.writer);
            store.set_meta("embedding_model", &format!("{}:{}", m.id, m.dim))?;
            store.set_meta(MODEL_CONFIG_META, &serde_json::to_string(&next.config).unwrap_or_default())?;
        }
        progress.phase.store(3, SeqCst);
        tracing::info!(from = %old.id, to = %m.id, memories = through, "embedding model switched");
        Ok(())
    }

    /// A value of the store's metadata in `data_dir` before an engine opens it (None when
    /// there is no store yet).
    pub fn stored_meta(data_dir: &std::path::Path, key: &str) -> Result<Option<String>> {
        let db = crate::layout::db_path(data_dir);
        if !db.is_file() {
            return Ok(None);
        }
        use amber_store::Backend;
        Ok(amber_store::SqliteBackend::new(db).open_writer()?.meta(key)?)
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
