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
//! - A full disk (a 12 MiB tmpfs; skipped, saying so, where it cannot be mounted): writes
//!   answer `storage_full` at once, reads go on, indexing stops, says so once and resumes
//!   when space returns, the daemon restarts on the full disk, and no acknowledged write
//!   is lost.
//! - Symbolic links planted at the socket path, at the data directory and in it: amberd
//!   refuses to start and the files they point at are left as they were.
//! - SIGTERM under a write load: a clean exit within a bound, the socket removed, every
//!   acknowledged write there after a restart.
//!
//! (`kill -9` under a write load is in `daemon.rs`.)

use std::io::{ErrorKind as IoKind, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use amber_core::{MemoryId, NewMemory, SearchMode};
use amber_ipc::Client;
use amber_ipc::protocol::{ErrorKind, RecallParams, Response};
use interprocess::local_socket::Stream;
use interprocess::local_socket::traits::Stream as _;
use serde_json::Value;

use crate::common;
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
    // Indexing done (a `fresh: true` recall waits for it, however busy the machine), so
    // its memory is in the baseline.
    let mut p = RecallParams::new("when are the access logs rotated?");
    p.fresh = Some(true);
    assert!(c.recall(&p).unwrap().fresh);
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

/// A tmpfs mounted for a test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` at `dir`; the reason when this process may not.
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Ok(Tmpfs(dir.to_path_buf())),
            Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the filesystem holding `path` with one file, then gives `leave` bytes back.
/// Returns the file's size.
fn plant_filler(path: &Path, leave: u64) -> u64 {
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0x5a_u8; 64 * 1024];
    let mut written = 0u64;
    loop {
        match f.write(&block) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    let size = written.saturating_sub(leave);
    f.set_len(size).unwrap();
    size
}

/// About 8 KiB: a marker word of its own, then words every memory shares (so indexing
/// embeds one new chunk per memory, the rest comes from the embedding cache).
fn disk_memory(n: usize) -> NewMemory {
    memory(&format!("disk test memory {n} marker zq{n}q {}", "padding ".repeat(1000)), "disk")
}

/// The engine's `degraded` entry for `part`, if any.
fn degraded(c: &mut Client, part: &str) -> Option<Value> {
    let st = c.status().unwrap();
    st.engine["degraded"].as_array().unwrap().iter().find(|d| d["part"] == part).cloned()
}

/// Polls `f` every 100 ms until it is true; panics with `what` after `limit`.
fn wait_until(limit: Duration, what: &str, mut f: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    t.elapsed()
}

/// Lines of the daemon's log files (in `<root>/state/logs`) that contain `text`.
fn log_lines(root: &Path, text: &str) -> usize {
    let Ok(files) = std::fs::read_dir(root.join("state").join("logs")) else { return 0 };
    files
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .map(|log| log.lines().filter(|l| l.contains(text)).count())
        .sum()
}

#[test]
fn a_full_disk_answers_storage_full_keeps_serving_reads_and_loses_no_acknowledged_write() {
    let root = tempfile::tempdir().unwrap();
    let disk = root.path().join("disk");
    let tmpfs = match Tmpfs::mount(&disk, "12m") {
        Ok(t) => t,
        Err(why) => {
            return skipped(&format!("the full-disk test: cannot mount a tmpfs ({why}); it needs root"));
        }
    };
    let data = disk.join("data");
    let socket = root.path().join("run").join("amber.sock");
    let filler = disk.join("filler");
    let start = |extra: &[&str]| Daemon::start_on(root.path(), &data, &socket, extra);

    // Fill the disk: a filler file leaves 1.5 MiB, then writes of 8 memories of 8 KiB.
    // Indexing may fall 32 memories behind before writes are answered `busy`.
    let d = start(&["--max-index-backlog", "32"]).unwrap();
    let mut c = d.client();
    let filler_size = plant_filler(&filler, 1536 * 1024);
    let mut acked: Vec<(MemoryId, String)> = Vec::new();
    let (mut n, mut busy) = (0, 0);
    let t0 = Instant::now();
    let mut first_full = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the disk never filled: {} acknowledged",
            acked.len()
        );
        let batch: Vec<NewMemory> = (n..n + 8).map(disk_memory).collect();
        n += 8;
        let asked = Instant::now();
        match c.remember_batch(batch.clone()) {
            Ok(r) => {
                acked.extend(r.results.iter().zip(&batch).map(|(r, m)| (r.id.clone(), m.content.clone())))
            }
            Err(e) if e.kind() == Some(ErrorKind::Busy) => {
                busy += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if e.kind() == Some(ErrorKind::StorageFull) => break asked.elapsed(),
            Err(e) => panic!("a write on a filling disk: {e}"),
        }
    };
    let filled_in = t0.elapsed();
    assert!(!acked.is_empty());

    // Indexing stops for lack of space, and says so in `status`.
    wait_until(Duration::from_secs(20), "indexing degraded for a full disk", || {
        degraded(&mut c, "indexing").is_some_and(|d| d["cause"] == "disk_full")
    });
    // A write that does not fit answers storage_full at once, never `busy` (indexing is
    // behind, and stays so). A single memory may still fit where 8 did not.
    let mut refused = 0;
    while refused < 3 {
        assert!(n < 10_000, "writes kept fitting on a full disk");
        let m = disk_memory(n);
        n += 1;
        let asked = Instant::now();
        match c.remember(&m) {
            Ok(r) => acked.push((r.id, m.content.clone())),
            Err(e) => {
                assert_eq!(e.kind(), Some(ErrorKind::StorageFull), "a write on a full disk: {e}");
                refused += 1;
                first_full = first_full.max(asked.elapsed());
            }
        }
    }
    assert!(first_full < Duration::from_secs(1), "storage_full took {first_full:?}");
    // Reads go on: every acknowledged memory, a recall (at once, on what is indexed),
    // status.
    for (id, content) in &acked {
        assert_eq!(&c.get(id).unwrap().memory.content, content);
    }
    let asked = Instant::now();
    let r = c.recall(&RecallParams::new("which disk test memory?")).unwrap();
    let recall_took = asked.elapsed();
    assert!(!r.fresh, "indexing cannot be complete on a full disk");
    assert!(recall_took < Duration::from_secs(2), "a recall on a full disk took {recall_took:?}");
    // Indexing is retried (1 s, then 2 s, ...), and the log says it once.
    wait_until(Duration::from_secs(15), "indexing retried", || {
        degraded(&mut c, "indexing").is_some_and(|d| d["failures"].as_u64().unwrap() >= 3)
    });
    let stalled = degraded(&mut c, "indexing").unwrap();
    let failures_1 = stalled["failures"].as_u64().unwrap();
    let failing_for = (amber_core::now_millis() - stalled["since"].as_i64().unwrap()) as f64 / 1e3;
    let st = c.status().unwrap();
    let behind_1 =
        st.engine["committed_through"].as_u64().unwrap() - st.engine["indexed_through"].as_u64().unwrap();
    c.shutdown().unwrap();
    assert!(d.wait_exit().success(), "amberd on a full disk did not stop cleanly");

    // A restart on the still-full disk serves every acknowledged write. With
    // max_index_backlog 1, the indexing backlog alone would answer `busy`.
    let asked = Instant::now();
    let d = start(&["--max-index-backlog", "1"]).expect("amberd must start on a full disk");
    let restarted_in = asked.elapsed();
    let mut c = d.client();
    let stalled = degraded(&mut c, "indexing").expect("indexing degraded after a restart on a full disk");
    assert_eq!(stalled["cause"], "disk_full", "{stalled}");
    let st = c.status().unwrap();
    let (committed, indexed) =
        (st.engine["committed_through"].as_u64().unwrap(), st.engine["indexed_through"].as_u64().unwrap());
    assert!(indexed < committed, "nothing left to index: the disk filled with indexing done ({st:?})");
    for (id, content) in &acked {
        assert_eq!(&c.get(id).unwrap().memory.content, content, "acknowledged write lost");
    }
    let e = c.remember(&disk_memory(n)).expect_err("a write on the full disk after the restart");
    assert_eq!(e.kind(), Some(ErrorKind::StorageFull), "{e}");

    // Space returns: indexing resumes by itself, and every acknowledged write is found.
    std::fs::remove_file(&filler).unwrap();
    let resumed_in = wait_until(Duration::from_secs(30), "indexing resumed", || {
        let st = c.status().unwrap();
        st.engine["degraded"].as_array().unwrap().is_empty() && st.engine["indexes_complete"] == true
    });
    for (id, content) in &acked {
        let marker = content.split_whitespace().nth(5).unwrap();
        let mut p = RecallParams::new(marker);
        p.mode = Some(SearchMode::Bm25);
        p.k = Some(1);
        let hits = c.recall(&p).unwrap().hits;
        assert_eq!(hits.first().map(|h| &h.memory.id), Some(id), "acknowledged write not found: {marker}");
    }
    let hits = c.recall(&RecallParams::new("the disk test memories")).unwrap().hits;
    assert!(!hits.is_empty() && hits.iter().all(|h| h.memory.scope.as_str() == "disk"));
    assert!(c.remember(&disk_memory(n + 1)).unwrap().created, "writes work again");
    c.shutdown().unwrap();
    assert!(d.wait_exit().success());
    // One log line per stop of indexing (one per run), however many retries.
    let stopped_lines = log_lines(root.path(), "indexing is stopped (the disk is full)");
    assert_eq!(
        stopped_lines, 2,
        "indexing failures logged {stopped_lines} times, retried {failures_1}+ times"
    );
    assert_eq!(log_lines(root.path(), "indexing caught up"), 1);
    drop(tmpfs);
    eprintln!(
        "full disk: {} acknowledged ({} KiB of filler, {busy} busy while filling) in {filled_in:?}; \
         storage_full in at most {first_full:?}; recall on the full disk {recall_took:?}; indexing \
         {behind_1} behind, failed {failures_1} times in {failing_for:.1} s, logged once; restart on the full disk in \
         {restarted_in:?}, every acknowledged write there; indexing resumed {resumed_in:?} after space \
         returned, every acknowledged write found",
        acked.len(),
        filler_size / 1024
    );
}

