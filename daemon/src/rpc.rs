//! The RPC plumbing every method family uses: params in, results out, errors mapped to
//! the wire, reads on the blocking pool, writes through the one writer's queue, and the
//! wait for indexing to catch up.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use amber_core::NewMemory;
use amber_engine::{Engine, EngineWriter};
use amber_ipc::protocol::{Access, ErrorKind, ErrorObject, RememberResult};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::state::Shared;
use crate::team::Side;
use crate::writer::{Job, WriteDone, WriteOp};

pub(crate) fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorKind::InvalidParams, msg)
}

/// An agent's name as a method takes it (trimmed): letters, digits, `-`, `_`, `.`, `:`,
/// at most 64, and not `all` or `self` (those name recipients, not agents).
pub(crate) fn agent_name(agent: &str) -> Result<String, ErrorObject> {
    let a = agent.trim();
    if !amber_core::valid_recipient(a) || a == "all" || a == "self" {
        return Err(invalid(format!(
            "agent must be an agent's name (letters, digits, - _ . :), got {agent:?}"
        )));
    }
    Ok(a.to_string())
}

/// Params into a type; absent params read as `{}`.
pub(crate) fn params<T: DeserializeOwned>(method: &str, v: Value) -> Result<T, ErrorObject> {
    let v = if v.is_null() { json!({}) } else { v };
    serde_json::from_value(v).map_err(|e| invalid(format!("{method}: {e}")))
}

pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(v).map_err(|e| {
        tracing::error!(cause = %e, "a result did not serialize");
        ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")
    })
}

/// When a write was last refused for a full disk in the log (Millis).
static DISK_FULL_LOGGED: AtomicI64 = AtomicI64::new(0);

/// Maps an engine error to the wire. Internal details go to the log, not the client.
pub(crate) fn engine_error(e: amber_engine::Error) -> ErrorObject {
    if e.is_model_away() || (e.is_model_unavailable() && e.to_string().contains("embeddings endpoint")) {
        // The person's embeddings server (away, or refusing): its own words, not setup.
        tracing::warn!(cause = %e, "embeddings endpoint");
        return ErrorObject::new(ErrorKind::ModelUnavailable, e.to_string());
    }
    if e.is_model_unavailable() {
        tracing::error!(cause = %e, "embedding model unavailable");
        return ErrorObject::new(
            ErrorKind::ModelUnavailable,
            "the embedding model or runtime is unavailable: run scripts/setup.sh (see the daemon log)",
        );
    }
    match e {
        amber_engine::Error::Invalid(i) => invalid(i.to_string()),
        amber_engine::Error::NotForgotten => ErrorObject::new(
            ErrorKind::NotForgotten,
            "purge deletes forgotten memories only: forget it first",
        ),
        e @ (amber_engine::Error::SupersedesUnknown { .. }
        | amber_engine::Error::SupersedesLifefact { .. }) => invalid(e.to_string()),
        e @ amber_engine::Error::Superseded { .. } => ErrorObject::new(ErrorKind::Superseded, e.to_string()),
        amber_engine::Error::Store(s) if s.is_disk_full() => {
            // Every write refused on a full disk would say the same: once a minute.
            let now = amber_core::now_millis();
            let last = DISK_FULL_LOGGED.load(Ordering::Relaxed);
            if now - last >= 60_000
                && DISK_FULL_LOGGED.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            {
                tracing::error!(cause = %s, "disk full: writes answered storage_full (logged once a minute)");
            } else {
                tracing::debug!(cause = %s, "disk full");
            }
            ErrorObject::new(ErrorKind::StorageFull, "the disk is full: nothing was written")
        }
        // What a store refuses to do, in its words (a backup over an existing file).
        amber_engine::Error::Store(amber_store::Error::Unsupported(why)) => invalid(why),
        amber_engine::Error::Store(s) => {
            tracing::error!(cause = %s, "store error");
            ErrorObject::new(ErrorKind::StorageError, "the store failed (see the daemon log)")
        }
        other => {
            tracing::error!(cause = %other, "engine error");
            ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")
        }
    }
}

