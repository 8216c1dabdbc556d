//! A recorded, realistic Claude Code session replayed through `amber hook claude-code`
//! against a real daemon: 31 prompts with 62 tool uses (one failed), a Stop after every
//! response, and a SessionEnd with the transcript in Claude Code's JSONL format
//! (`fixtures/claude_replay/`, payloads as Claude Code's hooks reference documents them).
//!
//! It checks what a user of Claude Code would care about: a memory filed with `amber
//! remember` in the project (no scope) and a `user` preference reach the session; nothing
//! is served twice and none of the session's own prompts or captures come back; the
//! checkpoint blocks exactly once; SessionEnd curates and files the transcript; secrets in
//! tool output are not stored. It prints the characters Amber added to the context.

use crate::common;

use std::collections::HashSet;
use std::path::Path;

use common::{Env, context_of, text};
use serde_json::Value;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude_replay");
const CLAUDE_SESSION: &str = "3f6b2c1e-8d4a-4e7b-9c15-7a2e0d9b4f63";

/// Replaces the fixture's placeholders everywhere in a JSON value.
fn place(v: &Value, cwd: &str, transcript: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("$TRANSCRIPT", transcript).replace("$CWD", cwd)),
        Value::Array(xs) => Value::Array(xs.iter().map(|x| place(x, cwd, transcript)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), place(x, cwd, transcript))).collect())
        }
        other => other.clone(),
    }
}

fn remember_in(env: &Env, dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["--json", "remember"];
    all.extend_from_slice(args);
    let o = env.cmd(&all).current_dir(dir).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["id"].as_str().unwrap().to_string()
}

