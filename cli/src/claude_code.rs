//! Claude Code integration: `amber hook claude-code <event>` answers Claude Code's hooks
//! (SessionStart, UserPromptSubmit, PostToolUse, Stop, and SessionEnd as an alias of
//! Stop), and `amber install|uninstall claude-code` edits its settings.json.
//!
//! A hook never breaks the user's session: whatever happens (no daemon, a slow one, bad
//! input), it exits 0 within its deadline, printing nothing when it has nothing to add,
//! and writes why to `<state_dir>/logs/hooks.log`.
//!
//! Output follows Claude Code's hook output format: for SessionStart and
//! UserPromptSubmit, `{"hookSpecificOutput": {"hookEventName": <event>,
//! "additionalContext": <text>}}` on stdout with exit 0; PostToolUse and Stop print
//! nothing (they only file and curate).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use amber_ipc::Config;
use amber_ipc::protocol::{SessionEndParams, SessionEventParams, SessionStartParams};
use amber_tiers::interject::EventKind;
use anyhow::{Context, bail};
use serde_json::{Value, json};

/// The events `amber hook claude-code` answers.
pub const EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"];

/// Longest tool output sent for capture (characters); longer ones are cut.
const MAX_TOOL_TEXT: usize = 8000;

/// Where the hook keeps which Amber session serves which Claude Code session.
fn map_path(cfg: &Config, claude_session: &str) -> PathBuf {
    let safe: String = claude_session
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .take(128)
        .collect();
    cfg.state_dir.join("claude-code").join(format!("{safe}.session"))
}

fn log(cfg: &Config, event: &str, msg: &str) {
    let dir = cfg.state_dir.join("logs");
    let _ = amber_core::paths::create_private_dir(&dir);
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let _ = writeln!(f, "{} claude-code {event}: {msg}", amber_core::now_millis());
    }
}

/// Runs one hook: reads the payload from stdin, answers on stdout within `deadline`.
/// Always returns normally (the caller exits 0).
pub fn hook(cfg: Config, config_file: Option<PathBuf>, event: &str, deadline: Duration, start: bool) {
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
    let (tx, rx) = mpsc::channel();
    let event_name = event.to_string();
    let worker_cfg = cfg.clone();
    std::thread::spawn(move || {
        let r = answer(&worker_cfg, config_file.as_deref(), &event_name, &payload, start);
        let _ = tx.send(r);
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(Some(out))) => {
            println!("{out}");
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => log(&cfg, event, &format!("{e:#}")),
        Err(_) => log(&cfg, event, &format!("no answer within {deadline:?}; answered empty")),
    }
}

fn field<'a>(p: &'a Value, k: &str) -> Option<&'a str> {
    p.get(k).and_then(Value::as_str)
}

fn additional_context(event: &str, text: &str) -> String {
    json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }).to_string()
}

/// The Amber session for a Claude Code session, starting one when there is none (or the
/// last one ended). Returns (amber session id, start result when just started).
fn session_for(
    client: &mut amber_ipc::Client,
    cfg: &Config,
    payload: &Value,
    prompt: Option<&str>,
    force_new: bool,
) -> anyhow::Result<(String, Option<amber_ipc::protocol::SessionStartResult>)> {
    let claude = field(payload, "session_id").context("the payload has no session_id")?;
    let map = map_path(cfg, claude);
    if !force_new && let Ok(id) = std::fs::read_to_string(&map) {
        let id = id.trim().to_string();
        if client.session_show(&id).map(|s| s.live).unwrap_or(false) {
            return Ok((id, None));
        }
    }
    let cwd = field(payload, "cwd").map(PathBuf::from).filter(|p| p.is_absolute() && p.is_dir());
    let started = client.session_start(&SessionStartParams {
        agent: "claude-code".into(),
        project_root: None,
        cwd,
        prompt: prompt.map(str::to_string),
        scope: None,
    })?;
    if let Some(dir) = map.parent() {
        amber_core::paths::create_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&map, &started.session_id).with_context(|| format!("writing {}", map.display()))?;
    Ok((started.session_id.clone(), Some(started)))
}

fn start_context(s: &amber_ipc::protocol::SessionStartResult) -> String {
    let mut parts = Vec::new();
    if let Some(id) = &s.identity
        && !id.text.trim().is_empty()
    {
        parts.push(id.text.trim_end().to_string());
    }
    if !s.briefing.text.trim().is_empty() {
        parts.push(s.briefing.text.trim_end().to_string());
    }
    parts.join("\n\n")
}

