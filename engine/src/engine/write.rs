//! The write path: committing memories to the store (then indexing them), forgetting and
//! purging, reading one back, and the watermarks of what is committed and indexed.

use std::sync::atomic::Ordering::SeqCst;

use amber_core::{Memory, MemoryId, NewMemory, now_millis};
use amber_store::Purged;

use super::{Engine, EngineWriter, Remembered, lock, write};
use crate::{Error, Result};

impl EngineWriter<'_> {
    /// Commits memories to the store in one transaction (all or nothing): durable when
    /// this returns. Does not index them: [`Engine::index_pending`] does, and until then
    /// recall does not find them (get does).
    ///
    /// Content already filed in the same scope returns the existing memory with
    /// `created: false`. Content identical to a *forgotten* memory is filed anew: it
    /// replaces the forgotten one (same id, a new `seq` and `created_at`, this write's
    /// type, source and metadata, no longer forgotten), is indexed like any new memory
    /// and comes back with `created: true`.
    pub fn commit_batch(&mut self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let (e, store) = self.parts();
        e.check_supersedes(&memories)?;
        if e.opts.embed_before_commit
            && let Err(err) = e.embed_ahead(&memories)
        {
            tracing::warn!(cause = %err, "could not embed before committing; the indexer embeds these");
        }
        let stored = store.insert_batch(&memories, now_millis())?;
        // Noted before the writer can do anything else, so a forget of one of these
        // memories cannot slip in before it.
        let mut max = None;
        {
            let mut docs = write(&e.docs);
            for (m, created) in &stored {
                if *created {
                    docs.add(amber_store::Key::of(m));
                    max = max.max(Some(m.seq));
                }
            }
        }
        if let Some(max) = max {
            let bytes: usize = stored.iter().filter(|(_, c)| *c).map(|(m, _)| m.content.len()).sum();
            e.committed_bytes.fetch_add(bytes as u64, SeqCst);
            e.committed.fetch_max(max, SeqCst);
        }
        let created: Vec<&Memory> = stored.iter().filter(|(_, c)| *c).map(|(m, _)| m).collect();
        e.link_new_memories(store, &created);
        let invalidations: Vec<u64> =
            created.iter().filter(|m| !m.supersedes.is_empty()).map(|m| m.seq).collect();
        if let Err(err) = e.apply_supersessions(store, &invalidations) {
            // The memories are committed (their `supersedes` with them): the next open
            // records what is missing.
            tracing::warn!(error = %err, "supersessions not recorded yet");
        }
        Ok(stored.into_iter().map(|(memory, created)| Remembered { memory, created }).collect())
    }

    /// Files one memory: committed to the store, then indexed, when this returns.
    /// See [`EngineWriter::commit_batch`] for what a repeat or a forgotten memory does.
    pub fn remember(&mut self, memory: NewMemory) -> Result<Remembered> {
        Ok(self.remember_batch(vec![memory])?.remove(0))
    }

    /// Files many memories in one transaction (all or nothing), then indexes them:
    /// [`EngineWriter::commit_batch`] plus [`Engine::index_pending`].
    /// When this returns, every returned memory is recallable (a repeat may have been
    /// committed, not yet indexed, by another caller: it is indexed too).
    pub fn remember_batch(&mut self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        let out = self.commit_batch(memories)?;
        if !out.is_empty() {
            self.index_pending()?;
        }
        Ok(out)
    }

    /// Forgets a memory: recall stops returning it; its content stays in the store (and
    /// [`Engine::get`] returns it) until [`EngineWriter::purge`]. The store is updated first,
    /// in one transaction, then the memory leaves the indexes. Idempotent: forgetting it
    /// again keeps the first `forgotten_at` (and completes an index removal that failed).
    /// Returns the memory with `forgotten_at` set, or None when no memory has this id.
    pub fn forget(&mut self, id: &MemoryId) -> Result<Option<Memory>> {
        let (e, store) = self.parts();
        let _indexing = lock(&e.indexing);
        let Some((memory, _)) = ({
            let forgot = store.forget(id, now_millis())?;
            if let Some((m, _)) = &forgot {
                e.after_forget(store, m)?;
            }
            forgot
        }) else {
            return Ok(None);
        };
        // The memory after it in its session had it as session context: re-embedded
        // without it (its context becomes the memory before the forgotten one).
        let next = {
            let mut docs = write(&e.docs);
            let [_, next] = docs.neighbours(memory.seq);
            docs.remove(memory.seq, &memory.scope);
            next
        };
        e.bm25.delete(memory.seq)?;
        e.bm25.commit(e.bm25_mark.load(SeqCst))?;
        if write(&e.vectors).remove_memory(memory.seq)? > 0 {
            e.vectors_unsaved.store(true, SeqCst);
        }
        e.refresh_vector_context(&next.into_iter().collect::<Vec<_>>())?;
        Ok(Some(memory))
    }

    /// Deletes a forgotten memory's row for good. Ok(true) when deleted, Ok(false) when
    /// no memory has this id, [`Error::NotForgotten`] (and nothing deleted) when the
    /// memory is not forgotten. The local embedding cache loses the vectors of every
    /// text that carried its words ([`Engine::hashes_carrying`]); a text another memory
    /// shares is embedded again when next needed.
    pub fn purge(&mut self, id: &MemoryId) -> Result<bool> {
        // The vector index on disk may still hold the memory's vectors (or a session
        // context made from it) until it is saved: saved first, so that no index file
        // outlives the row.
        self.flush()?;
        let carrying = match self.read(|s| s.get(id))? {
            Some(m) if m.is_forgotten() => self.hashes_carrying(&m)?,
            _ => Vec::new(),
        };
        let purged = self.store().purge(id)?;
        match purged {
            Purged::Deleted => {
                if !carrying.is_empty() {
                    let gone = self.cache_write(|s| s.forget_vectors(&carrying))?;
                    tracing::debug!(memory = %id, vectors = gone, "a purged memory's cached vectors deleted");
                }
                Ok(true)
            }
            Purged::NotFound => Ok(false),
            Purged::NotForgotten => Err(Error::NotForgotten),
        }
    }
}

impl Engine {
    /// How much lower than its caller's the CPU priority of indexing is
    /// ([`super::EngineOptions::background_nice`]).
    pub fn background_nice(&self) -> i32 {
        self.opts.background_nice
    }

    /// Bytes of content committed through this engine and not indexed yet (an estimate:
    /// a commit under way while a pass starts may be counted as indexed early).
    pub fn pending_bytes(&self) -> u64 {
        self.committed_bytes.load(SeqCst).saturating_sub(self.indexed_bytes.load(SeqCst))
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
}
