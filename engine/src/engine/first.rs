//! What someone waits for is indexed first. The indexer otherwise goes in filing order
//! (the watermarks say "everything up to this seq"), so one client's bulk work would
//! hold everyone else's writes behind it. Two kinds of memories jump that queue:
//! - the person's and the hooks' own writes (the daemon's open lane), queued as they
//!   are committed ([`Engine::index_first`]);
//! - the memories a client waits for ([`Engine::unindexed`]: an `ingest` waiting for
//!   its own files, not for another client's backlog).
//!
//! Between slices of the ordered pass the indexer embeds these and puts them in both
//! indexes ([`Engine::index_waited`]); they are then "done ahead" of the watermark, and
//! the ordered pass steps over their vectors when it gets there (BM25 adds them again:
//! a replace), so the watermarks keep their meaning. After a restart nothing of this is
//! kept: the saved vector index may hold vectors past its watermark, which the catch-up
//! replaces.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::SeqCst;

use super::{Engine, lock};
use crate::Result;

/// The most seqs queued to be indexed first at once; past it, the rest come in order.
const MAX_QUEUED: usize = 65_536;

/// Memories indexed first per step: the person's writes are looked at again after each
/// step, so a long wait of a client's does not hold them.
const STEP: usize = 64;

/// The queues of [`Engine::index_first`] and [`Engine::unindexed`], and what was indexed
/// ahead of the vector watermark.
#[derive(Debug, Default)]
pub(super) struct First {
    /// The person's and the hooks' writes: before anything else.
    open: BTreeSet<u64>,
    /// What clients wait for: next.
    waited: BTreeSet<u64>,
    /// Above the vector watermark and already in both indexes.
    done: BTreeSet<u64>,
}

impl First {
    fn queued(&self) -> usize {
        self.open.len() + self.waited.len()
    }

    /// Forgets what the watermark has passed.
    fn passed(&mut self, mark: u64) {
        for set in [&mut self.open, &mut self.waited, &mut self.done] {
            *set = set.split_off(&(mark + 1));
        }
    }
}

impl Engine {
    /// Queues memories (by seq) to be indexed before whatever backlog is ahead of them:
    /// the daemon does this for the person's and the hooks' writes as it commits them.
    pub fn index_first(&self, seqs: impl IntoIterator<Item = u64>) {
        let mark = self.indexed_through();
        let mut first = lock(&self.first);
        for seq in seqs {
            if seq > mark && !first.done.contains(&seq) && first.queued() < MAX_QUEUED {
                first.open.insert(seq);
            }
        }
    }

    /// How far indexing is behind: the seqs committed past [`Engine::indexed_through`],
    /// less those already indexed ahead of it.
    pub fn backlog(&self) -> u64 {
        let mark = self.indexed_through();
        let behind = self.committed_through().saturating_sub(mark);
        behind.saturating_sub(lock(&self.first).done.range(mark + 1..).count() as u64)
    }

    /// Whether `seq` was indexed ahead of the vector watermark (the ordered pass leaves
    /// it as it is).
    pub(super) fn indexed_ahead(&self, seq: u64) -> bool {
        lock(&self.first).done.contains(&seq)
    }

    /// How many of the seqs in `ranges` (inclusive, as `[first, last]`) are not in the
    /// indexes yet; those are queued to be indexed before the rest of any backlog (after
    /// the person's own writes). A client that filed them polls this until it is 0.
    /// Seqs no live memory has (forgotten since, or never used) count until the indexer
    /// has looked at them.
    pub fn unindexed(&self, ranges: &[[u64; 2]]) -> u64 {
        let (mark, committed) = (self.indexed_through(), self.committed_through());
        let mut first = lock(&self.first);
        let mut left = 0u64;
        for &[a, b] in ranges {
            // Nothing past what is committed is a memory yet.
            let (a, b) = (a.max(mark + 1), b.min(committed));
            if a > b {
                continue;
            }
            let done = first.done.range(a..=b).count() as u64;
            left += (b - a + 1) - done;
            for seq in a..=b {
                if first.queued() >= MAX_QUEUED {
                    break;
                }
                if !first.done.contains(&seq) && !first.open.contains(&seq) {
                    first.waited.insert(seq);
                }
            }
        }
        left
    }

    /// Indexes what is queued to go first (the caller holds the indexing lock), a step at
    /// a time until the queues are empty: the person's writes, then what clients wait
    /// for. Returns how many memories it indexed.
    pub(super) fn index_waited(&self) -> Result<usize> {
        let mut n = 0;
        loop {
            let step: Vec<u64> = {
                let mut first = lock(&self.first);
                first.passed(self.indexed_through());
                let mut step = Vec::with_capacity(STEP);
                while step.len() < STEP {
                    // Newest first among the waited: a client that filed a little after another's
                    // bulk is not held behind it; the ordered pass comes from the oldest end.
                    let Some(seq) = first.open.pop_first().or_else(|| first.waited.pop_last()) else { break };
                    step.push(seq);
                }
                step
            };
            if step.is_empty() {
                return Ok(n);
            }
            let memories = self.read(|s| s.get_by_seqs(&step))?;
            let bm25_mark = self.bm25_mark.load(SeqCst);
            let words: Vec<_> = memories.iter().filter(|m| m.seq > bm25_mark).collect();
            for m in &words {
                self.add_words(m)?;
            }
            if !words.is_empty() {
                self.bm25.commit(bm25_mark)?;
            }
            self.add_vectors(&self.embed_memories(&memories)?)?;
            n += memories.len();
            lock(&self.stats).indexed_first += memories.len() as u64;
            lock(&self.first).done.extend(step);
        }
    }
}
