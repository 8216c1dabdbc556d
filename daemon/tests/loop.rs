//! The learning loop from the agent's seat, over the real socket: a session that asks to
//! be a run is recorded as one when it ends (task, trace, used, outcome), a person
//! rewards it with the `amber` command (an agent that did not record it may not), the
//! reward counts for `lift`; `get_advice` opens a session when given none, gives a held
//! out session nothing, and re-reads the given note's parts at `stuck`, `fork` and
//! `done` without a model call; the judge's verdicts on session runs count for learning
//! and lift, marked, and can be left out.

use crate::common;

use std::sync::atomic::Ordering;

use common::*;
use serde_json::{Value, json};

const NOTE: &str = "## When\nA deploy fails.\n## Steps\n1. Read the deploy log.\n2. Retry once.\n\
                    ## Pitfalls\n- Deploying twice in parallel.\n## Evidence\n[R1] went wrong.";

/// Answers as a model would, by which prompt it is (see advice.rs).
fn model(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    if system.starts_with("You sort") {
        let listed = user.split("<tasks>\n").nth(1).unwrap().split("\n</tasks>").next().unwrap();
        let tasks: Vec<Value> =
            listed.lines().enumerate().map(|(i, _)| json!({"task": i, "situation": "ops/deploys"})).collect();
        json!({"situations": [{"key": "ops/deploys", "line": "Deploys that fail"}], "tasks": tasks})
            .to_string()
    } else if system.starts_with("You write") {
        NOTE.into()
    } else if system.starts_with("You route") {
        "1".into()
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else {
        r#"{"verdict": 1, "reason": "the deploy went through"}"#.into()
    }
}

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| format!("{e}"))
}

fn event(c: &mut amber_ipc::Client, sid: &str, kind: &str, text: &str) -> Value {
    c.call_value("session_event", json!({ "session_id": sid, "kind": kind, "text": text, "capture": false }))
        .unwrap()
}

/// A Claude Code-like session in `scope` that asks to be a run: two prompts, two tool
/// uses (one failed), a word on `memory`; ended. Its id and the ended record.
fn work(c: &mut amber_ipc::Client, scope: &str, key: &str, memory: Option<&str>) -> (String, Value) {
    let s = c
        .call_value(
            "session_start",
            json!({ "agent": "claude-code", "scope": scope, "key": key, "run": true }),
        )
        .unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let first = event(c, &sid, "prompt", "deploy the ledger service to staging");
    assert_eq!(first["opening"], true, "{first}");
    let second = event(c, &sid, "prompt", "and tell me when it is up");
    assert!(second.get("opening").is_none(), "{second}");
    event(c, &sid, "tool_result", "Bash: make deploy ENV=staging\ndeployed in 41 s");
    event(
        c,
        &sid,
        "tool_result",
        "Bash: curl -fsS https://staging/health\n[failed]\ncurl: (7) connection refused\n",
    );
    if let Some(m) = memory {
        c.call_value("outcome", json!({ "memory_id": m, "result": "success", "session_id": sid })).unwrap();
    }
    let ended = c.call_value("session_end", json!({ "session_id": sid })).unwrap();
    (sid, ended["session"].clone())
}

