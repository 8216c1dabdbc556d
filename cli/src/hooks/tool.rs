//! A tool use as the hooks see it: its text for capture (the tool, what it was given,
//! what came of it), whether it is Amber's own (never captured again), whether it wrote
//! files (captured when it ran, its path noted as the agent's).

use serde_json::Value;

use super::transcript::field;

/// Longest tool output sent for capture (characters); longer ones are cut.
const MAX_TOOL_TEXT: usize = 8000;

/// A tool use, read from a payload in Claude Code's shape (`Runtime::tool_payload`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolUse {
    /// The tool's name (Claude Code's for its like: Bash, Read, Write, Edit).
    pub name: String,
    /// Its text for capture: `<tool>: <what>` then the output ([`tool_text`]).
    pub text: String,
    /// It failed.
    pub failed: bool,
    /// Amber's own tool or command: its output is what Amber served.
    pub own: bool,
    /// It wrote files: what it wrote is captured now (the transcript keeps only the call).
    pub capture: bool,
}

impl ToolUse {
    /// The tool use of a Claude-shaped payload; None when it carries no result.
    pub(crate) fn of(payload: &Value) -> Option<ToolUse> {
        let name = field(payload, "tool_name").unwrap_or("tool").to_string();
        let command = payload.pointer("/tool_input/command").and_then(Value::as_str).unwrap_or("");
        let own = is_ambers_tool(&name) || (name == "Bash" && runs_amber(command));
        let failed = field(payload, "error").is_some();
        let capture = writes_files(&name);
        let text = tool_text(payload)?;
        Some(ToolUse { name, text, failed, own, capture })
    }
}

/// True for a tool that writes files (Edit, MultiEdit, Write, NotebookEdit): what it
/// wrote is in its input, which the transcript's text leaves out, so the PostToolUse hook
/// captures it when it runs and the transcript keeps only the call. Every other tool's
/// output is in the transcript, filed at each Stop, and is not captured on its own.
pub(crate) fn writes_files(name: &str) -> bool {
    matches!(name, "Edit" | "MultiEdit" | "Write" | "NotebookEdit")
}

/// True for a tool of Amber's own MCP server (`mcp__amber__recall`, …): what it returns
/// is Amber's output, never captured again.
pub(crate) fn is_ambers_tool(name: &str) -> bool {
    name.starts_with("mcp__amber__")
}

/// True for a Bash command that runs Amber's own command line (`amber recall …`,
/// `/path/to/amber get …`): its output is Amber's, never captured again.
pub(crate) fn runs_amber(command: &str) -> bool {
    command.split(['&', '|', ';', '\n']).any(|part| {
        let first = part.split_whitespace().find(|w| !w.contains('='));
        first.is_some_and(|w| matches!(w.rsplit('/').next(), Some("amber" | "amberd")))
    })
}

/// Text of a tool call and its result, for capture: `<tool>: <what>` then the output.
/// Read gives the file's content, Edit and Write what was written (not the whole old
/// file Claude Code sends along), Grep and Glob the files or lines found; a failed tool
/// (PostToolUseFailure) its error.
pub(crate) fn tool_text(payload: &Value) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
