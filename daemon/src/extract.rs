//! Fact extraction in the background: a newly captured memory's text goes to the
//! configured extractor on the blocking pool, and the facts it proposes are written
//! through the writer queue with the memory as their source, in the memory's scope. A
//! capture never waits for it. At most `max_in_flight` run at once; a capture arriving
//! when all are busy is not extracted (counted as `skipped_busy`). Failures are logged
//! and counted; `status` shows the counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use amber_core::{MemoryId, Scope};
use amber_tiers::extract::{ExtractConfig, ExtractStats, Extractor};
use tokio::sync::Semaphore;

use crate::server::{Shared, write};
use crate::writer::{WriteDone, WriteOp};

#[derive(Default)]
struct Counts {
    runs: AtomicU64,
    failed: AtomicU64,
    skipped_busy: AtomicU64,
    proposed: AtomicU64,
    facts_added: AtomicU64,
    items_dropped: AtomicU64,
}

/// The configured extractor, its permits and its counts.
pub(crate) struct Extraction {
    extractor: Arc<dyn Extractor>,
    permits: Arc<Semaphore>,
    timeout: Duration,
    counts: Arc<Counts>,
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

/// Starts extracting facts from a memory just captured, when extraction is on and a
/// permit is free. Returns at once.
pub(crate) fn propose(shared: &Arc<Shared>, memory: MemoryId, scope: Scope, text: String) {
    let Some(x) = &shared.extract else { return };
    let Ok(permit) = x.permits.clone().try_acquire_owned() else {
        x.counts.skipped_busy.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(memory = %memory, "fact extraction skipped: all extractions are busy");
        return;
    };
    x.counts.runs.fetch_add(1, Ordering::Relaxed);
    let (extractor, counts, timeout) = (x.extractor.clone(), x.counts.clone(), x.timeout);
    // Only a weak reference while the model works: a shutdown does not wait for it.
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        let _permit = permit;
        let fail = |reason: String| {
            counts.failed.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(memory = %memory, %reason, "fact extraction failed");
        };
        let r = tokio::task::spawn_blocking(move || extractor.extract(&text, timeout)).await;
        let mut e = match r {
            Ok(Ok(e)) => e,
            Ok(Err(reason)) => return fail(reason),
            Err(join) => return fail(format!("the extraction task failed: {join}")),
        };
        let dropped = (e.skipped + e.low_confidence + e.over_cap) as u64;
        counts.items_dropped.fetch_add(dropped, Ordering::Relaxed);
        counts.proposed.fetch_add(e.facts.len() as u64, Ordering::Relaxed);
        if e.facts.is_empty() {
            tracing::debug!(memory = %memory, dropped, "fact extraction proposed nothing");
            return;
        }
        for f in &mut e.facts {
            f.sources = vec![memory.clone()];
        }
        let Some(shared) = weak.upgrade() else { return fail("the daemon stopped".into()) };
        let n = e.facts.len();
        match write(&shared, WriteOp::KgAdd(scope, Vec::new(), e.facts)).await {
            Ok(WriteDone::KgAdded(a)) => {
                counts.facts_added.fetch_add(a.facts.len() as u64, Ordering::Relaxed);
                tracing::info!(memory = %memory, proposed = n, added = a.facts.len(), dropped, "facts extracted");
            }
            Ok(_) => fail("unexpected write result".into()),
            Err(e) => fail(format!("writing the facts failed: {}", e.message)),
        }
    });
}
