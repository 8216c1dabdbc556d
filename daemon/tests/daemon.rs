//! The real daemon on a real socket with the real model: concurrency, bad input, crash
//! safety, permissions, shutdown.
//!
//! Each test starts `amberd` on its own temporary data directory and socket and waits for
//! its ready line (the socket is bound before the line is printed), so there are no sleeps.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use amber_core::{MemoryId, NewMemory, SearchMode};
use amber_ipc::Client;
use amber_ipc::protocol::{ErrorKind, PROTOCOL_VERSION, RecallParams};
use serde_json::{Value, json};

use crate::common;
use common::*;

#[test]
fn sixty_four_clients_mixing_remember_and_recall_lose_nothing() {
    let d = Daemon::start(&[]);
    let acked = Arc::new(Mutex::new(Vec::<(MemoryId, String)>::new()));
    std::thread::scope(|s| {
        for c in 0..64 {
            let acked = acked.clone();
            let d = &d;
            s.spawn(move || {
                let mut client = d.client();
                client.hello("test").unwrap();
                for i in 0..4 {
                    let content =
                        format!("client {c} note {i}: the deploy key rotates every {} days", c * 10 + i);
                    let r = client.remember(&memory(&content, &format!("load/c{c}"))).unwrap();
                    assert!(r.created);
                    acked.lock().unwrap().push((r.id, content));
                    let mut p = RecallParams::new(format!("deploy key rotation client {c}"));
                    p.k = Some(3);
                    p.scope = Some(format!("load/c{c}").parse().unwrap());
                    // A default recall waits a little for indexing (at most 2 s, and not
                    // behind a backlog), so on a loaded machine it may answer from what is
                    // indexed; it must then say `fresh: false`. When it says fresh, this
                    // client's own notes so far are all searchable.
                    let r = client.recall(&p).unwrap();
                    let r = if r.fresh {
                        r
                    } else {
                        let waiting = RecallParams { fresh: Some(true), ..p.clone() };
                        let r = client.recall(&waiting).unwrap();
                        assert!(r.fresh, "client {c} round {i}: fresh: true answered stale");
                        r
                    };
                    assert_eq!(r.hits.len(), (i + 1).min(3), "client {c} round {i}");
                    assert!(r.hits.iter().all(|h| h.memory.scope.as_str() == format!("load/c{c}")));
                }
            });
        }
    });
    let acked = acked.lock().unwrap();
    assert_eq!(acked.len(), 256);
    let mut c = d.client();
    for (id, content) in acked.iter() {
        assert_eq!(&c.get(id).unwrap().memory.content, content);
    }
    let st = c.status().unwrap();
    assert_eq!(st.engine["memories"], json!(256));
    assert_eq!(st.engine["indexes_complete"], json!(true));
}

