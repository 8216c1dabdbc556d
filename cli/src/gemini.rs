//! Gemini CLI: its side of the hooks (`amber hook gemini <event>`: SessionStart,
//! BeforeAgent, AfterTool, AfterAgent, SessionEnd; its chat transcript; its tool names),
//! and `amber install|uninstall gemini` (hooks and Amber's MCP server in its
//! settings.json). Measured with Gemini CLI 0.61.0 (tests/gemini).
//!
//! What Gemini does with the answers: `additionalContext` is HTML-escaped and wrapped in
//! `<hook_context>` (SessionStart's is put before the first prompt in a headless run,
//! BeforeAgent's after each prompt, AfterTool's after the tool's result);
//! AfterAgent's `{"decision": "block", "reason"}` sends the reason as a new prompt (and
//! BeforeAgent fires for it: Amber knows its own text and leaves it alone). Its
//! `stop_hook_active` stays false when the continuation calls a tool: the checkpoint
//! blocks once per session by the daemon's own count, never by that flag.

use serde_json::{Value, json};

use crate::hooks::{Event, Runtime, is_ambers_feedback};

pub mod install;
mod transcript;

use transcript::without_hook_context;

/// The agent name of Gemini CLI's sessions.
pub(crate) const AGENT: &str = "gemini";

/// The events `amber hook gemini` answers.
pub const EVENTS: &[&str] = &["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"];

/// Gemini CLI's adapter.
pub(crate) struct Gemini;

/// Gemini's tools that Claude Code has a like of, by Claude Code's name.
fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "run_shell_command" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "replace" => "Edit",
        "glob" => "Glob",
        "search_file_content" | "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "google_web_search" => "WebSearch",
        _ => return None,
    })
}

/// The text of a tool's `llmContent`: a string, or parts with `text`.
fn llm_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        ),
        Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

impl Runtime for Gemini {
    fn name(&self) -> &'static str {
        AGENT
    }

    fn events(&self) -> &'static [&'static str] {
        EVENTS
    }

    fn event(&self, event: &str) -> Option<Event> {
        Some(match event {
            "SessionStart" => Event::Start,
            "BeforeAgent" => Event::Prompt,
            "AfterTool" => Event::Tool,
            "AfterAgent" => Event::Stop,
            "SessionEnd" => Event::End,
            _ => return None,
        })
    }

    /// A resumed Gemini session is sent its history without the first prompt, which
    /// carried the briefing (measured with 0.61.0): it is briefed again.
    fn rebrief(&self, source: &str) -> bool {
        matches!(source, "resume" | "compact" | "clear")
    }

    fn prompt(&self, payload: &Value) -> Option<String> {
        let p = without_hook_context(payload.get("prompt").and_then(Value::as_str)?);
        (!is_ambers_feedback(p)).then(|| p.to_string())
    }

    fn tool_payload(&self, payload: &Value) -> Value {
        let name = payload.get("tool_name").and_then(Value::as_str).unwrap_or("tool");
        let name = match name.strip_prefix("mcp_amber_") {
            Some(tool) => format!("mcp__amber__{tool}"),
            None => claude_name(name).map_or_else(|| name.to_string(), str::to_string),
        };
        let mut input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
        if let Some(o) = input.as_object_mut()
            && !o.contains_key("file_path")
            && let Some(p) = o.get("absolute_path").cloned()
        {
            o.insert("file_path".into(), p);
        }
        let response = payload.get("tool_response").cloned().unwrap_or(Value::Null);
        let mut p = json!({ "tool_name": name, "tool_input": input });
        let error = response.get("error").filter(|e| !e.is_null()).map(|e| match e {
            Value::String(s) => s.clone(),
            other => {
                other.get("message").and_then(Value::as_str).map_or_else(|| other.to_string(), str::to_string)
            }
        });
        match error {
            Some(e) => p["error"] = json!(e),
            // What a write wrote is in its input: its answer ("Successfully wrote …") is not.
            None if matches!(p["tool_name"].as_str(), Some("Write" | "Edit")) => {
                p["tool_response"] = json!({})
            }
            None => {
                let text = response.get("llmContent").and_then(llm_text).or_else(|| llm_text(&response));
                p["tool_response"] = json!(text.unwrap_or_else(|| response.to_string()));
            }
        }
        p
    }

    /// AfterAgent carries the turn's response as `prompt_response`.
    fn stop_message(&self, payload: &Value) -> Option<String> {
        payload.get("prompt_response").and_then(Value::as_str).map(str::to_string)
    }

    fn transcript_text(&self, raw: &str) -> String {
        transcript::transcript_text(raw)
    }

    fn last_message(&self, raw: &str) -> Option<String> {
        transcript::last_assistant_text(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::ToolUse;

    #[test]
    fn gemini_tools_read_as_their_claude_code_likes_and_ambers_own_are_known() {
        let shell = json!({
            "tool_name": "run_shell_command", "tool_input": { "command": "cargo test" },
            "tool_response": { "llmContent": "<untrusted_context>\nOutput: 1 failed\n</untrusted_context>", "returnDisplay": "1 failed" }
        });
        let t = ToolUse::of(&Gemini.tool_payload(&shell)).unwrap();
        assert_eq!(t.name, "Bash");
        assert!(t.text.starts_with("Bash: cargo test\n") && t.text.contains("1 failed"), "{}", t.text);
        let write = json!({ "tool_name": "write_file", "tool_input": { "file_path": "/p/notes.md", "content": "# Notes" },
                            "tool_response": { "llmContent": "Successfully wrote" } });
        let t = ToolUse::of(&Gemini.tool_payload(&write)).unwrap();
        assert_eq!((t.name.as_str(), t.capture), ("Write", true));
        assert_eq!(
            t.text, "Write: /p/notes.md\n# Notes",
            "the path first: the daemon notes it as the agent's"
        );
        let mcp = json!({ "tool_name": "mcp_amber_recall", "tool_input": { "query": "x" }, "tool_response": { "llmContent": [{ "text": "…" }] } });
        assert!(ToolUse::of(&Gemini.tool_payload(&mcp)).unwrap().own);
        let amber = json!({ "tool_name": "run_shell_command", "tool_input": { "command": "amber recall x" }, "tool_response": { "llmContent": "…" } });
        assert!(ToolUse::of(&Gemini.tool_payload(&amber)).unwrap().own);
        let failed = json!({ "tool_name": "read_file", "tool_input": { "absolute_path": "/p/missing" },
                             "tool_response": { "error": { "message": "File not found" } } });
        let t = ToolUse::of(&Gemini.tool_payload(&failed)).unwrap();
        assert!(
            t.failed && t.text.contains("File not found") && t.text.starts_with("Read: /p/missing"),
            "{}",
            t.text
        );
    }

    #[test]
    fn a_prompt_loses_the_hook_context_before_it_and_ambers_own_checkpoint_is_no_prompt() {
        let p = json!({ "prompt": "<hook_context>Amber briefing &lt;memory&gt;</hook_context>\n\nwhy do the ledger tests fail" });
        assert_eq!(Gemini.prompt(&p).as_deref(), Some("why do the ledger tests fail"));
        let own = json!({ "prompt": "Amber checkpoint: this session did real work (4 tool uses) and filed nothing" });
        assert_eq!(Gemini.prompt(&own), None);
    }
}