/// Starts amberd on `data` and `socket`; it must refuse. Returns its standard error.
fn refused(root: &Path, data: &Path, socket: &Path) -> String {
    match Daemon::start_on(root, data, socket, &[]) {
        Ok(d) => panic!("amberd started on {} with socket {}", d.data.display(), d.socket.display()),
        Err(stderr) => stderr,
    }
}

/// The mode bits and content of a file, to see it untouched.
fn snapshot(path: &Path) -> (u32, Vec<u8>) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777;
    let content = if path.is_dir() {
        let mut names: Vec<_> =
            std::fs::read_dir(path).unwrap().map(|e| e.unwrap().file_name().into_encoded_bytes()).collect();
        names.sort();
        names.concat()
    } else {
        std::fs::read(path).unwrap()
    };
    (mode, content)
}

#[cfg(unix)]
#[test]
fn planted_symlinks_are_not_followed_into_another_users_files() {
    use std::os::unix::fs::{PermissionsExt, lchown, symlink};
    const OTHER: u32 = 65534; // nobody
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let as_root = rustix::process::geteuid().is_root();
    // Someone else's file and directory.
    let victim = r.join("victim.txt");
    std::fs::write(&victim, b"someone else's notes\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let victim_dir = r.join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("keep.txt"), b"keep").unwrap();
    std::fs::set_permissions(&victim_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    if as_root {
        for p in [&victim, &victim_dir] {
            lchown(p, Some(OTHER), Some(OTHER)).unwrap();
        }
    }
    let before = (snapshot(&victim), snapshot(&victim_dir));
    let unharmed = || {
        assert_eq!((snapshot(&victim), snapshot(&victim_dir)), before, "a victim file was changed");
    };
    let data = r.join("data");
    let socket = r.join("run").join("amber.sock");
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();

    // 1. The socket path is a link to the victim: amberd neither follows nor removes it.
    symlink(&victim, &socket).unwrap();
    let err = refused(r, &data, &socket);
    assert!(err.contains("symbolic link") && err.contains(&socket.display().to_string()), "{err}");
    assert!(std::fs::symlink_metadata(&socket).unwrap().file_type().is_symlink(), "the link was removed");
    unharmed();
    // A dangling link: nothing is created where it points.
    std::fs::remove_file(&socket).unwrap();
    let nowhere = r.join("nowhere");
    symlink(&nowhere, &socket).unwrap();
    let err = refused(r, &data, &socket);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!nowhere.exists());
    // A plain file at the socket path is not removed either.
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, b"not a socket").unwrap();
    let err = refused(r, &data, &socket);
    assert!(err.contains("not a socket"), "{err}");
    assert_eq!(std::fs::read(&socket).unwrap(), b"not a socket");
    std::fs::remove_file(&socket).unwrap();

    // 2. Links planted in the data directory, where amberd keeps its files.
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(data.join("index")).unwrap();
    for (name, target) in [
        ("amberd.lock", &victim),
        ("amber.db", &victim),
        ("amber.db-wal", &victim),
        ("index/bm25", &victim_dir),
    ] {
        let link = data.join(name);
        symlink(target, &link).unwrap();
        let err = refused(r, &data, &socket);
        assert!(err.contains("symbolic link") && err.contains(&link.display().to_string()), "{name}: {err}");
        unharmed();
        std::fs::remove_file(&link).unwrap();
    }
    assert!(!socket.exists(), "a refused start left a socket");

    // 3. The data directory itself is a link.
    std::fs::remove_dir_all(&data).unwrap();
    symlink(&victim_dir, &data).unwrap();
    if as_root {
        // Another user's link to another user's directory: refused.
        lchown(&data, Some(OTHER), Some(OTHER)).unwrap();
        let err = refused(r, &data, &socket);
        assert!(err.contains("symbolic link") && err.contains("uid 65534"), "{err}");
        unharmed();
        // The user's own link to another user's directory: refused too.
        lchown(&data, Some(0), Some(0)).unwrap();
        let err = refused(r, &data, &socket);
        assert!(err.contains("not a directory of this user"), "{err}");
        unharmed();
    } else {
        skipped("the links of another user: they need root to plant");
    }
    // The user's own link to the user's own directory is followed (a data directory moved
    // to another disk), and made private.
    std::fs::remove_file(&data).unwrap();
    let own = r.join("own-data");
    std::fs::create_dir(&own).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
    symlink(&own, &data).unwrap();
    let d =
        Daemon::start_on(r, &data, &socket, &[]).expect("a link of the user's own to a directory of theirs");
    let id = d.client().remember(&memory("stored through the user's own link", "links")).unwrap().id;
    assert!(own.join("amber.db").exists());
    assert_eq!(std::fs::metadata(&own).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(d.client().get(&id).unwrap().memory.content, "stored through the user's own link");
    unharmed();
}

#[cfg(unix)]
#[test]
fn sigterm_under_a_write_load_exits_cleanly_and_loses_no_acknowledged_write() {
    let root = tempfile::tempdir().unwrap();
    let d = Daemon::start_in(root.path(), &[]).unwrap();
    let socket = d.socket.clone();
    // What each write came to: acknowledged, refused `shutting_down` (nothing written), or
    // unknown (the connection closed before an answer).
    let acked = Arc::new(Mutex::new(Vec::<(MemoryId, String)>::new()));
    let refused = Arc::new(Mutex::new(Vec::<NewMemory>::new()));
    let unknown = Arc::new(Mutex::new(Vec::<NewMemory>::new()));
    const WRITERS: usize = 8;
    let stop_after = 200;
    let (exit_took, code, acked_before) = std::thread::scope(|s| {
        for t in 0..WRITERS {
            let (acked, refused, unknown, socket) =
                (acked.clone(), refused.clone(), unknown.clone(), socket.clone());
            s.spawn(move || {
                let mut c = Client::connect(&socket).unwrap();
                for i in 0.. {
                    let m = memory(&format!("sigterm writer {t} item {i} marker zt{t}x{i}q"), "term");
                    match c.remember(&m) {
                        Ok(r) => acked.lock().unwrap().push((r.id, m.content.clone())),
                        Err(e) if e.kind() == Some(ErrorKind::ShuttingDown) => {
                            refused.lock().unwrap().push(m);
                            break;
                        }
                        Err(e) if e.kind().is_some() => panic!("writer {t}: {e}"),
                        Err(_) => {
                            unknown.lock().unwrap().push(m);
                            break;
                        }
                    }
                }
            });
        }
        while acked.lock().unwrap().len() < stop_after {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut d = d;
        let acked_before = acked.lock().unwrap().len();
        let sent = Instant::now();
        assert!(Command::new("kill").arg("-TERM").arg(d.child.id().to_string()).status().unwrap().success());
        let code = loop {
            if let Some(code) = d.child.try_wait().unwrap() {
                break code;
            }
            assert!(sent.elapsed() < Duration::from_secs(20), "amberd did not exit within 20 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(5));
        };
        (sent.elapsed(), code, acked_before)
    });
    assert!(code.success(), "amberd exited {code:?} on SIGTERM under load");
    assert!(!socket.exists(), "the socket file is left after SIGTERM");
    let (acked, refused, unknown) =
        (acked.lock().unwrap().clone(), refused.lock().unwrap().clone(), unknown.lock().unwrap().clone());
    assert!(acked.len() >= stop_after);

    // After a restart: every acknowledged write is there and found; a refused one is not.
    let d = Daemon::start_in(root.path(), &[]).unwrap();
    let mut c = d.client();
    for (id, content) in &acked {
        assert_eq!(&c.get(id).unwrap().memory.content, content, "acknowledged write lost");
        let marker = content.split_whitespace().last().unwrap();
        let mut p = RecallParams::new(marker);
        p.mode = Some(SearchMode::Bm25);
        p.k = Some(1);
        let hits = c.recall(&p).unwrap().hits;
        assert_eq!(hits.first().map(|h| &h.memory.id), Some(id), "acknowledged write not found: {marker}");
    }
    for m in &refused {
        let e = c.get(&m.id()).expect_err("a write refused with shutting_down was stored");
        assert_eq!(e.kind(), Some(ErrorKind::NotFound));
    }
    let stored_unknown = unknown.iter().filter(|m| c.get(&m.id()).is_ok()).count();
    let st = c.status().unwrap();
    assert_eq!(
        st.engine["memories"].as_u64().unwrap() as usize,
        acked.len() + stored_unknown,
        "{:?}",
        st.engine
    );
    eprintln!(
        "sigterm under load: {WRITERS} writers, {} acknowledged ({} of them after SIGTERM was sent; all \
         there and found after a restart), {} refused shutting_down (none stored), {} unanswered \
         ({stored_unknown} of them stored); exit 0 in {exit_took:?}, socket removed",
        acked.len(),
        acked.len() - acked_before,
        refused.len(),
        unknown.len()
    );
}