#[test]
fn every_bad_input_gets_a_typed_error_and_the_daemon_keeps_serving() {
    let d = Daemon::start(&["--max-frame-bytes", "4096"]);
    let cases: Vec<(&str, Vec<u8>, ErrorKind)> = vec![
        ("garbage", b"\x00\x01 not json at all\n".to_vec(), ErrorKind::ParseError),
        (
            "invalid utf-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}\n".to_vec(),
            ErrorKind::InvalidUtf8,
        ),
        ("oversize line", [vec![b'x'; 10_000], b"\n".to_vec()].concat(), ErrorKind::FrameTooLarge),
        ("not json-rpc", b"{\"hello\":1}\n".to_vec(), ErrorKind::InvalidRequest),
        (
            "batch",
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}]\n".to_vec(),
            ErrorKind::InvalidRequest,
        ),
        (
            "unknown method",
            br#"{"jsonrpc":"2.0","id":1,"method":"teleport"}"#.to_vec(),
            ErrorKind::MethodNotFound,
        ),
        (
            "content of the wrong type",
            br#"{"jsonrpc":"2.0","id":2,"method":"remember","params":{"content":5}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "missing content",
            br#"{"jsonrpc":"2.0","id":3,"method":"remember","params":{}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "empty content",
            br#"{"jsonrpc":"2.0","id":3,"method":"remember","params":{"content":"  "}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "bad scope",
            br#"{"jsonrpc":"2.0","id":3,"method":"remember","params":{"content":"x","scope":"a//b"}}"#
                .to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "k of the wrong type",
            br#"{"jsonrpc":"2.0","id":4,"method":"recall","params":{"text":"x","k":"ten"}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "k of zero",
            br#"{"jsonrpc":"2.0","id":4,"method":"recall","params":{"text":"x","k":0}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "unknown recall field",
            br#"{"jsonrpc":"2.0","id":4,"method":"recall","params":{"txt":"x"}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "unknown remember field",
            br#"{"jsonrpc":"2.0","id":4,"method":"remember","params":{"content":"x","scop":"a"}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "bad id",
            br#"{"jsonrpc":"2.0","id":5,"method":"get","params":{"id":"../../etc"}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "unknown id",
            br#"{"jsonrpc":"2.0","id":6,"method":"get","params":{"id":"00000000000000000000000000000000"}}"#
                .to_vec(),
            ErrorKind::NotFound,
        ),
        (
            "params not an object",
            br#"{"jsonrpc":"2.0","id":7,"method":"status","params":[1]}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "params on status",
            br#"{"jsonrpc":"2.0","id":7,"method":"status","params":{"x":1}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
        (
            "another protocol",
            br#"{"jsonrpc":"2.0","id":8,"method":"hello","params":{"protocol_version":99}}"#.to_vec(),
            ErrorKind::UnsupportedProtocol,
        ),
        (
            "empty batch",
            br#"{"jsonrpc":"2.0","id":9,"method":"remember_batch","params":{"memories":[]}}"#.to_vec(),
            ErrorKind::InvalidParams,
        ),
    ];
    for (name, mut bytes, want) in cases {
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        let mut conn = BufReader::new(d.raw());
        let r = exchange(&mut conn, &bytes);
        assert_eq!(error_kind(&r), want, "{name}: {r:?}");
        let msg = &r.error.as_ref().unwrap().message;
        assert!(!msg.is_empty() && !msg.contains("panicked"), "{name}: {msg}");
        // the same connection still answers
        let ok = exchange(&mut conn, b"{\"jsonrpc\":\"2.0\",\"id\":100,\"method\":\"status\"}\n");
        assert!(ok.result.is_some(), "{name}: the connection stopped answering: {ok:?}");
        // and so does a fresh one
        assert_eq!(d.client().status().unwrap().protocol_version, PROTOCOL_VERSION, "{name}");
    }

    // a client that leaves mid-line, and one that leaves before its answer
    {
        let mut s = d.raw();
        s.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"remem"#).unwrap();
    }
    {
        let mut s = d.raw();
        s.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"remember\",\"params\":{\"content\":\"left early\"}}\n")
            .unwrap();
    }
    // a notification (no id) runs and gets no answer; the next request is answered
    let mut conn = BufReader::new(d.raw());
    conn.get_mut()
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"remember\",\"params\":{\"content\":\"a notification\"}}\n",
        )
        .unwrap();
    let r = exchange(&mut conn, b"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"status\"}\n");
    assert_eq!(r.id, json!("s"));

    let mut c = d.client();
    let hello = c.hello("test").unwrap();
    assert_eq!(hello.protocol_version, PROTOCOL_VERSION);
    let mut p = RecallParams::new("notification");
    p.mode = Some(SearchMode::Bm25);
    assert_eq!(c.recall(&p).unwrap().hits[0].memory.content, "a notification");
}

