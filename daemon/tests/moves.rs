//! A person's `memory_move` (`amber move`) and `memories` (`amber list`) against the real
//! daemon and model: one memory re-filed with its history (the old id forwarded, its
//! outcome log and links along, recall finding it only in its new scope), the refusals
//! (an agent, the same scope, a forgotten memory, the team side), and a scope listed
//! page by page, newest first, each memory exactly once. The web view's form and page:
//! daemon/tests/web.rs and tests/web/test_web.py.

use crate::common;

use amber_ipc::protocol::{ErrorKind, RecallParams};
use common::{Daemon, as_person, person, with_config};
use serde_json::{Value, json};

/// Two texts curation links as near duplicates (daemon/tests/sessions.rs).
const A: &str = "cargo test failed: thread 'store::tests::reopen' panicked at store/src/store.rs:412: database is \
locked (SQLITE_BUSY) while the writer held the WAL; rerunning with --test-threads=1 passed.";
const NEAR: &str = "cargo test failed: thread 'store::tests::reopen' panicked at store/src/store.rs:412: database is \
locked (SQLITE_BUSY) while the writer held the WAL; rerunning with --test-threads 1 passed.";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The ids of a recall's hits in one scope.
fn found(c: &mut amber_ipc::Client, query: &str, scope: &str) -> Vec<String> {
    let mut p = RecallParams::new(query);
    p.scope = Some(scope.parse().unwrap());
    p.fresh = Some(true);
    c.recall(&p).unwrap().hits.into_iter().map(|h| h.memory.id.to_string()).collect()
}

#[test]
fn a_person_moves_one_memory_and_its_history_follows_it() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    // Two near duplicates filed in a session: its end links them (curation).
    let sid =
        c.call_value("session_start", json!({ "agent": "tester", "scope": "proj/a" })).unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_string();
    let file = |c: &mut amber_ipc::Client, text: &str| {
        let r = c.call_value("remember", json!({ "content": text, "scope": "proj/a", "session_id": sid }));
        r.unwrap()["id"].as_str().unwrap().to_string()
    };
    let a = file(&mut c, A);
    let near = file(&mut c, NEAR);
    let other = file(&mut c, "The office plants need watering every Tuesday and Friday morning.");
    c.call_value("session_end", json!({ "session_id": sid })).unwrap();
    let links = c.call_value("links", json!({ "id": a })).unwrap();
    assert!(links["links"].as_array().is_some_and(|l| !l.is_empty()), "curation linked them: {links}");
    c.call_value("outcome", json!({ "memory_id": a, "result": "failure", "note": "flaky" })).unwrap();
    assert!(found(&mut c, "SQLITE_BUSY reopen test", "proj/a").contains(&a));

    // An agent may not move it, through the socket or as `amber` inside its session.
    let e = c.call_value("memory_move", json!({ "id": a, "to": "proj/b" })).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::NotPermitted), "{e}");
    assert!(c.call_value("get", json!({ "id": a })).is_ok(), "a refused move changed nothing");

    // The person moves it, naming it by a prefix.
    let moved = as_person(&d, &["move", &a[..8], "proj/b"]);
    let new = moved["new_id"].as_str().unwrap().to_string();
    assert_eq!(moved["old_id"], a.as_str(), "{moved}");
    assert_ne!(new, a, "an id derives from scope and content: a move gives a new one");
    assert_eq!((moved["scope"].as_str(), moved["merged"].as_bool()), (Some("proj/b"), Some(false)));

    // The old id says where it went; the new one is the same text, filed when it was.
    let e = c.call_value("get", json!({ "id": a })).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::NotFound), "{e}");
    assert!(e.to_string().contains("moved to another scope") && e.to_string().contains(&new), "{e}");
    let m = c.call_value("get", json!({ "id": new })).unwrap()["memory"].clone();
    assert_eq!((m["content"].as_str(), m["scope"].as_str()), (Some(A), Some("proj/b")), "{m}");

    // Recall finds it in its new scope only.
    assert!(found(&mut c, "SQLITE_BUSY reopen test", "proj/b").contains(&new));
    let left = found(&mut c, "SQLITE_BUSY reopen test", "proj/a");
    assert!(!left.contains(&new) && !left.contains(&a), "{left:?}");
    assert!(left.contains(&near), "the rest of the scope stays: {left:?}");

    // Its outcome log and its links came along.
    let log = c.call_value("outcomes", json!({ "memory_id": new })).unwrap();
    let reports = log["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{log}");
    assert_eq!(reports[0]["note"], "flaky", "{log}");
    let links = c.call_value("links", json!({ "id": new })).unwrap();
    let ends: Vec<(&str, &str)> = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["from"].as_str().unwrap(), l["to"].as_str().unwrap()))
        .collect();
    assert!(ends.iter().any(|&(f, t)| (f, t) == (&near, &new) || (f, t) == (&new, &near)), "{links}");
    assert!(!ends.iter().any(|&(f, t)| f == a || t == a), "no link names the old id: {links}");

    // Refused: the scope it is in, a forgotten memory, an old id, a bad scope.
    let o = person(&d, &["move", &new, "proj/b"]);
    assert!(!o.status.success() && stderr(&o).contains("already in proj/b"), "{}", stderr(&o));
    c.call_value("forget", json!({ "id": other })).unwrap();
    let o = person(&d, &["move", &other, "proj/b"]);
    assert!(!o.status.success() && stderr(&o).contains("is forgotten"), "{}", stderr(&o));
    let o = person(&d, &["move", &a, "proj/c"]);
    assert!(!o.status.success() && stderr(&o).contains(&new), "the old id names the new: {}", stderr(&o));
    let o = person(&d, &["move", &near, "Bad Scope!"]);
    assert!(!o.status.success(), "{}", stderr(&o));

    // Moved back: its first id again, found in its first scope.
    let back = as_person(&d, &["move", &new, "proj/a"]);
    assert_eq!(back["new_id"], a.as_str(), "{back}");
    assert!(found(&mut c, "SQLITE_BUSY reopen test", "proj/a").contains(&a));
    assert!(!found(&mut c, "SQLITE_BUSY reopen test", "proj/b").contains(&new));
}

