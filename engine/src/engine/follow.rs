//! Following a store that other writers share (team scopes on PostgreSQL, written by
//! every node of a team): memories another node committed are noted in `docs` and in the
//! committed watermark, so the indexer picks them up exactly as it picks up this node's
//! own writes; and now and then the standings (other nodes report outcomes), the
//! duplicate marks and the graph's names are reloaded.
//!
//! The store commits seqs in order (a shared store serialises the transactions that
//! give them), so everything up to the newest seq seen is committed: indexing reads the
//! store from its watermark and misses nothing.

use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use super::{Engine, graph, lock, standing, write};
use crate::Result;

/// How often [`Engine::follow`] reloads what other writers change in place (standings,
/// duplicate marks, graph names), at most.
const RELOAD_EVERY: Duration = Duration::from_secs(2);

/// Keys read from the store per round trip.
const FOLLOW_BATCH: usize = 10_000;

impl Engine {
    /// Catches up with memories other writers committed to the store since the last
    /// call; returns how many were new to this engine. Cheap when nothing changed (one
    /// query). The indexer then indexes them (`committed_through` moved).
    pub fn follow(&self) -> Result<usize> {
        let store = lock(&self.writer);
        let mut after = self.followed.load(SeqCst);
        let mut new = 0;
        loop {
            let keys = store.scan_keys(after, FOLLOW_BATCH)?;
            let Some(last) = keys.last() else { break };
            after = last.seq;
            let mut docs = write(&self.docs);
            for k in keys {
                // This engine's own writes are in docs already.
                if !docs.time.contains_key(&k.seq) {
                    docs.add(k.seq, k.scope, k.time, k.session_id, k.kind);
                    new += 1;
                }
            }
        }
        self.followed.fetch_max(after, SeqCst);
        self.committed.fetch_max(after, SeqCst);
        let mut at = lock(&self.followed_at);
        if new > 0 || at.elapsed() >= RELOAD_EVERY {
            let standings = standing::load(store.as_ref())?;
            let demoted = store.duplicate_seqs()?.into_iter().collect();
            let names = graph::load_names(store.as_ref())?;
            *write(&self.standing) = standings;
            *write(&self.demoted) = demoted;
            *write(&self.names) = names;
            *at = Instant::now();
        }
        Ok(new)
    }
}
