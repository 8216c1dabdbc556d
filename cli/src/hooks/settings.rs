//! Amber's hook entries in a runtime's JSON settings (Claude Code's settings.json, Codex
//! CLI's hooks.json, Gemini CLI's settings.json: all three take the same shape, `hooks`
//! → event → groups → `{"type": "command", "command", "timeout"}`), merged in and removed
//! exactly, and the file edited with a backup of the old one.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};

/// How a runtime wants Amber's hook entries.
pub(crate) struct HookSpec {
    /// `amber hook <runtime> <event>`.
    pub runtime: &'static str,
    /// The events, as the runtime names them.
    pub events: &'static [&'static str],
    /// Each entry's timeout, in the runtime's unit (seconds, or Gemini's milliseconds).
    pub timeout: u64,
    /// The events of tool uses: their group matches every tool (`"*"`).
    pub tool_events: &'static [&'static str],
    /// A `name` on each entry (Gemini CLI lists hooks by name).
    pub name: Option<&'static str>,
}

/// The command a hook entry runs.
pub(crate) fn hook_command(amber: &Path, runtime: &str, event: &str) -> String {
    let exe = amber.display().to_string();
    let exe = if exe.contains(' ') { format!("\"{exe}\"") } else { exe };
    format!("{exe} hook {runtime} {event}")
}

fn is_ours(entry: &Value, runtime: &str) -> bool {
    let marker = format!(" hook {runtime} ");
    entry.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(&marker))
}

/// Adds Amber's hooks to a settings object (idempotent; an older install gains what it
/// lacks). Returns how many were added.
pub(crate) fn merge_hooks(settings: &mut Value, amber: &Path, spec: &HookSpec) -> anyhow::Result<usize> {
    let obj = settings.as_object_mut().context("the settings are not a JSON object")?;
    let hooks = obj.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks.as_object_mut().context("\"hooks\" in the settings is not an object")?;
    let mut added = 0;
    for event in spec.events {
        let groups = hooks.entry(*event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().with_context(|| format!("hooks.{event} is not an array"))?;
        let present = groups.iter().any(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(|h| is_ours(h, spec.runtime)))
        });
        if present {
            continue;
        }
        let mut entry = json!({ "type": "command", "command": hook_command(amber, spec.runtime, event), "timeout": spec.timeout });
        if let Some(name) = spec.name {
            entry["name"] = json!(name);
        }
        let mut group = json!({ "hooks": [entry] });
        if spec.tool_events.contains(event) {
            group["matcher"] = json!("*");
        }
        groups.push(group);
        added += 1;
    }
    Ok(added)
}

/// Removes exactly Amber's hooks (and the groups and events they leave empty). Returns
/// how many were removed.
pub(crate) fn remove_hooks(settings: &mut Value, runtime: &str) -> usize {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return 0 };
    let mut removed = 0;
    for groups in hooks.values_mut() {
        let Some(groups) = groups.as_array_mut() else { continue };
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| !is_ours(h, runtime));
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

/// An executable named `name` on the PATH.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The person's home folder.
pub(crate) fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).context("HOME is not set")
}

/// Reads, edits and writes a settings file, keeping a backup of the old one. Returns the
/// edit's count and the backup path.
pub(crate) fn edit_settings(
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
