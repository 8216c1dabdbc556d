//! Clients: [`Client`] (blocking) and [`AsyncClient`] (tokio). Both send one request at a
//! time and wait for its response.
//!
//! The daemon closes connections that stay idle (`idle_connection_timeout_s`) and answers
//! a connection past `max_connections` with `too_many_connections` before closing it. A
//! client therefore resends a request once, on a new connection, when the daemon is known
//! not to have read it: the write found the connection closed, or the read found it reset
//! with the request still unread. Before that, whatever the daemon said on the way out
//! (its `too_many_connections` line) is returned as the error.
//!
//! A call waits for its reply [`DEFAULT_REPLY_TIMEOUT`] at most (`set_timeout` changes it,
//! `None` waits for ever): past it the call fails with [`ClientError::Timeout`] and the
//! connection is replaced before the next call, so a late reply is never read as the
//! answer to another request.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use interprocess::local_socket::prelude::*;
use interprocess::local_socket::{Name, Stream};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{
    CaptureParams, CaptureResult, ErrorKind, ErrorObject, GetParams, HelloParams, HelloResult, IdParams,
    IdentityParams, IdentityResult, LinksResult, MemoryResult, MethodSpec, NoParams, OkResult,
    PROTOCOL_VERSION, PurgeParams, PurgeResult, RecallParams, RecallResult, RememberBatchParams,
    RememberBatchResult, RememberParams, RememberResult, Request, ResolveScopeParams, ResolveScopeResult,
    Response, ScopeMoveParams, ScopeMoveResult, ScopesResult, SessionCheckpointParams,
    SessionCheckpointResult, SessionEndParams, SessionEventParams, SessionEventResult, SessionResult,
    SessionShowParams, SessionStartParams, SessionStartResult, StatusResult, method,
};
use amber_core::{MemoryId, NewMemory};

mod asynchronous;
pub use asynchronous::AsyncClient;

/// What a call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon answers on the socket.
    #[error("cannot connect to amberd at {path}: {source}")]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The connection failed mid-call.
    #[error("connection to amberd failed: {0}")]
    Io(#[from] std::io::Error),
    /// The daemon answered with an error.
    #[error("{}: {}", .0.kind().map(|k| k.as_str()).unwrap_or("error"), .0.message)]
    Server(ErrorObject),
    /// The daemon's answer did not follow the protocol.
    #[error("unexpected answer from amberd: {0}")]
    Protocol(String),
    /// No reply within the client's timeout (the daemon may still carry the call out).
    #[error("amberd did not answer {method} within {}s", .after.as_secs_f64())]
    Timeout {
        /// The method called.
        method: String,
        /// How long the client waited.
        after: std::time::Duration,
    },
}

impl ClientError {
    /// The server's error kind, when the daemon answered with an error.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            ClientError::Server(e) => e.kind(),
            _ => None,
        }
    }

    /// True when no daemon is listening (the socket is absent or refuses connections).
    pub fn is_not_running(&self) -> bool {
        matches!(self, ClientError::Connect { source, .. }
            if matches!(source.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused))
    }

    /// True when the daemon refused the connection because it serves `max_connections`
    /// already (`too_many_connections`): retry later, or close idle clients.
    pub fn is_too_many_connections(&self) -> bool {
        self.kind() == Some(ErrorKind::TooManyConnections)
    }
}

/// A write error meaning the daemon closed the connection before this request: it was
/// not read, so it can be sent again on a new connection.
fn closed_before_sent(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(e.kind(), K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::NotConnected)
}

/// A read error meaning the daemon closed the connection with the request unread (a
/// Unix socket closed with unread input resets its peer), so it can be sent again.
fn reset_unread(e: &std::io::Error, line: &[u8]) -> bool {
    e.kind() == std::io::ErrorKind::ConnectionReset && line.is_empty()
}

/// How long a client reads what the daemon said before it closed the connection.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a call waits for its reply unless told otherwise: longer than any call the
/// daemon bounds itself (a `fresh: true` recall waits 10 s for indexing, a model call
/// 30 s), short enough that a client never hangs on a daemon that stopped answering.
pub const DEFAULT_REPLY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// A read that gave up for lack of data before its timeout.
fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// The socket's name for interprocess: a file path on Unix, a named pipe on Windows.
pub fn socket_name(path: &Path) -> std::io::Result<Name<'_>> {
    #[cfg(unix)]
    {
        use interprocess::local_socket::GenericFilePath;
        path.to_fs_name::<GenericFilePath>()
    }
    #[cfg(not(unix))]
    {
        use interprocess::local_socket::GenericNamespaced;
        let flat: String =
            path.to_string_lossy().chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
        flat.to_ns_name::<GenericNamespaced>().map(|n| n.into_owned())
    }
}