#[test]
fn a_session_that_asks_is_recorded_as_a_run_and_a_person_rewards_it() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let fact = c
        .call_value(
            "remember",
            json!({ "content": "Staging deploys go through make deploy ENV=staging", "scope": "ops" }),
        )
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, record) = work(&mut c, "ops", "cc-1", Some(&fact));
    let runs = record["run"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{record}");
    let run_id = runs[0].as_str().unwrap().to_string();
    let shown = c.call_value("run_show", json!({ "id": run_id })).unwrap();
    let run = &shown["run"];
    assert_eq!((run["scope"].clone(), run["agent"].clone()), (json!("ops"), json!("claude-code")));
    assert_eq!(run["task"], "deploy the ledger service to staging", "the opening prompt is the task");
    assert_eq!(
        run["trace"],
        "Bash: make deploy ENV=staging\nBash: curl -fsS https://staging/health → failed: curl: (7) connection refused"
    );
    assert_eq!(run["used"], json!([fact]), "the memory it reported on");
    let outcome = run["outcome"].as_str().unwrap();
    assert!(
        outcome.contains("1 helped, 0 wrong") && outcome.contains("1 of 2 tool uses failed"),
        "{outcome}"
    );

    // Only the recorder or a person may reward it.
    let e =
        c.call_value("run_reward", json!({ "agent": "codex", "run_id": run_id, "reward": 1.0 })).unwrap_err();
    assert_eq!(kind(e), "not_permitted");
    let rewarded =
        as_person(&d, &["runs", "reward", "last", "0.8", "--scope", "ops", "--reason", "it shipped"]);
    assert_eq!(
        (rewarded["rewarded"].clone(), rewarded["weights_moved"].clone()),
        (json!(1), json!(1)),
        "{rewarded}"
    );
    let shown = c.call_value("run_show", json!({ "id": run_id })).unwrap();
    assert_eq!(shown["rewards"][0]["agent"], "person");
    assert_eq!(shown["rewards"][0]["reason"], "it shipped");
    let out = person(&d, &["runs", "reward", "last", "3", "--scope", "ops"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("-1..1"));

    // The person's reward is the session's for lift.
    let lift = c.call_value("lift", json!({ "scope": "ops" })).unwrap();
    assert_eq!((lift["rewarded"].clone(), lift["by_run"].clone()), (json!(1), json!(1)), "{lift}");
    assert!((lift["served"]["mean"].as_f64().unwrap() - 0.8).abs() < 1e-6, "{lift}");

    // Resumed (the same key): what it did since is another run; with nothing done, none.
    let again = c
        .call_value("session_start", json!({ "agent": "claude-code", "scope": "ops", "key": "cc-1" }))
        .unwrap();
    let sid = again["session_id"].as_str().unwrap().to_string();
    event(&mut c, &sid, "tool_result", "Bash: make verify\nall green");
    let ended = c.call_value("session_end", json!({ "session_id": sid })).unwrap();
    let runs = ended["session"]["run"]["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2, "{ended}");
    let second = c.call_value("run_show", json!({ "id": runs[1] })).unwrap();
    assert_eq!(second["run"]["trace"], "Bash: make verify");
    assert_eq!(second["run"]["task"], "deploy the ledger service to staging");
    c.call_value("session_start", json!({ "agent": "claude-code", "scope": "ops", "key": "cc-1" })).unwrap();
    let ended = c.call_value("session_end", json!({ "session_id": sid })).unwrap();
    assert_eq!(ended["session"]["run"]["runs"].as_array().unwrap().len(), 2, "nothing done: no run");

    // A session that did not ask is no run.
    let s = c.call_value("session_start", json!({ "agent": "codex", "scope": "ops" })).unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    event(&mut c, &sid, "prompt", "look at the deploy");
    event(&mut c, &sid, "tool_result", "Bash: ls\nMakefile");
    let ended = c.call_value("session_end", json!({ "session_id": sid })).unwrap();
    assert!(ended["session"].get("run").is_none_or(|r| r.get("runs").is_none()), "{ended}");
    let all = c.call_value("runs", json!({ "scope": "ops" })).unwrap();
    assert_eq!(all["runs"].as_array().unwrap().len(), 2);
}

/// Two runs of the deploy situation rewarded wrong, one right, and a note learned.
fn learned(c: &mut amber_ipc::Client, scope: &str) {
    for (i, reward) in [-1.0, -0.5, 1.0].into_iter().enumerate() {
        let r = c
            .call_value(
                "run_record",
                json!({ "agent": "ada", "scope": scope, "task": format!("the staging deploy fails, try {i}"),
                        "trace": format!("attempt {i}"), "outcome": "done" }),
            )
            .unwrap();
        let id = r["results"][0]["id"].as_str().unwrap();
        c.call_value("run_reward", json!({ "agent": "ada", "run_id": id, "reward": reward })).unwrap();
    }
    let l = c.call_value("advice_learn", json!({ "scope": scope })).unwrap();
    assert_eq!(l["written"][0]["situation"], "ops/deploys", "{l}");
    assert_eq!((l["rewarded"].clone(), l["judged"].clone()), (json!(3), json!(0)), "{l}");
}

#[test]
fn get_advice_opens_a_session_and_moments_reread_the_given_note_without_a_model_call() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) =
        with_config(&format!("[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\n", chat.url));
    let mut c = d.client();
    learned(&mut c, "ops");

    // No session named: one is opened, and the next ask naming it is not given the note again.
    let first =
        c.call_value("get_advice", json!({ "task": "the deploy to staging fails", "scope": "ops" })).unwrap();
    assert_eq!((first["opened"].clone(), first["situation"].clone()), (json!(true), json!("ops/deploys")));
    assert_eq!(first["note"], NOTE);
    let sid = first["session_id"].as_str().unwrap().to_string();
    let again = c
        .call_value("get_advice", json!({ "task": "the deploy to staging fails", "session_id": sid }))
        .unwrap();
    assert_eq!((again["given_earlier"].clone(), again.get("opened")), (json!(true), None));

    // Moments re-read parts of the given note: no model call, each part once.
    let calls = chat.answered.load(Ordering::SeqCst);
    let ask = |c: &mut amber_ipc::Client, moment: &str| {
        c.call_value("get_advice", json!({ "task": "still failing", "session_id": sid, "moment": moment }))
            .unwrap()
    };
    let stuck = ask(&mut c, "stuck");
    assert_eq!(
        (stuck["part"].clone(), stuck["note"].clone()),
        (json!("Pitfalls"), json!("- Deploying twice in parallel."))
    );
    assert!(stuck["text"].as_str().unwrap().starts_with("Amber, at stuck: the Pitfalls"), "{stuck}");
    let fork = ask(&mut c, "fork");
    assert_eq!((fork["given_earlier"].clone(), fork.get("note")), (json!(true), None), "{fork}");
    let done = ask(&mut c, "done");
    assert_eq!(done["note"], "1. Read the deploy log.\n2. Retry once.");
    assert_eq!(chat.answered.load(Ordering::SeqCst), calls, "moments make no model call");
    let shown = c.call_value("session_show", json!({ "session_id": sid })).unwrap();
    assert_eq!(shown["session"]["run"]["advice"][0]["reread"], json!(["Pitfalls", "Steps"]));

    // A session given nothing has nothing to re-read.
    let s = c.call_value("session_start", json!({ "agent": "bob", "scope": "ops" })).unwrap();
    let other = s["session_id"].as_str().unwrap();
    let r =
        c.call_value("get_advice", json!({ "task": "x", "session_id": other, "moment": "stuck" })).unwrap();
    assert!(r.get("note").is_none() && r["message"].as_str().unwrap().contains("no advice was given"), "{r}");
}