/// Runs a read on the blocking pool (the local store). Writes go to the writer:
/// [`write`] for memories, [`write_with`] for everything else.
pub(crate) async fn read<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Engine) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    read_on(shared, &shared.local(), f).await
}

/// Runs a read on the blocking pool, on one side (local or team). It is handed `&Engine`,
/// so it cannot write the store (the writer thread holds the one `EngineWriter`).
pub(crate) async fn read_on<T: Send + 'static>(
    shared: &Arc<Shared>,
    side: &Side,
    f: impl FnOnce(&Engine) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    let engine = side.engine.clone();
    match tokio::task::spawn_blocking(move || f(&engine)).await {
        Ok(r) => r.map_err(|e| side_error(shared, e)),
        Err(e) => {
            tracing::error!(cause = %e, "a read task failed");
            Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"))
        }
    }
}

/// Runs blocking work that is not a read of the store on the blocking pool: model calls
/// (advice passes, which read through an engine of their own and write through
/// [`BlockingWriter`]), identity files. Reads of the store go through [`read`].
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ErrorObject> + Send + 'static,
) -> Result<T, ErrorObject> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        tracing::error!(cause = %e, "a blocking task failed");
        Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"))
    })
}

/// Runs a write on the local writer once the daemon is stopping (the last session
/// records, `session::save_all`), when [`write_with`] refuses new writes: the writer
/// drains its queue until the daemon drops it, so these still go through it (waiting for
/// room in a full queue rather than answering `busy`). Refused before the shutdown.
pub(crate) async fn write_at_shutdown<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    if !*shared.shutdown.borrow() {
        tracing::error!("a write at shutdown was asked before the shutdown");
        return Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"));
    }
    let (tx, rx) = oneshot::channel();
    if shared.local().writes.send(Job { op: run_op(f), reply: tx, first: false }).await.is_err() {
        return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the writer stopped before the write ran"));
    }
    ran(answer(shared, rx).await?)
}

/// An engine error on the wire; a team database that cannot be reached is noted for
/// `status` and answered `team_unavailable`.
fn side_error(shared: &Shared, e: amber_engine::Error) -> ErrorObject {
    if e.is_unavailable() {
        let why = e.to_string();
        if let Some(t) = &shared.team {
            t.note(Some(why.clone()));
        }
        return crate::team::unavailable(Some(why));
    }
    engine_error(e)
}

/// Queues a write for the writer and waits for its answer (the local store).
pub(crate) async fn write(shared: &Arc<Shared>, op: WriteOp) -> Result<WriteDone, ErrorObject> {
    write_on(shared, &shared.local(), op).await
}

/// Which lane a write of memories takes past the indexing backlog (`max_index_backlog`,
/// written `max` here). Bulk work waits so that the person and the hooks never do:
/// - [`Lane::Open`]: the person's own writes (a few at a time) and the agent hooks'
///   captures: never refused for the backlog;
/// - [`Lane::Single`]: one memory from anyone else: `busy` once `max` behind;
/// - [`Lane::Bulk`]: batches, ingest, import: `busy` once they would take the backlog past
///   `max / 2` (a batch is always let in when indexing has caught up), so bulk work
///   keeps the backlog at about half the limit and the other lanes always have room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Never refused for the backlog.
    Open,
    /// One memory.
    Single,
    /// This many memories at once (0: a call whose size is not known yet).
    Bulk(usize),
}

/// The most memories at once that the person's door and the hooks file in the open lane.
const OPEN_LANE_MAX: usize = 16;

impl Lane {
    /// The lane of `n` memories filed by this peer.
    pub(crate) fn of(peer: crate::peer::Peer, n: usize) -> Lane {
        let person_or_hook = peer.writer_trust() == amber_core::origin::Trust::Person
            || peer.door == amber_core::origin::Door::Hook;
        match n {
            _ if person_or_hook && n <= OPEN_LANE_MAX => Lane::Open,
            1 => Lane::Single,
            n => Lane::Bulk(n),
        }
    }
}

