//! `amber install|uninstall claude-code`: Amber's entries in Claude Code's settings.json,
//! merged in and removed exactly, with a backup of the old file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};

pub(crate) use crate::hooks::settings::edit_settings;
use crate::hooks::settings::{self, HookSpec};

/// The events `amber hook claude-code` answers.
pub const EVENTS: &[&str] =
    &["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"];

/// How Claude Code takes Amber's hooks (timeouts in seconds).
pub(crate) const SPEC: HookSpec = HookSpec {
    runtime: "claude-code",
    events: EVENTS,
    timeout: 10,
    tool_events: &["PostToolUse", "PostToolUseFailure"],
    name: None,
};

/// Adds Amber's hooks to a settings object (idempotent). Returns how many were added.
pub fn merge_hooks(settings: &mut Value, amber: &Path) -> anyhow::Result<usize> {
    settings::merge_hooks(settings, amber, &SPEC)
}

/// Removes exactly Amber's hooks. Returns how many were removed.
pub fn remove_hooks(settings: &mut Value) -> usize {
    settings::remove_hooks(settings, SPEC.runtime)
}

/// The permission rules that let a Claude Code session use Amber's agent-facing MCP
/// tools (`permissions.allow`, Claude Code's documented rule form `mcp__<server>__<tool>`,
/// for the server registered as `amber`): without them a `-p` run is denied the tools,
/// and the checkpoint's takeaway can never be filed.
pub fn permission_rules() -> Vec<String> {
    crate::mcp::agent_tools().map(|t| format!("mcp__amber__{t}")).collect()
}

/// Adds Amber's permission rules to `permissions.allow` (idempotent). Returns how many
/// were added.
pub fn merge_permissions(settings: &mut Value) -> anyhow::Result<usize> {
    let obj = settings.as_object_mut().context("settings.json is not a JSON object")?;
    let perms = obj.entry("permissions").or_insert_with(|| json!({}));
    let perms = perms.as_object_mut().context("\"permissions\" in settings.json is not an object")?;
    let allow = perms.entry("allow").or_insert_with(|| json!([]));
    let allow = allow.as_array_mut().context("permissions.allow in settings.json is not an array")?;
    let mut added = 0;
    for rule in permission_rules() {
        if !allow.iter().any(|r| r.as_str() == Some(rule.as_str())) {
            allow.push(json!(rule));
            added += 1;
        }
    }
    Ok(added)
}

/// Adds Amber's hooks and permission rules (idempotent; an older install is upgraded).
/// Returns how many entries were added.
pub fn install(settings: &mut Value, amber: &Path) -> anyhow::Result<usize> {
    Ok(merge_hooks(settings, amber)? + merge_permissions(settings)?)
}

/// Removes exactly Amber's hooks and permission rules. Returns how many were removed.
pub fn uninstall(settings: &mut Value) -> usize {
    let mut removed = remove_hooks(settings);
    let rules = permission_rules();
    if let Some(perms) = settings.get_mut("permissions").and_then(Value::as_object_mut) {
        if let Some(allow) = perms.get_mut("allow").and_then(Value::as_array_mut) {
            let before = allow.len();
            allow.retain(|r| r.as_str().is_none_or(|r| !rules.iter().any(|x| x == r)));
            removed += before - allow.len();
            if allow.is_empty() {
                perms.remove("allow");
            }
        }
        if perms.is_empty()
            && let Some(o) = settings.as_object_mut()
        {
            o.remove("permissions");
        }
    }
    removed
}

/// The settings file: `<cwd>/.claude/settings.json` for a project, else
/// `~/.claude/settings.json`.
pub fn settings_path(project: bool) -> anyhow::Result<PathBuf> {
    if project {
        Ok(std::env::current_dir()?.join(".claude").join("settings.json"))
    } else {
        Ok(settings::home()?.join(".claude").join("settings.json"))
    }
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
        assert_eq!(merge_hooks(&mut s, amber).unwrap(), EVENTS.len());
        assert_eq!(merge_hooks(&mut s, amber).unwrap(), 0, "installing twice adds nothing");
        assert_eq!(s["model"], "opus");
        assert_eq!(s["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            s["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "/opt/amber/bin/amber hook claude-code UserPromptSubmit"
        );
        assert_eq!(remove_hooks(&mut s), EVENTS.len());
        assert_eq!(s, original, "uninstall restores the settings exactly");
        // With the permission rules: the agent-facing tools are allowed, the user's own
        // rules stay, and uninstall takes exactly Amber's away.
        let mut with_rules = original.clone();
        with_rules["permissions"] = json!({ "allow": ["Bash(npm test)"] });
        let before = with_rules.clone();
        let n = install(&mut with_rules, amber).unwrap();
        assert_eq!(n, EVENTS.len() + crate::mcp::agent_tools().count());
        let allow = with_rules["permissions"]["allow"].as_array().unwrap();
        assert!(allow.contains(&json!("mcp__amber__remember")), "{allow:?}");
        assert!(allow.contains(&json!("mcp__amber__recall")), "{allow:?}");
        assert!(
            !allow.contains(&json!("mcp__amber__forget")),
            "person-side tools are not allowed: {allow:?}"
        );
        assert_eq!(install(&mut with_rules, amber).unwrap(), 0, "installing twice adds nothing");
        assert_eq!(uninstall(&mut with_rules), n);
        assert_eq!(with_rules, before);
        let mut bare = json!({});
        merge_hooks(&mut bare, amber).unwrap();
        remove_hooks(&mut bare);
        assert_eq!(bare, json!({}));
        assert!(merge_hooks(&mut json!([1]), amber).is_err());
        // An install made by an older version (four events, no SessionEnd): installing
        // again adds the missing ones and leaves the rest alone.
        let mut old = json!({ "hooks": {} });
        for e in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"] {
            old["hooks"][e] = json!([{ "hooks": [{ "type": "command", "command": settings::hook_command(amber, "claude-code", e), "timeout": 10 }] }]);
        }
        assert_eq!(
            install(&mut old, amber).unwrap(),
            2 + crate::mcp::agent_tools().count(),
            "an old install gains the permission rules"
        );
        assert_eq!(
            old["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
            "/opt/amber/bin/amber hook claude-code SessionEnd"
        );
        assert_eq!(old["hooks"]["Stop"].as_array().unwrap().len(), 1);
    }
}
