//! Fact extraction's configuration and counts (the run itself, after a capture, is in
//! `methods/capture.rs`). Fact extraction in the background: a newly captured memory's text goes to the
//! configured extractor on the blocking pool, and the facts it proposes are written
//! through the writer queue with the memory as their source, in the memory's scope. A
//! capture never waits for it. At most `max_in_flight` run at once; a capture arriving
//! when all are busy is not extracted (counted as `skipped_busy`). Failures are logged
//! and counted; `status` shows the counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use amber_tiers::extract::{ExtractConfig, ExtractStats, Extractor};
use tokio::sync::Semaphore;

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) runs: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) skipped_busy: AtomicU64,
    pub(crate) proposed: AtomicU64,
    pub(crate) facts_added: AtomicU64,
    pub(crate) items_dropped: AtomicU64,
}

/// The configured extractor, its permits and its counts.
pub(crate) struct Extraction {
    pub(crate) extractor: Arc<dyn Extractor>,
    pub(crate) permits: Arc<Semaphore>,
    pub(crate) timeout: Duration,
    pub(crate) counts: Arc<Counts>,
}

impl Extraction {
    /// None when extraction is off.
    pub(crate) fn from_config(cfg: &ExtractConfig) -> Result<Option<Extraction>, String> {
        if !cfg.is_on() {
            return Ok(None);
        }
        let extractor: Arc<dyn Extractor> = amber_tiers::extract::from_config(cfg)?.into();
        tracing::info!(extractor = %extractor.name(), "fact extraction from captures is on");
        Ok(Some(Extraction {
            extractor,
            permits: Arc::new(Semaphore::new(cfg.max_in_flight)),
            timeout: Duration::from_millis(cfg.timeout_ms),
            counts: Arc::default(),
        }))
    }

    /// The counts so far.
    pub(crate) fn stats(&self) -> ExtractStats {
        let c = &self.counts;
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ExtractStats {
            extractor: self.extractor.name(),
            runs: n(&c.runs),
            failed: n(&c.failed),
            skipped_busy: n(&c.skipped_busy),
            proposed: n(&c.proposed),
            facts_added: n(&c.facts_added),
            items_dropped: n(&c.items_dropped),
        }
    }
}