fn encode(id: u64, method: &str, params: Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&Request::new(id, method, params)).unwrap_or_default();
    line.push(b'\n');
    line
}

fn decode(line: &[u8], id: u64) -> Result<Value, ClientError> {
    if line.is_empty() {
        return Err(ClientError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the daemon closed the connection",
        )));
    }
    let resp: Response =
        serde_json::from_slice(line).map_err(|e| ClientError::Protocol(format!("not a response ({e})")))?;
    if let Some(err) = resp.error {
        return Err(ClientError::Server(err));
    }
    if resp.id != id {
        return Err(ClientError::Protocol(format!("response id {} for request {id}", resp.id)));
    }
    resp.result.ok_or_else(|| ClientError::Protocol("a response with neither result nor error".into()))
}

/// One try of a call: failed for good, or to be sent again on a new connection.
enum Attempt {
    Failed(ClientError),
    Resend(ClientError),
}

impl Attempt {
    fn into_error(self) -> ClientError {
        match self {
            Attempt::Failed(e) | Attempt::Resend(e) => e,
        }
    }
}

fn params<P: Serialize>(p: &P) -> Result<Value, ClientError> {
    serde_json::to_value(p).map_err(|e| ClientError::Protocol(format!("params do not serialize ({e})")))
}

fn result<R: DeserializeOwned>(v: Value) -> Result<R, ClientError> {
    serde_json::from_value(v).map_err(|e| ClientError::Protocol(format!("unexpected result shape ({e})")))
}

/// A blocking client.
pub struct Client {
    conn: BufReader<Stream>,
    next_id: u64,
    path: PathBuf,
    timeout: Option<std::time::Duration>,
    /// A call timed out on this connection: its reply may still come, so the next call
    /// goes on a new connection.
    stale: bool,
}