#[test]
fn forget_hides_from_recall_and_purge_deletes() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let keep = c.remember(&memory("the staging database is postgres 16 on port 5433", "proj")).unwrap();
    let gone =
        c.remember(&memory("the staging database password is in vault at kv/staging", "proj")).unwrap();
    let q = RecallParams::new("staging database");
    assert_eq!(c.recall(&q).unwrap().hits.len(), 2);

    let f = c.forget(&gone.id).unwrap().memory;
    assert!(f.forgotten_at.is_some());
    let hits = c.recall(&q).unwrap().hits;
    assert_eq!(hits.iter().map(|h| h.memory.id.clone()).collect::<Vec<_>>(), vec![keep.id.clone()]);
    assert!(c.get(&gone.id).unwrap().memory.forgotten_at.is_some(), "content kept until purge");

    // Purging is the person's: a client library is refused, the `amber` command is not.
    assert_eq!(c.purge(&gone.id, false).unwrap_err().kind(), Some(ErrorKind::NotPermitted));
    assert_eq!(
        c.get(&gone.id).unwrap().memory.content,
        "the staging database password is in vault at kv/staging"
    );
    let refused = person(&d, &["purge", &keep.id.to_string()]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not_forgotten"), "{refused:?}");
    assert_eq!(as_person(&d, &["purge", &gone.id.to_string()])["purged"], json!(true));
    assert_eq!(c.get(&gone.id).unwrap_err().kind(), Some(ErrorKind::NotFound));
    assert_eq!(c.forget(&gone.id).unwrap_err().kind(), Some(ErrorKind::NotFound));
}

#[test]
fn a_full_write_queue_answers_busy() {
    let d = Daemon::start(&["--write-queue", "1"]);
    // 64 clients write at the same moment into a queue of one: each commit is an fsync,
    // so most find the queue full.
    let barrier = std::sync::Barrier::new(64);
    let outcomes: Vec<Result<bool, ErrorKind>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..64)
            .map(|i| {
                let (barrier, socket) = (&barrier, d.socket.clone());
                s.spawn(move || {
                    let mut c = Client::connect(&socket).unwrap();
                    c.hello("busy-test").unwrap();
                    barrier.wait();
                    c.remember(&memory(&format!("simultaneous write number {i}"), "busy"))
                        .map(|r| r.created)
                        .map_err(|e| e.kind().unwrap_or_else(|| panic!("not a typed error: {e}")))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let busy = outcomes.iter().filter(|o| **o == Err(ErrorKind::Busy)).count();
    let ok = outcomes.iter().filter(|o| **o == Ok(true)).count();
    assert_eq!(busy + ok, 64, "only busy or success: {outcomes:?}");
    assert!(busy > 0, "a queue of one must overflow under 64 simultaneous writes");
    assert!(ok > 0);
    // A refused write was not made; retried, it is.
    let mut c = d.client();
    let refused = outcomes.iter().position(|o| o.is_err()).unwrap();
    let m = memory(&format!("simultaneous write number {refused}"), "busy");
    assert_eq!(c.get(&m.id()).unwrap_err().kind(), Some(ErrorKind::NotFound));
    assert!(c.remember(&m).unwrap().created);
    assert_eq!(c.status().unwrap().engine["memories"], json!(ok + 1));
}

#[test]
fn a_recall_does_not_wait_behind_a_backlog_unless_asked_to() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let batch: Vec<NewMemory> = (0..300)
        .map(|i| {
            memory(&format!("import note {i}: host {} rebooted after patch {}", i * 7, i % 13), "import")
        })
        .collect();
    c.remember_batch(batch).unwrap();
    // Three hundred memories to embed: the default recall answers at once from what is
    // indexed and says so; `fresh: true` waits for them.
    let r = c.recall(&RecallParams::new("host rebooted after patch")).unwrap();
    assert!(!r.fresh, "a recall right after a 300-memory import waits for none of it");
    let mut p = RecallParams::new("host rebooted after patch");
    p.fresh = Some(true);
    let r = c.recall(&p).unwrap();
    assert!(r.fresh && r.hits.len() == 10, "{} hits", r.hits.len());
}

#[test]
fn one_huge_memory_is_indexed_behind_reads_not_in_front_of_them() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    c.remember(&memory("the release train leaves on thursdays", "huge")).unwrap();
    let mut p = RecallParams::new("release train");
    p.fresh = Some(true);
    assert!(c.recall(&p).unwrap().fresh);
    // Nearly a megabyte of words that hardly repeat: about a thousand chunks to embed.
    let mut x: u64 = 7;
    let mut text = String::new();
    while text.len() < 1_000_000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        text.push_str(&format!("w{:x} ", x >> 40));
    }
    c.remember(&memory(&text, "huge")).unwrap();
    // One memory behind, but a megabyte of it: reads answer from what is indexed at once
    // (`fresh: false`), a session starts and is briefed meanwhile.
    let r = c.recall(&RecallParams::new("when does the release train leave")).unwrap();
    let st = c.status().unwrap();
    assert!(!r.fresh, "a recall waited for a megabyte of indexing");
    assert!(r.hits[0].memory.content.contains("thursdays"));
    let s = c
        .call_value("session_start", json!({ "agent": "t", "scope": "huge", "prompt": "the release train" }))
        .unwrap();
    assert!(s["session_id"].is_string(), "{s}");
    assert!(
        st.engine["indexed_through"].as_u64() < st.engine["committed_through"].as_u64(),
        "the huge memory was indexed already: the test shows nothing ({:?})",
        st.engine
    );
}

