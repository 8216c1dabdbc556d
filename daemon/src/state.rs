//! What every connection and method shares: the engine, the config, the write queue,
//! the indexing watermark, the shutdown signal, the live sessions and fact extraction.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use amber_engine::Engine;
use amber_ipc::Config;
use tokio::sync::{mpsc, watch};

use crate::writer::Job;

/// What every connection shares.
pub(crate) struct Shared {
    pub engine: Arc<Engine>,
    pub config: Config,
    pub socket: String,
    pub writes: mpsc::Sender<Job>,
    pub indexed: watch::Receiver<u64>,
    pub shutdown: watch::Sender<bool>,
    pub connections: AtomicUsize,
    pub started: Instant,
    /// Our effective uid: peers must have the same.
    pub uid: Option<u32>,
    /// Live sessions and the judge.
    pub sessions: crate::live::Sessions,
    /// Fact extraction from captures, when configured.
    pub extract: Option<crate::extract::Extraction>,
    /// The model advice is learned by (`[learn]`), when one is configured.
    pub learner: Option<amber_tiers::advice::Learner>,
}

impl Shared {
    pub(crate) fn queue_depth(&self) -> usize {
        self.writes.max_capacity() - self.writes.capacity()
    }
}

/// Waits until shutdown is asked.
pub(crate) async fn shutdown_asked(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|&s| s).await;
}
