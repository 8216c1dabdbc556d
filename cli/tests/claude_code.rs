//! `amber hook claude-code <event>` fed recorded Claude Code hook payloads against a real
//! daemon (started on demand by the first hook), and `amber install|uninstall claude-code`.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Env, context_of, text};
use serde_json::{Value, json};

const RELEASE: &str = "Releasing to staging: export AWS_PROFILE=staging before running make release, \
otherwise the upload to the eu-west-1 bucket fails with AccessDenied.";
const POSTGRES: &str = "The integration tests need a local Postgres 16 on port 5433; start it with \
docker compose up db before running cargo test.";

fn payload(event: &str, cwd: &Path, extra: Value) -> Value {
    let mut p = json!({
        "session_id": "0b9a7c2e-5f1d-4c1e-9d3a-7e2f1a6b8c90",
        "transcript_path": "/home/u/.claude/projects/x/0b9a7c2e.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

#[test]
fn a_claude_code_session_gets_identity_briefing_interjection_capture_and_curation() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    std::fs::create_dir_all(proj.path().join("project-context")).unwrap();
    std::fs::write(proj.path().join("project-context/HANDOFF.md"), "Next: ship the staging release.\n")
        .unwrap();
    let scope = amber_tiers::scope::project_scope(proj.path());
    let o = env.amber(&["remember", "--scope", scope.as_str(), RELEASE]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let claude = "0b9a7c2e-5f1d-4c1e-9d3a-7e2f1a6b8c90";

    let (out, _) =
        env.hook("SessionStart", &payload("SessionStart", proj.path(), json!({"source": "startup"})), &[]);
    let ctx = context_of(&out, "SessionStart").expect("identity and briefing");
    assert!(ctx.contains("ship the staging release"), "identity: {ctx}");
    assert!(ctx.contains("AWS_PROFILE=staging"), "briefing: {ctx}");
    let sid = env.amber_session(claude);

    // A memory filed after the start, then a prompt it answers: interjected.
    assert!(env.amber(&["remember", "--scope", scope.as_str(), POSTGRES]).status.success());
    let prompt = "how do I start postgres on port 5433 for the integration tests?";
    let (out, _) = env.hook(
        "UserPromptSubmit",
        &payload("UserPromptSubmit", proj.path(), json!({"prompt": prompt})),
        &[],
    );
    let ctx = context_of(&out, "UserPromptSubmit").expect("the gate fires");
    assert!(ctx.contains("docker compose up db"), "{ctx}");
    // An unrelated prompt: nothing printed at all.
    let (out, _) = env.hook(
        "UserPromptSubmit",
        &payload(
            "UserPromptSubmit",
            proj.path(),
            json!({"prompt": "what is the capital of Mongolia and how many live there?"}),
        ),
        &[],
    );
    assert_eq!(context_of(&out, "UserPromptSubmit"), None);

    let tool = json!({
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test -p store", "description": "run the store tests"},
        "tool_response": {"stdout": "test store::tests::reopen ... FAILED\ndatabase is locked (SQLITE_BUSY)", "stderr": "", "interrupted": false},
    });
    let (out, _) = env.hook("PostToolUse", &payload("PostToolUse", proj.path(), tool), &[]);
    assert_eq!(context_of(&out, "PostToolUse"), None);
    // A file write: what it wrote is captured now (the transcript leaves it out); the
    // Bash output above is stored with the transcript instead.
    let edit = json!({
        "tool_name": "Edit",
        "tool_input": {"file_path": "/p/store/src/lib.rs", "old_string": "let conn = Connection::open(path)?;",
                       "new_string": "let conn = Connection::open(path)?;\nconn.busy_timeout(Duration::from_secs(5))?;"},
        "tool_response": {"filePath": "/p/store/src/lib.rs"},
    });
    let (out, _) = env.hook("PostToolUse", &payload("PostToolUse", proj.path(), edit), &[]);
    assert_eq!(context_of(&out, "PostToolUse"), None);

    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    assert_eq!(show["live"], true);
    let captured = show["session"]["captured"].as_array().unwrap();
    assert!(captured.iter().any(|c| c["source"] == "claude-code:tool:Edit"), "{captured:?}");
    assert!(captured.iter().all(|c| c["source"] != "claude-code:tool:Bash"), "{captured:?}");
    let served: Vec<&str> =
        show["session"]["served"].as_array().unwrap().iter().map(|s| s["tier"].as_str().unwrap()).collect();
    assert!(served.contains(&"briefing") && served.contains(&"interjection"), "{served:?}");

    // Stop ends a response, not the session: with one tool use the checkpoint does not
    // ask, and the session stays live.
    let (out, _) = env.hook("Stop", &payload("Stop", proj.path(), json!({"stop_hook_active": false})), &[]);
    assert_eq!(context_of(&out, "Stop"), None);
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    assert_eq!(show["live"], true);

    // The next prompt continues the same Amber session: the release memory it was briefed
    // is not handed back, and neither is its own earlier prompt.
    let (out, _) = env.hook(
        "UserPromptSubmit",
        &payload(
            "UserPromptSubmit",
            proj.path(),
            json!({"prompt": "release to staging again please, AWS_PROFILE staging"}),
        ),
        &[],
    );
    if let Some(ctx) = context_of(&out, "UserPromptSubmit") {
        assert!(!ctx.contains("AWS_PROFILE=staging before") && !ctx.contains("capital of Mongolia"), "{ctx}");
    }
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    assert_eq!(show["live"], true);
    assert_eq!(show["session"]["events"], 5, "one session for the whole Claude Code session");

    // SessionEnd ends it, files the transcript and curates.
    let transcript = proj.path().join("t.jsonl");
    let line = |role: &str, text: &str| {
        json!({"type": role, "message": {"role": role, "content": text}, "sessionId": claude}).to_string()
    };
    std::fs::write(
        &transcript,
        [
            line("user", prompt),
            line("assistant", "Run docker compose up db first; the tests expect Postgres 16 on port 5433."),
        ]
        .join("\n"),
    )
    .unwrap();
    let end = payload(
        "SessionEnd",
        proj.path(),
        json!({"reason": "prompt_input_exit", "transcript_path": transcript.to_string_lossy()}),
    );
    let (out, _) = env.hook("SessionEnd", &end, &[]);
    assert!(out.status.success() && out.stdout.is_empty(), "{}", text(&out.stdout));
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    assert_eq!(show["live"], false);
    assert!(show["session"]["curation"].is_object());
    let captured = show["session"]["captured"].as_array().unwrap();
    assert!(
        captured
            .iter()
            .any(|c| c["source"].as_str().is_some_and(|s| s.starts_with("claude-code:transcript:"))),
        "{captured:?}"
    );
    let human = text(&env.amber(&["session", "show", &sid]).stdout);
    assert!(human.contains("ended (ended)") && human.contains("interjection decisions"), "{human}");

    // A missing transcript is logged and skipped; the end still happens.
    let other = json!({"session_id": "second", "cwd": proj.path(), "hook_event_name": "SessionEnd",
        "transcript_path": proj.path().join("nope.jsonl"), "reason": "other"});
    let (out, _) = env.hook(
        "UserPromptSubmit",
        &json!({"session_id": "second", "cwd": proj.path(), "prompt": "hello there, anything new?"}),
        &[],
    );
    assert!(out.status.success());
    let (out, _) = env.hook("SessionEnd", &other, &[]);
    assert!(out.status.success());
    assert!(env.hooks_log().contains("reading the transcript"), "{}", env.hooks_log());
    let show: Value = serde_json::from_slice(
        &env.amber(&["--json", "session", "show", &env.amber_session("second")]).stdout,
    )
    .unwrap();
    assert_eq!(show["live"], false);
}

#[test]
fn a_hook_never_breaks_the_session_when_the_daemon_is_down_or_the_input_is_bad() {
    let env = Env::new();
    let cwd = env.root.path().to_path_buf();
    for event in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"] {
        let p = payload(event, &cwd, json!({"prompt": "anything at all here", "tool_response": "x"}));
        let (out, took) = env.hook(event, &p, &[("AMBER_NO_START", "1"), ("AMBER_HOOK_DEADLINE_MS", "500")]);
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{event}: {} {}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(took < Duration::from_secs(5), "{event} took {took:?}");
    }
    assert!(env.hooks_log().contains("not running"), "{}", env.hooks_log());
    let mut c = env.cmd(&["hook", "claude-code", "UserPromptSubmit"]);
    let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"{not json").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    assert!(env.hooks_log().contains("not JSON"));
    assert!(!env.socket.exists(), "no daemon was started with AMBER_NO_START");
}

#[test]
fn install_merges_the_hooks_with_a_backup_and_uninstall_removes_exactly_them() {
    let env = Env::new();
    let settings = env.root.path().join("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = json!({"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]}});
    std::fs::write(&settings, serde_json::to_string_pretty(&mine).unwrap()).unwrap();

    let o = env.amber_home(&["install", "claude-code"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("added 11 Amber entries"), "{}", text(&o.stdout));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    // The agent-facing MCP tools are allowed (a -p run is otherwise denied them).
    let allow: Vec<&str> =
        v["permissions"]["allow"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    // The registry's agent set (`get_advice` too: offered when a model is configured).
    for tool in ["recall", "get", "remember", "outcome", "get_advice"] {
        assert!(allow.contains(&format!("mcp__amber__{tool}").as_str()), "{allow:?}");
    }
    for event in
        ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"]
    {
        let cmds: Vec<String> = v["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| {
                g["hooks"].as_array().unwrap().iter().map(|h| h["command"].as_str().unwrap().to_string())
            })
            .collect();
        assert!(cmds.iter().any(|c| c.ends_with(&format!(" hook claude-code {event}"))), "{event}: {cmds:?}");
    }
    let backups = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("amber-backup"))
        .count();
    assert_eq!(backups, 1);
    assert!(text(&env.amber_home(&["install", "claude-code"]).stdout).contains("already"));

    let o = env.amber_home(&["uninstall", "claude-code"]);
    assert!(text(&o.stdout).contains("removed 11 Amber entries"), "{}", text(&o.stdout));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v, mine, "uninstall leaves the user's settings as they were");

    // --project writes ./.claude/settings.json; broken JSON is left alone with an error.
    let proj = tempfile::tempdir().unwrap();
    let o = env.cmd(&["install", "claude-code", "--project"]).current_dir(proj.path()).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(proj.path().join(".claude/settings.json").exists());
    std::fs::write(&settings, "{ broken").unwrap();
    let o = env.amber_home(&["install", "claude-code"]);
    assert!(!o.status.success() && text(&o.stderr).contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ broken");
}