#[test]
fn writes_wait_for_indexing_when_it_falls_too_far_behind() {
    let d = Daemon::start(&["--max-index-backlog", "10"]);
    let mut c = d.client();
    let batch: Vec<NewMemory> = (0..300)
        .map(|i| memory(&format!("backlog note {i}: the nightly job {i} ran for {} minutes", i * 3), "lag"))
        .collect();
    c.remember_batch(batch).unwrap();
    // Three hundred committed, being indexed: more bulk work and single writes from a client are
    // refused, not piled up.
    let more: Vec<NewMemory> =
        (0..5).map(|i| memory(&format!("bulk note {i} waits its turn"), "lag")).collect();
    let e = c.remember_batch(more).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Busy), "{e}");
    assert!(e.to_string().contains("bulk work waits"), "{e}");
    let e = c.remember(&memory("one more while indexing lags", "lag")).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Busy), "{e}");
    assert!(e.to_string().contains("behind"), "{e}");
    // The person's own `amber remember` is never refused for bulk work: it is filed now.
    let st = c.status().unwrap();
    assert!(
        st.engine["indexed_through"].as_u64() < st.engine["committed_through"].as_u64(),
        "{:?}",
        st.engine
    );
    let filed = common::as_person(
        &d,
        &["remember", "--scope", "lag", "the person's note goes through while indexing lags"],
    );
    assert_eq!(filed["created"], true, "{filed}");
    // Once indexing caught up (a fresh recall waits for it), writes go through again.
    let mut p = RecallParams::new("nightly job");
    p.fresh = Some(true);
    let r = c.recall(&p).unwrap();
    assert!(r.fresh);
    assert!(c.remember(&memory("one more while indexing lags", "lag")).unwrap().created);
}

#[test]
fn kill_9_in_the_middle_of_a_write_load_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let acked = Arc::new(Mutex::new(Vec::<(MemoryId, String)>::new()));
    let stop_after = 120;
    std::thread::scope(|s| {
        for t in 0..8 {
            let acked = acked.clone();
            let socket = d.socket.clone();
            s.spawn(move || {
                let mut c = Client::connect(&socket).unwrap();
                for i in 0.. {
                    let content = format!("crash test writer {t} item {i} marker zq{t}x{i}q");
                    match c.remember(&memory(&content, "crash")) {
                        Ok(r) => acked.lock().unwrap().push((r.id, content)),
                        Err(_) => break, // the daemon died
                    }
                }
            });
        }
        // Kill it mid-load, once enough writes are acknowledged.
        let mut d = d;
        while acked.lock().unwrap().len() < stop_after {
            std::thread::yield_now();
        }
        d.child.kill().unwrap(); // SIGKILL
        d.child.wait().unwrap();
    });
    let socket = dir.path().join("run").join("amber.sock");
    assert!(socket.exists(), "a SIGKILLed daemon leaves its socket file behind");

    // The restart replaces the stale socket and indexes what was committed.
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= stop_after);
    let mut c = d.client();
    for (id, content) in &acked {
        assert_eq!(&c.get(id).unwrap().memory.content, content, "acknowledged write lost");
        let marker = content.split_whitespace().last().unwrap();
        let mut p = RecallParams::new(marker);
        p.mode = Some(SearchMode::Bm25);
        p.k = Some(1);
        let hits = c.recall(&p).unwrap().hits;
        assert_eq!(
            hits.first().map(|h| &h.memory.id),
            Some(id),
            "acknowledged write not searchable: {marker}"
        );
    }
    let st = c.status().unwrap();
    assert_eq!(st.engine["indexes_complete"], json!(true), "{:?}", st.engine);
    // The restart had indexing to redo: the crash left the indexes behind the store.
    let stats = &st.engine["stats"];
    let caught_up = stats["chunks_embedded"].as_u64().unwrap() + stats["chunks_from_cache"].as_u64().unwrap();
    assert!(caught_up > 0, "the restart found nothing to index: the kill did not land mid-load ({stats})");
    // The vector side holds them too: a paraphrase finds crash-test memories.
    let hits = c.recall(&RecallParams::new("which writer items were in the crash test?")).unwrap().hits;
    assert!(hits.iter().all(|h| h.memory.scope.as_str() == "crash") && !hits.is_empty());
    c.shutdown().unwrap();
    let data = d.data.clone();
    assert!(d.wait_exit().success());
    let db = rusqlite::Connection::open(data.join("amber.db")).unwrap();
    let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
}

