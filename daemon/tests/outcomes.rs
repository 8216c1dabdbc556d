//! Outcomes over the socket (JSON as any client sends it): `outcome`, the `session_end`
//! manifest, `outcomes`, `archived`, `unarchive`, `audit`, supersession through
//! `remember`, and `recall` with `archived`. Against the real daemon and model.

use crate::common;

use common::Daemon;
use serde_json::{Value, json};

const SCOPE: &str = "proj/outcomes";

fn remember(c: &mut amber_ipc::Client, content: &str, extra: Value) -> String {
    let mut p = json!({ "content": content, "scope": SCOPE });
    if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    c.call_value("remember", p).unwrap()["id"].as_str().unwrap().to_string()
}

fn recall_ids(c: &mut amber_ipc::Client, text: &str, archived: bool) -> Vec<String> {
    let r = c.call_value("recall", json!({ "text": text, "scope": SCOPE, "archived": archived })).unwrap();
    r["hits"].as_array().unwrap().iter().map(|h| h["memory"]["id"].as_str().unwrap().to_string()).collect()
}

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| format!("{e}"))
}

#[test]
fn outcomes_weights_and_the_archive_over_the_socket() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let a = remember(&mut c, "deploys go through the blue-green switch in ops/switch.sh", json!({}));
    let b = remember(&mut c, "deploys need the VPN on before ops/switch.sh runs", json!({}));

    // An outcome by prefix; the memory comes back with its weight. A socket client in no
    // session that served the memory is an agent never served it: half a failure.
    let r = c
        .call_value("outcome", json!({ "memory_id": &a[..8], "result": "failure", "agent": "codex", "note": "switch.sh is gone" }))
        .unwrap();
    assert!((r["memory"]["weight"].as_f64().unwrap() - 0.9).abs() < 1e-6, "{r}");
    // Recall evidence carries the standing of every hit.
    let hits = c.call_value("recall", json!({ "text": "deploys switch", "scope": SCOPE })).unwrap();
    for h in hits["hits"].as_array().unwrap() {
        let s = &h["evidence"]["standing"];
        assert!(s["weight"].is_number() && s["age_factor"].is_number() && s["prior"].is_number(), "{h}");
        if h["memory"]["id"] == a {
            assert_eq!(s["failures"], 1);
        }
    }
    // The log keeps agent, note and time.
    let log = c.call_value("outcomes", json!({ "memory_id": a })).unwrap();
    let reports = log["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["agent"], "codex");
    assert_eq!(reports[0]["note"], "switch.sh is gone");
    assert_eq!(reports[0]["result"], "failure");
    assert_eq!(reports[0]["basis"], "unserved");

    // Bad input is typed and leaves the daemon serving.
    let e = c.call_value("outcome", json!({ "memory_id": a, "result": "great" })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
    let e = c.call_value("outcome", json!({ "memory_id": "ffffffff", "result": "success" })).unwrap_err();
    assert_eq!(kind(e), "not_found");
    let e = c
        .call_value("outcome", json!({ "memory_id": a, "result": "success", "session_id": "nope" }))
        .unwrap_err();
    assert_eq!(kind(e), "session_not_found");

    // Nine more failures from that client: the weight falls to 0, yet nothing is
    // archived (no one client buries a memory).
    for _ in 0..9 {
        c.call_value("outcome", json!({ "memory_id": a, "result": "failure" })).unwrap();
    }
    let got = c.call_value("get", json!({ "id": a })).unwrap();
    assert!(
        got["memory"]["archived_at"].is_null() && got["memory"]["weight"].as_f64().unwrap() < 0.1,
        "{got}"
    );
    assert_eq!(recall_ids(&mut c, "deploys switch", false).len(), 2);
    // Sessions that were served it: failures count by reporter, not by session. Sessions
    // of a name nobody registered are one reporter whatever names they give (one client
    // opening agent-b1 … agent-b5); a registered agent is another, and archives it (out
    // of recall, listed, readable, shown when asked).
    let served = |c: &mut amber_ipc::Client, agent: &str, token: Option<&str>| -> String {
        let s = c
            .call_value(
                "session_start",
                json!({ "agent": agent, "agent_token": token, "scope": SCOPE,
                        "prompt": "how do deploys go through the blue-green switch?" }),
            )
            .unwrap();
        let briefed = s["briefing"]["items"].as_array().unwrap();
        assert!(briefed.iter().any(|i| i["memory"]["id"] == a.as_str() || i["id"] == a.as_str()), "{s}");
        s["session_id"].as_str().unwrap().to_string()
    };
    for i in 1..=5 {
        let s = served(&mut c, &format!("agent-b{i}"), None);
        c.call_value("outcome", json!({ "memory_id": a, "result": "failure", "session_id": s })).unwrap();
        assert_eq!(
            recall_ids(&mut c, "deploys switch", false).len(),
            2,
            "{i} sessions of unregistered names are one reporter"
        );
    }
    let log = c.call_value("outcomes", json!({ "memory_id": a })).unwrap();
    assert_eq!(log["reports"].as_array().unwrap().last().unwrap()["basis"], "served_unregistered", "{log}");
    let out = common::person(&d, &["agent", "register", "codex"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token =
        std::fs::read_to_string(d.data.with_file_name("state").join("agents").join("codex.token")).unwrap();
    let s2 = served(&mut c, "codex", Some(&token));
    let r =
        c.call_value("outcome", json!({ "memory_id": a, "result": "failure", "session_id": s2 })).unwrap();
    assert!(r["memory"]["archived_at"].is_number(), "{r}");
    let log = c.call_value("outcomes", json!({ "memory_id": a })).unwrap();
    assert_eq!(log["reports"].as_array().unwrap().last().unwrap()["basis"], "served", "{log}");
    assert_eq!(recall_ids(&mut c, "deploys switch", false), vec![b.clone()]);
    assert!(recall_ids(&mut c, "deploys switch", true).contains(&a));
    let listed = c.call_value("archived", json!({ "scope": SCOPE })).unwrap();
    assert_eq!(listed["memories"][0]["id"], a);
    let got = c.call_value("get", json!({ "id": a })).unwrap();
    assert!(got["memory"]["archived_at"].is_number(), "{got}");
    let r = c.call_value("unarchive", json!({ "id": a })).unwrap();
    assert!(
        r["memory"]["archived_at"].is_null() && (r["memory"]["weight"].as_f64().unwrap() - 0.3).abs() < 1e-6
    );
    assert_eq!(recall_ids(&mut c, "deploys switch", false).len(), 2);
}

#[test]
fn supersession_through_remember_and_a_retraction() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let old = remember(&mut c, "the API base URL is https://api.example.com/v1", json!({}));
    let new = remember(
        &mut c,
        "the API base URL moved to https://api.example.com/v2",
        json!({ "type": "invalidation", "supersedes": [old] }),
    );
    let hits = c.call_value("recall", json!({ "text": "API base URL", "scope": SCOPE })).unwrap();
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["memory"]["id"], new);
    assert_eq!(hits[0]["memory"]["supersedes"], json!([old]));
    let got = c.call_value("get", json!({ "id": old })).unwrap();
    assert_eq!(got["memory"]["superseded_by"], new);
    let e = c.call_value("unarchive", json!({ "id": old })).unwrap_err();
    assert_eq!(kind(e), "superseded");
    // A retraction supersedes the invalidation: the old memory stands again.
    remember(
        &mut c,
        "retract: the v2 move was rolled back",
        json!({ "type": "invalidation", "supersedes": [new] }),
    );
    let ids = recall_ids(&mut c, "API base URL", false);
    assert!(ids.contains(&old) && !ids.contains(&new), "{ids:?}");
    // Refusals: a fact cannot supersede; an unknown target is named.
    let e =
        c.call_value("remember", json!({ "content": "x", "scope": SCOPE, "supersedes": [old] })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
    let e = c
        .call_value(
            "remember",
            json!({ "content": "y", "scope": SCOPE, "type": "invalidation", "supersedes": ["0123456789abcdef0123456789abcdef"] }),
        )
        .unwrap_err();
    assert!(e.to_string().contains("0123456789abcdef0123456789abcdef"), "{e}");
}

#[test]
fn an_agent_cannot_retire_another_authors_memory_only_dispute_it() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let theirs =
        remember(&mut c, "the staging database listens on port 5433", json!({ "author": "agent-a" }));
    let r = c
        .call_value(
            "remember",
            json!({ "content": "the staging database moved to port 6543", "scope": SCOPE, "author": "agent-b",
                    "type": "invalidation", "supersedes": [theirs] }),
        )
        .unwrap();
    let inv = r["id"].as_str().unwrap().to_string();
    assert_eq!(r["disputed"], json!([theirs]), "{r}");
    // The old memory stands, findable, and says it is disputed.
    let got = c.call_value("get", json!({ "id": theirs })).unwrap();
    assert!(got["memory"]["superseded_by"].is_null() && got["memory"]["archived_at"].is_null(), "{got}");
    let hits = c.call_value("recall", json!({ "text": "staging database port", "scope": SCOPE })).unwrap();
    let ids: Vec<&str> =
        hits["hits"].as_array().unwrap().iter().map(|h| h["memory"]["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&theirs.as_str()) && ids.contains(&inv.as_str()), "{hits}");
    assert_eq!(hits["disputed"], json!([{ "id": theirs, "by": [inv] }]), "{hits}");
    let inv_memory = c.call_value("get", json!({ "id": inv })).unwrap();
    assert!(inv_memory["memory"]["supersedes"].as_array().is_none_or(|a| a.is_empty()), "{inv_memory}");
    assert_eq!(inv_memory["memory"]["metadata"]["disputes"], json!([theirs]), "{inv_memory}");
    // Its own author retires it.
    let r = c
        .call_value(
            "remember",
            json!({ "content": "agent-a: the staging database is on port 6543 now", "scope": SCOPE, "author": "agent-a",
                    "type": "invalidation", "supersedes": [theirs] }),
        )
        .unwrap();
    assert!(r.get("disputed").is_none(), "{r}");
    let got = c.call_value("get", json!({ "id": theirs })).unwrap();
    assert_eq!(got["memory"]["superseded_by"], r["id"], "{got}");
}

#[test]
fn a_session_manifest_moves_weights_and_the_audit_finds_gaps() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let relied = remember(&mut c, "run the integration tests with make itest (needs docker)", json!({}));
    let ignored = remember(&mut c, "integration tests log to target/itest.log", json!({}));
    let unserved = remember(&mut c, "the release notes template is in docs/RELEASE.md", json!({}));
    let s = c
        .call_value(
            "session_start",
            json!({ "agent": "claude-code", "scope": SCOPE, "prompt": "how do I run the integration tests?" }),
        )
        .unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let served: Vec<String> = s["briefing"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert!(served.contains(&relied) && served.contains(&ignored), "{s}");
    assert!(!served.contains(&unserved));
    // A success claimed for a memory the session was never served: the audit lists it.
    c.call_value("outcome", json!({ "memory_id": unserved, "result": "success", "session_id": sid }))
        .unwrap();
    let end = c
        .call_value(
            "session_end",
            json!({ "session_id": sid, "manifest": [
                { "memory_id": relied, "used": true, "result": "failure" },
                { "memory_id": &ignored[..8], "used": false },
                { "memory_id": "dddddddd", "used": true }
            ] }),
        )
        .unwrap();
    let m = &end["manifest"];
    assert_eq!(m["applied"].as_array().unwrap().len(), 2, "{m}");
    assert!((m["applied"][0]["weight"].as_f64().unwrap() - 0.9).abs() < 1e-6, "used, failure: -0.10: {m}");
    assert!((m["applied"][1]["weight"].as_f64().unwrap() - 0.95).abs() < 1e-6, "unused: x0.95: {m}");
    assert_eq!(m["refused"].as_array().unwrap().len(), 1, "{m}");
    let log = c.call_value("outcomes", json!({ "memory_id": relied })).unwrap();
    assert_eq!(log["reports"][0]["agent"], "claude-code");
    assert_eq!(log["reports"][0]["session_id"], sid);

    let audit = c.call_value("audit", json!({})).unwrap();
    let claims = audit["unbacked_successes"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{audit}");
    assert_eq!(claims[0]["memory_id"], unserved);
    // Every served memory was reported, so nothing is unreported in this session.
    let unreported: Vec<&Value> =
        audit["unreported"].as_array().unwrap().iter().filter(|u| u["session_id"] == sid).collect();
    let reported = [relied.as_str(), ignored.as_str()];
    assert!(unreported.iter().all(|u| !reported.contains(&u["memory_id"].as_str().unwrap())), "{audit}");
    assert_eq!(unreported.len(), served.len() - 2, "{audit}");
}

/// The holdout arm: a withheld session gets identity only (no inbox, no briefing, no
/// interjection; what is addressed to its agent waits), and `lift` compares rewarded
/// sessions of both arms.
#[test]
fn the_holdout_arm_is_served_nothing_and_lift_compares_the_arms() {
    let (d, _dir) = common::with_config("[holdout]\nshare = 1.0\n");
    let mut c = d.client();
    remember(&mut c, "the staging deploy needs the VPN on", json!({}));
    remember(&mut c, "codex: the VPN config moved", json!({ "author": "claude-code", "to": "codex" }));
    let s = c
        .call_value(
            "session_start",
            json!({ "agent": "codex", "scope": SCOPE, "prompt": "staging deploy VPN" }),
        )
        .unwrap();
    assert_eq!(s["withheld"], true, "{s}");
    assert!(
        s["briefing"]["items"].as_array().unwrap().is_empty()
            && s["inbox"]["items"].as_array().unwrap().is_empty()
    );
    let sid = s["session_id"].as_str().unwrap().to_string();
    let ev = c
        .call_value(
            "session_event",
            json!({ "session_id": sid, "kind": "prompt", "text": "how do I deploy staging with the VPN?" }),
        )
        .unwrap();
    assert_eq!(ev["decision"]["reason"], "withheld", "{ev}");
    let end = c.call_value("session_end", json!({ "session_id": sid, "outcome": "failure" })).unwrap();
    assert_eq!(end["session"]["reward"], -1.0);
    assert_eq!(end["session"]["withheld"], true);
    let e = c.call_value("session_end", json!({ "session_id": "x", "outcome": 2.0 })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
    drop(c);
    drop(d);

    // Half the sessions withheld: served ones go better by a planted margin.
    let (d, _dir) = common::with_config("[holdout]\nshare = 0.5\n");
    let mut c = d.client();
    let lift = c.call_value("lift", json!({})).unwrap();
    assert_eq!(lift["verdict"], "not_enough_data", "{lift}");
    let mut arms = [0, 0];
    for _ in 0..120 {
        let s = c.call_value("session_start", json!({ "agent": "sim", "scope": SCOPE })).unwrap();
        let withheld = s["withheld"].as_bool().unwrap_or(false);
        // The noise cycles within each arm, so neither arm's mean is shifted by which
        // sessions the (random) draw sent to it.
        let noise = [-0.3, 0.0, 0.3][(arms[withheld as usize] % 3) as usize];
        arms[withheld as usize] += 1;
        let reward = if withheld { 0.0 + noise } else { 0.4 + noise };
        c.call_value("session_end", json!({ "session_id": s["session_id"], "outcome": reward })).unwrap();
    }
    let lift = c.call_value("lift", json!({ "scope": SCOPE })).unwrap();
    assert!(arms[0] >= 30 && arms[1] >= 30, "{arms:?}");
    assert_eq!(
        (lift["served"]["n"].as_u64(), lift["withheld"]["n"].as_u64()),
        (Some(arms[0]), Some(arms[1]))
    );
    assert_eq!(lift["verdict"], "lift", "{lift}");
    assert!((lift["difference"].as_f64().unwrap() - 0.4).abs() < 0.1, "{lift}");
    assert!(lift["p"].as_f64().unwrap() < 0.001, "{lift}");
}
