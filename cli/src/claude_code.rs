//! Claude Code integration: `amber hook claude-code <event>` answers Claude Code's hooks
//! (SessionStart, UserPromptSubmit, PostToolUse, Stop, SessionEnd), and `amber
//! install|uninstall claude-code` edits its settings.json.
//!
//! One Amber session per Claude Code session, for its whole life: every hook names it by
//! Claude Code's `session_id` (the session's `key`), so nothing is served twice across
//! the session's prompts. `Stop` (after every response) is a checkpoint, not an end;
//! `SessionEnd` ends the session, files the transcript and curates.
//!
//! A hook never breaks the user's session: whatever happens (no daemon, a slow one, bad
//! input), it exits 0 within its deadline, printing nothing when it has nothing to add,
//! and writes why to `<state_dir>/logs/hooks.log`.
//!
//! Output follows Claude Code's hook output format: for SessionStart and
//! UserPromptSubmit, `{"hookSpecificOutput": {"hookEventName": <event>,
//! "additionalContext": <text>}}` on stdout with exit 0; for Stop, `{"decision":
//! "block", "reason": <text>}` once per session at most (the checkpoint); PostToolUse and
//! SessionEnd print nothing.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use amber_ipc::Config;
use amber_ipc::protocol::{
    SessionCheckpointParams, SessionEndParams, SessionEventParams, SessionStartParams,
};
use amber_tiers::interject::EventKind;
use anyhow::{Context, bail};
use serde_json::{Value, json};

mod advice;
pub mod config_error;
mod install;
mod register;
pub mod setup;
mod standing;
mod transcript;

pub use install::{EVENTS, edit_settings, install, settings_path, uninstall};
pub use transcript::transcript_text;
use transcript::{field, last_assistant_text};

/// Longest tool output sent for capture (characters); longer ones are cut.
const MAX_TOOL_TEXT: usize = 8000;

/// Longest transcript sent at Stop and SessionEnd (characters of message text); the
/// rest, the oldest part, is left out (the daemon is told how much) and the log says so.
const MAX_TRANSCRIPT_CHARS: usize = 1_000_000;

/// SessionEnd files the transcript and curates: it gets at least this long.
const END_DEADLINE: Duration = Duration::from_secs(8);

/// The agent name of Claude Code's sessions (their ids are `k-claude-code-<session_id>`).
pub(crate) const AGENT: &str = crate::mcp::CLAUDE_CODE_AGENT;

fn log(cfg: &Config, event: &str, msg: &str) {
    let dir = cfg.state_dir.join("logs");
    let _ = amber_core::paths::create_private_dir(&dir);
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let _ = writeln!(f, "{} claude-code {event}: {msg}", amber_core::now_millis());
    }
}

/// Claude Code's agent token (`amber install claude-code` registers the name), read once
/// per hook process.
static TOKEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Runs one hook: reads the payload from stdin, answers on stdout within `deadline`.
/// Always returns normally (the caller exits 0).
pub fn hook(cfg: Config, config_file: Option<PathBuf>, event: &str, deadline: Duration, start: bool) {
    let _ = TOKEN.set(crate::agents::token(&cfg, AGENT));
    let mut input = String::new();
    if let Err(e) = std::io::stdin().take(16 * 1024 * 1024).read_to_string(&mut input) {
        log(&cfg, event, &format!("cannot read the hook payload: {e}"));
        return;
    }
    let payload: Value = match serde_json::from_str(&input) {
        Ok(v) => v,
        Err(e) => {
            log(&cfg, event, &format!("the hook payload is not JSON ({e}); nothing done"));
            return;
        }
    };
    let deadline = if event == "SessionEnd" { deadline.max(END_DEADLINE) } else { deadline };
    let until = Instant::now() + deadline;
    let (tx, rx) = mpsc::channel();
    let event_name = event.to_string();
    let worker_cfg = cfg.clone();
    let cwd = field(&payload, "cwd").map(PathBuf::from);
    std::thread::spawn(move || {
        let r = answer(&worker_cfg, config_file.as_deref(), &event_name, &payload, start, until);
        let _ = tx.send(r);
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(Some(out))) => {
            outln!("{out}");
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => log(&cfg, event, &format!("{e:#}")),
        Err(_) => match cwd.filter(|_| event == "SessionStart").and_then(|d| standing::fallback(&cfg, &d)) {
            Some(text) => {
                log(
                    &cfg,
                    event,
                    &format!("no answer within {deadline:?}; answered the kept standing preferences"),
                );
                outln!("{}", additional_context(event, &text));
            }
            None => log(&cfg, event, &format!("no answer within {deadline:?}; answered empty")),
        },
    }
}

fn additional_context(event: &str, text: &str) -> String {
    json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }).to_string()
}