#[cfg(unix)]
#[test]
fn socket_and_data_dir_are_private_and_a_second_daemon_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.socket), 0o600);
    assert_eq!(mode(d.socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&d.data), 0o700);

    // same data dir
    let err = Daemon::start_in(dir.path(), &[]).err().expect("a second daemon must be refused");
    assert!(err.contains("already serving") && err.contains(&d.child.id().to_string()), "{err}");
    // another data dir, same socket
    let other = tempfile::tempdir().unwrap();
    let out = amberd(other.path(), &other.path().join("data"), &d.socket, &[]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another daemon is listening"), "{err}");
    // the first one is unharmed
    assert!(d.client().status().is_ok());
}

#[cfg(unix)]
#[test]
fn sigterm_finishes_and_removes_the_socket() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let r = c.remember(&memory("written before SIGTERM", "term")).unwrap();
    let status = Command::new("kill").arg("-TERM").arg(d.child.id().to_string()).status().unwrap();
    assert!(status.success());
    let socket = d.socket.clone();
    let data = d.data.clone();
    let code = {
        let mut d = d;
        let code = d.child.wait().unwrap();
        d._dir.take().map(|t| t.keep());
        code
    };
    assert!(code.success(), "{code:?}");
    assert!(!socket.exists(), "the socket file is removed on shutdown");
    // and the write is there for the next daemon
    let root = data.parent().unwrap().to_path_buf();
    let d = Daemon::start_in(&root, &[]).unwrap();
    assert_eq!(d.client().get(&r.id).unwrap().memory.content, "written before SIGTERM");
    drop(d);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn status_reports_the_protocol_and_the_engine() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let st = c.status().unwrap();
    assert_eq!(st.protocol_version, PROTOCOL_VERSION);
    assert_eq!(st.pid, d.child.id());
    assert_eq!(st.engine["memories"], json!(0));
    assert!(st.engine["model"].as_str().unwrap().contains("MiniLM"), "{}", st.engine["model"]);
    let v: Value = c.call_value("status", Value::Null).unwrap();
    assert_eq!(v["socket"], json!(d.socket.display().to_string()));
}

#[test]
fn the_async_client_speaks_to_the_daemon() {
    let d = Daemon::start(&[]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut c = amber_ipc::AsyncClient::connect(&d.socket).await.unwrap();
        let r = c.remember(&memory("the async client filed this note about tokio", "async")).await.unwrap();
        let hits = c.recall(&RecallParams::new("tokio note")).await.unwrap().hits;
        assert_eq!(hits[0].memory.id, r.id);
        assert_eq!(
            c.get(&r.id).await.unwrap().memory.content,
            "the async client filed this note about tokio"
        );
        assert_eq!(c.status().await.unwrap().protocol_version, PROTOCOL_VERSION);
        let e = c.call_value("nope", Value::Null).await.unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::MethodNotFound));
    });
}