/// `busy` when this lane must wait for indexing ([`Lane`]). Not when indexing is stopped
/// by a full disk: the write is tried, and stored (to be indexed when space returns) or
/// answered `storage_full`.
pub(crate) fn within_backlog(shared: &Shared, side: &Side, lane: Lane) -> Result<(), ErrorObject> {
    let engine = &side.engine;
    // A full disk: tried and stored or refused; the model away: stored, indexed when
    // it answers (writes are acknowledged either way, not answered `busy`).
    if matches!(
        engine.indexing_stalled(),
        Some(amber_engine::DegradedCause::DiskFull | amber_engine::DegradedCause::ModelAway)
    ) {
        return Ok(());
    }
    let behind = engine.backlog();
    let max = shared.config.max_index_backlog;
    let refused = match lane {
        Lane::Open => false,
        Lane::Single => behind >= max,
        Lane::Bulk(n) => behind > 0 && behind + n as u64 > (max / 2).max(1),
    };
    if refused {
        let why = match lane {
            Lane::Bulk(_) => "bulk work waits at half of max_index_backlog, so that single writes never do",
            _ => "max_index_backlog",
        };
        return Err(ErrorObject::new(
            ErrorKind::Busy,
            format!("indexing is {behind} memories behind ({why}): retry shortly"),
        ));
    }
    Ok(())
}

/// Queues a write for one side's writer (local or team) and waits for its answer; memories
/// in the lane their number gives ([`Lane::Single`] or [`Lane::Bulk`]).
pub(crate) async fn write_on(
    shared: &Arc<Shared>,
    side: &Side,
    op: WriteOp,
) -> Result<WriteDone, ErrorObject> {
    let lane = match &op {
        WriteOp::Remember(m) if m.len() == 1 => Lane::Single,
        WriteOp::Remember(m) => Lane::Bulk(m.len()),
        _ => Lane::Open,
    };
    write_in_lane(shared, side, op, lane).await
}

tokio::task_local! {
    /// Whether the method being answered on this task is declared a read or a write
    /// (`Method::access`); set by the dispatch.
    pub(crate) static DECLARED: Access;
}

/// True on the task of a method declared a read (not on tasks it spawned: their writes
/// are background work, as an idle pass's).
fn declared_read() -> bool {
    DECLARED.try_with(|a| *a == Access::Read).unwrap_or(false)
}

/// [`write_on`] in a given lane. Refused (an internal error, logged) on the task of a
/// method the registry declares a read: what it declares is what it does, and MCP
/// clients take a read-only tool's call as safe to make unasked.
pub(crate) async fn write_in_lane(
    shared: &Arc<Shared>,
    side: &Side,
    op: WriteOp,
    lane: Lane,
) -> Result<WriteDone, ErrorObject> {
    if declared_read() {
        // Not the operation itself: a memory's content does not go to the log.
        tracing::error!("a method declared a read asked for a write: refused");
        return Err(ErrorObject::new(
            ErrorKind::Internal,
            "internal error: a method declared a read asked for a write (see the daemon log)",
        ));
    }
    if *shared.shutdown.borrow() {
        return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon is shutting down"));
    }
    if matches!(op, WriteOp::Remember(_)) {
        within_backlog(shared, side, lane)?;
    }
    let (tx, rx) = oneshot::channel();
    let first = lane == Lane::Open && matches!(op, WriteOp::Remember(_));
    match side.writes.try_send(Job { op, reply: tx, first }) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) => {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                format!(
                    "the write queue is full ({} writes waiting): retry shortly",
                    side.writes.max_capacity()
                ),
            ));
        }
        Err(mpsc::error::TrySendError::Closed(_)) => {
            return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon is shutting down"));
        }
    }
    answer(shared, rx).await
}

/// A queued write's answer.
async fn answer(
    shared: &Shared,
    rx: oneshot::Receiver<amber_engine::Result<WriteDone>>,
) -> Result<WriteDone, ErrorObject> {
    match rx.await {
        Ok(r) => r.map_err(|e| side_error(shared, e)),
        Err(_) => Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon stopped before the write ran")),
    }
}

