//! Following a store that other writers share (team scopes on PostgreSQL, written by
//! every node of a team): memories another node committed are noted in `docs` and in the
//! committed watermark, so the indexer picks them up exactly as it picks up this node's
//! own writes; memories another node forgot (or purged) leave this node's indexes, and
//! those it moved to another scope are re-filed under it (the store's change log); and
//! now and then the standings (other nodes report outcomes), the duplicate marks and the
//! graph's names are reloaded.
//!
//! The store commits seqs in order (a shared store serialises the transactions that
//! give them), so everything up to the newest seq seen is committed: indexing reads the
//! store from its watermark and misses nothing.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use super::{Engine, EngineWriter, graph, lock, standing, write};
use crate::Result;

/// How often [`EngineWriter::follow`] reloads what other writers change in place (standings,
/// duplicate marks, graph names), at most.
const RELOAD_EVERY: Duration = Duration::from_secs(2);

/// Keys read from the store per round trip.
const FOLLOW_BATCH: usize = 10_000;

impl Engine {
    /// Applies the forgets, moves and purges other writers made since the last call (the
    /// store's change log; a purge names the memory whose session context it changed);
    /// returns how many changes. Each is applied from what the
    /// store holds now, so applying one twice (after a restart) does nothing more.
    fn follow_changes(&self) -> Result<usize> {
        let after = self.changes_followed.load(SeqCst);
        let changes = self.read(|s| s.changes_after(after, FOLLOW_BATCH))?;
        let Some(last) = changes.last().map(|c| c.change) else { return Ok(0) };
        let _indexing = lock(&self.indexing);
        let seqs: Vec<u64> = changes.iter().map(|c| c.seq).collect::<BTreeSet<_>>().into_iter().collect();
        let live: HashMap<u64, amber_core::Memory> =
            self.read(|s| s.get_by_seqs(&seqs))?.into_iter().map(|m| (m.seq, m)).collect();
        let (followed, mark) = (self.followed.load(SeqCst), self.bm25_mark.load(SeqCst));
        let mut successors = Vec::new();
        {
            let mut docs = write(&self.docs);
            for c in &changes {
                if docs.time.contains_key(&c.seq) {
                    match live.get(&c.seq) {
                        // Live in the same scope: its session context changed (the
                        // memory before it was purged).
                        Some(m) if m.scope == c.scope => successors.push(c.seq),
                        Some(_) => {}
                        None => {
                            if let [_, Some(next)] = docs.neighbours(c.seq) {
                                successors.push(next);
                            }
                        }
                    }
                    docs.remove(c.seq, &c.scope);
                }
            }
            // Moved: filed again under its new scope (one this node has not followed
            // yet comes with the next scan).
            for m in live.values().filter(|m| m.seq <= followed) {
                docs.add(amber_store::Key::of(m));
            }
        }
        let mut dropped = 0;
        for seq in &seqs {
            self.bm25.delete(*seq)?;
            match live.get(seq) {
                Some(m) if m.seq <= mark => self.add_words(m)?,
                Some(_) => {}
                None => {
                    write(&self.standing).remove(seq);
                    dropped += write(&self.vectors).remove_memory(*seq)?;
                }
            }
        }
        self.bm25.commit(mark)?;
        if dropped > 0 {
            self.vectors_unsaved.store(true, SeqCst);
        }
        successors.sort_unstable();
        successors.dedup();
        self.refresh_vector_context(&successors)?;
        self.changes_followed.store(last, SeqCst);
        tracing::debug!(
            changes = changes.len(),
            gone = seqs.len() - live.len(),
            "followed other nodes' forgets and moves"
        );
        Ok(changes.len())
    }
}

impl EngineWriter<'_> {
    /// Catches up with memories other writers committed to the store since the last
    /// call; returns how many were new to this engine. Cheap when nothing changed (one
    /// query). The indexer then indexes them (`committed_through` moved).
    pub fn follow(&mut self) -> Result<usize> {
        let mut new = self.follow_changes()?;
        let (e, store) = self.parts();
        let mut after = e.followed.load(SeqCst);
        loop {
            let keys = store.scan_keys(after, FOLLOW_BATCH)?;
            let Some(last) = keys.last() else { break };
            after = last.seq;
            let mut docs = write(&e.docs);
            for k in keys {
                // This engine's own writes are in docs already.
                if !docs.time.contains_key(&k.seq) {
                    docs.add(k);
                    new += 1;
                }
            }
        }
        e.followed.fetch_max(after, SeqCst);
        e.committed.fetch_max(after, SeqCst);
        let mut at = lock(&e.followed_at);
        if new > 0 || at.elapsed() >= RELOAD_EVERY {
            let standings = standing::load(store)?;
            let demoted = store.duplicate_seqs()?.into_iter().collect();
            let names = graph::load_names(store)?;
            *write(&e.standing) = standings;
            *write(&e.demoted) = demoted;
            *write(&e.names) = names;
            *at = Instant::now();
        }
        Ok(new)
    }
}