#[test]
fn each_session_start_source_does_what_it_says() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    // Filed from inside the project with no scope: the project's scope.
    let o = env.cmd(&["remember", RELEASE]).current_dir(proj.path()).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let start = |source: &str, session: &str| {
        let mut p = payload("SessionStart", proj.path(), json!({ "source": source }));
        p["session_id"] = session.into();
        let (out, _) = env.hook("SessionStart", &p, &[]);
        context_of(&out, "SessionStart")
    };
    let first = "0b9a7c2e-5f1d-4c1e-9d3a-7e2f1a6b8c90";
    // startup: briefed, as a pointer line (id prefix · type · scope · opening).
    let ctx = start("startup", first).expect("a briefing");
    assert!(ctx.contains("· fact · project/") && ctx.contains("Releasing to staging"), "{ctx}");
    // resume: the same session goes on; its context still holds the briefing: nothing.
    assert_eq!(start("resume", first), None);
    let sid = env.amber_session(first);
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    assert_eq!(show["session"]["served"].as_array().unwrap().len(), 1);
    // compact: the context that held it is gone: briefed again, in a new context.
    let ctx = start("compact", first).expect("briefed again after compaction");
    assert!(ctx.contains("Releasing to staging"), "{ctx}");
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    let served = show["session"]["served"].as_array().unwrap();
    assert_eq!(served.len(), 2);
    assert_eq!((served[0]["context"].as_u64(), served[1]["context"].as_u64()), (Some(0), Some(1)));
    // ... but still once per context: a prompt about it does not bring it a third time.
    let p = payload(
        "UserPromptSubmit",
        proj.path(),
        json!({"prompt": "make release fails with AccessDenied on eu-west-1, why?"}),
    );
    let (out, _) = env.hook("UserPromptSubmit", &p, &[]);
    assert_eq!(context_of(&out, "UserPromptSubmit"), None);
    // clear: Claude Code starts a new session id; a new Amber session, briefed.
    let ctx = start("clear", "5d1e0f3a-0000-4000-8000-000000000001").expect("a new session's briefing");
    assert!(ctx.contains("Releasing to staging"), "{ctx}");
    // clear with the same id (older Claude Code versions): briefed again too.
    assert!(start("clear", first).is_some());
    // A hook of an unknown session (SessionStart never seen) starts it on the first prompt.
    let mut p =
        payload("UserPromptSubmit", proj.path(), json!({"prompt": "how do we release to staging again?"}));
    p["session_id"] = "never-started".into();
    let (out, _) = env.hook("UserPromptSubmit", &p, &[]);
    assert!(context_of(&out, "UserPromptSubmit").is_some_and(|c| c.contains("Releasing to staging")));
}

