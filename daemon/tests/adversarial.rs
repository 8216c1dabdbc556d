//! The adversarial suite: a hostile or broken local process against the real daemon, on
//! local sockets only, each test bounded in time. docs/RELIABILITY.md lists every fault
//! tried, what held and the figures; add new faults here.
//!
//! - Connection exhaustion: `max_connections` connections held open, half of them with
//!   half a request line sent; more clients are answered `too_many_connections` at once,
//!   the half-sent ones are closed after `frame_timeout_ms`, a legit client is served,
//!   and the silent ones are closed after `idle_connection_timeout_s`.
//! - Clients that pipeline requests and never read a reply: the daemon's RSS stays
//!   bounded, other clients are served, and the connections are closed after
//!   `reply_timeout_ms`.
//!
//! (`kill -9` under a write load is in `daemon.rs`.)

use std::io::{ErrorKind as IoKind, Read, Write};
use std::time::{Duration, Instant};

use amber_core::MemoryId;
use amber_ipc::Client;
use amber_ipc::protocol::{ErrorKind, RecallParams, Response};
use interprocess::local_socket::Stream;
use interprocess::local_socket::traits::Stream as _;
use serde_json::Value;

mod common;
use common::*;

/// The daemon's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Reads one line (or until EOF) with a deadline: the bytes, and whether EOF came first.
fn read_line_within(conn: &mut Stream, limit: Duration) -> std::io::Result<(Vec<u8>, bool)> {
    conn.set_recv_timeout(Some(limit))?;
    let mut out = Vec::new();
    let mut byte = [0u8; 1024];
    loop {
        let n = conn.read(&mut byte)?;
        if n == 0 {
            return Ok((out, true));
        }
        out.extend_from_slice(&byte[..n]);
        if out.contains(&b'\n') {
            return Ok((out, false));
        }
    }
}

/// Waits for the daemon to close `conn` (EOF); how long that took from `since`.
fn closed_after(conn: &mut Stream, since: Instant, limit: Duration) -> Duration {
    match read_line_within(conn, limit) {
        Ok((bytes, true)) => {
            assert!(bytes.is_empty(), "the daemon answered before closing: {bytes:?}");
            since.elapsed()
        }
        Ok((bytes, false)) => panic!("expected a close, got {:?}", String::from_utf8_lossy(&bytes)),
        Err(e) if e.kind() == IoKind::ConnectionReset => since.elapsed(),
        Err(e) => panic!("the connection was not closed within {limit:?}: {e}"),
    }
}

#[test]
fn connection_exhaustion_is_refused_at_once_and_stuck_connections_are_closed() {
    const MAX: usize = 256;
    let (d, _dir) = with_config(&format!(
        "max_connections = {MAX}\nframe_timeout_ms = 1500\nidle_connection_timeout_s = 4\n"
    ));
    // Every slot taken: half the connections sent half a request line, half nothing.
    let t0 = Instant::now();
    let mut half_sent = Vec::new();
    let mut silent = Vec::new();
    for i in 0..MAX {
        let mut c = d.raw();
        if i % 2 == 0 {
            c.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"sta"#).unwrap();
            half_sent.push((c, Instant::now()));
        } else {
            silent.push(c);
        }
    }
    let sent_at = Instant::now();
    // The daemon accepts in order: wait until the last one holds its slot (the next
    // connection is then refused).
    std::thread::sleep(Duration::from_millis(200));

    // More clients: each is answered too_many_connections (id null) at once and closed.
    let mut slowest = Duration::ZERO;
    for _ in 0..32 {
        let asked = Instant::now();
        let mut c = d.raw();
        // The daemon may have answered and closed before this write: that is fine.
        let _ = c.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"status\"}\n");
        let (line, _) = read_line_within(&mut c, Duration::from_secs(2)).expect("an answer at once");
        slowest = slowest.max(asked.elapsed());
        let r: Response = serde_json::from_slice(&line).unwrap();
        assert_eq!(error_kind(&r), ErrorKind::TooManyConnections, "{r:?}");
        assert_eq!(r.id, Value::Null);
        let (rest, eof) = read_line_within(&mut c, Duration::from_secs(2)).unwrap_or((Vec::new(), true));
        assert!(eof && rest.is_empty(), "the refused connection stays open");
    }
    assert!(slowest < Duration::from_secs(1), "a refusal took {slowest:?}");
    // The daemon's own client says so clearly.
    let e = Client::connect(&d.socket).unwrap().status().unwrap_err();
    assert!(e.is_too_many_connections(), "{e}");
    assert!(e.to_string().contains("max_connections"), "{e}");

    // The half-sent connections are closed after frame_timeout_ms (not before).
    let mut first_close = Duration::MAX;
    for (c, written) in &mut half_sent {
        let after = closed_after(c, *written, Duration::from_secs(5));
        first_close = first_close.min(after);
        assert!(after >= Duration::from_millis(1450), "closed after {after:?}, before frame_timeout_ms");
    }
    let frame_closed = sent_at.elapsed();
    assert!(frame_closed < Duration::from_secs(4), "half-sent connections closed after {frame_closed:?}");

    // Their slots are free again: a legit client is served.
    let asked = Instant::now();
    let mut legit = d.client();
    let st = legit.status().unwrap();
    let served_in = asked.elapsed();
    assert!(served_in < Duration::from_secs(2), "the legit client waited {served_in:?}");
    assert_eq!(st.connections, MAX / 2 + 1, "{st:?}");

    // The silent ones go after idle_connection_timeout_s.
    for c in &mut silent {
        let after = closed_after(c, t0, Duration::from_secs(8));
        assert!(after >= Duration::from_millis(3500), "an idle connection closed after {after:?}");
    }
    let idle_closed = t0.elapsed();
    // The legit client's own connection was idle as long: its client reconnects by itself.
    std::thread::sleep(Duration::from_millis(4200).saturating_sub(asked.elapsed()));
    let st = legit.status().unwrap();
    assert_eq!(st.connections, 1, "{st:?}");
    eprintln!(
        "exhaustion: {MAX} held, 32 refused (slowest {slowest:?}), half-sent closed from {first_close:?} \
         after their bytes (all by {frame_closed:?}), legit client served in {served_in:?}, idle ones closed \
         by {idle_closed:?}"
    );
}

