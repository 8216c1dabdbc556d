//! Advice over the real socket. Without a model every method that needs one answers
//! `no_model` and the daemon keeps serving; with a fake OpenAI-compatible endpoint on
//! 127.0.0.1 a scope's runs are sorted, a note is written (the people rule holding in a
//! team scope), routed to and served once per session, runs are judged and a
//! recorder's reward shows beside the judgement; a malformed reply and a timeout
//! answer `model_failed`.

use crate::common;
#[path = "advice/month.rs"]
mod month;
#[path = "advice/options.rs"]
mod options;
#[path = "advice/switches.rs"]
mod switches;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| format!("{e}"))
}

const NOTE: &str = "## When\nA schema migration fails.\n## Steps\n1. Read the error.\n2. Fix the statement.\n\
                    ## Pitfalls\n- Editing a migration that was applied.\n## Evidence\n[R1] and [R2] went wrong.";

/// Answers as a model would, by which prompt it is.
fn model(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    if system.starts_with("You sort") {
        let listed = user.split("<tasks>\n").nth(1).unwrap().split("\n</tasks>").next().unwrap();
        let tasks: Vec<Value> = listed
            .lines()
            .enumerate()
            .map(|(i, t)| {
                let key = if t.contains("schema change") { "db/schema-changes" } else { "db/migrations" };
                json!({"task": i, "situation": key})
            })
            .collect();
        json!({"situations": [{"key": "db/migrations", "line": "Schema migrations that fail"},
                              {"key": "db/schema-changes", "line": "Changing the schema"}], "tasks": tasks})
        .to_string()
    } else if system.starts_with("You tidy") {
        json!({"merge": [{"from": "db/schema-changes", "into": "db/migrations"}]}).to_string()
    } else if system.starts_with("You write") {
        NOTE.into()
    } else if system.starts_with("You route") {
        "1".into()
    } else if user.contains("still failing") {
        r#"{"verdict": -1, "reason": "it still fails"}"#.into()
    } else {
        r#"{"verdict": 1, "reason": "tests pass"}"#.into()
    }
}

fn learn_config(url: &str, extra: &str) -> String {
    format!("[learn]\nkind = \"openai\"\nurl = \"{url}\"\nmodel = \"m\"\n{extra}")
}

/// Records one run per (agent, reward) in `scope`, rewarded by its agent (None: not).
fn record(c: &mut amber_ipc::Client, scope: &str, runs: &[(&str, Option<f64>)]) -> Vec<String> {
    let mut ids = Vec::new();
    for (i, (agent, reward)) in runs.iter().enumerate() {
        let outcome = if reward.is_some_and(|r| r < 0.0) { "still failing" } else { "tests pass" };
        let r = c
            .call_value(
                "run_record",
                json!({ "agent": agent, "scope": scope, "task": format!("fix the failing schema migration, try {i}"),
                        "trace": format!("ran the migrations, attempt {i}"), "outcome": outcome }),
            )
            .unwrap();
        let id = r["results"][0]["id"].as_str().unwrap().to_string();
        if let Some(reward) = reward {
            c.call_value("run_reward", json!({ "agent": agent, "run_id": id, "reward": reward })).unwrap();
        }
        ids.push(id);
        // Runs recorded in one millisecond are ordered by id, which differs by scope: one
        // apart, the same runs in two scopes make the same prompts (the cache test).
        std::thread::sleep(Duration::from_millis(2));
    }
    ids
}

#[test]
fn without_a_model_advice_answers_no_model_and_the_daemon_keeps_serving() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    for (method, params) in [
        ("get_advice", json!({ "task": "fix the migration" })),
        ("advice_learn", json!({ "scope": "proj" })),
        ("judge_runs", json!({ "scope": "proj" })),
    ] {
        let e = c.call_value(method, params).unwrap_err();
        assert!(e.to_string().contains("advice is learned by a model: none is configured"), "{method}: {e}");
        assert_eq!(kind(e), "no_model", "{method}");
    }
    assert_eq!(c.call_value("advice_list", json!({ "scope": "proj" })).unwrap()["situations"], json!([]));
    assert_eq!(c.call_value("judgements", json!({ "scope": "proj" })).unwrap()["judgements"], json!([]));
    let e = c.call_value("advice_show", json!({ "scope": "proj", "situation": "a/b" })).unwrap_err();
    assert_eq!(kind(e), "not_found");
    let status = c.call_value("status", json!({})).unwrap();
    assert!(status.get("learn").is_none(), "{status}");
}

