//! Restraint over days, through `amber hook claude-code` against a real daemon: Amber
//! never stores its own output (its MCP tools, `amber` commands, what it served coming
//! back in a tool's output or the transcript, the checkpoint's feedback), a resumed
//! session's transcript is stored once, raw captures are never briefed however old
//! they are, the checkpoint counts only what the session itself filed, and a SessionEnd
//! or Stop for a session Amber never started is ignored. Days pass with
//! `AMBER_CLOCK_OFFSET_S` (the daemon is restarted with its clock moved on).

use crate::common;

use std::path::Path;

use common::{Env, context_of, text};
use serde_json::{Value, json};

const FACT: &str = "The staging database connection string lives in config/staging.toml, port 6432 \
behind pgbouncer; never point tests at the primary.";
const CLAUDE: &str = "5d1c7f0e-2a4b-4c8d-9e6f-0a1b2c3d4e5f";
const TWO_DAYS: &str = "172800";

fn payload(event: &str, session: &str, cwd: &Path, transcript: &Path, extra: Value) -> Value {
    let mut p = json!({
        "session_id": session,
        "transcript_path": transcript,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn show(env: &Env, sid: &str) -> Value {
    let o = env.amber(&["--json", "session", "show", sid]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn content(env: &Env, id: &str) -> String {
    let o = env.amber(&["--json", "get", id]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["memory"]["content"].as_str().or(v["content"].as_str()).unwrap_or_default().to_string()
}

/// Every stored text the session captured (prompts, tool output, transcript pieces).
fn captured_texts(env: &Env, sid: &str) -> Vec<(String, String)> {
    let s = show(env, sid);
    s["session"]["captured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["source"].as_str().unwrap_or("").to_string(), content(env, c["id"].as_str().unwrap())))
        .collect()
}

fn line(v: Value) -> String {
    v.to_string() + "\n"
}

#[test]
fn a_week_of_sessions_never_feeds_on_itself() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let scope = amber_tiers::scope::project_scope(proj.path());
    let o = env.amber(&["--json", "remember", "--scope", scope.as_str(), FACT]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let fact_id = serde_json::from_slice::<Value>(&o.stdout).unwrap()["id"].as_str().unwrap().to_string();
    let transcript = proj.path().join("t.jsonl");
    let p = |event: &str, extra: Value| payload(event, CLAUDE, proj.path(), &transcript, extra);
    let sid = env.amber_session(CLAUDE);

    // Day 1. The briefing hands the fact over.
    let (out, _) = env.hook("SessionStart", &p("SessionStart", json!({"source": "startup"})), &[]);
    let ctx = context_of(&out, "SessionStart").expect("a briefing");
    assert!(ctx.contains(&fact_id[..8]), "{ctx}");

    // Amber's own MCP tool and an `amber` command run through Bash: never captured.
    let own = json!({
        "tool_name": "mcp__amber__recall",
        "tool_input": {"query": "staging database connection"},
        "tool_response": [{"type": "text", "text": format!("{{\"hits\":[{{\"content\":{}}}]}}", json!(FACT))}],
    });
    env.hook("PostToolUse", &p("PostToolUse", own), &[]);
    let cli = json!({
        "tool_name": "Bash",
        "tool_input": {"command": "cd /p && amber recall 'staging database'"},
        "tool_response": {"stdout": format!("1. {FACT}\n   bm25 rank 1"), "stderr": ""},
    });
    env.hook("PostToolUse", &p("PostToolUse", cli), &[]);
    // Tools whose output holds what Amber served. A file write is captured when it runs
    // (what it wrote is not in the transcript), with the served part cut out; any other
    // tool's output is not captured on its own: the transcript carries it.
    let notes = format!(
        "# Notes\nCopied from memory: {FACT}\nThe deploy job runs make release on the ci-runner-7 host nightly."
    );
    let write = json!({
        "tool_name": "Write",
        "tool_input": {"file_path": "/p/NOTES.md", "content": notes},
        "tool_response": {"type": "create", "filePath": "/p/NOTES.md"},
    });
    env.hook("PostToolUse", &p("PostToolUse", write), &[]);
    let cat = json!({
        "tool_name": "Bash",
        "tool_input": {"command": "cat NOTES.md"},
        "tool_response": {"stdout": notes, "stderr": ""},
    });
    env.hook("PostToolUse", &p("PostToolUse", cat), &[]);
    let prompt = "please check why the nightly deploy job on ci-runner-7 keeps timing out";
    env.hook("UserPromptSubmit", &p("UserPromptSubmit", json!({"prompt": prompt})), &[]);

    let caps = captured_texts(&env, &sid);
    assert!(caps.iter().all(|(s, _)| !s.contains("mcp__amber__")), "{caps:?}");
    assert!(
        caps.iter().all(|(s, _)| s != "claude-code:tool:Bash"),
        "the transcript carries tool output: {caps:?}"
    );
    let wrote: Vec<&String> =
        caps.iter().filter(|(s, _)| s == "claude-code:tool:Write").map(|(_, c)| c).collect();
    assert_eq!(wrote.len(), 1, "the file write is captured: {caps:?}");
    assert!(wrote[0].contains("ci-runner-7") && !wrote[0].contains("pgbouncer"), "{}", wrote[0]);
    assert!(wrote[0].contains(&format!("[amber memory {}]", &fact_id[..8])), "{}", wrote[0]);

    // The transcript: a message, Amber's tool call and its result, the write (its result
    // left out: captured when it ran), the `cat` and its output, the checkpoint's
    // feedback, an answer. It is filed at the Stop; SessionEnd finds nothing new.
    let mut jsonl = String::new();
    jsonl += &line(json!({"type": "user", "message": {"role": "user", "content": prompt}}));
    jsonl += &line(json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "mcp__amber__recall", "input": {"query": "staging"}}]}}));
    jsonl += &line(json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": FACT}]}]}}));
    jsonl += &line(json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_2", "name": "Write", "input": {"file_path": "/p/NOTES.md", "content": notes}},
        {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "cat NOTES.md"}}]}}));
    jsonl += &line(json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "File created successfully at: /p/NOTES.md"},
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": notes}]}}));
    jsonl += &line(json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "The ci-runner-7 job times out because the artifact upload retries forever on a 403."}]}}));
    jsonl += &line(json!({"type": "user", "message": {"role": "user", "content":
        "Stop hook feedback:\nAmber checkpoint: this session did real work (3 tool uses) and filed nothing durable"}}));
    std::fs::write(&transcript, &jsonl).unwrap();
    let transcript_pieces = |env: &Env| -> String {
        let caps = captured_texts(env, &sid);
        let pieces: Vec<String> = caps
            .into_iter()
            .filter(|(s, _)| s.starts_with("claude-code:transcript:"))
            .map(|(_, c)| c)
            .collect();
        pieces.join("\n")
    };
    env.hook("Stop", &p("Stop", json!({"stop_hook_active": false})), &[]);
    let all = transcript_pieces(&env);
    assert!(all.contains("retries forever on a 403"), "filed at the stop: {all}");
    assert!(all.contains("[tool Bash: cat NOTES.md]") && all.contains("ci-runner-7 host"), "{all}");
    assert!(!all.contains("pgbouncer"), "what Amber served is not in the transcript filed: {all}");
    assert!(!all.contains("Amber checkpoint"), "nor is the checkpoint's feedback: {all}");
    assert!(!all.contains("File created successfully"), "a write's result is left out: {all}");
    env.hook("SessionEnd", &p("SessionEnd", json!({"reason": "other"})), &[]);
    assert_eq!(transcript_pieces(&env), all, "the end finds nothing new");

    // --resume: the same session goes on; its transcript grows; its end files only what
    // is new.
    env.hook("SessionStart", &p("SessionStart", json!({"source": "resume"})), &[]);
    jsonl += &line(
        json!({"type": "user", "message": {"role": "user", "content": "and the retry limit, where is it configured?"}}),
    );
    jsonl += &line(json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "The retry limit is upload.max_retries in deploy/ci.toml; it is unset, so it defaults to unlimited."}]}}));
    std::fs::write(&transcript, &jsonl).unwrap();
    env.hook("SessionEnd", &p("SessionEnd", json!({"reason": "other"})), &[]);
    let caps = captured_texts(&env, &sid);
    let all = transcript_pieces(&env);
    assert_eq!(all.matches("retries forever on a 403").count(), 1, "stored once: {all}");
    assert_eq!(all.matches("upload.max_retries").count(), 1, "the new part is stored: {all}");

    // Two days later: a new session's briefing has the fact and no raw capture, however
    // old the captures are now.
    assert!(env.amber(&["daemon", "stop"]).status.success());
    let later = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";
    let q = payload("SessionStart", later, proj.path(), &transcript, json!({"source": "startup"}));
    // The hook starts the stopped daemon: a deadline that a loaded machine's cold start
    // fits in (this test is about what is briefed; cold_start.rs about a missed deadline).
    let cold = [("AMBER_CLOCK_OFFSET_S", TWO_DAYS), ("AMBER_HOOK_DEADLINE_MS", "15000")];
    let (out, _) = env.hook("SessionStart", &q, &cold);
    let ctx = context_of(&out, "SessionStart").expect("a briefing");
    assert!(ctx.contains(&fact_id[..8]), "{ctx}");
    assert!(!ctx.contains("· event ·"), "no raw capture is briefed: {ctx}");
    for (_, c) in &caps {
        let opening: String = c.chars().take(40).collect();
        assert!(!ctx.contains(opening.trim()), "a capture was briefed: {opening:?} in {ctx}");
    }
    // recall still finds the captures (they are evidence, not lost).
    let o = env
        .cmd(&["recall", "--scope", scope.as_str(), "ci-runner-7 timing out"])
        .env("AMBER_CLOCK_OFFSET_S", TWO_DAYS)
        .output()
        .unwrap();
    assert!(text(&o.stdout).contains("ci-runner-7"), "{}", text(&o.stdout));

    // A person promotes a capture by filing its text again with a durable type: from
    // then on it may be briefed.
    let capture_id = show(&env, &sid)["session"]["captured"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["source"] == "claude-code:tool:Write")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let text_of_capture = content(&env, &capture_id);
    let raw_captures = || {
        let o = env.cmd(&["--json", "status"]).env("AMBER_CLOCK_OFFSET_S", TWO_DAYS).output().unwrap();
        let st: Value = serde_json::from_slice(&o.stdout).unwrap();
        st["engine"]["raw_captures"].as_u64().expect("status counts raw captures")
    };
    let before = raw_captures();
    assert_eq!(before as usize, caps.len(), "every capture of the session is a raw capture: {caps:?}");
    let o = env
        .cmd(&["--json", "remember", "--scope", scope.as_str(), "--type", "fact", "-"])
        .env("AMBER_CLOCK_OFFSET_S", TWO_DAYS)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text_of_capture.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["id"], capture_id.as_str(), "the same memory");
    let got: Value = serde_json::from_slice(&env.amber(&["--json", "get", &capture_id]).stdout).unwrap();
    let kind = got["memory"]["type"].as_str().or(got["type"].as_str());
    assert_eq!(kind, Some("fact"), "promoted: {got}");
    assert_eq!(raw_captures(), before - 1, "a promoted capture is no longer raw");
    let o = env.cmd(&["status"]).env("AMBER_CLOCK_OFFSET_S", TWO_DAYS).output().unwrap();
    assert!(text(&o.stdout).contains(&format!("raw captures {} of them", before - 1)), "{}", text(&o.stdout));
}

