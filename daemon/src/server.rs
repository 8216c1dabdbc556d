//! Connections and methods: read a line, answer a line, keep serving whatever a client
//! sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use amber_core::NewMemory;
use amber_engine::Engine;
use amber_ipc::Config;
use amber_ipc::frame::{Frame, Framer, parse_request};
use amber_ipc::protocol::{
    CaptureParams, CaptureResult, ErrorKind, ErrorObject, HelloParams, HelloResult, IdParams, IdentityParams,
    LinksResult, MAX_BATCH, METHODS, MemoryResult, OkResult, PROTOCOL_VERSION, PurgeResult, RecallParams,
    RecallResult, RememberBatchParams, RememberResult, Request, Response, StatusResult,
};
use amber_tiers::capture::Captured;
use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::traits::StreamCommon as _;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use crate::writer::{Job, WriteDone, WriteOp};

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
    pub sessions: crate::sessions::Sessions,
    /// Fact extraction from captures, when configured.
    pub extract: Option<crate::extract::Extraction>,
}

impl Shared {
    fn queue_depth(&self) -> usize {
        self.writes.max_capacity() - self.writes.capacity()
    }
}

/// Waits until shutdown is asked.
pub(crate) async fn shutdown_asked(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|&s| s).await;
}

/// Serves one connection until the client leaves or the daemon shuts down.
pub(crate) async fn serve_connection(conn: Stream, shared: Arc<Shared>) {
    shared.connections.fetch_add(1, Ordering::Relaxed);
    let _count = scopeguard(&shared.connections);
    if let Err(reason) = check_peer(&conn, shared.uid) {
        tracing::warn!(%reason, "connection refused");
        let e = ErrorObject::new(ErrorKind::InvalidRequest, format!("connection refused: {reason}"));
        let _ = (&conn).write_all(&Response::err(Value::Null, e).to_line()).await;
        return;
    }
    let mut reader = BufReader::new(&conn);
    let mut writer = &conn;
    let mut framer = Framer::new(shared.config.max_frame_bytes);
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        let frame = tokio::select! {
            f = next_frame(&mut reader, &mut framer) => f,
            _ = shutdown_asked(&mut shutdown) => break,
        };
        let (response, stop) = match frame {
            Ok(Some(Frame::Line(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                handle_line(&line, &shared).await
            }
            Ok(Some(Frame::TooLarge(n))) => {
                let msg = format!(
                    "the request line is {n} bytes, over the limit of {} bytes (max_frame_bytes)",
                    framer.max()
                );
                (Some(Response::err(Value::Null, ErrorObject::new(ErrorKind::FrameTooLarge, msg))), false)
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(cause = %e, "connection read failed");
                break;
            }
        };
        if let Some(r) = response
            && let Err(e) = writer.write_all(&r.to_line()).await
        {
            tracing::debug!(cause = %e, "client left before its answer was sent");
            break;
        }
        if stop {
            let _ = shared.shutdown.send(true);
            break;
        }
    }
}

/// Decrements the connection count when dropped.
struct CountGuard<'a>(&'a AtomicUsize);
fn scopeguard(c: &AtomicUsize) -> CountGuard<'_> {
    CountGuard(c)
}
impl Drop for CountGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn check_peer(conn: &Stream, uid: Option<u32>) -> Result<(), String> {
    let Some(uid) = uid else { return Ok(()) };
    match conn.peer_creds() {
        Ok(creds) => match creds.euid() {
            Some(peer) if peer == uid => Ok(()),
            Some(peer) => Err(format!("peer uid {peer} is not the daemon's uid {uid}")),
            None => Err("the peer's uid is unknown".into()),
        },
        Err(e) => Err(format!("cannot read the peer's credentials ({e})")),
    }
}

/// Reads the next frame; `None` at end of input (a partial last line is dropped).
async fn next_frame<R: AsyncBufRead + Unpin>(
    r: &mut R,
    framer: &mut Framer,
) -> std::io::Result<Option<Frame>> {
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(None);
        }
        let (n, frame) = framer.feed(buf);
        r.consume(n);
        if frame.is_some() {
            return Ok(frame);
        }
    }
}