/// Text of a tool call and its result, for capture.
fn tool_text(payload: &Value) -> Option<String> {
    let name = field(payload, "tool_name").unwrap_or("tool");
    let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    let what = ["command", "file_path", "path", "pattern", "query", "url", "description"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| input.to_string());
    let response = payload.get("tool_response")?;
    let out = match response {
        Value::String(s) => s.clone(),
        Value::Object(o) => ["stdout", "output", "content", "result"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(|s| {
                let err = o.get("stderr").and_then(Value::as_str).unwrap_or("");
                if err.is_empty() { s.to_string() } else { format!("{s}\n[stderr]\n{err}") }
            })
            .unwrap_or_else(|| response.to_string()),
        other => other.to_string(),
    };
    let text = format!("{name}: {what}\n{out}");
    Some(text.chars().take(MAX_TOOL_TEXT).collect())
}

fn answer(
    cfg: &Config,
    config_file: Option<&Path>,
    event: &str,
    payload: &Value,
    start: bool,
) -> anyhow::Result<Option<String>> {
    let mut client = crate::daemon::connect_or_start(cfg, config_file, start)?;
    match event {
        "SessionStart" => {
            let (_, started) = session_for(&mut client, cfg, payload, None, true)?;
            let text = started.as_ref().map(start_context).unwrap_or_default();
            Ok((!text.is_empty()).then(|| additional_context(event, &text)))
        }
        "UserPromptSubmit" => {
            let prompt = field(payload, "prompt").unwrap_or("");
            let (id, started) = session_for(&mut client, cfg, payload, Some(prompt), false)?;
            // A session started here (no SessionStart seen) carries its briefing too.
            let mut parts: Vec<String> = started.as_ref().map(start_context).into_iter().collect();
            let r = client.session_event(&SessionEventParams {
                session_id: id,
                kind: EventKind::Prompt,
                text: prompt.to_string(),
                source: Some("claude-code:prompt".into()),
                capture: None,
            })?;
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
            parts.retain(|p| !p.trim().is_empty());
            Ok((!parts.is_empty()).then(|| additional_context(event, &parts.join("\n\n"))))
        }
        "PostToolUse" => {
            let Some(text) = tool_text(payload) else { return Ok(None) };
            let (id, _) = session_for(&mut client, cfg, payload, None, false)?;
            let source = format!("claude-code:tool:{}", field(payload, "tool_name").unwrap_or("tool"));
            client.session_event(&SessionEventParams {
                session_id: id,
                kind: EventKind::ToolResult,
                text,
                source: Some(source),
                capture: Some(true),
            })?;
            Ok(None)
        }
        "Stop" | "SessionEnd" => {
            if payload.get("stop_hook_active").and_then(Value::as_bool) == Some(true) {
                return Ok(None);
            }
            let Some(claude) = field(payload, "session_id") else { bail!("the payload has no session_id") };
            let map = map_path(cfg, claude);
            let Ok(id) = std::fs::read_to_string(&map) else { return Ok(None) };
            match client.session_end(&SessionEndParams { session_id: id.trim().into(), transcript: None }) {
                Ok(r) => {
                    let c = r.session.curation.unwrap_or_default();
                    log(
                        cfg,
                        event,
                        &format!(
                            "session {} ended: {} served, {} captured, {} near duplicates, {} collapsed",
                            r.session.id,
                            r.session.served.len(),
                            r.session.captured.len(),
                            c.near_duplicates.len(),
                            c.collapsed
                        ),
                    );
                }
                Err(e) if e.kind() == Some(amber_ipc::protocol::ErrorKind::SessionNotFound) => {}
                Err(e) => return Err(e.into()),
            }
            let _ = std::fs::remove_file(&map);
            Ok(None)
        }
        other => bail!("unknown Claude Code hook event {other:?} (known: {})", EVENTS.join(", ")),
    }
}

/// The command a hook entry runs.
fn hook_command(amber: &Path, event: &str) -> String {
    let exe = amber.display().to_string();
    let exe = if exe.contains(' ') { format!("\"{exe}\"") } else { exe };
    format!("{exe} hook claude-code {event}")
}

fn is_ours(entry: &Value) -> bool {
    entry.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(" hook claude-code "))
}