#[test]
fn stop_and_session_end_of_a_session_never_started_are_ignored() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    let t = proj.path().join("none.jsonl");
    let ghost = "00000000-1111-4222-8333-444444444444";
    // `claude mcp add` / `claude mcp list` fire SessionEnd for sessions that never started.
    let (out, _) = env.hook(
        "SessionEnd",
        &payload("SessionEnd", ghost, proj.path(), &t, json!({"reason": "other"})),
        &[],
    );
    assert!(out.status.success() && out.stdout.is_empty());
    let (out, _) =
        env.hook("Stop", &payload("Stop", ghost, proj.path(), &t, json!({"stop_hook_active": false})), &[]);
    assert!(out.status.success() && out.stdout.is_empty());
    let o = env.amber(&["--json", "session", "show", &env.amber_session(ghost)]);
    assert!(!o.status.success(), "no session was made for it: {}", text(&o.stdout));
    assert!(env.hooks_log().contains("never started"), "{}", env.hooks_log());
    let audit = text(&env.amber(&["audit"]).stdout);
    assert!(!audit.contains(&env.amber_session(ghost)), "{audit}");
}

#[test]
fn the_checkpoint_counts_only_what_the_session_filed_itself_refiling_included() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let scope = amber_tiers::scope::project_scope(proj.path());
    let t = proj.path().join("t.jsonl");
    let claude = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d";
    let p = |event: &str, extra: Value| payload(event, claude, proj.path(), &t, extra);
    let sid = env.amber_session(claude);
    let takeaway = "Pattern: run the migrations with --lock-timeout 5s, otherwise the deploy blocks on the ledger table.";
    assert!(
        env.amber(&["remember", "--scope", scope.as_str(), "--type", "pattern", takeaway]).status.success()
    );

    env.hook("SessionStart", &p("SessionStart", json!({"source": "startup"})), &[]);
    for i in 0..3 {
        let tool = json!({"tool_name": "Bash", "tool_input": {"command": format!("make step{i}")},
            "tool_response": {"stdout": format!("step {i} finished in {} ms with warnings about the ledger table", 100 + i), "stderr": ""}});
        env.hook("PostToolUse", &p("PostToolUse", tool), &[]);
    }
    // Someone else files something durable in the project: it does not silence this
    // session's checkpoint.
    assert!(
        env.amber(&[
            "remember",
            "--scope",
            scope.as_str(),
            "Another session decided to keep the ledger table partitioned by month."
        ])
        .status
        .success()
    );
    let (out, _) = env.hook("Stop", &p("Stop", json!({"stop_hook_active": false})), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("the checkpoint blocks");
    assert_eq!(v["decision"], "block");
    assert!(v["reason"].as_str().unwrap().contains(&sid), "the reason names the session: {v}");
    // The agent files the takeaway again, the same text (created: false), in the session.
    let o = env.amber(&[
        "--json",
        "remember",
        "--scope",
        scope.as_str(),
        "--type",
        "pattern",
        "--session",
        &sid,
        takeaway,
    ]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["created"], false, "{r}");
    let (out, _) = env.hook("Stop", &p("Stop", json!({"stop_hook_active": true})), &[]);
    assert!(out.stdout.is_empty(), "never blocks twice");
    let s = show(&env, &sid);
    assert_eq!(s["session"]["checkpoint"]["outcome"], "filed", "{}", s["session"]["checkpoint"]);
}
