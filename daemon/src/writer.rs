//! The one writer: a thread that owns every write to the store and the indexes, fed by a
//! bounded queue. A write is answered as soon as its SQLite transaction commits; indexing
//! follows, in batches, when the queue is idle or has built up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use amber_core::{Memory, MemoryId, NewMemory};
use amber_engine::{Engine, Remembered};
use tokio::sync::{mpsc, oneshot, watch};

/// A write, as queued.
#[derive(Debug)]
pub(crate) enum WriteOp {
    Remember(Vec<NewMemory>),
    Forget(MemoryId),
    Purge(MemoryId),
    Reindex,
}

/// What a write did.
#[derive(Debug)]
pub(crate) enum WriteDone {
    Remembered(Vec<Remembered>),
    Forgot(Option<Box<Memory>>),
    Purged(bool),
    Reindexed,
}

pub(crate) struct Job {
    pub op: WriteOp,
    pub reply: oneshot::Sender<amber_engine::Result<WriteDone>>,
}

/// Index at the latest when this many sequence numbers are waiting...
const INDEX_BACKLOG: u64 = 256;
/// ...or when the oldest unindexed write is this old.
const INDEX_EVERY: Duration = Duration::from_millis(200);
/// After a failed indexing pass, wait this long before the next one.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Runs until every sender is dropped and the queue is drained. Publishes the seq the
/// indexes cover on `indexed`.
pub(crate) fn run(engine: Arc<Engine>, mut rx: mpsc::Receiver<Job>, indexed: watch::Sender<u64>) {
    let mut last_index = Instant::now();
    let mut failed_at: Option<Instant> = None;
    let index = |failed_at: &mut Option<Instant>, last_index: &mut Instant| {
        *last_index = Instant::now();
        match engine.index_pending() {
            Ok(through) => {
                *failed_at = None;
                indexed.send_replace(through);
            }
            Err(e) => {
                tracing::error!(cause = %e, "indexing failed; the writes are committed and will be indexed later");
                *failed_at = Some(Instant::now());
            }
        }
    };
    indexed.send_replace(engine.indexed_through());
    loop {
        let pending = engine.indexed_through() < engine.committed_through();
        let may_retry = failed_at.is_none_or(|t| t.elapsed() >= RETRY_AFTER);
        let job = match rx.try_recv() {
            Ok(job) => job,
            Err(mpsc::error::TryRecvError::Empty) if pending && may_retry => {
                index(&mut failed_at, &mut last_index);
                continue;
            }
            Err(mpsc::error::TryRecvError::Empty) => match rx.blocking_recv() {
                Some(job) => job,
                None => break,
            },
            Err(mpsc::error::TryRecvError::Disconnected) => break,
        };
        let done = match job.op {
            WriteOp::Remember(memories) => engine.commit_batch(memories).map(WriteDone::Remembered),
            WriteOp::Forget(id) => engine.forget(&id).map(|m| WriteDone::Forgot(m.map(Box::new))),
            WriteOp::Purge(id) => engine.purge(&id).map(WriteDone::Purged),
            WriteOp::Reindex => {
                let r = engine.reindex().map(|_| WriteDone::Reindexed);
                indexed.send_replace(engine.indexed_through());
                r
            }
        };
        if job.reply.send(done).is_err() {
            tracing::debug!("the client left before its write was answered (the write stands)");
        }
        let backlog = engine.committed_through().saturating_sub(engine.indexed_through());
        if backlog > 0
            && (backlog >= INDEX_BACKLOG || last_index.elapsed() >= INDEX_EVERY)
            && failed_at.is_none_or(|t| t.elapsed() >= RETRY_AFTER)
        {
            index(&mut failed_at, &mut last_index);
        }
    }
    if let Err(e) = engine.flush() {
        tracing::warn!(cause = %e, "could not save the vector index; it will be caught up at the next start");
    }
    tracing::info!("writer stopped");
}
