//! Noting what failed and what recovered: each attempt at indexing or saving the vector
//! index is noted in the engine's health (listed by `status`), a streak of failures is
//! logged once when it starts and once when it ends, and a failure is put down to a full
//! disk when its error or the free space says so.

use super::health::{
    BM25_ON_DISK, DegradedCause, INDEXING, LOW_SPACE_BYTES, QUERY_MODEL, VECTOR_FILE, free_bytes,
};
use super::{Degraded, Engine};
use crate::{Error, Result};

impl Engine {
    /// Why `e` happened, as far as the engine can tell: a full disk when the error says
    /// so or when the data directory's filesystem has under 16 MiB free.
    pub(super) fn cause_of(&self, e: &Error) -> DegradedCause {
        if e.is_model_away() {
            return DegradedCause::ModelAway;
        }
        let low = self.free_bytes().is_some_and(|free| free < LOW_SPACE_BYTES);
        if e.is_disk_full() || low { DegradedCause::DiskFull } else { DegradedCause::Error }
    }

    /// Free bytes on the data directory's filesystem (None when unknown).
    pub fn free_bytes(&self) -> Option<u64> {
        free_bytes(&self.opts.data_dir)
    }

    /// Notes an attempt at `part` and returns its outcome unchanged.
    pub(super) fn noted<T>(&self, part: &'static str, out: Result<T>) -> Result<T> {
        match &out {
            Ok(_) => {
                if let Some(was) = self.health.ok(part) {
                    let secs = (amber_core::now_millis() - was.since) as f64 / 1e3;
                    tracing::info!(part, failures = was.failures, secs, "recovered: {}", recovered(part));
                }
            }
            Err(e) => self.note_failure(part, e),
        }
        out
    }

    /// Notes a failure of `part`; the first of a streak (or a change of cause) is logged.
    pub(super) fn note_failure(&self, part: &'static str, e: &Error) {
        let cause = self.cause_of(e);
        let message = self.degraded_message(part, cause, e);
        if self.health.fail(part, cause, message.clone()) {
            tracing::error!(
                part,
                ?cause,
                error = %e,
                "{message}; retried until it succeeds, logged again when it does"
            );
        } else {
            tracing::debug!(part, ?cause, error = %e, "still failing");
        }
    }

    fn degraded_message(&self, part: &'static str, cause: DegradedCause, e: &Error) -> String {
        let why = match cause {
            DegradedCause::DiskFull => "the disk is full",
            DegradedCause::ModelAway => "",
            DegradedCause::Error => "it failed (see the daemon's log)",
        };
        match part {
            // The BM25 index is filled before vectors are made: only the vectors wait.
            INDEXING if cause == DegradedCause::ModelAway => format!(
                "vectors wait for the embedding model ({e}): memories committed after seq {} \
                 are stored and found by BM25, not yet by meaning; indexing resumes when it answers",
                self.indexed_through()
            ),
            QUERY_MODEL => format!(
                "queries are ranked without vectors (BM25, identifiers, graph and time alone) until \
                 the embedding model answers again: {e}"
            ),
            INDEXING => format!(
                "indexing is stopped ({why}): memories committed after seq {} are stored and \
                 `get` finds them, but recall does not yet",
                self.indexed_through()
            ),
            VECTOR_FILE => format!(
                "the vector index could not be saved ({why}): it is complete in memory, and a \
                 restart before the next save catches it up from the embedding cache"
            ),
            BM25_ON_DISK => format!(
                "the BM25 index on disk could neither be opened nor rebuilt ({why}): it is held \
                 in memory, filled from the store, until the next start"
            ),
            other => format!("{other} is degraded ({why})"),
        }
    }

    /// Why recall ranks without vectors now (the embeddings endpoint is away), if it does.
    pub fn vectors_away(&self) -> Option<String> {
        self.health.get(QUERY_MODEL).map(|d| d.message)
    }

    /// The cause when indexing is failing now (see [`Engine::index_pending`]).
    pub fn indexing_stalled(&self) -> Option<DegradedCause> {
        self.health.get(INDEXING).map(|d| d.cause)
    }

    /// True while the vector index could not be saved: [`Engine::flush`] tries again.
    pub fn vector_file_unsaved(&self) -> bool {
        self.health.get(VECTOR_FILE).is_some()
    }

    /// What is degraded now (also in [`Engine::status`]).
    pub fn degraded(&self) -> Vec<Degraded> {
        self.health.list()
    }
}

fn recovered(part: &str) -> &'static str {
    match part {
        INDEXING => "indexing caught up",
        VECTOR_FILE => "the vector index is saved",
        QUERY_MODEL => "the embedding model answers queries again",
        _ => "working again",
    }
}
