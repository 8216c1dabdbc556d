//! Connections: the accept loop's per-connection task, the framing (a line in, a line
//! out, whatever a client sends), the timeouts that close a connection nobody uses, and
//! the handing of each request to `dispatch`.

use crate::peer::Peer;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use amber_ipc::frame::{Frame, Framer, parse_request};
use amber_ipc::protocol::{ErrorKind, ErrorObject, Response};
use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::traits::StreamCommon as _;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::dispatch::dispatch;
use crate::state::{Shared, shutdown_asked};

/// How long the answer to a connection over `max_connections` may take to write (it fits
/// in a fresh socket's buffer, so this is never reached by a live client).
const REFUSE_WRITE_TIMEOUT: Duration = Duration::from_millis(500);

/// A connection's time limits (from the config).
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// From the first byte of a request line to its newline.
    frame: Duration,
    /// From the last reply (or the accept) to the first byte of the next request.
    idle: Duration,
    /// To write one reply.
    reply: Duration,
}

impl Limits {
    fn of(config: &amber_ipc::Config) -> Limits {
        Limits {
            frame: Duration::from_millis(config.frame_timeout_ms),
            idle: Duration::from_secs(config.idle_connection_timeout_s),
            reply: Duration::from_millis(config.reply_timeout_ms),
        }
    }
}

/// What reading the next request produced.
enum Next {
    /// A frame.
    Frame(Frame),
    /// The client closed its end.
    Closed,
    /// Nothing arrived within the idle timeout.
    Idle,
    /// A request line was begun and not finished within the frame timeout.
    Stalled,
}

/// Answers a connection past `max_connections` with `too_many_connections` (id null) and
/// closes it, so the client gets a clear error at once instead of waiting.
pub(crate) async fn refuse(conn: Stream, max_connections: usize) {
    let e = ErrorObject::new(
        ErrorKind::TooManyConnections,
        format!(
            "amberd is serving its limit of connections (max_connections = {max_connections}): \
             close idle clients or raise max_connections, then retry"
        ),
    );
    let line = Response::err(Value::Null, e).to_line();
    let _ = tokio::time::timeout(REFUSE_WRITE_TIMEOUT, (&conn).write_all(&line)).await;
}

/// Serves one connection until the client leaves, the daemon shuts down, or the
/// connection times out (see [`Limits`]).
pub(crate) async fn serve_connection(conn: Stream, shared: Arc<Shared>) {
    shared.connections.fetch_add(1, Ordering::Relaxed);
    let _count = scopeguard(&shared.connections);
    if let Err(reason) = check_peer(&conn, shared.uid) {
        tracing::warn!(%reason, "connection refused");
        let e = ErrorObject::new(ErrorKind::InvalidRequest, format!("connection refused: {reason}"));
        let line = Response::err(Value::Null, e).to_line();
        let _ = tokio::time::timeout(REFUSE_WRITE_TIMEOUT, (&conn).write_all(&line)).await;
        return;
    }
    // The door a write came through: from the connecting process, not its say-so.
    let peer = Peer::of_pid(conn.peer_creds().ok().and_then(|c| c.pid()).map(i64::from));
    let limits = Limits::of(&shared.config);
    let mut reader = BufReader::new(&conn);
    let mut writer = &conn;
    let mut framer = Framer::new(shared.config.max_frame_bytes);
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        let next = tokio::select! {
            f = next_frame(&mut reader, &mut framer, limits) => f,
            _ = shutdown_asked(&mut shutdown) => break,
        };
        let (response, stop) = match next {
            Ok(Next::Frame(Frame::Line(line))) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                handle_line(&line, &shared, peer).await
            }
            Ok(Next::Frame(Frame::TooLarge(n))) => {
                let msg = format!(
                    "the request line is {n} bytes, over the limit of {} bytes (max_frame_bytes)",
                    framer.max()
                );
                (Some(Response::err(Value::Null, ErrorObject::new(ErrorKind::FrameTooLarge, msg))), false)
            }
            Ok(Next::Closed) => break,
            Ok(Next::Idle) => {
                tracing::debug!(
                    secs = limits.idle.as_secs(),
                    "closing an idle connection (idle_connection_timeout_s)"
                );
                break;
            }
            Ok(Next::Stalled) => {
                tracing::debug!(
                    ms = limits.frame.as_millis() as u64,
                    "closing a connection whose request line stayed incomplete (frame_timeout_ms)"
                );
                break;
            }
            Err(e) => {
                tracing::debug!(cause = %e, "connection read failed");
                break;
            }
        };
        // The reply is written before the next request is read: a client that does not
        // read holds one reply and the socket's buffer, until reply_timeout_ms.
        if let Some(r) = response {
            match tokio::time::timeout(limits.reply, writer.write_all(&r.to_line())).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(cause = %e, "client left before its answer was sent");
                    break;
                }
                Err(_) => {
                    tracing::debug!(
                        ms = limits.reply.as_millis() as u64,
                        "closing a connection that does not read its replies (reply_timeout_ms)"
                    );
                    break;
                }
            }
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

/// Reads the next frame (a partial last line at end of input is dropped). Gives up when
/// no byte arrives within `limits.idle`, or a begun line is not finished within
/// `limits.frame` of its first byte.
async fn next_frame<R: AsyncBufRead + Unpin>(
    r: &mut R,
    framer: &mut Framer,
    limits: Limits,
) -> std::io::Result<Next> {
    let idle_until = tokio::time::Instant::now() + limits.idle;
    let mut frame_until = None;
    loop {
        let deadline = frame_until.unwrap_or(idle_until);
        let buf = match tokio::time::timeout_at(deadline, r.fill_buf()).await {
            Ok(b) => b?,
            Err(_) => return Ok(if frame_until.is_some() { Next::Stalled } else { Next::Idle }),
        };
        if buf.is_empty() {
            return Ok(Next::Closed);
        }
        let (n, frame) = framer.feed(buf);
        r.consume(n);
        if let Some(f) = frame {
            return Ok(Next::Frame(f));
        }
        if frame_until.is_none() && framer.has_partial() {
            frame_until = Some(tokio::time::Instant::now() + limits.frame);
        }
    }
}

/// Answers one line. Returns the response (none for a notification) and whether the
/// daemon should stop afterwards.
async fn handle_line(line: &[u8], shared: &Arc<Shared>, peer: Peer) -> (Option<Response>, bool) {
    let req = match parse_request(line) {
        Ok(r) => r,
        Err(bad) => return (Some(Response::err(bad.id, bad.error)), false),
    };
    let id = req.id.clone();
    let method = req.method.clone();
    let started = Instant::now();
    let outcome = dispatch(req, shared, peer).await;
    tracing::debug!(%method, ms = started.elapsed().as_secs_f64() * 1e3, ok = outcome.is_ok(), "request");
    let stop = method == "shutdown" && outcome.is_ok();
    let Some(id) = id else { return (None, stop) };
    let resp = match outcome {
        Ok(v) => Response::ok(id, v),
        Err(e) => Response::err(id, e),
    };
    (Some(resp), stop)
}