/// Answers one line. Returns the response (none for a notification) and whether the
/// daemon should stop afterwards.
async fn handle_line(line: &[u8], shared: &Arc<Shared>) -> (Option<Response>, bool) {
    let req = match parse_request(line) {
        Ok(r) => r,
        Err(bad) => return (Some(Response::err(bad.id, bad.error)), false),
    };
    let id = req.id.clone();
    let method = req.method.clone();
    let started = Instant::now();
    let outcome = dispatch(req, shared).await;
    tracing::debug!(%method, ms = started.elapsed().as_secs_f64() * 1e3, ok = outcome.is_ok(), "request");
    let stop = method == "shutdown" && outcome.is_ok();
    let Some(id) = id else { return (None, stop) };
    let resp = match outcome {
        Ok(v) => Response::ok(id, v),
        Err(e) => Response::err(id, e),
    };
    (Some(resp), stop)
}

pub(crate) fn invalid(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorKind::InvalidParams, msg)
}

/// Params into a type; absent params read as `{}`.
pub(crate) fn params<T: DeserializeOwned>(method: &str, v: Value) -> Result<T, ErrorObject> {
    let v = if v.is_null() { json!({}) } else { v };
    serde_json::from_value(v).map_err(|e| invalid(format!("{method}: {e}")))
}

fn no_params(method: &str, v: &Value) -> Result<(), ErrorObject> {
    match v {
        Value::Null => Ok(()),
        Value::Object(o) if o.is_empty() => Ok(()),
        _ => Err(invalid(format!("{method} takes no params"))),
    }
}

pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(v).map_err(|e| {
        tracing::error!(cause = %e, "a result did not serialize");
        ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")
    })
}

/// Maps an engine error to the wire. Internal details go to the log, not the client.
pub(crate) fn engine_error(e: amber_engine::Error) -> ErrorObject {
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
        amber_engine::Error::Store(s) if s.is_disk_full() => {
            tracing::error!(cause = %s, "disk full");
            ErrorObject::new(ErrorKind::StorageFull, "the disk is full: nothing was written")
        }
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

/// Runs a read on the blocking pool.
pub(crate) async fn read<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Engine) -> amber_engine::Result<T> + Send + 'static,
) -> Result<T, ErrorObject> {
    let engine = shared.engine.clone();
    match tokio::task::spawn_blocking(move || f(&engine)).await {
        Ok(r) => r.map_err(engine_error),
        Err(e) => {
            tracing::error!(cause = %e, "a read task failed");
            Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"))
        }
    }
}

/// Queues a write for the writer and waits for its answer.
pub(crate) async fn write(shared: &Arc<Shared>, op: WriteOp) -> Result<WriteDone, ErrorObject> {
    if *shared.shutdown.borrow() {
        return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon is shutting down"));
    }
    if matches!(op, WriteOp::Remember(_)) {
        let behind = shared.engine.committed_through().saturating_sub(shared.engine.indexed_through());
        if behind >= shared.config.max_index_backlog {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                format!("indexing is {behind} memories behind (max_index_backlog): retry shortly"),
            ));
        }
    }
    let (tx, rx) = oneshot::channel();
    match shared.writes.try_send(Job { op, reply: tx }) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) => {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                format!(
                    "the write queue is full ({} writes waiting): retry shortly",
                    shared.writes.max_capacity()
                ),
            ));
        }
        Err(mpsc::error::TrySendError::Closed(_)) => {
            return Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon is shutting down"));
        }
    }
    match rx.await {
        Ok(r) => r.map_err(engine_error),
        Err(_) => Err(ErrorObject::new(ErrorKind::ShuttingDown, "the daemon stopped before the write ran")),
    }
}