/// Adds Amber's hooks to a settings object (idempotent). Returns how many were added.
pub fn merge_hooks(settings: &mut Value, amber: &Path) -> anyhow::Result<usize> {
    let obj = settings.as_object_mut().context("settings.json is not a JSON object")?;
    let hooks = obj.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks.as_object_mut().context("\"hooks\" in settings.json is not an object")?;
    let mut added = 0;
    for event in EVENTS {
        let groups = hooks.entry(*event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().with_context(|| format!("hooks.{event} is not an array"))?;
        let present = groups
            .iter()
            .any(|g| g.get("hooks").and_then(Value::as_array).is_some_and(|hs| hs.iter().any(is_ours)));
        if present {
            continue;
        }
        let mut group =
            json!({ "hooks": [{ "type": "command", "command": hook_command(amber, event), "timeout": 10 }] });
        if *event == "PostToolUse" {
            group["matcher"] = json!("*");
        }
        groups.push(group);
        added += 1;
    }
    Ok(added)
}

/// Removes exactly Amber's hooks (and the groups and events they leave empty). Returns
/// how many were removed.
pub fn remove_hooks(settings: &mut Value) -> usize {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return 0 };
    let mut removed = 0;
    for groups in hooks.values_mut() {
        let Some(groups) = groups.as_array_mut() else { continue };
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| !is_ours(h));
                removed += before - hs.len();
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|hs| !hs.is_empty()));
    }
    hooks.retain(|_, v| v.as_array().is_none_or(|a| !a.is_empty()));
    if hooks.is_empty()
        && let Some(o) = settings.as_object_mut()
    {
        o.remove("hooks");
    }
    removed
}

/// The settings file: `<cwd>/.claude/settings.json` for a project, else
/// `~/.claude/settings.json`.
pub fn settings_path(project: bool) -> anyhow::Result<PathBuf> {
    if project {
        Ok(std::env::current_dir()?.join(".claude").join("settings.json"))
    } else {
        Ok(dirs_home()?.join(".claude").join("settings.json"))
    }
}

fn dirs_home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).context("HOME is not set")
}

/// Reads, edits and writes a settings file, keeping a backup of the old one. Returns the
/// edit's count and the backup path.
pub fn edit_settings(
    path: &Path,
    edit: impl FnOnce(&mut Value) -> anyhow::Result<usize>,
) -> anyhow::Result<(usize, Option<PathBuf>)> {
    let old = match std::fs::read_to_string(path) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut settings: Value = match &old {
        Some(s) if !s.trim().is_empty() => serde_json::from_str(s)
            .with_context(|| format!("{} is not valid JSON; left as it is", path.display()))?,
        _ => json!({}),
    };
    let n = edit(&mut settings)?;
    if n == 0 {
        return Ok((0, None));
    }
    let backup = match &old {
        Some(s) => {
            let b = path.with_extension(format!("json.amber-backup-{}", amber_core::now_millis()));
            std::fs::write(&b, s).with_context(|| format!("writing the backup {}", b.display()))?;
            Some(b)
        }
        None => None,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.amber-tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&settings)? + "\n")
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok((n, backup))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_keeps_what_is_there_is_idempotent_and_uninstall_removes_exactly_ours() {
        let original = json!({
            "model": "opus",
            "hooks": {
                "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "prettier --write" }] }],
                "Notification": [{ "hooks": [{ "type": "command", "command": "notify-send hi" }] }]
            }
        });
        let mut s = original.clone();
        let amber = Path::new("/opt/amber/bin/amber");
        assert_eq!(merge_hooks(&mut s, amber).unwrap(), 4);
        assert_eq!(merge_hooks(&mut s, amber).unwrap(), 0, "installing twice adds nothing");
        assert_eq!(s["model"], "opus");
        assert_eq!(s["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            s["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "/opt/amber/bin/amber hook claude-code UserPromptSubmit"
        );
        assert_eq!(remove_hooks(&mut s), 4);
        assert_eq!(s, original, "uninstall restores the settings exactly");
        let mut bare = json!({});
        merge_hooks(&mut bare, amber).unwrap();
        remove_hooks(&mut bare);
        assert_eq!(bare, json!({}));
        assert!(merge_hooks(&mut json!([1]), amber).is_err());
    }

    #[test]
    fn tool_text_names_the_tool_its_input_and_its_output() {
        let p = json!({
            "tool_name": "Bash",
            "tool_input": { "command": "cargo test", "description": "run tests" },
            "tool_response": { "stdout": "test result: ok", "stderr": "warning: x" }
        });
        assert_eq!(tool_text(&p).unwrap(), "Bash: cargo test\ntest result: ok\n[stderr]\nwarning: x");
        assert!(tool_text(&json!({ "tool_name": "Bash" })).is_none());
    }
}