#[test]
fn a_scope_is_listed_page_by_page_newest_first_each_memory_once() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let batch: Vec<Value> = (0..120)
        .map(|i| json!({ "content": format!("listed memory number {i}"), "scope": "proj/list" }))
        .collect();
    let filed = c.call_value("remember_batch", json!({ "memories": batch })).unwrap();
    let ids: Vec<String> =
        filed["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 120);
    c.call_value("remember", json!({ "content": "below the listed scope", "scope": "proj/list/sub" }))
        .unwrap();

    // An agent may not list a scope (it would read every memory there).
    let e = c.call_value("memories", json!({ "scope": "proj/list" })).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::NotPermitted), "{e}");

    let mut seen: Vec<String> = Vec::new();
    let mut pages = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut args = vec!["list", "proj/list", "--limit", "50"];
        if let Some(b) = &before {
            args.extend(["--before", b.as_str()]);
        }
        let page = as_person(&d, &args);
        let ms = page["memories"].as_array().unwrap();
        pages.push(ms.len());
        seen.extend(ms.iter().map(|m| m["id"].as_str().unwrap().to_string()));
        match page.get("next").and_then(Value::as_u64) {
            Some(n) => before = Some(n.to_string()),
            None => break,
        }
        assert!(pages.len() < 5, "paging does not end: {pages:?}");
    }
    assert_eq!(pages, vec![50, 50, 20], "pages of 50, the last one short, then no next");
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(seen, newest_first, "every memory once, newest first, none from the scope below");

    // One summary's fields; forgotten ones only when asked.
    c.call_value("forget", json!({ "id": ids[119] })).unwrap();
    let first = as_person(&d, &["list", "proj/list", "--limit", "1"]);
    let m = &first["memories"][0];
    assert_eq!(m["id"], ids[118].as_str(), "the forgotten newest is left out: {first}");
    assert_eq!((m["type"].as_str(), m["trust"].as_str()), (Some("fact"), Some("agent")), "{m}");
    assert_eq!(m["first_line"], "listed memory number 118", "{m}");
    assert!(m["weight"].as_f64().is_some() && m["created"].as_i64().is_some(), "{m}");
    let all = as_person(&d, &["list", "proj/list", "--limit", "1", "--include-forgotten"]);
    assert_eq!(all["memories"][0]["id"], ids[119].as_str(), "{all}");
    assert_eq!(all["memories"][0]["forgotten"], true, "{all}");
    let o = person(&d, &["list", "proj/list", "--limit", "201"]);
    assert!(!o.status.success() && stderr(&o).contains("1 to 200"), "{}", stderr(&o));
}

#[test]
fn a_move_stays_on_its_side_of_the_team_database() {
    // A team scope (its database need not answer: the refusal comes first).
    let (d, _dir) =
        with_config("[team]\nurl = \"postgres://agent@127.0.0.1:1/amber\"\nscopes = [\"team/acme\"]\n");
    let mut c = d.client();
    let r = c.call_value("remember", json!({ "content": "a local note on the release", "scope": "proj/x" }));
    let id = r.unwrap()["id"].as_str().unwrap().to_string();
    let o = person(&d, &["move", &id, "team/acme/x"]);
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("a move stays on one side"), "{err}");
    assert!(err.contains("proj/x") && err.contains("team/acme/x"), "{err}");
    assert!(c.call_value("get", json!({ "id": id })).is_ok(), "still where it was");
}