#[test]
fn advice_is_learned_routed_and_served_once_per_session() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    assert_eq!(c.call_value("status", json!({})).unwrap()["learn"], "openai:m");

    // A team scope: two wrong runs from two agents are not enough people.
    record(&mut c, "team/two", &[("ada", Some(-1.0)), ("bob", Some(-1.0)), ("ada", Some(1.0))]);
    let two = c.call_value("advice_learn", json!({ "scope": "team/two", "cache": false })).unwrap();
    assert_eq!(two["sorted"], 3);
    assert_eq!(two["written"], json!([]));
    assert!(two["skipped"][0]["reason"].as_str().unwrap().contains("runs from 2 agents"), "{two}");

    // Three agents: the note is written from their runs.
    record(
        &mut c,
        "team/web",
        &[("ada", Some(-1.0)), ("bob", Some(-0.5)), ("cy", Some(1.0)), ("cy", Some(1.0))],
    );
    let learned = c.call_value("advice_learn", json!({ "scope": "team/web" })).unwrap();
    assert_eq!(
        (learned["sorted"].clone(), learned["new_situations"].clone()),
        (json!(4), json!(2)),
        "{learned}"
    );
    assert_eq!(learned["merged"], json!([["db/schema-changes", "db/migrations"]]), "{learned}");
    assert_eq!(
        learned["written"],
        json!([{ "situation": "db/migrations", "version": 1, "runs": 4, "agents": 3 }])
    );
    let bodies = chat.bodies.lock().unwrap().clone();
    let sorting: Vec<&String> = bodies.iter().filter(|b| b.contains("You sort")).collect();
    assert_eq!(sorting.len(), 2, "one sorting call a scope");
    assert!(
        sorting
            .iter()
            .all(|b| b.contains("fix the failing schema migration") && !b.contains("ran the migrations")),
        "the sorter sees task texts only, never a trace"
    );
    let calls = chat.answered.load(Ordering::SeqCst);
    let again = c.call_value("advice_learn", json!({ "scope": "team/web" })).unwrap();
    assert_eq!(again["written"], json!([]));
    assert!(again["skipped"][0]["reason"].as_str().unwrap().contains("version 1 is current"), "{again}");
    assert_eq!(chat.answered.load(Ordering::SeqCst), calls, "nothing new: no model call");

    let session = c.call_value("session_start", json!({ "agent": "ada", "scope": "team/web" })).unwrap();
    let sid = session["session_id"].as_str().unwrap();
    let ask = json!({ "task": "the schema migration fails again", "session_id": sid, "moment": "next" });
    let first = c.call_value("get_advice", ask.clone()).unwrap();
    assert_eq!(first["situation"], "db/migrations");
    assert_eq!((first["version"].clone(), first["runs"].clone()), (json!(1), json!(4)));
    assert_eq!(first["note"], NOTE);
    assert_eq!((first["given_earlier"].clone(), first["moment"].clone()), (json!(false), json!("next")));
    assert_eq!(first["from"], "runs");
    let text = first["text"].as_str().unwrap();
    assert!(
        text.starts_with("Amber: advice for this task, learned from 4 rewarded runs in team/web"),
        "{text}"
    );
    assert!(text.lines().skip(1).all(|l| l.starts_with("│ ")), "the note is quoted line by line: {text}");
    assert_eq!(first["scope"], "team/web", "the session's scope");
    let second = c.call_value("get_advice", ask).unwrap();
    assert_eq!(second["given_earlier"], true);
    assert!(second.get("note").is_none(), "{second}");
    assert!(second["message"].as_str().unwrap().contains("given earlier"), "{second}");

    let shown =
        c.call_value("advice_show", json!({ "scope": "team/web", "situation": "db/migrations" })).unwrap();
    assert_eq!(shown["notes"].as_array().unwrap().len(), 1);
    let listed = c.call_value("advice_list", json!({ "scope": "team/web" })).unwrap();
    assert_eq!(listed["situations"][0]["runs"], 4);
    assert_eq!(listed["situations"][0]["notes"][0]["version"], 1);
    let e = c.call_value("get_advice", json!({ "task": "x", "moment": "later" })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
    let e = c.call_value("get_advice", json!({ "task": "x", "session_id": "nope" })).unwrap_err();
    assert_eq!(kind(e), "session_not_found");
}

