//! Runs and rewards over the socket: one run and batches (checked before any is
//! written, ids from content), redacted traces, rewards only by the recording agent,
//! a reward moving the weights of the memories the run used (a later reward replacing
//! the earlier one's effect), the daily limits, `runs` and `run_show`.

use crate::common;

use common::Daemon;
use serde_json::{Value, json};

fn kind(e: amber_ipc::ClientError) -> String {
    e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| format!("{e}"))
}

fn batch() -> Value {
    json!([
        { "task": "fix the flaky payment test", "trace": "ran make test-payments: timeout in stripe mock", "outcome": "fixed" },
        { "task": "bump the API version", "trace": "edited api/version.go; tests pass" },
    ])
}

#[test]
fn runs_are_recorded_checked_redacted_and_rewarded_by_their_agent() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mem = c
        .call_value("remember", json!({ "content": "start the stripe mock on port 12111 before the payment tests", "scope": "runs" }))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // One run, with a secret in its trace and the memory it used.
    let one = c
        .call_value(
            "run_record",
            json!({ "agent": "codex", "scope": "runs", "task": "run the payment tests",
                    "trace": "export STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc then make test-payments: ok",
                    "used": [mem] }),
        )
        .unwrap();
    let run_id = one["results"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(one["results"][0]["created"], true);
    let shown = c.call_value("run_show", json!({ "id": run_id })).unwrap();
    let trace = shown["run"]["trace"].as_str().unwrap();
    assert!(!trace.contains("4eC39HqLyjWDarjtT1zdp7dc") && trace.contains("make test-payments"), "{trace}");

    // A batch: ids derive from content; a bad run refuses the whole batch, with its index.
    let b =
        c.call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": batch() })).unwrap();
    let ids: Vec<String> =
        b["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 2);
    let mut bad = batch();
    bad.as_array_mut().unwrap().push(json!({ "task": " " }));
    let e =
        c.call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": bad })).unwrap_err();
    assert!(e.to_string().contains("runs[2]"), "{e}");
    assert_eq!(kind(e), "invalid_params");
    let listed = c.call_value("runs", json!({ "scope": "runs" })).unwrap();
    assert_eq!(listed["runs"].as_array().unwrap().len(), 3, "nothing of the bad batch was written");

    // Rewards: only the recording agent; the used memory's weight follows the latest.
    let e = c
        .call_value("run_reward", json!({ "agent": "gemini", "run_id": run_id, "reward": 1.0 }))
        .unwrap_err();
    assert_eq!(kind(e), "not_permitted");
    let e =
        c.call_value("run_reward", json!({ "agent": "codex", "run_id": run_id, "reward": 1.5 })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
    let r = c
        .call_value(
            "run_reward",
            json!({ "agent": "codex", "run_id": run_id, "reward": -1.0, "reason": "it hung" }),
        )
        .unwrap();
    assert_eq!((r["rewarded"].as_u64(), r["weights_moved"].as_u64()), (Some(1), Some(1)));
    let w = |c: &mut amber_ipc::Client| {
        c.call_value("get", json!({ "id": mem })).unwrap()["memory"]["weight"].as_f64().unwrap()
    };
    assert!((w(&mut c) - 0.9).abs() < 1e-6, "a negative reward: -0.10");
    c.call_value("run_reward", json!({ "agent": "codex", "run_id": run_id, "reward": 0.5 })).unwrap();
    assert!((w(&mut c) - 1.0).abs() < 1e-6, "the later reward replaces the earlier one's effect");
    let shown = c.call_value("run_show", json!({ "id": run_id })).unwrap();
    assert_eq!(shown["run"]["reward"], 0.5);
    assert_eq!(shown["rewards"].as_array().unwrap().len(), 2, "the history is kept");
    let r = c
        .call_value(
            "run_reward",
            json!({ "agent": "codex", "rewards": [{ "run_id": ids[0], "reward": 1.0 }, { "run_id": "nope", "reward": 1.0 }] }),
        )
        .unwrap_err();
    assert_eq!(kind(r), "not_found");
    assert!(
        c.call_value("run_show", json!({ "id": ids[0] })).unwrap()["rewards"].as_array().unwrap().is_empty()
    );

    // The same batch in a fresh store gives the same ids.
    let d2 = Daemon::start(&[]);
    let b2 = d2
        .client()
        .call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": batch() }))
        .unwrap();
    let ids2: Vec<String> =
        b2["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ids2);
}

#[test]
fn a_batch_takes_an_inline_reward_per_run_checked_like_the_rest_and_given_once() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mem = c
        .call_value("remember", json!({ "content": "the nightly export runs at 02:00 UTC", "scope": "runs" }))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let runs = json!([
        { "task": "retime the nightly export", "trace": "moved the cron to 02:00", "used": [mem], "reward": -1.0 },
        { "task": "document the export", "trace": "wrote docs/export.md" },
    ]);
    // A reward out of range refuses the whole batch before anything is written.
    let mut bad = runs.clone();
    bad[1]["reward"] = json!(1.5);
    let e =
        c.call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": bad })).unwrap_err();
    assert!(e.to_string().contains("runs[1]") && e.to_string().contains("reward"), "{e}");
    assert!(c.call_value("runs", json!({ "scope": "runs" })).unwrap()["runs"].as_array().unwrap().is_empty());

    let b = c.call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": runs })).unwrap();
    assert_eq!(b["rewarded"], 1, "{b}");
    let id = |i: usize| b["results"][i]["id"].as_str().unwrap().to_string();
    let shown = c.call_value("run_show", json!({ "id": id(0) })).unwrap();
    assert_eq!(shown["run"]["reward"], -1.0);
    assert!(c.call_value("run_show", json!({ "id": id(1) })).unwrap()["run"]["reward"].is_null());
    let w = c.call_value("get", json!({ "id": mem })).unwrap()["memory"]["weight"].as_f64().unwrap();
    assert!((w - 0.9).abs() < 1e-6, "the inline reward moved the used memory: {w}");
    // The same batch again records nothing and rewards nothing again.
    let again =
        c.call_value("run_record", json!({ "agent": "codex", "scope": "runs", "runs": runs })).unwrap();
    assert_eq!(again["results"][0]["created"], false);
    assert!(again.get("rewarded").is_none(), "{again}");
    let shown = c.call_value("run_show", json!({ "id": id(0) })).unwrap();
    assert_eq!(shown["rewards"].as_array().unwrap().len(), 1);
}

#[test]
fn an_agent_past_its_daily_limit_is_rate_limited() {
    let (d, _dir) = common::with_config("[runs]\nmax_runs_per_day = 3\nmax_rewards_per_day = 1\n");
    let mut c = d.client();
    let b = c.call_value("run_record", json!({ "agent": "a", "runs": batch() })).unwrap();
    let e = c.call_value("run_record", json!({ "agent": "a", "runs": batch() })).unwrap_err();
    assert_eq!(kind(e), "rate_limited");
    c.call_value("run_record", json!({ "agent": "b", "runs": batch() })).unwrap();
    let id = b["results"][0]["id"].clone();
    c.call_value("run_reward", json!({ "agent": "a", "run_id": id, "reward": 1.0 })).unwrap();
    let e = c.call_value("run_reward", json!({ "agent": "a", "run_id": id, "reward": 0.0 })).unwrap_err();
    assert_eq!(kind(e), "rate_limited");
}

/// Moments: `stuck` and `done` search nothing and remind the session of what it was
/// given, narrowed to pitfalls or verification, each memory once per moment.
#[test]
fn moments_remind_the_session_of_pitfalls_and_verification() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mut file = |content: &str, metadata: Value| {
        c.call_value("remember", json!({ "content": content, "scope": "moments", "metadata": metadata }))
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let guide = file(
        "Releasing the mobile app: bump the build number, then run fastlane beta.\n\nPitfalls:\n- fastlane fails if Xcode is not selected with xcode-select\n\nVerify: TestFlight lists the new build within 15 minutes",
        json!({}),
    );
    let tagged = file(
        "the mobile app release needs the signing certificate from the vault",
        json!({ "tags": ["pitfall"] }),
    );
    let plain = file("the mobile app release notes live in CHANGELOG.md", json!({}));
    let s = c
        .call_value(
            "session_start",
            json!({ "agent": "codex", "scope": "moments", "prompt": "release the mobile app" }),
        )
        .unwrap();
    let sid = s["session_id"].as_str().unwrap().to_string();
    let served: Vec<&str> =
        s["briefing"]["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert!([&guide, &tagged, &plain].iter().all(|id| served.contains(&id.as_str())), "{s}");
    let event = |c: &mut amber_ipc::Client, moment: &str| {
        c.call_value(
            "session_event",
            json!({ "session_id": sid, "kind": "response", "text": "the release keeps failing at the signing step", "moment": moment, "capture": false }),
        )
        .unwrap()
    };
    let stuck = event(&mut c, "stuck");
    assert_eq!(stuck["decision"]["reason"], "moment", "{stuck}");
    let ids: Vec<&str> =
        stuck["reminders"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{stuck}");
    assert!(ids.contains(&guide.as_str()) && ids.contains(&tagged.as_str()));
    let text = stuck["reminder_text"].as_str().unwrap();
    assert!(
        text.contains("xcode-select") && !text.contains("TestFlight") && !text.contains("CHANGELOG"),
        "{text}"
    );
    assert!(event(&mut c, "stuck").get("reminders").is_none(), "once per moment");
    let done = event(&mut c, "done");
    assert_eq!(done["reminders"].as_array().unwrap().len(), 1, "{done}");
    assert!(done["reminder_text"].as_str().unwrap().contains("TestFlight lists the new build"));
    let next = event(&mut c, "next");
    assert_ne!(next["decision"]["reason"], "moment");
}

/// `review`: memories and runs that touched the asked files, rare files first.
#[test]
fn review_ranks_what_touched_the_same_files_rare_files_first() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let mut file = |content: String| {
        c.call_value("remember", json!({ "content": content, "scope": "review" })).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Cargo.toml is named everywhere; src/engine/recall.rs once.
    let mut common = Vec::new();
    for i in 0..8 {
        common.push(file(format!("bumped dependency {i} in Cargo.toml and ran the tests")));
    }
    let rare =
        file("[tool Edit: /home/u/amber/src/engine/recall.rs] the fusion now skips archived memories".into());
    let both = file("changed ./src/engine/recall.rs:120:5 and Cargo.toml for the standing prior".into());
    let none = file("lunch is at noon on Fridays".into());
    let run = c
        .call_value("run_record", json!({ "agent": "codex", "scope": "review", "task": "speed up recall", "trace": "profiled src/engine/recall.rs" }))
        .unwrap()["results"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c
        .call_value("review", json!({ "files": ["src/engine/recall.rs", "Cargo.toml"], "scope": "review" }))
        .unwrap();
    let ids: Vec<&str> =
        r["memories"].as_array().unwrap().iter().map(|m| m["memory"]["id"].as_str().unwrap()).collect();
    assert_eq!(ids[0], both, "both files first: {r}");
    assert_eq!(ids[1], rare, "then the rare file alone: {r}");
    assert_eq!(ids.len(), 10, "the 8 Cargo.toml memories after them");
    assert!(!ids.contains(&none.as_str()) && common.iter().all(|c| ids.contains(&c.as_str())));
    assert_eq!(r["df"]["Cargo.toml"], 9);
    assert_eq!(r["df"]["src/engine/recall.rs"], 3, "two memories and the run: {r}");
    assert_eq!(r["runs"][0]["run"]["id"], run);
    assert_eq!(r["runs"][0]["files"], json!(["src/engine/recall.rs"]));
    let e = c.call_value("review", json!({ "files": [] })).unwrap_err();
    assert_eq!(kind(e), "invalid_params");
}

/// Error leads: a recall or an event whose text carries an error gets the earlier
/// memories and runs with an error like it, line numbers and temp paths aside.
#[test]
fn an_error_in_a_recall_or_an_event_brings_its_leads() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    let original = c
        .call_value(
            "remember",
            json!({ "scope": "leads", "content": "The import job failed; fixed by creating the export dir first.\nTraceback (most recent call last):\n  File \"/srv/app/jobs/importer.py\", line 88, in run\n    load(path)\n  File \"/srv/app/jobs/importer.py\", line 41, in load\n    with open(path) as f:\nFileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpa81x/export.csv'" }),
        )
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.call_value(
        "remember",
        json!({ "scope": "leads", "content": "Traceback (most recent call last):\n  File \"/srv/app/api/views.py\", line 12, in get\n    return int(x)\nValueError: invalid literal for int() with base 10: 'abc'" }),
    )
    .unwrap();
    c.call_value("remember", json!({ "scope": "leads", "content": "the import job runs nightly at 02:00" }))
        .unwrap();
    let run = c
        .call_value(
            "run_record",
            json!({ "agent": "codex", "scope": "leads", "task": "fix the worker crash",
                    "trace": "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.pick(...)\n\t/home/ci/build/worker/pick.go:17 +0x1d\nmain.main()\n\t/home/ci/build/worker/main.go:9 +0x25" }),
        )
        .unwrap()["results"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A rerun of the Python error: other line numbers, another temp dir.
    let rerun = "Traceback (most recent call last):\n  File \"/srv/app/jobs/importer.py\", line 91, in run\n    load(path)\n  File \"/srv/app/jobs/importer.py\", line 44, in load\n    with open(path) as f:\nFileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpq02k/export.csv'";
    let r = c.call_value("recall", json!({ "text": rerun, "scope": "leads" })).unwrap();
    let leads = r["leads"].as_array().unwrap();
    assert_eq!(leads[0]["id"], original, "{r}");
    assert_eq!(
        (leads[0]["kind"].as_str(), leads[0]["why"]["same_kind"].as_bool()),
        (Some("memory"), Some(true))
    );
    assert!(leads.len() <= 3);
    // A plain question has no leads.
    let r =
        c.call_value("recall", json!({ "text": "when does the import job run?", "scope": "leads" })).unwrap();
    assert!(r.get("leads").is_none(), "{r}");
    // In a session: a tool result with the Go panic again leads to the run.
    let s = c.call_value("session_start", json!({ "agent": "codex", "scope": "leads" })).unwrap();
    let ev = c
        .call_value(
            "session_event",
            json!({ "session_id": s["session_id"], "kind": "tool_result",
                    "text": "panic: runtime error: index out of range [5] with length 5\n\ngoroutine 1 [running]:\nmain.pick(...)\n\t/tmp/go-build123/worker/pick.go:17 +0x2f\nmain.main()\n\t/tmp/go-build123/worker/main.go:9 +0x31" }),
        )
        .unwrap();
    let leads = ev["leads"].as_array().unwrap();
    assert_eq!(
        (leads[0]["kind"].as_str(), leads[0]["id"].as_str()),
        (Some("run"), Some(run.as_str())),
        "{ev}"
    );
}

/// An error that shares only its exception type with what was filed gets no lead: such
/// a match scores under the 0.3 floor (a lead with nothing else in common is doubtful).
#[test]
fn an_error_never_seen_gets_no_weak_leads() {
    let d = Daemon::start(&[]);
    let mut c = d.client();
    c.call_value(
        "remember",
        json!({ "scope": "noleads", "content": "Traceback (most recent call last):\n  File \"/srv/app/api/views.py\", line 12, in get\n    return int(x)\nValueError: invalid literal for int() with base 10: 'abc'" }),
    )
    .unwrap();
    let r = c
        .call_value(
            "recall",
            json!({ "text": "Traceback (most recent call last):\n  File \"/opt/etl/loader.py\", line 301, in parse_row\n    raise ValueError(\"row has 7 columns, expected 9\")\nValueError: row has 7 columns, expected 9", "scope": "noleads" }),
        )
        .unwrap();
    assert!(r.get("leads").is_none(), "{r}");
}
