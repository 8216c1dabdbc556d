//! Codex CLI: its side of the hooks (`amber hook codex <event>`: SessionStart,
//! UserPromptSubmit, PostToolUse, Stop, SessionEnd, shaped like Claude Code's; its
//! rollout transcript; its answers), and `amber install|uninstall codex` (its hooks.json,
//! Amber's MCP server in its config.toml, the hooks trusted through Codex's own
//! app-server). Measured with Codex CLI 0.171.0 (tests/codex).
//!
//! What Codex does with the answers: `additionalContext` of SessionStart, UserPromptSubmit
//! and PostToolUse becomes a developer message of that text (cut in the middle past
//! 2,500 tokens); Stop's `{"decision": "block", "reason"}` goes on with the reason as a
//! `<hook_prompt>` user turn (Codex caps no loop: the checkpoint is once per session).

use serde_json::{Value, json};

use crate::hooks::{Event, Runtime};

pub mod install;
mod transcript;

/// The agent name of Codex's sessions.
pub(crate) const AGENT: &str = "codex";

/// The events `amber hook codex` answers.
pub const EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"];

/// Codex CLI's adapter.
pub(crate) struct Codex;

impl Runtime for Codex {
    fn name(&self) -> &'static str {
        AGENT
    }

    fn events(&self) -> &'static [&'static str] {
        EVENTS
    }

    fn event(&self, event: &str) -> Option<Event> {
        Some(match event {
            "SessionStart" => Event::Start,
            "UserPromptSubmit" => Event::Prompt,
            "PostToolUse" => Event::Tool,
            "Stop" => Event::Stop,
            "SessionEnd" => Event::End,
            _ => return None,
        })
    }

    /// Codex names its shell tool `Bash` and its MCP tools `mcp__<server>__<tool>`, as
    /// Claude Code does; a file edit is `apply_patch`, whose patch names the files: the
    /// first is the write's path (`Write` for a file it adds, `Edit` for one it changes).
    fn tool_payload(&self, payload: &Value) -> Value {
        let mut p = payload.clone();
        let name = payload.get("tool_name").and_then(Value::as_str).unwrap_or("");
        let patch = patch_text(payload.get("tool_input"));
        if let Some(patch) = patch.filter(|_| name == "apply_patch" || name.is_empty()) {
            let cwd = payload.get("cwd").and_then(Value::as_str).unwrap_or("/");
            if let Some((tool, path)) = patched_file(&patch) {
                let path = std::path::Path::new(cwd).join(path);
                p["tool_name"] = json!(tool);
                p["tool_input"] = json!({ "file_path": path, "content": patch, "new_string": patch });
                // What it wrote is the patch: Codex's answer ("Success. Updated …") is not.
                p["tool_response"] = json!({});
            }
        }
        p
    }

    fn transcript_text(&self, raw: &str) -> String {
        transcript::transcript_text(raw)
    }

    fn last_message(&self, raw: &str) -> Option<String> {
        transcript::last_assistant_text(raw)
    }
}

/// The patch an `apply_patch` call carries (its input is the patch, or holds it).
fn patch_text(input: Option<&Value>) -> Option<String> {
    match input? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => ["command", "input", "patch"].iter().find_map(|k| match o.get(*k)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(xs) => xs
                .iter()
                .filter_map(Value::as_str)
                .find(|s| s.contains("*** Begin Patch"))
                .map(str::to_string),
            _ => None,
        }),
        _ => None,
    }
    .filter(|s| s.contains("*** Begin Patch"))
}

/// The first file a patch writes, and how: `Write` (added) or `Edit` (updated).
fn patched_file(patch: &str) -> Option<(&'static str, &str)> {
    patch.lines().find_map(|l| {
        if let Some(p) = l.strip_prefix("*** Add File: ") {
            Some(("Write", p.trim()))
        } else {
            l.strip_prefix("*** Update File: ").map(|p| ("Edit", p.trim()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::ToolUse;

    #[test]
    fn a_patch_is_a_write_of_its_first_file_and_the_shell_is_bash() {
        let p = json!({
            "cwd": "/p", "tool_name": "apply_patch",
            "tool_input": { "command": "*** Begin Patch\n*** Update File: src/db.rs\n@@\n-x = 1\n+x = 2\n*** End Patch" },
            "tool_response": "Success. Updated the following files:\nM src/db.rs"
        });
        let t = ToolUse::of(&Codex.tool_payload(&p)).unwrap();
        assert_eq!(t.name, "Edit");
        assert!(t.capture && !t.own);
        assert!(t.text.starts_with("Edit: /p/src/db.rs\n"), "{}", t.text);
        assert!(t.text.contains("+x = 2"), "{}", t.text);
        let bash = json!({ "tool_name": "Bash", "tool_input": { "command": "amber recall x" }, "tool_response": "…" });
        assert!(ToolUse::of(&Codex.tool_payload(&bash)).unwrap().own, "Amber's own command");
        let mcp = json!({ "tool_name": "mcp__amber__recall", "tool_input": {}, "tool_response": { "content": [] } });
        assert!(ToolUse::of(&Codex.tool_payload(&mcp)).unwrap().own);
    }
}