/// The oldest Claude Code measured to go on after a Stop hook's `additionalContext`
/// (tests/claude_code: 2.1.197, the pinned release, and 2.1.332).
const CONTEXT_AT_STOP: (u32, u32, u32) = (2, 1, 197);

/// Claude Code's version, from the `AI_AGENT` it sets for its hooks
/// (`claude-code_2-1-197_harness`).
fn claude_code_version() -> Option<(u32, u32, u32)> {
    let agent = std::env::var("AI_AGENT").ok()?;
    let v = agent.strip_prefix("claude-code_")?.split('_').next()?;
    let mut n = v.split('-').map(|x| x.parse::<u32>().ok());
    Some((n.next()??, n.next()??, n.next()??))
}

/// The Stop hook's answer that makes Claude go on with `reason`. As
/// `hookSpecificOutput.additionalContext` where Claude Code was measured to take it
/// (it goes on, and the model reads the text once, as `Stop hook additional context:`,
/// live and in a resumed session); `{"decision": "block", "reason"}`, the documented
/// form, elsewhere (Claude Code also keeps it as a "blocking error", which 2.1.332 sends
/// the model beside the feedback and 2.1.197 in a resumed session's history: twice).
fn stop_answer(reason: &str) -> String {
    match claude_code_version().is_some_and(|v| v >= CONTEXT_AT_STOP) {
        true => additional_context("Stop", reason),
        false => json!({ "decision": "block", "reason": reason }).to_string(),
    }
}

/// Starts or continues the Amber session of a Claude Code session (its `session_id` is
/// the key). `rebrief` when the context that held the briefing is gone.
fn start(
    client: &mut amber_ipc::Client,
    payload: &Value,
    prompt: Option<&str>,
    rebrief: bool,
) -> anyhow::Result<amber_ipc::protocol::SessionStartResult> {
    let token = TOKEN.get().cloned().flatten();
    let key = field(payload, "session_id").context("the payload has no session_id")?;
    let cwd = field(payload, "cwd").map(PathBuf::from).filter(|p| p.is_absolute() && p.is_dir());
    Ok(client.session_start(&SessionStartParams {
        agent: AGENT.into(),
        agent_token: token,
        project_root: None,
        cwd,
        prompt: prompt.map(str::to_string),
        scope: None,
        key: Some(key.to_string()),
        rebrief: Some(rebrief),
        // Every Claude Code session is a run: its opening prompt the task, its tool uses
        // the trace (recorded when it ends; the person rewards it with `amber runs reward`).
        run: Some(true),
    })?)
}

/// The Amber session id of a Claude Code session.
fn session_id(payload: &Value) -> anyhow::Result<String> {
    let key = field(payload, "session_id").context("the payload has no session_id")?;
    Ok(amber_tiers::session::keyed_session_id(AGENT, key))
}

fn not_live(e: &amber_ipc::ClientError) -> bool {
    e.kind() == Some(amber_ipc::protocol::ErrorKind::SessionNotFound)
}