/// Runs a write that is not a memory (an outcome, a run, a session record, links, a
/// release) on the writer, after the checks every write gets (shutting down, a full
/// queue): the daemon has one writer. Its result comes back as `f` returned it.
pub(crate) async fn write_with<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    write_with_on(shared, &shared.local(), f).await
}

/// Writes from blocking work (a pass of model calls on the blocking pool: learning,
/// judging, routing advice, linking skills): each goes through the writer, with the same
/// checks as [`write_with`] from async code. There is one write path.
#[derive(Clone)]
pub(crate) struct BlockingWriter {
    shared: Arc<Shared>,
    handle: tokio::runtime::Handle,
}

impl BlockingWriter {
    /// A writer for blocking work started from the daemon's runtime.
    pub(crate) fn new(shared: &Arc<Shared>) -> BlockingWriter {
        BlockingWriter { shared: shared.clone(), handle: tokio::runtime::Handle::current() }
    }

    /// Runs `f` on the writer and waits for it (never from async code).
    pub(crate) fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<T> + Send + 'static,
    ) -> Result<T, ErrorObject> {
        self.handle.block_on(write_with(&self.shared, f))
    }
}

impl crate::model::OnWriter for BlockingWriter {
    fn run(&self, f: crate::model::Switch) -> Result<(), String> {
        self.write(f).map_err(|e| e.message)
    }
}

/// [`write_with`] on one side's writer (local or team).
pub(crate) async fn write_with_on<T: Send + 'static>(
    shared: &Arc<Shared>,
    side: &Side,
    f: impl FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    ran(write_on(shared, side, run_op(f)).await?)
}

/// A closure for the writer, as queued.
fn run_op<T: Send + 'static>(
    f: impl FnOnce(&mut EngineWriter<'_>) -> amber_engine::Result<T> + Send + 'static,
) -> WriteOp {
    WriteOp::Run(crate::writer::Work(Box::new(move |w: &mut EngineWriter<'_>| {
        f(w).map(|t| Box::new(t) as Box<dyn std::any::Any + Send>)
    })))
}

/// What a closure run on the writer returned, taken back by its type.
fn ran<T: 'static>(done: WriteDone) -> Result<T, ErrorObject> {
    match done {
        WriteDone::Ran(out) => out.downcast::<T>().map(|t| *t).map_err(|_| {
            ErrorObject::new(ErrorKind::Internal, "internal error: a write answered another type")
        }),
        other => {
            tracing::error!(?other, "a write answered for another operation");
            Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"))
        }
    }
}

