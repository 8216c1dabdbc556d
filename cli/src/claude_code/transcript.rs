//! Reading a Claude Code transcript (JSONL, internal to Claude Code): the text of its
//! messages, for filing at a stop and at SessionEnd, and the last assistant message, for
//! the checkpoint.

use serde_json::Value;

use crate::hooks::{field, is_ambers_feedback, is_ambers_tool, result_text, runs_amber, writes_files};

/// The text of the messages in a Claude Code transcript (JSONL: one object per line,
/// `type` `user` or `assistant`, `message.content` a string or content blocks), in
/// order: `user: ...` / `assistant: ...`, tool calls and results in brackets. Lines that
/// are not messages or do not parse are skipped, and so is Amber's own output: its MCP
/// tools' calls and results, `amber` commands run through Bash and their results, and the
/// checkpoint's feedback (Amber never stores what it served). A file-writing tool's
/// result is left out unless it failed: what it wrote was captured when it ran.
pub fn transcript_text(jsonl: &str) -> String {
    let mut out = String::new();
    // tool_use ids of Amber's own calls, whose results are skipped too.
    let mut own: std::collections::HashSet<String> = std::collections::HashSet::new();
    // tool_use ids of file writes, captured when they ran.
    let mut writes: std::collections::HashSet<String> = std::collections::HashSet::new();
    for line in jsonl.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let role = match field(&v, "type") {
            Some(t @ ("user" | "assistant")) => t,
            _ => continue,
        };
        if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(content) = v.get("message").and_then(|m| m.get("content")) else { continue };
        let mut parts: Vec<String> = Vec::new();
        match content {
            Value::String(t) if is_ambers_feedback(t) => {}
            Value::String(t) => parts.push(t.clone()),
            Value::Array(blocks) => {
                for b in blocks {
                    match field(b, "type") {
                        Some("text") => parts
                            .extend(field(b, "text").filter(|t| !is_ambers_feedback(t)).map(str::to_string)),
                        Some("tool_use") => {
                            let input = b.get("input").cloned().unwrap_or(Value::Null);
                            let name = field(b, "name").unwrap_or("tool");
                            let command = input.get("command").and_then(Value::as_str).unwrap_or("");
                            if is_ambers_tool(name) || (name == "Bash" && runs_amber(command)) {
                                own.extend(field(b, "id").map(str::to_string));
                                continue;
                            }
                            if writes_files(name) {
                                writes.extend(field(b, "id").map(str::to_string));
                            }
                            let what = ["command", "file_path", "path", "pattern", "query", "url"]
                                .iter()
                                .find_map(|k| input.get(*k).and_then(Value::as_str).map(str::to_string))
                                .unwrap_or_else(|| input.to_string());
                            parts.push(format!("[tool {name}: {what}]"));
                        }
                        Some("tool_result") => {
                            let id = field(b, "tool_use_id").unwrap_or("");
                            let failed = b.get("is_error").and_then(Value::as_bool) == Some(true);
                            if own.contains(id) || (writes.contains(id) && !failed) {
                                continue;
                            }
                            let text = match b.get("content") {
                                Some(Value::String(t)) => t.clone(),
                                Some(Value::Array(xs)) => {
                                    xs.iter().filter_map(|x| field(x, "text")).collect::<Vec<_>>().join("\n")
                                }
                                _ => String::new(),
                            };
                            parts.push(format!("[tool result]\n{}", result_text(&text)));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        let text = parts.join("\n");
        if !text.trim().is_empty() {
            out.push_str(&format!("{role}: {}\n\n", text.trim_end()));
        }
    }
    out
}

/// The last assistant message's text in a transcript, if any.
pub(crate) fn last_assistant_text(jsonl: &str) -> Option<String> {
    jsonl.lines().rev().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        (field(&v, "type") == Some("assistant")).then_some(())?;
        let t = transcript_text(line);
        let t = t.strip_prefix("assistant: ")?.trim().to_string();
        (!t.is_empty() && !t.starts_with("[tool ")).then_some(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Value) -> String {
        v.to_string() + "\n"
    }

    #[test]
    fn a_writes_result_is_left_out_unless_it_failed_and_long_results_keep_their_end() {
        let long = format!(
            "Traceback (most recent call last):\n{}ValueError: bad ledger id",
            "  frame\n".repeat(400)
        );
        let mut j = String::new();
        j += &line(serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "w1", "name": "Edit", "input": {"file_path": "/p/a.rs"}},
            {"type": "tool_use", "id": "w2", "name": "Write", "input": {"file_path": "/p/b.rs"}},
            {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "pytest"}}]}}));
        j += &line(serde_json::json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "w1", "content": "The file /p/a.rs has been updated."},
            {"type": "tool_result", "tool_use_id": "w2", "content": "String not found in file", "is_error": true},
            {"type": "tool_result", "tool_use_id": "b1", "content": long}]}}));
        let t = transcript_text(&j);
        assert!(t.contains("[tool Edit: /p/a.rs]") && !t.contains("has been updated"), "{t}");
        assert!(t.contains("String not found in file"), "a failed write's error is kept: {t}");
        assert!(
            t.contains("Traceback (most recent call last):") && t.contains("ValueError: bad ledger id"),
            "{t}"
        );
        assert!(t.contains("characters …]") && t.chars().count() < 2300, "{}", t.chars().count());
        assert!(writes_files("MultiEdit") && writes_files("NotebookEdit") && !writes_files("Bash"));
    }
}
