//! A purge asked while an agent session is live waits out a day (issue 46: what a person
//! does through their door while an agent runs must be undoable): the memory stays
//! forgotten, `unforget` brings it back, and the daemon purges it once the day is over,
//! at its next look (here: its next start, its clock a day on). `--now` needs the
//! person's own terminal. Real daemon, real model.

use crate::common;

use std::time::{Duration, Instant};

use common::{Env, text};
use serde_json::{Value, json};

fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

fn remember(env: &Env, text_: &str) -> String {
    let r: Value =
        serde_json::from_str(&ok(env.amber(&["--json", "remember", "--scope", "user", text_]))).unwrap();
    r["id"].as_str().unwrap().to_string()
}

#[test]
fn a_purge_while_an_agent_session_is_live_waits_a_day_and_unforget_undoes_it() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    let secret = remember(&env, "The staging bastion's break-glass phrase is amber-otter-42.");
    let kept = remember(&env, "Release notes go out on Thursdays, after the train leaves.");
    // An agent session is live (Claude Code's SessionStart hook started it).
    let start = json!({ "session_id": "s-live", "cwd": proj.path(), "hook_event_name": "SessionStart", "source": "startup" });
    let (out, _) = env.hook("SessionStart", &start, &[]);
    assert!(out.status.success());

    for id in [&secret, &kept] {
        ok(env.amber(&["forget", id]));
    }
    let r: Value = serde_json::from_str(&ok(env.amber(&["--json", "purge", &secret]))).unwrap();
    assert_eq!(r["purged"], false, "deferred: {r}");
    let due = r["due_at"].as_i64().expect("a due time");
    let now = amber_core::now_millis();
    assert!((due - now - 24 * 3600 * 1000).abs() < 120_000, "a day from now: {due} vs {now}");
    let said = ok(env.amber(&["purge", &kept]));
    assert!(said.contains("will be purged at") && said.contains("amber unforget"), "{said}");
    // The content is still there, forgotten, until the day is over.
    let m: Value = serde_json::from_str(&ok(env.amber(&["--json", "get", &secret]))).unwrap();
    assert!(m["forgotten_at"].is_i64() && m["content"].as_str().unwrap().contains("amber-otter-42"), "{m}");
    // --now needs the person's own terminal (this test has none).
    let now_ = env.amber(&["purge", "--now", &secret]);
    assert!(!now_.status.success() && text(&now_.stderr).contains("own terminal"), "{}", text(&now_.stderr));
    // The person changes their mind about one of them.
    ok(env.amber(&["unforget", &kept]));
    let ledger = std::fs::read_to_string(env.root.path().join("data/purges-due.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 2, "{ledger}");

    // A day and an hour later the daemon starts again and does what is due.
    ok(env.amber(&["daemon", "stop"]));
    let later = [("AMBER_CLOCK_OFFSET_S", "90000")];
    let mut c = env.cmd(&["daemon", "start"]);
    for (k, v) in later {
        c.env(k, v);
    }
    ok(c.output().unwrap());
    let t0 = Instant::now();
    loop {
        let g = env.amber(&["--json", "get", &secret]);
        if !g.status.success() {
            assert!(text(&g.stderr).contains("no memory"), "{}", text(&g.stderr));
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "not purged: {}", text(&g.stdout));
        std::thread::sleep(Duration::from_millis(200));
    }
    let m: Value = serde_json::from_str(&ok(env.amber(&["--json", "get", &kept]))).unwrap();
    assert!(m["forgotten_at"].is_null(), "the unforgotten one stays: {m}");
    let t0 = Instant::now();
    while env.root.path().join("data/purges-due.jsonl").exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "the ledger is not emptied");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn with_no_agent_session_live_a_purge_is_done_at_once() {
    let env = Env::new();
    let id = remember(&env, "A scratch note to be purged at once.");
    ok(env.amber(&["forget", &id]));
    let r: Value = serde_json::from_str(&ok(env.amber(&["--json", "purge", &id]))).unwrap();
    assert_eq!((r["purged"].as_bool(), r.get("due_at")), (Some(true), None), "{r}");
    assert!(!env.amber(&["get", &id]).status.success());
}
