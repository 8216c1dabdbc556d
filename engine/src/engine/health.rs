//! What is degraded: the parts of the engine that failed and are retried (indexing, the
//! vector index file, the BM25 index on disk), why, and since when. The engine notes
//! each attempt here; `status` lists what is degraded.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use amber_core::{Millis, now_millis};

/// Below this many free bytes on the data directory's filesystem, a failed index write
/// is put down to the disk: tantivy reports a write that failed in one of its threads
/// as "An index writer was killed", without the cause.
pub(crate) const LOW_SPACE_BYTES: u64 = 16 << 20;

/// The committed memories are not all in the indexes: recall does not find those after
/// `indexed_through` (`get` does). Retried by the next [`crate::Engine::index_pending`].
pub(crate) const INDEXING: &str = "indexing";
/// The vector index could not be written to disk: it is complete in memory, and a
/// restart before the next successful save catches it up from the embedding cache.
pub(crate) const VECTOR_FILE: &str = "vector_file";
/// The BM25 index on disk could neither be opened nor rebuilt: it is kept in memory
/// (filled from the store) until the next start.
pub(crate) const BM25_ON_DISK: &str = "bm25_on_disk";
/// The embedding model is away (an endpoint that does not answer): queries are ranked
/// without vectors (BM25, identifiers, graph, time) until it answers again.
pub(crate) const QUERY_MODEL: &str = "query_model";

/// Why a part is degraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DegradedCause {
    /// No space left on the data directory's filesystem (or under 16 MiB when the error
    /// does not say): retried as space returns.
    DiskFull,
    /// The embeddings endpoint does not answer: waited for, retried.
    ModelAway,
    /// Another failure; the daemon's log has it.
    Error,
}

/// One degraded part of the engine.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Degraded {
    /// What: `indexing` (committed memories not yet recallable), `vector_file` (the
    /// vector index not saved), `bm25_on_disk` (the BM25 index held in memory) or
    /// `query_model` (queries ranked without vectors: the embeddings endpoint is away).
    pub part: &'static str,
    /// Why.
    pub cause: DegradedCause,
    /// When it first failed, in this streak of failures.
    pub since: Millis,
    /// Failed attempts in this streak.
    pub failures: u64,
    /// What it means, for people.
    pub message: String,
}

/// The degraded parts, by name.
#[derive(Debug, Default)]
pub(crate) struct Health {
    parts: Mutex<BTreeMap<&'static str, Degraded>>,
}

impl Health {
    fn parts(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, Degraded>> {
        self.parts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes a failure of `part`. True when it starts a streak (or changes its cause):
    /// the one failure worth a log line.
    pub(crate) fn fail(&self, part: &'static str, cause: DegradedCause, message: String) -> bool {
        let mut parts = self.parts();
        match parts.get_mut(part) {
            Some(d) => {
                d.failures += 1;
                let changed = d.cause != cause;
                d.cause = cause;
                d.message = message;
                changed
            }
            None => {
                parts.insert(part, Degraded { part, cause, since: now_millis(), failures: 1, message });
                true
            }
        }
    }

    /// Notes a success of `part`; returns the streak of failures it ends, if any.
    pub(crate) fn ok(&self, part: &'static str) -> Option<Degraded> {
        self.parts().remove(part)
    }

    /// The degraded part, if it is.
    pub(crate) fn get(&self, part: &'static str) -> Option<Degraded> {
        self.parts().get(part).cloned()
    }

    /// Every degraded part, by name.
    pub(crate) fn list(&self) -> Vec<Degraded> {
        self.parts().values().cloned().collect()
    }
}

/// Free bytes for an unprivileged user on the filesystem holding `dir`.
#[cfg(unix)]
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Free bytes on the filesystem holding `dir` (unknown here).
#[cfg(not(unix))]
pub(crate) fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}
