//! Reading a Codex rollout (JSONL, internal to Codex): `response_item` lines whose
//! `payload` is a `message` (role `user`, `assistant` or `developer`), a `function_call`
//! (`name`, `namespace` for an MCP server's tool, `arguments` as JSON text, `call_id`) or
//! a `function_call_output` (`call_id`, `output`).
//!
//! Left out, as Amber never stores its own output nor Codex's scaffolding: developer
//! messages (Codex's instructions and every hook's context: Amber's briefing among them),
//! user turns that are Codex's environment context or a hook's prompt (Amber's checkpoint
//! comes back as `<hook_prompt …>`), Amber's MCP tools and `amber` commands with their
//! output, and a file write's output (what it wrote was captured when it ran).

use std::collections::HashSet;

use serde_json::Value;

use crate::hooks::{field, is_ambers_feedback, result_text, runs_amber};

/// The `payload` of a `response_item` line.
fn item(line: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(line).ok()?;
    (field(&v, "type")? == "response_item").then(|| v.get("payload").cloned())?
}

/// A message's text: its `input_text` and `output_text` parts.
fn message_text(p: &Value) -> String {
    match p.get("content") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|x| field(x, "text")).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// Codex's own user turns: its environment context, a hook's prompt, Amber's checkpoint.
fn scaffolding(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<environment_context>")
        || t.starts_with("<hook_prompt")
        || t.starts_with("<user_instructions>")
        || is_ambers_feedback(text)
}

/// The text of a rollout's messages, in order: `user: …` / `assistant: …`, tool calls and
/// results in brackets.
pub(super) fn transcript_text(jsonl: &str) -> String {
    let mut out = String::new();
    let mut own: HashSet<String> = HashSet::new();
    let mut writes: HashSet<String> = HashSet::new();
    for line in jsonl.lines() {
        let Some(p) = item(line) else { continue };
        let (role, text) = match field(&p, "type") {
            Some("message") => match field(&p, "role") {
                Some(r @ ("user" | "assistant")) => {
                    let t = message_text(&p);
                    if r == "user" && scaffolding(&t) {
                        continue;
                    }
                    (r, t)
                }
                _ => continue,
            },
            Some("function_call") => {
                let name = field(&p, "name").unwrap_or("tool");
                let namespace = field(&p, "namespace").unwrap_or("");
                let args: Value =
                    field(&p, "arguments").and_then(|a| serde_json::from_str(a).ok()).unwrap_or(Value::Null);
                let command = args.get("cmd").or(args.get("command")).and_then(Value::as_str).unwrap_or("");
                let id = field(&p, "call_id").unwrap_or("").to_string();
                if namespace == "mcp__amber" || (name == "exec_command" && runs_amber(command)) {
                    own.insert(id);
                    continue;
                }
                if name == "apply_patch" {
                    writes.insert(id);
                }
                let what = ["cmd", "command", "file_path", "path", "query"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| args.to_string());
                let what: String = what.chars().take(500).collect();
                let shown =
                    if namespace.is_empty() { name.to_string() } else { format!("{namespace}__{name}") };
                ("assistant", format!("[tool {shown}: {what}]"))
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let id = field(&p, "call_id").unwrap_or("");
                if own.contains(id) || writes.contains(id) {
                    continue;
                }
                let text = match p.get("output") {
                    Some(Value::String(t)) => t.clone(),
                    Some(other) => other.to_string(),
                    None => continue,
                };
                ("user", format!("[tool result]\n{}", result_text(&text)))
            }
            _ => continue,
        };
        if !text.trim().is_empty() {
            out.push_str(&format!("{role}: {}\n\n", text.trim_end()));
        }
    }
    out
}

/// The last assistant message's text in a rollout, if any.
pub(super) fn last_assistant_text(jsonl: &str) -> Option<String> {
    jsonl.lines().rev().find_map(|line| {
        let p = item(line)?;
        (field(&p, "type") == Some("message") && field(&p, "role") == Some("assistant")).then_some(())?;
        let t = message_text(&p).trim().to_string();
        (!t.is_empty()).then_some(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(payload: Value) -> String {
        json!({ "timestamp": "2026-12-06T22:04:50Z", "type": "response_item", "payload": payload })
            .to_string()
            + "\n"
    }

    #[test]
    fn a_rollout_keeps_the_conversation_and_leaves_out_ambers_output_and_codexs_scaffolding() {
        let mut j = String::new();
        j += &(json!({ "type": "session_meta", "payload": { "id": "s1" } }).to_string() + "\n");
        j += &line(
            json!({ "type": "message", "role": "developer", "content": [{ "type": "input_text", "text": "Amber briefing: the staging port is 6432" }] }),
        );
        j += &line(
            json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>" }] }),
        );
        j += &line(
            json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "why do the ledger tests fail" }] }),
        );
        j += &line(
            json!({ "type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"cargo test\"}", "call_id": "c1" }),
        );
        j += &line(
            json!({ "type": "function_call_output", "call_id": "c1", "output": "test ledger ... FAILED: port 5432 refused" }),
        );
        j += &line(
            json!({ "type": "function_call", "name": "recall", "namespace": "mcp__amber", "arguments": "{\"query\": \"ledger\"}", "call_id": "c2" }),
        );
        j += &line(
            json!({ "type": "function_call_output", "call_id": "c2", "output": "[a memory Amber served]" }),
        );
        j += &line(
            json!({ "type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"amber get 1a2b\"}", "call_id": "c3" }),
        );
        j += &line(
            json!({ "type": "function_call_output", "call_id": "c3", "output": "[amber get's output]" }),
        );
        j += &line(
            json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "The tests use port 5432; staging is 6432." }] }),
        );
        j += &line(
            json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "<hook_prompt hook_run_id=\"stop:1\">Amber checkpoint: file a takeaway</hook_prompt>" }] }),
        );
        let t = transcript_text(&j);
        assert!(t.contains("user: why do the ledger tests fail"), "{t}");
        assert!(t.contains("[tool exec_command: cargo test]") && t.contains("port 5432 refused"), "{t}");
        assert!(t.contains("assistant: The tests use port 5432; staging is 6432."), "{t}");
        for gone in [
            "Amber briefing",
            "environment_context",
            "a memory Amber served",
            "amber get",
            "Amber checkpoint",
        ] {
            assert!(!t.contains(gone), "{gone} must be left out:\n{t}");
        }
        assert_eq!(last_assistant_text(&j).as_deref(), Some("The tests use port 5432; staging is 6432."));
    }
}
