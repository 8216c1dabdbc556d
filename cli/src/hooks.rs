//! The hooks of agent runtimes, one core for all: `amber hook <runtime> <event>` answers
//! Claude Code's, Codex CLI's and Gemini CLI's lifecycle hooks. Each runtime is an adapter
//! ([`Runtime`]: its event names, the shape of its payloads and transcripts, the fields
//! of its answers); what Amber does at each moment ([`Event`]) is decided once, here and in
//! `policy`.
//!
//! One Amber session per agent session, for its whole life: every hook names it by the
//! runtime's `session_id` (the session's `key`), so nothing is served twice across the
//! session's prompts. The stop after every response is a checkpoint, not an end; the
//! session's end files the transcript and curates.
//!
//! A hook never breaks the user's session: whatever happens (no daemon, a slow one, bad
//! input), it exits 0 within its deadline, printing nothing when it has nothing to add,
//! and writes why to `<state_dir>/logs/hooks.log`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use amber_ipc::Config;
use serde_json::{Value, json};

mod advice;
pub mod config_error;
mod policy;
mod session;
pub(crate) mod settings;
mod standing;
mod tool;
mod transcript;

pub(crate) use tool::{ToolUse, is_ambers_tool, runs_amber, writes_files};
pub(crate) use transcript::{field, is_ambers_feedback, result_text};

/// SessionEnd files the transcript and curates: it gets at least this long.
const END_DEADLINE: Duration = Duration::from_secs(8);

/// What a runtime's hook is, in Amber's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A session starts, resumes, or lost its context (compaction, clear).
    Start,
    /// The person's prompt, before the model sees it.
    Prompt,
    /// A tool ran (or failed).
    Tool,
    /// The agent finished a response: a checkpoint.
    Stop,
    /// The session ends.
    End,
}

/// An agent runtime's side of the hooks: names, payload and transcript shapes, answers.
pub(crate) trait Runtime: Sync {
    /// Its name in commands, logs and sources (`claude-code`, `codex`, `gemini`), which is
    /// also the agent name of its sessions.
    fn name(&self) -> &'static str;
    /// The events `amber hook <name>` answers, as the runtime names them.
    fn events(&self) -> &'static [&'static str];
    /// What the event named `event` is.
    fn event(&self, event: &str) -> Option<Event>;
    /// The person's prompt of a prompt event, without what hooks added to it; None when it
    /// is not the person's (a runtime that sends a hook's own answer back as a prompt).
    fn prompt(&self, payload: &Value) -> Option<String> {
        payload.get("prompt").and_then(Value::as_str).map(str::to_string)
    }
    /// True when a start of this `source` means the context that held the briefing is
    /// gone, so the session is briefed again.
    fn rebrief(&self, source: &str) -> bool {
        matches!(source, "compact" | "clear")
    }
    /// A tool event as Claude Code shapes it (`tool_name`, `tool_input`, `tool_response`,
    /// `error`), the tool named as Claude Code names its like (Bash, Read, Write, Edit):
    /// the core reads only that shape.
    fn tool_payload(&self, payload: &Value) -> Value {
        payload.clone()
    }
    /// The text of the messages of a transcript file, Amber's own output left out.
    fn transcript_text(&self, raw: &str) -> String;
    /// The last assistant message of a transcript file.
    fn last_message(&self, raw: &str) -> Option<String>;
    /// The agent's last message as a stop's payload carries it (Claude Code's and Codex's
    /// `last_assistant_message`), when it does.
    fn stop_message(&self, payload: &Value) -> Option<String> {
        payload.get("last_assistant_message").and_then(Value::as_str).map(str::to_string)
    }
    /// The answer that adds `text` to the model's context at `event`.
    fn context(&self, event: &str, text: &str) -> String {
        json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }).to_string()
    }
    /// The stop's answer that makes the agent go on with `reason` (the checkpoint).
    fn go_on(&self, reason: &str) -> String {
        json!({ "decision": "block", "reason": reason }).to_string()
    }
}