fn show(env: &Env, sid: &str) -> Value {
    let o = env.amber(&["--json", "session", "show", sid]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_recorded_claude_code_session_is_served_once_without_echo_checkpointed_once_and_curated() {
    let env = Env::new();
    let work = tempfile::tempdir().unwrap();
    let proj = std::fs::canonicalize(work.path()).unwrap().join("ledger-api");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let cwd = proj.to_string_lossy().into_owned();
    let transcript = work.path().join("transcript.jsonl");
    let raw = std::fs::read_to_string(format!("{FIXTURE}/transcript.jsonl")).unwrap();
    std::fs::write(&transcript, raw.replace("$CWD", &cwd)).unwrap();
    let transcript = transcript.to_string_lossy().into_owned();

    // Memories filed the way a user files them: in the project with no scope, and
    // preferences in `user` (from anywhere).
    let seed: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURE}/seed.json")).unwrap()).unwrap();
    let project: Vec<&str> =
        seed["project"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let user: Vec<&str> = seed["user"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let (now, later) = project.split_at(project.len() - 2);
    let mut project_ids = HashSet::new();
    for m in now {
        project_ids.insert(remember_in(&env, &proj.join("src"), &[m]));
    }
    let mut user_ids = HashSet::new();
    for m in &user {
        user_ids.insert(remember_in(&env, work.path(), &["--scope", "user", m]));
    }
    // Another project's memory must never reach this session.
    let other = work.path().join("other-repo");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let elsewhere = remember_in(
        &env,
        &other,
        &["The ledger-api of the other repo runs migrations from migrations/ with sqlx migrate run."],
    );
    let scopes = text(&env.amber(&["scopes"]).stdout);
    assert!(scopes.contains("project/ledger-api-") && scopes.contains(&cwd), "{scopes}");

    let events: Vec<Value> = std::fs::read_to_string(format!("{FIXTURE}/events.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.len() > 100, "{} events", events.len());
    let sid = amber_tiers::session::keyed_session_id("claude-code", CLAUDE_SESSION);

    let mut added = 0usize; // characters Amber put into the context
    let mut contexts: Vec<String> = Vec::new();
    let mut prompts: Vec<String> = Vec::new();
    let mut blocks = 0;
    let mut filed_late = false;
    let mut takeaway: Option<String> = None;
    for e in &events {
        let name = e["event"].as_str().unwrap();
        let payload = place(&e["payload"], &cwd, &transcript);
        let (out, _) = env.hook(name, &payload, &[("AMBER_HOOK_DEADLINE_MS", "20000")]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        match name {
            "SessionStart" | "UserPromptSubmit" => {
                if let Some(ctx) = context_of(&out, name) {
                    // None of the session's earlier prompts comes back.
                    for p in &prompts {
                        let head: String = p.chars().take(60).collect();
                        assert!(!ctx.contains(&head), "prompt echoed back: {head:?} in {ctx}");
                    }
                    added += ctx.chars().count();
                    contexts.push(ctx);
                }
                if let Some(p) = payload["prompt"].as_str()
                    && p.chars().count() >= 40
                {
                    prompts.push(p.to_string());
                }
            }
            "Stop" => {
                let stdout = text(&out.stdout);
                if stdout.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(stdout.trim()).unwrap();
                assert_eq!(v["decision"], "block", "{v}");
                let reason = v["reason"].as_str().unwrap();
                assert!(reason.contains("remember") && reason.contains("No takeaway"), "{reason}");
                added += reason.chars().count();
                blocks += 1;
                // The agent files its takeaway with a type in its session, as the reason
                // says, then stops again, as Claude Code then sends it (stop_hook_active).
                let sid = env.amber_session(payload["session_id"].as_str().unwrap());
                assert!(reason.contains(&sid), "the reason names the session: {reason}");
                takeaway = Some(remember_in(
                    &env,
                    &proj,
                    &[
                        "--type",
                        "pattern",
                        "--session",
                        &sid,
                        "ledger-api: run migrations from db/migrations; migrations/ is stale and must not be used.",
                    ],
                ));
                let mut again = payload.clone();
                again["stop_hook_active"] = Value::Bool(true);
                let (out, _) = env.hook("Stop", &again, &[]);
                assert!(out.status.success() && out.stdout.is_empty(), "{}", text(&out.stdout));
                if !filed_late {
                    // A teammate files two more project memories while the session runs.
                    for m in later {
                        project_ids.insert(remember_in(&env, &proj, &[m]));
                    }
                    filed_late = true;
                }
            }
            _ => assert!(out.stdout.is_empty(), "{name} prints nothing: {}", text(&out.stdout)),
        }
    }

    let s = show(&env, &sid);
    let rec = &s["session"];
    assert_eq!(s["live"], false, "SessionEnd ended it");
    assert_eq!(rec["end_reason"], "ended");

    // One Amber session for the whole Claude Code session: every prompt and tool use.
    let n = |name: &str| events.iter().filter(|e| e["event"] == name).count() as u64;
    assert_eq!(
        rec["events"].as_u64().unwrap(),
        n("UserPromptSubmit") + n("PostToolUse") + n("PostToolUseFailure")
    );

    // Nothing served twice; nothing it captured served back; nothing from elsewhere.
    let served: Vec<&str> =
        rec["served"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    let distinct: HashSet<&str> = served.iter().copied().collect();
    assert_eq!(distinct.len(), served.len(), "a memory served twice: {served:?}");
    let captured: HashSet<&str> =
        rec["captured"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    // What file writes wrote is captured as they run (every other tool's output and the
    // prompts are stored with the transcript, filed at each Stop).
    let writes =
        events.iter().filter(|e| e["event"] == "PostToolUse" && e["payload"]["tool_name"] == "Edit").count();
    let by_source =
        |src: &str| rec["captured"].as_array().unwrap().iter().filter(|c| c["source"] == src).count();
    assert_eq!(by_source("claude-code:tool:Edit"), writes, "each edit captured once");
    assert_eq!(by_source("claude-code:tool:Bash") + by_source("claude-code:prompt"), 0);
    assert!(distinct.is_disjoint(&captured), "the session was served its own capture");
    assert!(!distinct.contains(elsewhere.as_str()), "another project's memory");
    // Every served memory is a durable one filed by a person or the agent (no raw
    // captures at all here).
    let takeaway_id = takeaway.expect("the takeaway was filed");
    for id in &served {
        assert!(
            project_ids.contains(*id) || user_ids.contains(*id) || *id == takeaway_id,
            "served {id}, not a filed memory"
        );
    }
    // What a user filed reaches the session: a project memory (no scope given) and a
    // preference.
    assert!(served.iter().any(|id| project_ids.contains(*id)), "no project memory served");
    assert!(served.iter().any(|id| user_ids.contains(*id)), "no user preference served");
    let briefing = &contexts[0];
    assert!(briefing.contains("· user ·"), "{briefing}");
    assert!(briefing.contains("· fact · project/ledger-api-"), "{briefing}");

    // The checkpoint: blocked once, and its outcome recorded.
    assert_eq!(blocks, 1, "the checkpoint blocks exactly once");
    assert_eq!(rec["checkpoint"]["outcome"], "filed", "{}", rec["checkpoint"]);

    // The transcript was filed (redacted, with its source) and SessionEnd curated.
    let pieces: Vec<&Value> = rec["captured"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"].as_str().is_some_and(|s| s.starts_with("claude-code:transcript:")))
        .collect();
    assert!(!pieces.is_empty(), "transcript filed");
    assert!(rec["curation"]["examined"].as_u64().unwrap() > 0, "{}", rec["curation"]);
    let redacted: u64 =
        rec["captured"].as_array().unwrap().iter().map(|c| c["redacted"].as_u64().unwrap()).sum();
    assert!(redacted >= 2, "the .env output's secrets were redacted ({redacted})");
    for c in rec["captured"].as_array().unwrap() {
        let m: Value =
            serde_json::from_slice(&env.amber(&["--json", "get", c["id"].as_str().unwrap()]).stdout).unwrap();
        let content = m["content"].as_str().unwrap_or_default();
        assert!(
            !content.contains("AKIAIOSFODNN7EXAMPLE") && !content.contains("sk_test_4eC39"),
            "secret stored"
        );
    }

    let interjections =
        rec["served"].as_array().unwrap().iter().filter(|x| x["tier"] == "interjection").count();
    eprintln!(
        "replay: {} hook calls, {} characters added to the context in {} outputs ({} briefed, {} interjected, {} checkpoint)",
        events.len(),
        added,
        contexts.len() + blocks,
        served.len() - interjections,
        interjections,
        blocks
    );
    // A new Claude Code session in the same project is not handed this session's raw
    // captures (they are minutes old) but does get the takeaway it filed.
    let start = serde_json::json!({"session_id": "next-session", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup", "transcript_path": ""});
    let (out, took) = env.hook("SessionStart", &start, &[]);
    eprintln!("next session's start took {took:?}");
    let ctx = context_of(&out, "SessionStart").unwrap_or_else(|| panic!("a briefing: {}", env.hooks_log()));
    assert!(ctx.contains("· pattern ·") && !ctx.contains("· event ·"), "{ctx}");
}