#[test]
fn the_same_task_under_two_names_is_merged_and_the_old_name_kept_as_an_alias() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    for (agent, task, reward) in
        [("ada", "apply the schema change", -1.0), ("bob", "fix the failing schema migration", -1.0)]
    {
        let r =
            c.call_value("run_record", json!({ "agent": agent, "scope": "merge", "task": task })).unwrap();
        let id = r["results"][0]["id"].clone();
        c.call_value("run_reward", json!({ "agent": agent, "run_id": id, "reward": reward })).unwrap();
    }
    let learned = c.call_value("advice_learn", json!({ "scope": "merge" })).unwrap();
    assert_eq!(learned["merged"], json!([["db/schema-changes", "db/migrations"]]), "{learned}");
    assert_eq!(learned["written"][0]["runs"], 2, "both runs count for the merged situation: {learned}");
    let listed = c.call_value("advice_list", json!({ "scope": "merge" })).unwrap();
    assert_eq!(listed["situations"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["situations"][0]["situation"]["aliases"], json!(["db/schema-changes"]));
    let shown =
        c.call_value("advice_show", json!({ "scope": "merge", "situation": "db/schema-changes" })).unwrap();
    assert_eq!(shown["situation"]["key"], "db/migrations", "found by its old name");
}

#[test]
fn unrewarded_runs_are_judged_and_a_recorders_reward_shows_beside_the_judgement() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, "judge_delay_s = 0\n"));
    let mut c = d.client();
    let ids = record(&mut c, "judged", &[("ada", None), ("bob", None), ("cy", Some(1.0))]);
    let judged = c.call_value("judge_runs", json!({ "scope": "judged" })).unwrap();
    assert_eq!(judged["judged"].as_array().unwrap().len(), 2, "the rewarded run is not judged: {judged}");
    let again = c.call_value("judge_runs", json!({ "scope": "judged" })).unwrap();
    assert_eq!(again["judged"], json!([]), "a run is judged once");
    c.call_value("run_reward", json!({ "agent": "ada", "run_id": ids[0], "reward": -1.0 })).unwrap();
    let shown = c.call_value("judgements", json!({ "scope": "judged" })).unwrap();
    let js = shown["judgements"].as_array().unwrap();
    let of = |id: &str| js.iter().find(|j| j["run_id"] == id).unwrap().clone();
    assert_eq!((of(&ids[0])["verdict"].clone(), of(&ids[0])["reward"].clone()), (json!(1), json!(-1.0)));
    assert_eq!(of(&ids[1])["model"], "openai:m");
    assert!(of(&ids[1]).get("reward").is_none());
}