#[test]
fn the_checkpoint_can_be_declined_once_and_turned_off() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let tool = |n: usize| {
        json!({"tool_name": "Bash", "tool_input": {"command": format!("make step{n}")},
               "tool_response": {"stdout": format!("step {n} done: {}", "output line ".repeat(8)), "stderr": ""}})
    };
    let stop = |active: bool, msg: &str| {
        payload("Stop", proj.path(), json!({"stop_hook_active": active, "last_assistant_message": msg}))
    };
    let p = payload("UserPromptSubmit", proj.path(), json!({"prompt": "run the three build steps please"}));
    assert!(env.hook("UserPromptSubmit", &p, &[]).0.status.success());
    // Two tool uses: not real work yet.
    for n in 0..2 {
        env.hook("PostToolUse", &payload("PostToolUse", proj.path(), tool(n)), &[]);
    }
    assert!(env.hook("Stop", &stop(false, "Done."), &[]).0.stdout.is_empty());
    env.hook("PostToolUse", &payload("PostToolUse", proj.path(), tool(2)), &[]);
    // stop_hook_active is honoured even then.
    assert!(env.hook("Stop", &stop(true, "Done."), &[]).0.stdout.is_empty());
    let (out, _) = env.hook("Stop", &stop(false, "Done."), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("blocked once");
    assert_eq!(v["decision"], "block");
    assert!(v["reason"].as_str().unwrap().contains("No takeaway:"));
    assert!(
        env.hook("Stop", &stop(true, "No takeaway: routine build, nothing new.").clone(), &[])
            .0
            .stdout
            .is_empty()
    );
    assert!(env.hook("Stop", &stop(false, "Done."), &[]).0.stdout.is_empty(), "never twice");
    let sid = env.amber_session("0b9a7c2e-5f1d-4c1e-9d3a-7e2f1a6b8c90");
    let show: Value =
        serde_json::from_slice(&env.amber(&["--json", "session", "show", &sid]).stdout).unwrap();
    let cp = &show["session"]["checkpoint"];
    assert_eq!((cp["outcome"].as_str(), cp["tool_uses"].as_u64()), (Some("declined"), Some(3)), "{cp}");
    assert_eq!(cp["decline"], "No takeaway: routine build, nothing new.");

    // `[session] checkpoint = false`: never.
    let env = Env::new();
    std::fs::write(env.root.path().join("config.toml"), "[session]\ncheckpoint = false\n").unwrap();
    let p = payload("UserPromptSubmit", proj.path(), json!({"prompt": "run the three build steps please"}));
    env.hook("UserPromptSubmit", &p, &[]);
    for n in 0..5 {
        env.hook("PostToolUse", &payload("PostToolUse", proj.path(), tool(n)), &[]);
    }
    assert!(env.hook("Stop", &stop(false, "Done."), &[]).0.stdout.is_empty());
}

