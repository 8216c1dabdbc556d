//! The one writer and its indexer.
//!
//! The writer is a thread that owns every write to the store, fed by a bounded queue. A
//! write is answered as soon as its SQLite transaction commits. Indexing runs on a second
//! thread: whenever something was committed, it indexes everything committed so far in
//! one pass (so passes batch themselves under load), and publishes how far the indexes
//! reach. A commit never waits for indexing. A pass that fails (a full disk, for one) is
//! retried after 1 s, then 2, 4, ... up to 60 s; for lack of space, as soon as the disk
//! has 1 MiB more free.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use amber_core::{Memory, MemoryId, NewMemory};
use amber_engine::{DegradedCause, Engine, EngineWriter, Remembered};
use tokio::sync::{mpsc, oneshot, watch};

/// A write, as queued.
#[derive(Debug)]
pub(crate) enum WriteOp {
    Remember(Vec<NewMemory>),
    Forget(MemoryId),
    Purge(MemoryId),
    Reindex,
    KgAdd(amber_core::Scope, Vec<amber_core::graph::NewEntity>, Vec<amber_core::graph::NewFact>),
    KgInvalidate {
        fact: i64,
        at: Option<amber_core::Millis>,
        reason: Option<String>,
    },
    MoveScope {
        from: amber_core::Scope,
        to: amber_core::Scope,
    },
    /// Follow what other writers committed to a shared store (the team database).
    #[cfg(feature = "team")]
    Follow,
    /// Any other write to the store (an outcome, a run, a session record, links, ...),
    /// run here so that every write goes through the one writer (`rpc::write_with`).
    Run(Work),
}

/// What a [`WriteOp::Run`] answers: anything, taken back by its type (`rpc::write_with`).
pub(crate) type Ran = Box<dyn std::any::Any + Send>;

/// A write to run on the writer thread.
pub(crate) type WorkFn = dyn FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<Ran> + Send;

/// The closure of a [`WriteOp::Run`].
pub(crate) struct Work(pub Box<WorkFn>);

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Work")
    }
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
    #[cfg(feature = "team")]
    Followed(usize),
    /// What a [`WriteOp::Run`] returned.
    Ran(Ran),
}

pub(crate) struct Job {
    pub op: WriteOp,
    pub reply: oneshot::Sender<amber_engine::Result<WriteDone>>,
    /// The memories it files are indexed before any backlog (the person's and the hooks'
    /// writes: `rpc::Lane::Open`).
    pub first: bool,
}

/// After a failed indexing pass, the first wait before the next; it doubles with each
/// failure in a row, up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between two indexing passes that fail.
const RETRY_MAX: Duration = Duration::from_secs(60);
/// While indexing waits after a failure for lack of space, how often it looks at the free
/// space, and how much more there must be to try again before the wait is over.
const SPACE_POLL: Duration = Duration::from_millis(500);
const SPACE_REGAINED: u64 = 1 << 20;

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
    // The store's one writer, held for as long as the queue runs: nothing else in the
    // daemon can write the store.
    let mut writer = match engine.writer() {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::error!(cause = %e, "the writer could not take the store's write connection");
            None
        }
    };
    while let Some(job) = rx.blocking_recv() {
        let Some(w) = writer.as_mut() else {
            let _ = job.reply.send(Err(amber_engine::Error::WriterTaken));
            continue;
        };
        let done = match job.op {
            WriteOp::Remember(memories) => w.commit_batch(memories).map(WriteDone::Remembered),
            WriteOp::Forget(id) => w.forget(&id).map(|m| WriteDone::Forgot(m.map(Box::new))),
            WriteOp::Purge(id) => w.purge(&id).map(WriteDone::Purged),
            WriteOp::Reindex => w.reindex().map(|_| WriteDone::Reindexed),
            WriteOp::KgAdd(scope, entities, facts) => {
                w.kg_add(&scope, &entities, &facts).map(|a| WriteDone::KgAdded(Box::new(a)))
            }
            WriteOp::KgInvalidate { fact, at, reason } => w
                .kg_invalidate(fact, at, reason.as_deref())
                .map(|f| WriteDone::KgInvalidated(f.map(Box::new))),
            WriteOp::MoveScope { from, to } => w.move_scope(&from, &to).map(WriteDone::Moved),
            #[cfg(feature = "team")]
            WriteOp::Follow => w.follow().map(WriteDone::Followed),
            WriteOp::Run(Work(f)) => f(w).map(WriteDone::Ran),
        };
        if let (true, Ok(WriteDone::Remembered(r))) = (job.first, &done) {
            engine.index_first(r.iter().filter(|r| r.created).map(|r| r.memory.seq));
        }
        signal.set(|s| s.work = true);
        if job.reply.send(done).is_err() {
            tracing::debug!("the client left before its write was answered (the write stands)");
        }
    }
    drop(writer);
    signal.set(|s| s.stop = true);
    engine.stop_indexing();
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
    // Indexing is background work: it yields the CPU to the threads answering clients
    // (amber_engine::priority). Tantivy's indexing workers, started again at each BM25
    // commit from this thread, inherit it.
    amber_engine::priority::lower_this_thread(engine.background_nice());
    indexed.send_replace(engine.indexed_through());
    let mut failures = 0u32;
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
        if engine.indexed_through() >= engine.committed_through() && engine.degraded().is_empty() {
            indexed.send_replace(engine.indexed_through());
            continue;
        }
        // The engine notes each failure in `status` (degraded) and logs the first of a
        // streak and its end; here they are retried with a growing wait. A vector index
        // that could not be saved is saved again once indexing works.
        let pass = engine.index_pending().and_then(|through| {
            if engine.vector_file_unsaved() {
                engine.flush()?;
            }
            Ok(through)
        });
        match pass {
            Ok(through) => {
                failures = 0;
                indexed.send_replace(through);
            }
            Err(e) => {
                failures += 1;
                let wait = RETRY_FIRST.saturating_mul(1 << (failures - 1).min(16)).min(RETRY_MAX);
                let disk_full = engine.degraded().iter().any(|d| d.cause == DegradedCause::DiskFull);
                tracing::debug!(cause = %e, failures, ?wait, disk_full, "indexing failed; retrying");
                wait_before_retry(engine, signal, wait, disk_full);
                signal.set(|s| s.work = true);
            }
        }
    }
}

/// Waits `wait`, or less: until the daemon stops, or (when the disk was full) until the
/// data directory's filesystem has [`SPACE_REGAINED`] more bytes free than now.
fn wait_before_retry(engine: &Engine, signal: &Signal, wait: Duration, disk_full: bool) {
    let until = Instant::now() + wait;
    let free_before = if disk_full { engine.free_bytes() } else { None };
    let mut s = signal.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if s.stop || left.is_zero() {
            return;
        }
        let slice = if free_before.is_some() { left.min(SPACE_POLL) } else { left };
        s = signal.cond.wait_timeout(s, slice).unwrap_or_else(|p| p.into_inner()).0;
        if let (Some(before), Some(now)) = (free_before, engine.free_bytes())
            && now >= before.saturating_add(SPACE_REGAINED)
        {
            tracing::debug!(before, now, "space regained on the data directory's disk: indexing again");
            return;
        }
    }
}