#[test]
fn the_config_file_is_read_and_a_bad_one_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("no-config.toml"), "max_frame_bytes = 2048\nlog = \"debug\"\n").unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    let mut conn = BufReader::new(d.raw());
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"remember\",\"params\":{{\"content\":\"{}\"}}}}\n",
        "y".repeat(3000)
    );
    assert_eq!(error_kind(&exchange(&mut conn, line.as_bytes())), ErrorKind::FrameTooLarge);
    drop(conn);
    drop(d);
    // Logs went to the state dir, at the configured level: the debug line of the request.
    let log: String = std::fs::read_dir(dir.path().join("state").join("logs"))
        .unwrap()
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect();
    assert!(log.contains("DEBUG") && log.contains("amberd starting"), "{log}");

    std::fs::write(dir.path().join("no-config.toml"), "max_frame_bytes = \"big\"\n").unwrap();
    let err = Daemon::start_in(dir.path(), &[]).err().expect("a bad config must stop the daemon");
    assert!(err.contains("no-config.toml") && err.contains("max_frame_bytes"), "{err}");
    std::fs::write(dir.path().join("no-config.toml"), "max_frame = 1\n").unwrap();
    let err = Daemon::start_in(dir.path(), &[]).err().expect("an unknown key must stop the daemon");
    assert!(err.contains("max_frame"), "{err}");
}

#[test]
fn identity_serves_the_projects_coordination_files_and_follows_edits() {
    let d = Daemon::start(&[]);
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    std::fs::create_dir_all(proj.path().join("project-context")).unwrap();
    std::fs::create_dir_all(proj.path().join("src/net")).unwrap();
    let handoff = proj.path().join("project-context/HANDOFF.md");
    std::fs::write(&handoff, "Next: wire the interjection gate.\n").unwrap();
    std::fs::write(proj.path().join("AGENTS.md"), "Run scripts/test.sh before every commit.\n").unwrap();
    let mut c = d.client();
    let p = amber_ipc::protocol::IdentityParams { cwd: proj.path().join("src/net"), budget_tokens: None };
    let id = c.identity(&p).unwrap();
    assert_eq!(id.root, proj.path());
    assert!(
        id.text.contains("wire the interjection gate") && id.text.contains("scripts/test.sh"),
        "{}",
        id.text
    );
    assert_eq!(id.budget_tokens, 800);

    std::fs::write(&handoff, "Next: calibrate the gate on dev data.\n").unwrap();
    let id = c.identity(&p).unwrap();
    assert!(
        id.text.contains("calibrate the gate") && !id.text.contains("wire the"),
        "the edit is seen at once"
    );

    let long: String = (0..500).map(|i| format!("rule {i}: keep it short\n")).collect();
    std::fs::write(&handoff, long).unwrap();
    let small = amber_ipc::protocol::IdentityParams { budget_tokens: Some(100), ..p.clone() };
    let id = c.identity(&small).unwrap();
    assert!(id.tokens <= 100 && id.text.contains("truncated by amber"), "{} tokens", id.tokens);

    let bad = amber_ipc::protocol::IdentityParams { cwd: "relative/dir".into(), budget_tokens: None };
    assert_eq!(c.identity(&bad).unwrap_err().kind(), Some(ErrorKind::InvalidParams));
}

#[test]
fn capture_redacts_a_planted_key_and_skips_what_is_too_short() {
    use amber_ipc::protocol::CaptureParams;
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let p = |content: &str| CaptureParams {
        content: content.into(),
        scope: "proj".parse().unwrap(),
        source: Some("tool:bash".into()),
        session_id: Some("s1".into()),
        author: None,
        kind: None,
    };
    let out = "$ env | grep AWS\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_REGION=eu-west-1\nthe deploy uses the eu-west-1 bucket";
    let r = c.capture(&p(out)).unwrap();
    assert!(r.filed && r.redacted == 1, "{r:?}");
    let m = c.get(&r.memory.unwrap().id).unwrap().memory;
    assert!(!m.content.contains("AKIAIOSFODNN7EXAMPLE"), "{}", m.content);
    assert!(m.content.contains("AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key]\nAWS_REGION=eu-west-1"));
    assert_eq!(m.metadata["redacted"], json!(1));
    assert_eq!(
        (m.kind.as_str(), m.source.as_deref(), m.session_id.as_deref()),
        ("event", Some("tool:bash"), Some("s1"))
    );
    let short = c.capture(&p("ok")).unwrap();
    assert_eq!((short.filed, short.skipped), (false, Some(amber_tiers::capture::SkipReason::TooShort)));
    assert_eq!(c.status().unwrap().engine["memories"], json!(1));
}