/// A line in `<state_dir>/logs/hooks.log`: an ISO 8601 local time, the runtime, the event.
pub(crate) fn log(cfg: &Config, runtime: &str, event: &str, msg: &str) {
    let dir = cfg.state_dir.join("logs");
    let _ = amber_core::paths::create_private_dir(&dir);
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let _ = writeln!(f, "{} {runtime} {event}: {msg}", crate::when::local(amber_core::now_millis()));
    }
}

/// What one hook run knows: the runtime, the config, its event, and its deadline.
pub(crate) struct Hook<'a> {
    rt: &'a dyn Runtime,
    cfg: &'a Config,
    event: &'a str,
    /// What the event is, in Amber's terms.
    kind: Event,
    until: Instant,
    /// The agent's token (`amber install <runtime>` registers its name).
    token: Option<String>,
}

impl Hook<'_> {
    fn log(&self, msg: &str) {
        log(self.cfg, self.rt.name(), self.event, msg);
    }
}

/// Runs one hook: reads the payload from stdin, answers on stdout within `deadline`.
/// Always returns normally (the caller exits 0).
pub fn run(
    rt: &'static dyn Runtime,
    cfg: Config,
    config_file: Option<PathBuf>,
    event: &str,
    deadline: Duration,
    start: bool,
) {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().take(16 * 1024 * 1024).read_to_string(&mut input) {
        log(&cfg, rt.name(), event, &format!("cannot read the hook payload: {e}"));
        return;
    }
    let payload: Value = match serde_json::from_str(&input) {
        Ok(v) => v,
        Err(e) => {
            log(&cfg, rt.name(), event, &format!("the hook payload is not JSON ({e}); nothing done"));
            return;
        }
    };
    let Some(kind) = rt.event(event) else {
        log(
            &cfg,
            rt.name(),
            event,
            &format!("not an event Amber answers (known: {})", rt.events().join(", ")),
        );
        return;
    };
    let deadline = if kind == Event::End { deadline.max(END_DEADLINE) } else { deadline };
    let until = Instant::now() + deadline;
    let (tx, rx) = mpsc::channel();
    let event_name = event.to_string();
    let worker_cfg = cfg.clone();
    let cwd = payload.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let key = field(&payload, "session_id").map(str::to_string);
    std::thread::spawn(move || {
        let token = crate::agents::token(&worker_cfg, rt.name());
        let hook = Hook { rt, cfg: &worker_cfg, event: &event_name, kind, until, token };
        let r = policy::answer(&hook, config_file.as_deref(), &payload, start);
        let _ = tx.send(r);
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(Some(out))) => {
            outln!("{out}");
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => log(&cfg, rt.name(), event, &format!("{e:#}")),
        Err(_) => match cwd.filter(|_| kind == Event::Start).and_then(|d| standing::fallback(&cfg, &d)) {
            Some((text, ids)) => {
                // Served now: the start the daemon makes later must not brief them again.
                if let Some(key) = &key
                    && let Err(e) = standing::note_shown(&cfg, rt.name(), key, &ids)
                {
                    log(&cfg, rt.name(), event, &format!("cannot keep what the fallback showed: {e:#}"));
                }
                log(
                    &cfg,
                    rt.name(),
                    event,
                    &format!("no answer within {deadline:?}; answered the kept standing preferences"),
                );
                outln!("{}", rt.context(event, &text));
            }
            None => log(&cfg, rt.name(), event, &format!("no answer within {deadline:?}; answered empty")),
        },
    }
}

/// The transcript file a payload names, read (lossily as UTF-8).
fn read_transcript(payload: &Value) -> anyhow::Result<Option<(PathBuf, String)>> {
    use anyhow::Context;
    let Some(path) = field(payload, "transcript_path").filter(|p| !p.is_empty()).map(PathBuf::from) else {
        return Ok(None);
    };
    let text = std::fs::read(&path).with_context(|| format!("reading the transcript {}", path.display()))?;
    Ok(Some((path, String::from_utf8_lossy(&text).into_owned())))
}

/// True when `dir` is an absolute folder that exists.
fn is_dir(dir: &Path) -> bool {
    dir.is_absolute() && dir.is_dir()
}