#[test]
fn clients_that_never_read_their_replies_leave_rss_bounded_and_others_served() {
    let (d, _dir) = with_config("reply_timeout_ms = 1500\n");
    let pid = d.child.id();
    let mut c = d.client();
    // One memory of 64 KiB: each `get` answers about 64 KiB.
    let sentence = "The staging bucket rotates its access logs every night at two. ";
    let content: String = sentence.repeat(64 * 1024 / sentence.len());
    let id: MemoryId = c.remember(&memory(&content, "big")).unwrap().id;
    // Indexing done (a recall waits for it), so its memory is in the baseline.
    assert!(c.recall(&RecallParams::new("when are the access logs rotated?")).unwrap().fresh);
    for _ in 0..20 {
        assert_eq!(c.get(&id).unwrap().memory.content.len(), content.len());
    }
    drop(c);
    let before = rss_kib(pid);

    // Eight clients each pipeline 4,000 gets (250 MiB of replies each, were they
    // buffered) and never read.
    const READERS: usize = 8;
    const REQUESTS: usize = 4000;
    let request =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\",\"params\":{{\"id\":\"{id}\"}}}}\n");
    let started = Instant::now();
    let writers: Vec<_> = (0..READERS)
        .map(|_| {
            let mut conn = d.raw();
            let request = request.clone();
            std::thread::spawn(move || {
                // Writes block once the socket buffers are full (the daemon stops reading
                // while its reply waits), and fail once the daemon closes the connection.
                conn.set_send_timeout(Some(Duration::from_secs(15))).unwrap();
                let mut sent = 0usize;
                while sent < REQUESTS && conn.write_all(request.as_bytes()).is_ok() {
                    sent += 1;
                }
                (sent, started.elapsed())
            })
        })
        .collect();

    // Meanwhile other clients are served, and the daemon's memory stays put.
    std::thread::sleep(Duration::from_millis(500));
    let mut peak = before;
    let mut slowest = Duration::ZERO;
    let mut other = d.client();
    for _ in 0..10 {
        let t = Instant::now();
        assert_eq!(other.get(&id).unwrap().memory.content.len(), content.len());
        other.status().unwrap();
        slowest = slowest.max(t.elapsed());
        peak = peak.max(rss_kib(pid));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(slowest < Duration::from_secs(1), "another client waited {slowest:?}");

    // After reply_timeout_ms the stuck connections are closed: their writers see it.
    let mut sent_total = 0;
    let mut last_closed = Duration::ZERO;
    for w in writers {
        let (sent, at) = w.join().unwrap();
        assert!(sent < REQUESTS, "all {REQUESTS} requests went through to a client that never reads");
        sent_total += sent;
        last_closed = last_closed.max(at);
    }
    assert!(last_closed < Duration::from_secs(10), "the stuck connections were closed after {last_closed:?}");
    peak = peak.max(rss_kib(pid));
    let st = other.status().unwrap();
    assert_eq!(st.connections, 1, "{st:?}");
    let grew = peak.saturating_sub(before);
    eprintln!(
        "never-read: {READERS} clients, {sent_total} requests taken by the sockets before they blocked, \
         all closed by {last_closed:?}; RSS {before} KiB -> peak {peak} KiB (+{grew} KiB); \
         another client's slowest call {slowest:?}"
    );
    assert!(grew < 64 * 1024, "the daemon's RSS grew by {grew} KiB");
}