pub(crate) fn remembered(done: WriteDone) -> Vec<RememberResult> {
    match done {
        WriteDone::Remembered(v) => v
            .into_iter()
            .map(|r| RememberResult {
                id: r.memory.id,
                seq: r.memory.seq,
                created: r.created,
                redacted: 0,
                disputed: Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

pub(crate) fn validate_all(memories: &[NewMemory]) -> Result<(), ErrorObject> {
    for (i, m) in memories.iter().enumerate() {
        m.validate().map_err(|e| {
            invalid(if memories.len() > 1 { format!("memories[{i}]: {e}") } else { e.to_string() })
        })?;
    }
    Ok(())
}

/// A recall waits for indexing only while at most this many committed memories are not
/// indexed yet. More means someone is writing faster than the indexer embeds (a flood,
/// a big import): the recall answers at once from what is indexed, `fresh: false`,
/// instead of waiting behind another client's writes (measured: `amber-eval fairness`,
/// docs/RELIABILITY.md).
pub(crate) const FRESH_WAIT_BACKLOG: u64 = 64;

/// Nor while more than this many bytes of content wait to be indexed: one huge memory
/// (a megabyte is about a thousand chunks to embed) is a backlog however few memories
/// it is. 64 KiB is about a second of embedding on two cores.
pub(crate) const FRESH_WAIT_BYTES: u64 = 64 * 1024;

/// The longest a default recall waits for indexing (less when `fresh_timeout_ms` is
/// less): the backlog it waits for is small (the bounds above), so this is reached only
/// on a machine too busy to index it; only `fresh: true` waits up to `fresh_timeout_ms`.
pub(crate) const FRESH_WAIT_SHORT: Duration = Duration::from_millis(2_000);

/// How a read waits for indexing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fresh {
    /// Not at all (`fresh: false`).
    Skip,
    /// Unless more than [`FRESH_WAIT_BACKLOG`] memories or [`FRESH_WAIT_BYTES`] of content
    /// wait to be indexed, and for at most [`FRESH_WAIT_SHORT`] (the default).
    UnlessBacklog,
    /// Up to `fresh_timeout_ms` whatever the backlog (`fresh: true`).
    Always,
}

impl Fresh {
    /// From a recall's `fresh`.
    pub(crate) fn of(asked: Option<bool>) -> Fresh {
        match asked {
            None => Fresh::UnlessBacklog,
            Some(true) => Fresh::Always,
            Some(false) => Fresh::Skip,
        }
    }
}

/// [`wait_indexed_on`] as `fresh` says: true when the indexes cover every write
/// committed before now.
pub(crate) async fn wait_fresh_on(shared: &Arc<Shared>, side: &Side, fresh: Fresh) -> bool {
    let engine = &side.engine;
    let behind = engine.backlog();
    let bytes = engine.pending_bytes();
    match fresh {
        Fresh::Skip => false,
        Fresh::UnlessBacklog if behind > FRESH_WAIT_BACKLOG || bytes > FRESH_WAIT_BYTES => {
            tracing::debug!(behind, bytes, "a read not waiting behind a backlog of indexing");
            false
        }
        Fresh::UnlessBacklog => wait_indexed_for(shared, side, FRESH_WAIT_SHORT).await,
        Fresh::Always => wait_indexed_on(shared, side).await,
    }
}

/// Waits until the indexes cover every write committed before now. False when that took
/// longer than `fresh_timeout_ms` (the recall then runs on what is indexed).
/// Does not wait while indexing is failing (see `status`, `degraded`).
pub(crate) async fn wait_indexed(shared: &Arc<Shared>) -> bool {
    wait_indexed_on(shared, &shared.local()).await
}

/// [`wait_indexed`] on one side.
pub(crate) async fn wait_indexed_on(shared: &Arc<Shared>, side: &Side) -> bool {
    wait_indexed_for(shared, side, Duration::MAX).await
}

/// [`wait_indexed_on`] for at most `bound` (and at most `fresh_timeout_ms`).
async fn wait_indexed_for(shared: &Arc<Shared>, side: &Side, bound: Duration) -> bool {
    let engine = &side.engine;
    let target = engine.committed_through();
    if engine.indexing_stalled().is_some() {
        return engine.indexed_through() >= target;
    }

    let mut rx = side.indexed.clone();
    let timeout = Duration::from_millis(shared.config.fresh_timeout_ms).min(bound);
    match tokio::time::timeout(timeout, rx.wait_for(|&v| v >= target)).await {
        Ok(Ok(_)) => true,
        Ok(Err(_)) => engine.indexed_through() >= target,
        Err(_) if bound < Duration::from_millis(shared.config.fresh_timeout_ms) => {
            tracing::debug!(target, "a read waited {timeout:?} for indexing; answering from what is indexed");
            false
        }
        Err(_) => {
            tracing::warn!(target, "recall waited {timeout:?} for indexing; answering from what is indexed");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the dispatch declares holds on the handler's task, and only there.
    #[tokio::test]
    async fn a_write_is_refused_on_the_task_of_a_method_declared_a_read() {
        assert!(!declared_read(), "outside any method (an idle pass): writes go");
        assert!(DECLARED.scope(Access::Read, async { declared_read() }).await);
        assert!(!DECLARED.scope(Access::Write, async { declared_read() }).await);
        let spawned =
            DECLARED.scope(Access::Read, async { tokio::spawn(async { declared_read() }).await }).await;
        assert!(!spawned.unwrap(), "background work a read starts is not the read");
    }
}