impl Client {
    /// Connects to the daemon listening on `path`.
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        let err = |source| ClientError::Connect { path: path.to_path_buf(), source };
        let name = socket_name(path).map_err(err)?;
        let conn = Stream::connect(name).map_err(err)?;
        Ok(Client {
            conn: BufReader::new(conn),
            next_id: 1,
            path: path.to_path_buf(),
            timeout: Some(DEFAULT_REPLY_TIMEOUT),
            stale: false,
        })
    }

    /// How long each call waits for its reply (`None`: for ever; default
    /// [`DEFAULT_REPLY_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.timeout = timeout.filter(|t| !t.is_zero());
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls a method with JSON params; returns the JSON result. Sent again once on a new
    /// connection when the daemon had closed this one without reading the request.
    pub fn call_value(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        if self.stale {
            self.reconnect()?;
        }
        let id = self.next_id;
        self.next_id += 1;
        let request = encode(id, method, params);
        let out = match self.exchange(&request, id) {
            Err(Attempt::Resend(_)) => {
                self.reconnect()?;
                self.exchange(&request, id).map_err(Attempt::into_error)
            }
            r => r.map_err(Attempt::into_error),
        };
        match out {
            Err(ClientError::Io(e)) if timed_out(&e) => {
                self.stale = true;
                let after = self.timeout.unwrap_or_default();
                Err(ClientError::Timeout { method: method.to_string(), after })
            }
            out => out,
        }
    }

    fn exchange(&mut self, request: &[u8], id: u64) -> Result<Value, Attempt> {
        if let Err(e) = self.conn.get_mut().write_all(request) {
            if !closed_before_sent(&e) {
                return Err(Attempt::Failed(e.into()));
            }
            // The daemon closed the connection; it may have said why (too_many_connections).
            return match self.last_words() {
                Some(err) => Err(Attempt::Failed(err)),
                None => Err(Attempt::Resend(e.into())),
            };
        }
        let mut line = Vec::new();
        if let Err(e) = self.conn.get_ref().set_recv_timeout(self.timeout) {
            return Err(Attempt::Failed(e.into()));
        }
        match self.conn.read_until(b'\n', &mut line) {
            Ok(_) => decode(line.trim_ascii_end(), id).map_err(Attempt::Failed),
            Err(e) if reset_unread(&e, &line) => Err(Attempt::Resend(e.into())),
            Err(e) => Err(Attempt::Failed(e.into())),
        }
    }

    /// An error line the daemon sent before closing the connection, if any.
    fn last_words(&mut self) -> Option<ClientError> {
        let _ = self.conn.get_ref().set_recv_timeout(Some(LAST_WORDS));
        let mut line = Vec::new();
        let read = self.conn.read_until(b'\n', &mut line);
        let _ = self.conn.get_ref().set_recv_timeout(self.timeout);
        read.ok()?;
        let resp: Response = serde_json::from_slice(line.trim_ascii_end()).ok()?;
        resp.error.map(ClientError::Server)
    }

    /// Replaces the connection with a new one to the same socket.
    fn reconnect(&mut self) -> Result<(), ClientError> {
        let err = |source| ClientError::Connect { path: self.path.clone(), source };
        let name = socket_name(&self.path).map_err(err)?;
        let conn = Stream::connect(name).map_err(err)?;
        self.conn = BufReader::new(conn);
        self.stale = false;
        Ok(())
    }

    /// Calls a method with typed params and result.
    pub fn call<P: Serialize, R: DeserializeOwned>(&mut self, method: &str, p: &P) -> Result<R, ClientError> {
        let v = self.call_value(method, params(p)?)?;
        result(v)
    }

    /// Calls method `M` with the params and result types the registry declares for it
    /// (`client.send::<method::Recall>(&params)`).
    pub fn send<M: MethodSpec>(&mut self, p: &M::Params) -> Result<M::Result, ClientError> {
        self.call(M::METHOD.name(), p)
    }

    /// `hello`: the handshake.
    pub fn hello(&mut self, client: &str) -> Result<HelloResult, ClientError> {
        let p = HelloParams { client: Some(client.into()), protocol_version: Some(PROTOCOL_VERSION) };
        self.send::<method::Hello>(&p)
    }

    /// `remember`: files one memory (secrets redacted); answered once it is committed.
    pub fn remember(&mut self, memory: &NewMemory) -> Result<RememberResult, ClientError> {
        self.send::<method::Remember>(&RememberParams::from(memory.clone()))
    }

    /// `remember` with its params in full: `allow_secrets` files the memory's secrets as
    /// given (for a person doing it on purpose).
    pub fn remember_with(&mut self, p: &RememberParams) -> Result<RememberResult, ClientError> {
        self.send::<method::Remember>(p)
    }

    /// `remember_batch`: files many memories in one transaction (secrets redacted).
    pub fn remember_batch(&mut self, memories: Vec<NewMemory>) -> Result<RememberBatchResult, ClientError> {
        self.send::<method::RememberBatch>(&RememberBatchParams {
            memories,
            allow_secrets: false,
            external: false,
            tool: None,
        })
    }

    /// `remember_batch` with its params in full (`external` and `tool` for an importer).
    pub fn remember_batch_with(
        &mut self,
        p: &RememberBatchParams,
    ) -> Result<RememberBatchResult, ClientError> {
        self.send::<method::RememberBatch>(p)
    }

    /// `recall`: hybrid search.
    pub fn recall(&mut self, p: &RecallParams) -> Result<RecallResult, ClientError> {
        self.send::<method::Recall>(p)
    }

    /// `get`: one memory by id.
    pub fn get(&mut self, id: &MemoryId) -> Result<MemoryResult, ClientError> {
        self.send::<method::Get>(&GetParams { id: id.to_string(), session_id: None })
    }

    /// `get` by a whole id or a prefix of one (at least 4 hex digits).
    pub fn get_prefix(&mut self, id: &str) -> Result<MemoryResult, ClientError> {
        self.get_in_session(id, None)
    }

    /// `get` by id or prefix, read as this session (what its agent may read).
    pub fn get_in_session(
        &mut self,
        id: &str,
        session_id: Option<String>,
    ) -> Result<MemoryResult, ClientError> {
        self.send::<method::Get>(&GetParams { id: id.to_string(), session_id })
    }

    /// `resolve_scope`: the scope a working directory files into and searches.
    pub fn resolve_scope(&mut self, cwd: &Path) -> Result<ResolveScopeResult, ClientError> {
        self.send::<method::ResolveScope>(&ResolveScopeParams { cwd: cwd.to_path_buf() })
    }

    /// `scopes`: every scope with its count and project root.
    pub fn scopes(&mut self) -> Result<ScopesResult, ClientError> {
        self.send::<method::Scopes>(&NoParams)
    }

    /// `scope_move`: re-files a scope's memories into another.
    pub fn scope_move(&mut self, p: &ScopeMoveParams) -> Result<ScopeMoveResult, ClientError> {
        self.send::<method::ScopeMove>(p)
    }

    /// `session_checkpoint`: whether an agent's stop should be blocked once.
    pub fn session_checkpoint(
        &mut self,
        p: &SessionCheckpointParams,
    ) -> Result<SessionCheckpointResult, ClientError> {
        self.send::<method::SessionCheckpoint>(p)
    }

    /// `forget`: tombstones a memory.
    pub fn forget(&mut self, id: &MemoryId) -> Result<MemoryResult, ClientError> {
        self.send::<method::Forget>(&IdParams { id: id.clone() })
    }

    /// `purge`: deletes a forgotten memory for good.
    pub fn purge(&mut self, id: &MemoryId, now: bool) -> Result<PurgeResult, ClientError> {
        self.send::<method::Purge>(&PurgeParams { id: id.clone(), now })
    }

    /// `unforget`: a forgotten memory back, as it was (a person's call).
    pub fn unforget(&mut self, id: &MemoryId) -> Result<MemoryResult, ClientError> {
        self.send::<method::Unforget>(&IdParams { id: id.clone() })
    }

    /// `identity`: the project's coordination files within a token budget.
    pub fn identity(&mut self, p: &IdentityParams) -> Result<IdentityResult, ClientError> {
        self.send::<method::Identity>(p)
    }

    /// `capture`: files a session's text, with limits and secret redaction.
    pub fn capture(&mut self, p: &CaptureParams) -> Result<CaptureResult, ClientError> {
        self.send::<method::Capture>(p)
    }

    /// `session_start`: a session id, the identity and the briefing.
    pub fn session_start(&mut self, p: &SessionStartParams) -> Result<SessionStartResult, ClientError> {
        self.send::<method::SessionStart>(p)
    }

    /// `session_event`: the interjection decision (and capture) for one event.
    pub fn session_event(&mut self, p: &SessionEventParams) -> Result<SessionEventResult, ClientError> {
        self.send::<method::SessionEvent>(p)
    }

    /// `session_end`: files the transcript, curates, returns the session's record.
    pub fn session_end(&mut self, p: &SessionEndParams) -> Result<SessionResult, ClientError> {
        self.send::<method::SessionEnd>(p)
    }

    /// `session_show`: a session's record, live or ended.
    pub fn session_show(&mut self, session_id: &str) -> Result<SessionResult, ClientError> {
        self.send::<method::SessionShow>(&SessionShowParams { session_id: session_id.into() })
    }

    /// `links`: the curation links from or to a memory.
    pub fn links(&mut self, id: &MemoryId) -> Result<LinksResult, ClientError> {
        self.send::<method::Links>(&IdParams { id: id.clone() })
    }

    /// `kg_add`: entities and facts, one transaction.
    pub fn kg_add(
        &mut self,
        p: &crate::protocol::KgAddParams,
    ) -> Result<crate::protocol::KgAddResult, ClientError> {
        self.send::<method::KgAdd>(p)
    }

    /// `kg_invalidate`: ends a fact's window.
    pub fn kg_invalidate(
        &mut self,
        p: &crate::protocol::KgInvalidateParams,
    ) -> Result<crate::protocol::KgFactResult, ClientError> {
        self.send::<method::KgInvalidate>(p)
    }

    /// `kg_query`: the facts about an entity valid at a moment.
    pub fn kg_query(
        &mut self,
        p: &crate::protocol::KgEntityParams,
    ) -> Result<crate::protocol::KgFactsResult, ClientError> {
        self.send::<method::KgQuery>(p)
    }

    /// `kg_timeline`: every fact about an entity, in time order.
    pub fn kg_timeline(
        &mut self,
        p: &crate::protocol::KgEntityParams,
    ) -> Result<crate::protocol::KgFactsResult, ClientError> {
        self.send::<method::KgTimeline>(p)
    }

    /// `kg_traverse`: paths out from an entity with the memories behind them.
    pub fn kg_traverse(
        &mut self,
        p: &crate::protocol::KgTraverseParams,
    ) -> Result<crate::protocol::KgTraverseResult, ClientError> {
        self.send::<method::KgTraverse>(p)
    }

    /// `kg_stats`.
    pub fn kg_stats(
        &mut self,
        p: &crate::protocol::KgStatsParams,
    ) -> Result<crate::protocol::KgStatsResult, ClientError> {
        self.send::<method::KgStats>(p)
    }

    /// `status`.
    pub fn status(&mut self) -> Result<StatusResult, ClientError> {
        self.send::<method::Status>(&NoParams)
    }

    /// `reindex`: rebuilds the indexes from the store.
    pub fn reindex(&mut self) -> Result<OkResult, ClientError> {
        self.send::<method::Reindex>(&NoParams)
    }

    /// `shutdown`: asks the daemon to stop (after in-flight writes).
    pub fn shutdown(&mut self) -> Result<OkResult, ClientError> {
        self.send::<method::Shutdown>(&NoParams)
    }
}