#[test]
fn a_malformed_reply_and_a_timeout_answer_model_failed() {
    let chat = fake_chat("I would rather not.", || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    record(&mut c, "proj", &[("ada", Some(-1.0))]);
    let e = c.call_value("advice_learn", json!({ "scope": "proj" })).unwrap_err();
    assert!(e.to_string().contains("malformed"), "{e}");
    assert_eq!(kind(e), "model_failed");
    assert_eq!(c.call_value("advice_list", json!({ "scope": "proj" })).unwrap()["situations"], json!([]));

    let slow = fake_chat("1", || std::thread::sleep(Duration::from_secs(2)));
    let (d, _dir) = with_config(&learn_config(&slow.url, "timeout_ms = 200\n"));
    let mut c = d.client();
    record(&mut c, "proj", &[("ada", Some(-1.0))]);
    let e = c.call_value("advice_learn", json!({ "scope": "proj" })).unwrap_err();
    assert!(e.to_string().contains("timed out"), "{e}");
    assert_eq!(kind(e), "model_failed");
    assert!(c.call_value("status", json!({})).is_ok(), "the daemon keeps serving");
}

#[test]
fn the_timer_judges_due_runs_and_ended_sessions_and_learns_a_scope_with_new_rewards() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) =
        with_config(&learn_config(&chat.url, "judge_delay_s = 0\ninterval_s = 1\nrelearn_after = 5\n"));
    let mut c = d.client();
    let s = c.call_value("session_start", json!({ "agent": "ada", "scope": "timed" })).unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let transcript = "Ran the schema migrations against the staging copy; the tests pass after the fix.";
    c.call_value("session_end", json!({ "session_id": sid, "transcript": transcript })).unwrap();
    let rewarded =
        [("ada", Some(-1.0)), ("bob", Some(-1.0)), ("cy", Some(1.0)), ("ada", Some(1.0)), ("bob", Some(1.0))];
    let mut runs = rewarded.to_vec();
    runs.push(("cy", None));
    let ids = record(&mut c, "timed", &runs);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let js = c.call_value("judgements", json!({ "scope": "timed" })).unwrap();
        let judged: Vec<String> = js["judgements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["run_id"].as_str().unwrap().to_string())
            .collect();
        let notes = c.call_value("advice_list", json!({ "scope": "timed" })).unwrap();
        let written = notes["situations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| !s["notes"].as_array().unwrap().is_empty());
        if judged.contains(&ids[5]) && judged.contains(&format!("session:{sid}")) && written {
            assert_eq!(judged.len(), 2, "rewarded runs are not judged: {judged:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the timer did not judge and learn: {judged:?} {notes}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Records runs `(agent, reward, advice)` in `scope`, each rewarded by its agent.
fn record_with_advice(c: &mut amber_ipc::Client, scope: &str, from: usize, runs: &[(&str, f64, &[&str])]) {
    for (i, (agent, reward, advice)) in runs.iter().enumerate() {
        let outcome = if *reward < 0.0 { "still failing" } else { "tests pass" };
        let r = c
            .call_value(
                "run_record",
                json!({ "agent": agent, "scope": scope, "task": format!("fix the failing schema migration, run {}", from + i),
                        "outcome": outcome, "advice": advice }),
            )
            .unwrap();
        let id = r["results"][0]["id"].clone();
        c.call_value("run_reward", json!({ "agent": agent, "run_id": id, "reward": reward })).unwrap();
    }
}

#[test]
fn an_edit_dropping_most_of_a_note_is_refused_and_a_note_whose_runs_score_lower_is_withheld() {
    let writes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let w = writes.clone();
    let chat = fake_chat_with(
        move |body| {
            if body.contains("You write") && w.fetch_add(1, Ordering::SeqCst) > 0 {
                return "## When\nnow\n## Steps\ngo\n## Pitfalls\nnone\n## Evidence\nsome".into();
            }
            model(body)
        },
        || {},
    );
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    let agents = ["ada", "bob", "cy"];
    let first: Vec<(&str, f64, &[&str])> =
        (0..10).map(|i| (agents[i % 3], if i < 2 { -1.0 } else { 1.0 }, &[][..])).collect();
    record_with_advice(&mut c, "curated", 0, &first);
    let one = c.call_value("advice_learn", json!({ "scope": "curated" })).unwrap();
    assert_eq!(one["written"][0]["version"], 1, "{one}");
    assert_eq!(one["withheld"], json!([]), "nothing was served yet");

    // Eight runs that followed the note all went wrong; the others mostly went right.
    let served: Vec<(&str, f64, &[&str])> =
        (0..8).map(|i| (agents[i % 3], -1.0, &["db/migrations"][..])).collect();
    record_with_advice(&mut c, "curated", 10, &served);
    let two = c.call_value("advice_learn", json!({ "scope": "curated" })).unwrap();
    assert_eq!(two["written"], json!([]), "{two}");
    let failed = two["failed"][0]["reason"].as_str().unwrap();
    assert!(failed.contains("edit of version 1 refused") && failed.contains("at most 25%"), "{two}");
    let withheld = two["withheld"][0]["reason"].as_str().unwrap();
    assert!(withheld.contains("score 1.60 lower") && withheld.contains("8 against 10"), "{two}");
    let shown =
        c.call_value("advice_show", json!({ "scope": "curated", "situation": "db/migrations" })).unwrap();
    assert_eq!(shown["notes"].as_array().unwrap().len(), 1, "the refused edit made no version");
    assert!(shown["notes"][0]["withheld"].is_string());
    let asked = c
        .call_value("get_advice", json!({ "task": "the schema migration fails", "scope": "curated" }))
        .unwrap();
    assert_eq!(
        (asked["situation"].clone(), asked.get("note")),
        (Value::Null, None),
        "a withheld note is not served: {asked}"
    );
}

#[test]
fn an_agent_with_ten_rewarded_runs_is_served_its_personal_note_first() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    let mut runs: Vec<(&str, f64, &[&str])> =
        (0..10).map(|i| ("ada", if i < 2 { -1.0 } else { 1.0 }, &[][..])).collect();
    runs.push(("bob", -1.0, &[]));
    record_with_advice(&mut c, "mine", 0, &runs);
    let learned = c.call_value("advice_learn", json!({ "scope": "mine" })).unwrap();
    let series: Vec<Value> =
        learned["written"].as_array().unwrap().iter().map(|w| w["agent"].clone()).collect();
    assert_eq!(series, [Value::Null, json!("ada")], "{learned}");
    let ask = |c: &mut amber_ipc::Client, agent: &str| {
        c.call_value("get_advice", json!({ "task": "migration fails", "scope": "mine", "agent": agent }))
            .unwrap()
    };
    let ada = ask(&mut c, "ada");
    assert_eq!((ada["personal"].clone(), ada["runs"].clone()), (json!("ada"), json!(10)), "{ada}");
    let bob = ask(&mut c, "bob");
    assert!(bob.get("personal").is_none() && bob["runs"] == 11, "{bob}");
}

/// A model for many situations: each task is its own situation (its text the line),
/// and routing picks the line that mentions a zebra.
fn many_situations(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let user = v["messages"][1]["content"].as_str().unwrap();
    let system = v["messages"][0]["content"].as_str().unwrap();
    if system.starts_with("You sort") {
        let listed = user.split("<tasks>\n").nth(1).unwrap().split("\n</tasks>").next().unwrap();
        let (mut situations, mut tasks) = (Vec::new(), Vec::new());
        for (i, line) in listed.lines().enumerate() {
            let text = line.split_once(": ").unwrap().1;
            let key = format!("work/{}", text.replace(' ', "-"));
            situations.push(json!({"key": key, "line": text}));
            tasks.push(json!({"task": i, "situation": key}));
        }
        json!({"situations": situations, "tasks": tasks}).to_string()
    } else if system.starts_with("You tidy") {
        json!({"merge": []}).to_string()
    } else if system.starts_with("You write") {
        NOTE.into()
    } else {
        let listed = system.split("Situations:\n").nth(1).unwrap();
        listed.lines().position(|l| l.contains("zebra")).map(|i| (i + 1).to_string()).unwrap_or("0".into())
    }
}

#[test]
fn above_sixty_situations_the_lines_are_shortlisted_by_hybrid_search_before_routing() {
    let chat = fake_chat_with(many_situations, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    let mut tasks: Vec<String> =
        (0..64).map(|i| format!("polish widget number {i} for the dashboard")).collect();
    tasks.push("configure the zebra crossing lights".into());
    let runs: Vec<Value> = tasks
        .iter()
        .flat_map(|t| {
            (0..2).map(move |k| json!({ "task": t, "trace": format!("attempt {k}"), "outcome": "failed" }))
        })
        .collect();
    let r = c.call_value("run_record", json!({ "agent": "ada", "scope": "many", "runs": runs })).unwrap();
    let rewards: Vec<Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| json!({ "run_id": x["id"], "reward": -1.0 }))
        .collect();
    c.call_value("run_reward", json!({ "agent": "ada", "rewards": rewards })).unwrap();
    let learned = c.call_value("advice_learn", json!({ "scope": "many" })).unwrap();
    assert_eq!(learned["written"].as_array().unwrap().len(), 65, "{}", learned["failed"]);
    let asked = c.call_value(
        "get_advice",
        json!({ "task": "the zebra crossing lights need configuring", "scope": "many" }),
    );
    let asked = asked.unwrap();
    assert_eq!(asked["considered"], 60, "{asked}");
    assert_eq!(asked["situation"], "work/configure-the-zebra-crossing-lights", "{asked}");
    let bodies = chat.bodies.lock().unwrap();
    let route: Value = serde_json::from_str(bodies.last().unwrap()).unwrap();
    // The lines are in the system part (the task alone in the user part).
    let shown = route["messages"][0]["content"].as_str().unwrap();
    assert_eq!(shown.matches(": polish widget").count(), 59, "60 lines, the zebra's among them: {shown}");
}

#[test]
fn learning_with_the_cache_answers_a_repeated_call_from_private_files_in_the_data_dir() {
    let chat = fake_chat_with(model, || {});
    let (d, _dir) = with_config(&learn_config(&chat.url, ""));
    let mut c = d.client();
    let same = [("ada", Some(-1.0)), ("bob", Some(-1.0)), ("cy", Some(1.0))];
    record(&mut c, "first", &same);
    let one = c.call_value("advice_learn", json!({ "scope": "first", "cache": true })).unwrap();
    let asked = chat.answered.load(Ordering::SeqCst);
    assert!(asked >= 2 && one["calls"].as_u64().unwrap() as usize == asked, "{one}");
    // The same runs in another scope make the same requests: answered from disk.
    record(&mut c, "second", &same);
    let two = c.call_value("advice_learn", json!({ "scope": "second", "cache": true })).unwrap();
    assert_eq!(two["written"][0]["version"], 1, "{two}");
    assert_eq!(chat.answered.load(Ordering::SeqCst), asked, "no model call: every reply came from the cache");
    record(&mut c, "third", &same);
    c.call_value("advice_learn", json!({ "scope": "third", "cache": false })).unwrap();
    assert!(chat.answered.load(Ordering::SeqCst) > asked, "without the cache the model is asked");
    use std::os::unix::fs::PermissionsExt;
    let dir = d.data.join("model-cache");
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), asked, "one file a call");
    assert!(files.iter().all(|f| std::fs::metadata(f).unwrap().permissions().mode() & 0o777 == 0o600));
}