/// Runs `call` on the session; when it is not live (never started, or ended by the idle
/// timeout), continues it first and tries once more. Returns the call's result and the
/// start's result when one was made.
fn on_session<T>(
    client: &mut amber_ipc::Client,
    payload: &Value,
    prompt: Option<&str>,
    mut call: impl FnMut(&mut amber_ipc::Client, &str) -> Result<T, amber_ipc::ClientError>,
) -> anyhow::Result<(T, Option<amber_ipc::protocol::SessionStartResult>)> {
    let id = session_id(payload)?;
    match call(client, &id) {
        Ok(r) => Ok((r, None)),
        Err(e) if not_live(&e) => {
            let started = start(client, payload, prompt, false)?;
            Ok((call(client, &started.session_id)?, Some(started)))
        }
        Err(e) => Err(e.into()),
    }
}

/// Like [`on_session`], for the events that end or pause work (Stop, SessionEnd): a
/// session Amber never started (Claude Code fires SessionEnd for `claude mcp add`, `claude
/// mcp list` and the like) is left alone, `None`: nothing is served or recorded for it.
/// One Amber knows but that is no longer live (ended for idleness) is continued.
fn on_known_session<T>(
    client: &mut amber_ipc::Client,
    payload: &Value,
    mut call: impl FnMut(&mut amber_ipc::Client, &str) -> Result<T, amber_ipc::ClientError>,
) -> anyhow::Result<Option<T>> {
    let id = session_id(payload)?;
    match call(client, &id) {
        Ok(r) => Ok(Some(r)),
        Err(e) if not_live(&e) => match client.session_show(&id) {
            Ok(_) => {
                let started = start(client, payload, None, false)?;
                Ok(Some(call(client, &started.session_id)?))
            }
            Err(e) if not_live(&e) => Ok(None),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

fn read_transcript(payload: &Value) -> anyhow::Result<Option<(PathBuf, String)>> {
    let Some(path) = field(payload, "transcript_path").filter(|p| !p.is_empty()).map(PathBuf::from) else {
        return Ok(None);
    };
    let text = std::fs::read(&path).with_context(|| format!("reading the transcript {}", path.display()))?;
    Ok(Some((path, String::from_utf8_lossy(&text).into_owned())))
}

/// A transcript's text as sent to the daemon: at most its last `MAX_TRANSCRIPT_CHARS`
/// characters (`skipped` says how many were left out at its start).
struct TranscriptPart {
    text: String,
    source: String,
    skipped: usize,
}

fn transcript_part(cfg: &Config, event: &str, path: &Path, raw: &str) -> Option<TranscriptPart> {
    let text = transcript_text(raw);
    let n = text.chars().count();
    let skipped = n.saturating_sub(MAX_TRANSCRIPT_CHARS);
    let text = match skipped {
        0 => text,
        _ => {
            log(cfg, event, &format!("transcript of {n} characters: its last {MAX_TRANSCRIPT_CHARS} sent"));
            text.chars().skip(skipped).collect()
        }
    };
    let source = format!("claude-code:transcript:{}", path.display());
    (!text.trim().is_empty()).then_some(TranscriptPart { text, source, skipped })
}

fn start_context(s: &amber_ipc::protocol::SessionStartResult) -> String {
    let mut parts = Vec::new();
    if let Some(id) = &s.identity
        && !id.text.trim().is_empty()
    {
        parts.push(id.text.trim_end().to_string());
    }
    if !s.inbox.text.trim().is_empty() {
        parts.push(s.inbox.text.trim_end().to_string());
    }
    if !s.briefing.text.trim().is_empty() {
        parts.push(s.briefing.text.trim_end().to_string());
    }
    parts.join("\n\n")
}

/// Text of a tool call and its result, for capture: `<tool>: <what>` then the output.
/// Read gives the file's content, Edit and Write what was written (not the whole old
/// file Claude Code sends along), Grep and Glob the files or lines found; a failed tool
/// (PostToolUseFailure) its error.
fn tool_text(payload: &Value) -> Option<String> {
    let name = field(payload, "tool_name").unwrap_or("tool");
    let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    let what = ["command", "file_path", "path", "pattern", "query", "url", "description"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| input.to_string());
    let out = if let Some(err) = field(payload, "error") {
        format!("[failed]\n{err}")
    } else {
        let response = payload.get("tool_response")?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match (name, response) {
            (_, Value::String(t)) => t.clone(),
            ("Read", r) => r.get("file").and_then(|f| s(f, "content")).unwrap_or_else(|| r.to_string()),
            ("Edit" | "MultiEdit", _) => {
                let new = s(&input, "new_string").unwrap_or_default();
                let old = s(&input, "old_string").unwrap_or_default();
                format!("[replaced]\n{old}\n[with]\n{new}")
            }
            ("Write", _) => s(&input, "content").unwrap_or_default(),
            ("NotebookEdit", _) => s(&input, "new_source").unwrap_or_default(),
            (_, Value::Object(o)) => {
                let text = ["stdout", "output", "content", "result"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .or_else(|| {
                        ["filenames", "lines"].iter().find_map(|k| {
                            o.get(*k)
                                .and_then(Value::as_array)
                                .map(|xs| xs.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"))
                        })
                    });
                match text {
                    Some(t) => {
                        let err = o.get("stderr").and_then(Value::as_str).unwrap_or("");
                        if err.is_empty() { t } else { format!("{t}\n[stderr]\n{err}") }
                    }
                    None => response.to_string(),
                }
            }
            (_, other) => other.to_string(),
        }
    };
    let text = format!("{name}: {what}\n{out}");
    Some(text.chars().take(MAX_TOOL_TEXT).collect())
}

fn answer(
    cfg: &Config,
    config_file: Option<&Path>,
    event: &str,
    payload: &Value,
    start_daemon: bool,
    until: Instant,
) -> anyhow::Result<Option<String>> {
    let mut client = crate::daemon::connect_or_start(cfg, config_file, start_daemon)?;
    match event {
        "SessionStart" => {
            // startup: a new session, briefed. resume: the same session continues (its
            // context still holds what it was given). compact, clear: the context that held
            // the briefing is gone, so it is briefed again.
            let source = field(payload, "source").unwrap_or("startup");
            let rebrief = matches!(source, "compact" | "clear");
            let started = start(&mut client, payload, None, rebrief)?;
            log(
                cfg,
                event,
                &format!(
                    "source {source}: session {} resumed={} briefed {}",
                    started.session_id,
                    started.resumed,
                    started.briefing.items.len()
                ),
            );
            // A new session's briefing holds every standing preference: kept for a start
            // the daemon cannot answer in time.
            if source == "startup"
                && !started.resumed
                && !started.withheld
                && let Some(cwd) = field(payload, "cwd")
                && let Err(e) = standing::keep(cfg, Path::new(cwd), &started.briefing.standing)
            {
                log(cfg, event, &format!("cannot keep the standing preferences: {e:#}"));
            }
            let text = start_context(&started);
            Ok((!text.is_empty()).then(|| additional_context(event, &text)))
        }
        "UserPromptSubmit" => {
            let prompt = field(payload, "prompt").unwrap_or("");
            let (r, started) = on_session(&mut client, payload, Some(prompt), |c, id| {
                c.session_event(&SessionEventParams {
                    session_id: id.to_string(),
                    kind: EventKind::Prompt,
                    text: prompt.to_string(),
                    source: Some("claude-code:prompt".into()),
                    // The prompt goes to the gate; it is stored with the transcript at the
                    // next Stop (captured here too, it was stored twice).
                    capture: Some(false),
                    moment: None,
                })
            })?;
            // A session started here (no SessionStart seen) carries its briefing too.
            let mut parts: Vec<String> = started.as_ref().map(start_context).into_iter().collect();
            log(
                cfg,
                event,
                &format!(
                    "event {} fired={} reason={:?} best={:?}",
                    r.event, r.decision.fired, r.decision.reason, r.decision.best
                ),
            );
            if r.decision.fired {
                parts.push(r.decision.text);
            }
            // The opening prompt asks for advice learned from earlier runs (with a model).
            if r.opening {
                let id = session_id(payload)?;
                parts.extend(advice::ask(&mut client, cfg, event, &id, prompt, "start", until));
            }
            parts.retain(|p| !p.trim().is_empty());
            Ok((!parts.is_empty()).then(|| additional_context(event, &parts.join("\n\n"))))
        }
        "PostToolUse" | "PostToolUseFailure" => {
            // Amber's own tools and commands: their output is what Amber served, never
            // captured again (it would come back in later recalls, and again, and again).
            let tool = field(payload, "tool_name").unwrap_or("");
            let command = payload.pointer("/tool_input/command").and_then(Value::as_str).unwrap_or("");
            if transcript::is_ambers_tool(tool) || (tool == "Bash" && transcript::runs_amber(command)) {
                log(cfg, event, &format!("{tool}: Amber's own output, not captured"));
                return Ok(None);
            }
            let Some(text) = tool_text(payload) else { return Ok(None) };
            let source = format!("claude-code:tool:{}", field(payload, "tool_name").unwrap_or("tool"));
            // Every tool use goes to the gate and the leads; only what a tool wrote is
            // stored now: all other output is in the transcript, filed at the next Stop
            // (stored once, not twice; see docs/INTEGRATIONS.md for the measurement).
            let capture = transcript::writes_files(tool);
            on_session(&mut client, payload, None, |c, id| {
                c.session_event(&SessionEventParams {
                    session_id: id.to_string(),
                    kind: EventKind::ToolResult,
                    text: text.clone(),
                    source: Some(source.clone()),
                    capture: Some(capture),
                    moment: None,
                })
            })?;
            // A failed tool is where a session gets stuck: the Pitfalls of the advice it
            // was given, once (no model call).
            if event == "PostToolUseFailure" {
                let id = session_id(payload)?;
                if let Some(t) = advice::ask(&mut client, cfg, event, &id, &text, "stuck", until) {
                    return Ok(Some(additional_context(event, &t)));
                }
            }
            Ok(None)
        }
        "Stop" => {
            // A checkpoint, not an end: the session goes on with the next prompt.
            let stop_hook_active = payload.get("stop_hook_active").and_then(Value::as_bool) == Some(true);
            // The transcript so far is filed at every stop (only what is new), so a
            // session whose SessionEnd never comes loses at most its last turn.
            let raw = read_transcript(payload).unwrap_or_else(|e| {
                log(cfg, event, &format!("{e:#}; going on without it"));
                None
            });
            let message = match field(payload, "last_assistant_message") {
                Some(m) => Some(m.to_string()),
                None => raw.as_ref().and_then(|(_, t)| last_assistant_text(t)),
            };
            let part = raw.as_ref().and_then(|(path, raw)| transcript_part(cfg, event, path, raw));
            let Some(r) = on_known_session(&mut client, payload, |c, id| {
                c.session_checkpoint(&SessionCheckpointParams {
                    session_id: id.to_string(),
                    stop_hook_active,
                    message: message.clone(),
                    transcript: part.as_ref().map(|p| p.text.clone()),
                    transcript_source: part.as_ref().map(|p| p.source.clone()),
                    transcript_skipped: part.as_ref().map_or(0, |p| p.skipped),
                })
            })?
            else {
                log(cfg, event, "a session Amber never started: nothing done");
                return Ok(None);
            };
            log(cfg, event, &format!("block={} outcome={:?}", r.block, r.checkpoint.outcome));
            // Done: the Steps of the advice the session was given, once, to check the work
            // against (no model call). Never when Claude is already going on because of a block.
            let done = match stop_hook_active {
                true => None,
                false => advice::ask(&mut client, cfg, event, &session_id(payload)?, "", "done", until),
            };
            let reason = match (r.block, done) {
                (true, Some(d)) => Some(format!("{}\n\n{d}", r.reason.unwrap_or_default())),
                (true, None) => Some(r.reason.unwrap_or_default()),
                (false, Some(d)) => {
                    Some(format!("{d}\nBefore you finish, check the work against these steps."))
                }
                (false, None) => None,
            };
            Ok(reason.map(|reason| stop_answer(&reason)))
        }
        "SessionEnd" => {
            let raw = read_transcript(payload).unwrap_or_else(|e| {
                log(cfg, event, &format!("{e:#}; ending the session without it"));
                None
            });
            let part = raw.as_ref().and_then(|(path, raw)| transcript_part(cfg, event, path, raw));
            let Some(r) = on_known_session(&mut client, payload, |c, id| {
                c.session_end(&SessionEndParams {
                    session_id: id.to_string(),
                    transcript: part.as_ref().map(|p| p.text.clone()),
                    transcript_source: part.as_ref().map(|p| p.source.clone()),
                    transcript_skipped: part.as_ref().map_or(0, |p| p.skipped),
                    manifest: Vec::new(),
                    outcome: None,
                })
            })?
            else {
                log(
                    cfg,
                    event,
                    &format!(
                        "a session Amber never started ({}): nothing done",
                        field(payload, "reason").unwrap_or("?")
                    ),
                );
                return Ok(None);
            };
            let c = r.session.curation.unwrap_or_default();
            log(
                cfg,
                event,
                &format!(
                    "session {} ended ({}): {} served, {} captured, {} near duplicates, {} collapsed",
                    r.session.id,
                    field(payload, "reason").unwrap_or("?"),
                    r.session.served.len(),
                    r.session.captured.len(),
                    c.near_duplicates.len(),
                    c.collapsed
                ),
            );
            // SessionEnd's output reaches no one but the log (and `claude --debug`): the
            // person finds the run with `amber runs list` or rewards `amber runs reward last`.
            if let Some(run) = r.session.run.runs.last() {
                let msg = format!(
                    "session {} is run {run} in {}; reward it: amber runs reward {run} <-1..1>",
                    r.session.id, r.session.scope
                );
                log(cfg, event, &msg);
                errln!("amber: {msg}");
            }
            Ok(None)
        }
        other => bail!("unknown Claude Code hook event {other:?} (known: {})", EVENTS.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_text_names_the_tool_its_input_and_its_output() {
        let p = json!({
            "tool_name": "Bash",
            "tool_input": { "command": "cargo test", "description": "run tests" },
            "tool_response": { "stdout": "test result: ok", "stderr": "warning: x" }
        });
        assert_eq!(tool_text(&p).unwrap(), "Bash: cargo test\ntest result: ok\n[stderr]\nwarning: x");
        assert!(tool_text(&json!({ "tool_name": "Bash" })).is_none());
        let read = json!({
            "tool_name": "Read",
            "tool_input": { "file_path": "/p/src/db.rs" },
            "tool_response": { "type": "text", "file": { "filePath": "/p/src/db.rs", "content": "fn main() {}", "numLines": 1 } }
        });
        assert_eq!(tool_text(&read).unwrap(), "Read: /p/src/db.rs\nfn main() {}");
        let edit = json!({
            "tool_name": "Edit",
            "tool_input": { "file_path": "/p/a.rs", "old_string": "x = 1", "new_string": "x = 2" },
            "tool_response": { "filePath": "/p/a.rs", "originalFile": "a whole file we do not want" }
        });
        assert_eq!(tool_text(&edit).unwrap(), "Edit: /p/a.rs\n[replaced]\nx = 1\n[with]\nx = 2");
        let failed = json!({
            "tool_name": "Bash",
            "tool_input": { "command": "cargo test" },
            "error": "Exit code 101\ntest failed"
        });
        assert_eq!(tool_text(&failed).unwrap(), "Bash: cargo test\n[failed]\nExit code 101\ntest failed");
    }
}
