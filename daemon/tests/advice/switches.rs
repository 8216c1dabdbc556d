//! The learning loop's switches through the daemon: the judge alone (`judge_only`: sessions
//! and their notes judged, nothing served), the cap on sessions judged per voice a day
//! (`judged_per_day`), and a reason given inline with a batch's reward.

use serde_json::{Value, json};

use super::common::*;

const NOTE: &str = "## When\nA migration fails.\n## Steps\n1. Read the error.\n## Pitfalls\n- Editing an applied one.\n## Evidence\n[R1].";

fn model(body: &str) -> String {
    let (system, user) = chat_parts(body);
    if system.starts_with("You sort") {
        sort_reply(&user, &[("db/migrations", "Schema migrations that fail")], |_| "db/migrations".into())
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else if system.starts_with("You write") {
        NOTE.into()
    } else if system.starts_with("You route") {
        "1".into()
    } else if system.starts_with("You read the record") {
        json!({"notes": [{"note": "N1", "applied": "yes", "helped": "yes"}]}).to_string()
    } else {
        r#"{"verdict": 1, "reason": "fine"}"#.into()
    }
}

fn daemon(chat: &FakeChat, extra: &str) -> (Daemon, tempfile::TempDir) {
    with_config(&format!(
        "[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\njudge_delay_s = 0\ninterval_s = 0\n{extra}",
        chat.url
    ))
}

/// Learns a note in `scope` from three runs, one batch, each reward with its reason.
fn learn(c: &mut amber_ipc::Client, scope: &str) -> Value {
    let runs: Vec<Value> = [-1.0, -1.0, 1.0]
        .iter()
        .enumerate()
        .map(|(i, r)| json!({ "task": format!("fix the failing migration {i}"), "reward": r, "reason": format!("the person's word {i}") }))
        .collect();
    let loaded = c.call_value("run_record", json!({ "agent": "ada", "scope": scope, "runs": runs })).unwrap();
    c.call_value("advice_learn", json!({ "scope": scope, "cache": false })).unwrap();
    loaded
}

#[test]
fn the_judge_alone_judges_and_serves_nothing_and_a_batch_rewards_with_reasons() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = daemon(&chat, "judge_only = true\n");
    let mut c = d.client();
    let loaded = learn(&mut c, "alone");
    assert_eq!(loaded["rewarded"], 3, "{loaded}");
    let id = loaded["results"][0]["id"].as_str().unwrap();
    let shown = c.call_value("run_show", json!({ "id": id })).unwrap();
    assert_eq!(shown["rewards"][0]["reason"], "the person's word 0", "{shown}");
    let bad = c
        .call_value(
            "run_record",
            json!({ "agent": "ada", "scope": "alone", "runs": [{ "task": "x", "reason": "no reward" }] }),
        )
        .unwrap_err();
    assert_eq!(bad.kind().map(|k| k.as_str()), Some("invalid_params"));

    let s = c.call_value("session_start", json!({ "agent": "ada", "scope": "alone" })).unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let got =
        c.call_value("get_advice", json!({ "task": "the migration fails", "session_id": sid })).unwrap();
    assert!(got.get("note").is_none(), "{got}");
    assert!(got["message"].as_str().unwrap().contains("judge_only"), "{got}");
    assert!(!chat.bodies.lock().unwrap().iter().any(|b| b.contains("You route")), "no routing call");
    c.call_value("session_end", json!({ "session_id": sid, "transcript": "worked on the migration" }))
        .unwrap();
    let judged = c.call_value("judge_runs", json!({ "scope": "alone" })).unwrap();
    assert_eq!(judged["judged"][0]["run_id"], format!("session:{sid}"), "the session is judged: {judged}");
}

#[test]
fn at_most_judged_per_day_sessions_of_one_voice_are_judged() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = daemon(&chat, "judged_per_day = 2\n");
    let mut c = d.client();
    learn(&mut c, "capped");
    let mut ids = Vec::new();
    for agent in ["ada", "ada", "ada", "ada", "bob"] {
        let s = c.call_value("session_start", json!({ "agent": agent, "scope": "capped" })).unwrap();
        let sid = s["session_id"].as_str().unwrap().to_string();
        let got =
            c.call_value("get_advice", json!({ "task": "the migration fails", "session_id": sid })).unwrap();
        assert!(got.get("note").is_some(), "{got}");
        c.call_value("session_end", json!({ "session_id": sid, "transcript": "worked on it" })).unwrap();
        ids.push(sid);
    }
    let judged = c.call_value("judge_runs", json!({ "scope": "capped", "limit": 1000 })).unwrap();
    let mut noted: Vec<String> = judged["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["session_id"].as_str().unwrap().to_string())
        .collect();
    noted.sort();
    let mut want = vec![ids[0].clone(), ids[1].clone(), ids[4].clone()];
    want.sort();
    assert_eq!(noted, want, "ada's first two of the day, and bob's: {judged}");
    let sessions: Vec<&str> =
        judged["judged"].as_array().unwrap().iter().map(|j| j["run_id"].as_str().unwrap()).collect();
    assert_eq!(sessions.len(), 3, "the same cap for judging sessions: {sessions:?}");
    let again = c.call_value("judge_runs", json!({ "scope": "capped", "limit": 1000 })).unwrap();
    assert_eq!(
        (again["notes"].clone(), again["judged"].clone()),
        (json!([]), json!([])),
        "the day is full: {again}"
    );
}