#[test]
fn a_held_out_session_is_given_no_advice_and_judged_session_runs_count_marked() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&format!(
        "[learn]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"m\"\njudge_delay_s = 0\ninterval_s = 0\n[holdout]\nshare = 1.0\n",
        chat.url
    ));
    let mut c = d.client();
    learned(&mut c, "ops");
    let calls = chat.answered.load(Ordering::SeqCst);
    let r =
        c.call_value("get_advice", json!({ "task": "the deploy to staging fails", "scope": "ops" })).unwrap();
    assert_eq!((r["withheld"].clone(), r.get("note")), (json!(true), None), "{r}");
    assert_eq!(chat.answered.load(Ordering::SeqCst), calls, "no model call for a held-out session");

    // A held-out session run nobody rewards: judged (both arms alike), counted as judged.
    let (sid, record) = work(&mut c, "ops", "cc-held", None);
    assert_eq!(record["withheld"], true);
    let run_id = record["run"]["runs"][0].as_str().unwrap().to_string();
    let judged = c.call_value("judge_runs", json!({ "scope": "ops" })).unwrap();
    let ids: Vec<&str> =
        judged["judged"].as_array().unwrap().iter().map(|j| j["run_id"].as_str().unwrap()).collect();
    assert!(ids.contains(&run_id.as_str()), "the session's run is judged: {judged}");
    assert!(!ids.contains(&format!("session:{sid}").as_str()), "not the session beside it: {judged}");
    let lift = c.call_value("lift", json!({ "scope": "ops" })).unwrap();
    assert_eq!((lift["judged"].clone(), lift["withheld"]["n"].clone()), (json!(1), json!(1)), "{lift}");
    let lift = c.call_value("lift", json!({ "scope": "ops", "judged": false })).unwrap();
    assert_eq!(lift["rewarded"], 0, "{lift}");
    let l = c.call_value("advice_learn", json!({ "scope": "ops" })).unwrap();
    assert_eq!((l["rewarded"].clone(), l["judged"].clone()), (json!(3), json!(1)), "{l}");
}
