//! Claude Code: its side of the hooks (`amber hook claude-code <event>`: SessionStart,
//! UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop, SessionEnd; its transcript
//! format; its answers), and `amber install|uninstall claude-code` (its settings.json,
//! its MCP server registered user-wide).
//!
//! Output follows Claude Code's hook output format: for SessionStart, UserPromptSubmit
//! and PostToolUseFailure `{"hookSpecificOutput": {"hookEventName": <event>,
//! "additionalContext": <text>}}` on stdout with exit 0; for Stop, the checkpoint's
//! answer in the form measured for the running version ([`ClaudeCode::go_on`]).

use serde_json::json;

use crate::hooks::{Event, Runtime};

mod install;
mod register;
pub mod setup;
mod transcript;

pub(crate) use install::{EVENTS, edit_settings, install, settings_path, uninstall};

/// The agent name of Claude Code's sessions (their ids are `k-claude-code-<session_id>`).
pub(crate) const AGENT: &str = crate::mcp::CLAUDE_CODE_AGENT;

/// Claude Code's adapter.
pub(crate) struct ClaudeCode;

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

impl Runtime for ClaudeCode {
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
            "PostToolUse" | "PostToolUseFailure" => Event::Tool,
            "Stop" => Event::Stop,
            "SessionEnd" => Event::End,
            _ => return None,
        })
    }

    fn transcript_text(&self, raw: &str) -> String {
        transcript::transcript_text(raw)
    }

    fn last_message(&self, raw: &str) -> Option<String> {
        transcript::last_assistant_text(raw)
    }

    /// As `hookSpecificOutput.additionalContext` where Claude Code was measured to take it
    /// (it goes on, and the model reads the text once, as `Stop hook additional context:`,
    /// live and in a resumed session); `{"decision": "block", "reason"}`, the documented
    /// form, elsewhere (Claude Code also keeps it as a "blocking error", which 2.1.332
    /// sends the model beside the feedback and 2.1.197 in a resumed session's history:
    /// twice).
    fn go_on(&self, reason: &str) -> String {
        match claude_code_version().is_some_and(|v| v >= CONTEXT_AT_STOP) {
            true => self.context("Stop", reason),
            false => json!({ "decision": "block", "reason": reason }).to_string(),
        }
    }
}