/// Memories were served: the checkpoint also asks which of them the work relied on, by
/// their ids and with the session id an `outcome` report needs; the report lands in the
/// session, so the audit finds it backed by the served record.
#[test]
fn the_checkpoint_asks_for_outcomes_of_the_memories_served() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let scope = amber_tiers::scope::project_scope(proj.path());
    let o = env.amber(&["remember", "--scope", scope.as_str(), RELEASE]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = String::from_utf8_lossy(&o.stdout).split_whitespace().nth(1).unwrap().to_string();
    let (out, _) =
        env.hook("SessionStart", &payload("SessionStart", proj.path(), json!({"source": "startup"})), &[]);
    assert!(context_of(&out, "SessionStart").is_some_and(|c| c.contains(&id[..8])), "briefed by its id");
    for n in 0..3 {
        let t = json!({"tool_name": "Bash", "tool_input": {"command": format!("make release step{n}")},
                       "tool_response": {"stdout": format!("step {n}: {}", "uploaded ".repeat(8)), "stderr": ""}});
        env.hook("PostToolUse", &payload("PostToolUse", proj.path(), t), &[]);
    }
    let stop =
        payload("Stop", proj.path(), json!({"stop_hook_active": false, "last_assistant_message": "Done."}));
    let (out, _) = env.hook("Stop", &stop, &[]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("blocked once");
    let reason = v["reason"].as_str().unwrap();
    let sid = env.amber_session("0b9a7c2e-5f1d-4c1e-9d3a-7e2f1a6b8c90");
    assert!(reason.contains(&id[..8]) && reason.contains("`outcome`") && reason.contains(&sid), "{reason}");
    let o = env.amber(&["outcome", &id[..8], "success", "--session", &sid]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let audit: Value = serde_json::from_slice(&env.amber(&["--json", "audit"]).stdout).unwrap();
    assert_eq!(audit["unbacked_successes"], json!([]), "{audit}");
    let log: Value = serde_json::from_slice(&env.amber(&["--json", "outcomes", &id]).stdout).unwrap();
    assert_eq!(log["reports"][0]["agent"], "claude-code", "{log}");
}

/// Removes a file when dropped.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_config_that_does_not_parse_is_logged_told_once_per_session_and_shown_by_status() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    // A daemon runs (started with the defaults); then a key the config no longer knows.
    assert!(env.amber(&["status"]).status.success());
    let config = env.root.path().join("config.toml");
    std::fs::write(&config, "[session]\nidle_timeout_s = 600\ncheckpoint_tools = 3\n").unwrap();
    // Dropped before `env` (declared after it): the config goes first, so that `env`'s
    // `amber daemon stop` can run even when an assertion below fails.
    let _unbreak = RemoveOnDrop(config.clone());

    let hook = |event: &str, claude: &str| {
        let mut p = payload(event, proj.path(), json!({"source": "startup", "prompt": "deploy it"}));
        p["session_id"] = json!(claude);
        let (out, took) = env.hook(event, &p, &[]);
        assert!(out.status.success(), "a hook always exits 0: {}", text(&out.stderr));
        assert!(took < Duration::from_secs(2), "{event} took {took:?}");
        text(&out.stdout)
    };
    let told = |stdout: &str| -> String {
        let v: Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
        assert_eq!(v.as_object().unwrap().len(), 1, "only the message, nothing for the model: {v}");
        v["systemMessage"].as_str().unwrap().to_string()
    };
    let first = hook("SessionStart", "c0nf-a");
    let msg = told(&first);
    assert!(msg.starts_with("Amber is off in this session: config file"), "{msg}");
    assert!(msg.contains("unknown field `checkpoint_tools`") && msg.contains("amber status"), "{msg}");
    // Once per session: its later hooks print nothing; another session is told too.
    for event in ["UserPromptSubmit", "PostToolUse", "Stop"] {
        assert_eq!(hook(event, "c0nf-a"), "", "{event}");
    }
    assert!(told(&hook("UserPromptSubmit", "c0nf-b")).contains("checkpoint_tools"));
    assert_eq!(hook("SessionEnd", "c0nf-c"), "", "SessionEnd's output reaches no one");
    let log = env.hooks_log();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("the config cannot be used")).collect();
    assert_eq!(lines.len(), 6, "every hook logs it:\n{log}");
    assert!(lines.iter().all(|l| l.contains("unknown field `checkpoint_tools`")), "{log}");

    // `amber status` says it, and what the running daemon says; other commands refuse.
    let st = env.amber(&["status"]);
    assert_eq!(st.status.code(), Some(1));
    let out = text(&st.stdout);
    assert!(out.starts_with("config       INVALID: config file"), "{out}");
    assert!(out.contains("checkpoint_tools") && out.contains("Amber is off until it is fixed"), "{out}");
    assert!(out.contains("a daemon answers on") && out.contains("memories "), "{out}");
    let st = env.amber(&["--json", "status"]);
    assert_eq!(st.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert!(v["config_error"].as_str().unwrap().contains("checkpoint_tools"), "{v}");
    assert!(v["pid"].as_u64().is_some(), "{v}");
    let recall = env.amber(&["recall", "deploy"]);
    assert!(!recall.status.success() && text(&recall.stderr).contains("checkpoint_tools"));

    // The hooks did nothing: fixed, the daemon holds none of those sessions.
    std::fs::remove_file(&config).unwrap();
    for claude in ["c0nf-a", "c0nf-b"] {
        let o = env.amber(&["session", "show", &env.amber_session(claude)]);
        assert!(!o.status.success(), "{}", text(&o.stdout));
    }
    assert!(env.amber(&["status"]).status.success());
}

/// A stand-in for Claude Code's `claude mcp add|get|remove --scope user` (the real one
/// is driven in tests/claude_code): one user-scope server kept in `$FAKE_CLAUDE_STATE`
/// (its command), every call logged in `$FAKE_CLAUDE_CALLS`, answering as Claude Code
/// 2.1 does.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
echo "$*" >> "$FAKE_CLAUDE_CALLS"
case "$1 $2" in
  "mcp add")
    if [ -f "$FAKE_CLAUDE_STATE" ]; then echo "MCP server $5 already exists in user config" >&2; exit 1; fi
    echo "$7" > "$FAKE_CLAUDE_STATE"; echo "Added stdio MCP server $5 with command: $7 $8 to user config" ;;
  "mcp get")
    if [ ! -f "$FAKE_CLAUDE_STATE" ]; then echo "No MCP server found with name: $3" >&2; exit 1; fi
    printf '%s:\n  Scope: User config (available in all your projects)\n  Status: ok\n  Type: stdio\n  Command: %s\n  Args: mcp\n  Environment:\n' "$3" "$(cat "$FAKE_CLAUDE_STATE")" ;;
  "mcp remove")
    if [ ! -f "$FAKE_CLAUDE_STATE" ]; then echo "No MCP server named \"$3\" in user scope" >&2; exit 1; fi
    rm "$FAKE_CLAUDE_STATE"; echo "Removed MCP server $3 from user config" ;;
