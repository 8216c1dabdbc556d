//! The one writer and its indexer.
//!
//! The writer is a thread that owns every write to the store, fed by a bounded queue. A
//! write is answered as soon as its SQLite transaction commits. Indexing runs on a second
//! thread: whenever something was committed, it indexes everything committed so far in
//! one pass (so passes batch themselves under load), and publishes how far the indexes
//! reach. A commit never waits for indexing.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

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
    KgAdd(amber_core::Scope, Vec<amber_core::graph::NewEntity>, Vec<amber_core::graph::NewFact>),
    KgInvalidate { fact: i64, at: Option<amber_core::Millis>, reason: Option<String> },
    MoveScope { from: amber_core::Scope, to: amber_core::Scope },
}

/// What a write did.
#[derive(Debug)]
pub(crate) enum WriteDone {
    Remembered(Vec<Remembered>),
    Forgot(Option<Box<Memory>>),
    Purged(bool),
    Reindexed,
    KgAdded(Box<amber_store::KgAdded>),
    KgInvalidated(Option<Box<amber_core::graph::Fact>>),
    Moved(Vec<amber_engine::Moved>),
}

pub(crate) struct Job {
    pub op: WriteOp,
    pub reply: oneshot::Sender<amber_engine::Result<WriteDone>>,
}

/// After a failed indexing pass, wait this long before the next one.
const RETRY_AFTER: Duration = Duration::from_secs(5);

#[derive(Default)]
struct Wake {
    /// Something was committed since the indexer last looked.
    work: bool,
    /// The writer has stopped: finish.
    stop: bool,
}

/// Wakes the indexer.
struct Signal {
    state: Mutex<Wake>,
    cond: Condvar,
}

impl Signal {
    fn set(&self, f: impl FnOnce(&mut Wake)) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s);
        self.cond.notify_one();
    }
}

/// Runs until every sender is dropped and the queue is drained. Publishes the seq the
/// indexes cover on `indexed`.
pub(crate) fn run(engine: Arc<Engine>, mut rx: mpsc::Receiver<Job>, indexed: watch::Sender<u64>) {
    let signal =
        Arc::new(Signal { state: Mutex::new(Wake { work: true, stop: false }), cond: Condvar::new() });
    let indexer = {
        let (engine, signal) = (engine.clone(), signal.clone());
        std::thread::Builder::new()
            .name("amberd-indexer".into())
            .spawn(move || index_loop(&engine, &signal, &indexed))
    };
    let indexer = match indexer {
        Ok(h) => Some(h),
        Err(e) => {
            tracing::error!(cause = %e, "cannot start the indexer thread; writes will be indexed at the next start");
            None
        }
    };
    while let Some(job) = rx.blocking_recv() {
        let done = match job.op {
            WriteOp::Remember(memories) => engine.commit_batch(memories).map(WriteDone::Remembered),
            WriteOp::Forget(id) => engine.forget(&id).map(|m| WriteDone::Forgot(m.map(Box::new))),
            WriteOp::Purge(id) => engine.purge(&id).map(WriteDone::Purged),
            WriteOp::Reindex => engine.reindex().map(|_| WriteDone::Reindexed),
            WriteOp::KgAdd(scope, entities, facts) => {
                engine.kg_add(&scope, &entities, &facts).map(|a| WriteDone::KgAdded(Box::new(a)))
            }
            WriteOp::KgInvalidate { fact, at, reason } => engine
                .kg_invalidate(fact, at, reason.as_deref())
                .map(|f| WriteDone::KgInvalidated(f.map(Box::new))),
            WriteOp::MoveScope { from, to } => engine.move_scope(&from, &to).map(WriteDone::Moved),
        };
        signal.set(|s| s.work = true);
        if job.reply.send(done).is_err() {
            tracing::debug!("the client left before its write was answered (the write stands)");
        }
    }
    signal.set(|s| s.stop = true);
    if let Some(h) = indexer
        && h.join().is_err()
    {
        tracing::error!("the indexer thread panicked");
    }
    if let Err(e) = engine.flush() {
        tracing::warn!(cause = %e, "could not save the vector index; it will be caught up at the next start");
    }
    tracing::info!("writer stopped");
}

fn index_loop(engine: &Engine, signal: &Signal, indexed: &watch::Sender<u64>) {
    indexed.send_replace(engine.indexed_through());
    loop {
        {
            let mut s = signal.state.lock().unwrap_or_else(|p| p.into_inner());
            while !s.work && !s.stop {
                s = signal.cond.wait(s).unwrap_or_else(|p| p.into_inner());
            }
            if s.stop {
                // What is left is indexed at the next start; stopping stays quick.
                let left = engine.committed_through().saturating_sub(engine.indexed_through());
                if left > 0 {
                    tracing::info!(
                        seqs = left,
                        "stopping with writes not yet indexed; the next start indexes them"
                    );
                }
                return;
            }
            s.work = false;
        }
        if engine.indexed_through() >= engine.committed_through() {
            indexed.send_replace(engine.indexed_through());
            continue;
        }
        match engine.index_pending() {
            Ok(through) => {
                indexed.send_replace(through);
            }
            Err(e) => {
                tracing::error!(cause = %e, "indexing failed; the writes are committed and will be indexed later");
                let s = signal.state.lock().unwrap_or_else(|p| p.into_inner());
                let (mut s, _) = signal
                    .cond
                    .wait_timeout_while(s, RETRY_AFTER, |s| !s.stop)
                    .unwrap_or_else(|p| p.into_inner());
                s.work = true;
            }
        }
    }
}