pub(crate) fn remembered(done: WriteDone) -> Vec<RememberResult> {
    match done {
        WriteDone::Remembered(v) => v
            .into_iter()
            .map(|r| RememberResult { id: r.memory.id, seq: r.memory.seq, created: r.created })
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

async fn dispatch(req: Request, shared: &Arc<Shared>) -> Result<Value, ErrorObject> {
    let m = req.method.as_str();
    match m {
        "hello" => {
            let p: HelloParams = params(m, req.params)?;
            if let Some(v) = p.protocol_version
                && v != PROTOCOL_VERSION
            {
                return Err(ErrorObject::new(
                    ErrorKind::UnsupportedProtocol,
                    format!("this daemon speaks protocol version {PROTOCOL_VERSION}, the client {v}"),
                ));
            }
            tracing::debug!(client = p.client.as_deref().unwrap_or("?"), "hello");
            to_value(&HelloResult {
                server: "amberd".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                protocol_version: PROTOCOL_VERSION,
                methods: METHODS.iter().map(|s| s.to_string()).collect(),
                model: shared.engine.model_id().to_string(),
            })
        }
        "remember" => {
            let memory: NewMemory = params(m, req.params)?;
            validate_all(std::slice::from_ref(&memory))?;
            let done = write(shared, WriteOp::Remember(vec![memory])).await?;
            let r =
                remembered(done).pop().ok_or_else(|| ErrorObject::new(ErrorKind::Internal, "no result"))?;
            to_value(&r)
        }
        "remember_batch" => {
            let p: RememberBatchParams = params(m, req.params)?;
            if p.memories.is_empty() || p.memories.len() > MAX_BATCH {
                return Err(invalid(format!(
                    "remember_batch takes 1 to {MAX_BATCH} memories, got {}",
                    p.memories.len()
                )));
            }
            validate_all(&p.memories)?;
            let done = write(shared, WriteOp::Remember(p.memories)).await?;
            Ok(json!({ "results": to_value(&remembered(done))? }))
        }
        "recall" => {
            let p: RecallParams = params(m, req.params)?;
            let q = p.query();
            q.validate().map_err(|e| invalid(e.to_string()))?;
            let session = match &p.session_id {
                Some(id) => Some(shared.sessions.get(id).ok_or_else(|| crate::sessions::not_found(id))?),
                None => None,
            };
            let fresh = if p.fresh.unwrap_or(true) { wait_indexed(shared).await } else { false };
            let hits = read(shared, move |e| e.recall(&q)).await?;
            let given_earlier: Vec<amber_tiers::session::Served> = match &session {
                Some(s) => hits.iter().filter_map(|h| s.served_earlier(&h.memory.id).cloned()).collect(),
                None => Vec::new(),
            };
            to_value(&RecallResult { hits, fresh, given_earlier })
        }
        "get" => crate::scopes::get(shared, params(m, req.params)?).await,
        "resolve_scope" => crate::scopes::resolve_method(shared, params(m, req.params)?).await,
        "scopes" => {
            no_params(m, &req.params)?;
            crate::scopes::list(shared).await
        }
        "scope_move" => crate::scopes::move_method(shared, params(m, req.params)?).await,
        "session_checkpoint" => crate::sessions::checkpoint(shared, params(m, req.params)?).await,
        "forget" => {
            let p: IdParams = params(m, req.params)?;
            match write(shared, WriteOp::Forget(p.id.clone())).await? {
                WriteDone::Forgot(Some(memory)) => to_value(&MemoryResult { memory: *memory }),
                _ => Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))),
            }
        }
        "purge" => {
            let p: IdParams = params(m, req.params)?;
            match write(shared, WriteOp::Purge(p.id.clone())).await? {
                WriteDone::Purged(true) => to_value(&PurgeResult { id: p.id, purged: true }),
                _ => Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))),
            }
        }
        "status" => {
            no_params(m, &req.params)?;
            let engine = read(shared, |e| e.status()).await?;
            to_value(&StatusResult {
                protocol_version: PROTOCOL_VERSION,
                version: env!("CARGO_PKG_VERSION").into(),
                pid: std::process::id(),
                uptime_seconds: shared.started.elapsed().as_secs_f64(),
                socket: shared.socket.clone(),
                connections: shared.connections.load(Ordering::Relaxed),
                queue_depth: shared.queue_depth(),
                engine: to_value(&engine)?,
                extract: shared.extract.as_ref().map(|x| x.stats()),
            })
        }
        "reindex" => {
            no_params(m, &req.params)?;
            write(shared, WriteOp::Reindex).await?;
            to_value(&OkResult { ok: true })
        }
        "capture" => {
            let p: CaptureParams = params(m, req.params)?;
            let kind = p.kind.unwrap_or(amber_core::MemoryType::Event);
            let r = capture_text(shared, &p.content, p.scope, kind, p.source, p.session_id, p.author).await?;
            to_value(&r)
        }
        "identity" => {
            let p: IdentityParams = params(m, req.params)?;
            if !p.cwd.is_absolute() || !p.cwd.is_dir() {
                return Err(invalid(format!(
                    "cwd must be an existing absolute directory: {}",
                    p.cwd.display()
                )));
            }
            let mut cfg = shared.config.identity.clone();
            if let Some(b) = p.budget_tokens {
                cfg.budget_tokens = b;
            }
            let id = read(shared, move |_| Ok(amber_tiers::identity::assemble(&p.cwd, &cfg))).await?;
            to_value(&id)
        }
        "session_start" => crate::sessions::start(shared, params(m, req.params)?).await,
        "session_event" => crate::sessions::event(shared, params(m, req.params)?).await,
        "session_end" => crate::sessions::end_method(shared, params(m, req.params)?).await,
        "session_show" => crate::sessions::show(shared, params(m, req.params)?).await,
        "kg_add" => crate::graph::add(shared, params(m, req.params)?).await,
        "kg_invalidate" => crate::graph::invalidate(shared, params(m, req.params)?).await,
        "kg_query" => crate::graph::query(shared, params(m, req.params)?, false).await,
        "kg_timeline" => crate::graph::query(shared, params(m, req.params)?, true).await,
        "kg_traverse" => crate::graph::traverse(shared, params(m, req.params)?).await,
        "kg_stats" => crate::graph::stats(shared, params(m, req.params)?).await,
        "links" => {
            let p: IdParams = params(m, req.params)?;
            let id = p.id.clone();
            let links = read(shared, move |e| e.links_of(&id)).await?;
            to_value(&LinksResult { links })
        }
        "shutdown" => {
            no_params(m, &req.params)?;
            tracing::info!("shutdown asked by a client");
            to_value(&OkResult { ok: true })
        }
        other => Err(ErrorObject::new(
            ErrorKind::MethodNotFound,
            format!("unknown method {:?}; this daemon serves {}", truncate(other, 64), METHODS.join(", ")),
        )),
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Files a captured text: size limits, secret redaction, then a write (type, source and
/// session as given; metadata `{captured, redacted}`). A new memory's text then goes to
/// fact extraction in the background, when it is configured.
pub(crate) async fn capture_text(
    shared: &Arc<Shared>,
    content: &str,
    scope: amber_core::Scope,
    kind: amber_core::MemoryType,
    source: Option<String>,
    session_id: Option<String>,
    author: Option<String>,
) -> Result<CaptureResult, ErrorObject> {
    match amber_tiers::capture::capture(content, &shared.config.capture) {
        Captured::Skip(reason) => {
            Ok(CaptureResult { filed: false, skipped: Some(reason), memory: None, redacted: 0 })
        }
        Captured::File { text, redacted } => {
            // The stored (redacted) text is what an extractor sees.
            let for_extraction = shared.extract.is_some().then(|| (text.clone(), scope.clone()));
            let mut memory = NewMemory::new(text).in_scope(scope);
            memory.kind = kind;
            memory.source = source;
            memory.session_id = session_id;
            memory.author = author;
            memory.metadata = json!({ "captured": true, "redacted": redacted });
            validate_all(std::slice::from_ref(&memory))?;
            let done = write(shared, WriteOp::Remember(vec![memory])).await?;
            let r = remembered(done).pop();
            if let (Some((text, scope)), Some(m)) = (for_extraction, &r)
                && m.created
            {
                crate::extract::propose(shared, m.id.clone(), scope, text);
            }
            Ok(CaptureResult { filed: true, skipped: None, memory: r, redacted })
        }
    }
}

/// Waits until the indexes cover every write committed before now. False when that took
/// longer than `fresh_timeout_ms` (the recall then runs on what is indexed).
pub(crate) async fn wait_indexed(shared: &Arc<Shared>) -> bool {
    let target = shared.engine.committed_through();
    let mut rx = shared.indexed.clone();
    let timeout = Duration::from_millis(shared.config.fresh_timeout_ms);
    match tokio::time::timeout(timeout, rx.wait_for(|&v| v >= target)).await {
        Ok(Ok(_)) => true,
        Ok(Err(_)) => shared.engine.indexed_through() >= target,
        Err(_) => {
            tracing::warn!(target, "recall waited {timeout:?} for indexing; answering from what is indexed");
            false
        }
    }
}