esac
"#;

#[test]
fn install_registers_the_mcp_server_user_wide_or_says_exactly_what_to_run() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let amber = std::fs::canonicalize(env!("CARGO_BIN_EXE_amber")).unwrap();
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let (state, calls) = (env.root.path().join("claude-state"), env.root.path().join("claude-calls"));
    let install = |args: &[&str], path: &Path| {
        let o = env
            .cmd(args)
            .env("HOME", env.root.path().join("home"))
            .env("PATH", path)
            .env("FAKE_CLAUDE_STATE", &state)
            .env("FAKE_CLAUDE_CALLS", &calls)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        (text(&o.stdout), text(&o.stderr))
    };
    // No `claude` on the PATH: the hooks go in, and the exact command is the answer.
    let (_, err) = install(&["install", "claude-code"], &bin);
    let run = format!("claude mcp add --scope user amber -- {} mcp", amber.display());
    assert!(err.contains("`claude` is not on the PATH") && err.contains(&format!("Run:\n  {run}")), "{err}");

    std::fs::write(bin.join("claude"), FAKE_CLAUDE).unwrap();
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = std::path::PathBuf::from(format!("{}:/usr/bin:/bin", bin.display()));
    let (out, _) = install(&["install", "claude-code"], &bin);
    assert!(out.contains("registered Amber's MCP server with Claude Code user-wide"), "{out}");
    assert_eq!(std::fs::read_to_string(&state).unwrap().trim(), amber.to_str().unwrap());
    let (out, _) = install(&["install", "claude-code"], &bin);
    assert!(out.contains("already registered with Claude Code user-wide"), "{out}");
    // An older install's path is replaced.
    std::fs::write(&state, "/old/amber\n").unwrap();
    let (out, _) = install(&["install", "claude-code"], &bin);
    assert!(out.contains("again (it ran /old/amber mcp"), "{out}");
    assert_eq!(std::fs::read_to_string(&state).unwrap().trim(), amber.to_str().unwrap());
    let logged = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(
        logged.lines().filter(|l| l.starts_with("mcp add --scope user amber -- ")).count(),
        4,
        "added, refused twice as present, added again:\n{logged}"
    );

    let (out, _) = install(&["uninstall", "claude-code"], &bin);
    assert!(out.contains("removed Amber's MCP server from Claude Code's user config"), "{out}");
    assert!(!state.exists());
    let (out, _) = install(&["uninstall", "claude-code"], &bin);
    assert!(out.contains("no user-wide MCP server amber"), "{out}");
}

/// The checkpoint's request reaches the model once: to the Claude Code releases measured
/// to go on after a Stop hook's `additionalContext` (its `AI_AGENT` says which runs the
/// hook), it comes as that, which Claude Code hands the model once and labels as no
/// error; to an older or unknown one, as the documented `decision: block`.
#[test]
fn the_checkpoint_comes_in_the_form_the_running_claude_code_shows_once() {
    let env = Env::new();
    let proj = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(proj.path().join(".git")).unwrap();
    let stop_after_work = |claude: &str, agent: &str| -> Value {
        let with = |event: &str, extra: Value| {
            let mut p = payload(event, proj.path(), extra);
            p["session_id"] = json!(claude);
            let (out, _) = env.hook(event, &p, &[("AI_AGENT", agent)]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            text(&out.stdout)
        };
        with("UserPromptSubmit", json!({"prompt": "run the three build steps please"}));
        for n in 0..3 {
            let t = json!({"tool_name": "Bash", "tool_input": {"command": format!("make step{n}")},
                           "tool_response": {"stdout": format!("step {n} done"), "stderr": ""}});
            with("PostToolUse", t);
        }
        let out = with("Stop", json!({"stop_hook_active": false, "last_assistant_message": "Done."}));
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{agent}: not JSON ({e}): {out}"))
    };
    for agent in ["claude-code_2-1-197_harness", "claude-code_2-1-332_harness", "claude-code_3-0-0_harness"] {
        let v = stop_after_work(&format!("cc-{agent}"), agent);
        assert_eq!(v.as_object().unwrap().len(), 1, "{agent}: no decision beside it: {v}");
        let h = &v["hookSpecificOutput"];
        assert_eq!(h["hookEventName"], "Stop", "{agent}: {v}");
        let reason = h["additionalContext"].as_str().unwrap();
        assert!(reason.starts_with("Amber checkpoint:") && reason.contains("No takeaway:"), "{reason}");
    }
    for agent in ["claude-code_2-1-196_harness", "claude-code_x_harness", "cursor"] {
        let v = stop_after_work(&format!("cc-{agent}"), agent);
        assert_eq!(v["decision"], "block", "{agent}: {v}");
        assert!(v["reason"].as_str().unwrap().starts_with("Amber checkpoint:"), "{v}");
    }
}
