//! Reading a Gemini CLI chat (JSONL, internal to Gemini CLI: a header line, message lines
//! `{"type": "user"|"gemini", "content": <text or parts>, "toolCalls": [...]}`, and `$set`
//! lines that update the header or set the first messages).
//!
//! Left out, as Amber never stores its own output nor Gemini's scaffolding: the
//! `<session_context>` Gemini opens with, every `<hook_context>` (Amber's briefing and
//! interjections among them), Amber's checkpoint sent back as a prompt, Amber's MCP tools
//! and `amber` commands with their output, and a file write's output (what it wrote was
//! captured when it ran).

use serde_json::Value;

use crate::hooks::{field, is_ambers_feedback, result_text, runs_amber};

/// A prompt without the `<hook_context>` blocks Gemini put before it (SessionStart's
/// context rides on the first prompt of a headless run).
pub(super) fn without_hook_context(prompt: &str) -> &str {
    let mut p = prompt.trim_start();
    while let Some(rest) = p.strip_prefix("<hook_context>") {
        match rest.find("</hook_context>") {
            Some(end) => p = rest[end + "</hook_context>".len()..].trim_start(),
            None => break,
        }
    }
    p
}

/// The message objects of one line, and whether they come from a `$set` (the history a
/// resumed session writes again) rather than a message line.
fn messages(line: &str) -> (Vec<Value>, bool) {
    let Ok(v) = serde_json::from_str::<Value>(line) else { return (Vec::new(), false) };
    if let Some(ms) = v.get("$set").and_then(|s| s.get("messages")).and_then(Value::as_array) {
        return (ms.clone(), true);
    }
    match field(&v, "type") {
        Some("user" | "gemini") => (vec![v], false),
        _ => (Vec::new(), false),
    }
}

/// The person's or the model's text, without Gemini's and Amber's own parts.
fn text(v: &Value) -> String {
    let parts: Vec<String> = match v.get("content") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ps)) => ps.iter().filter_map(|p| field(p, "text").map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    parts
        .into_iter()
        .map(|t| without_hook_context(&t).to_string())
        .filter(|t| !t.starts_with("<session_context>") && !is_ambers_feedback(t))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool call's result text.
fn result(call: &Value) -> String {
    call.get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/functionResponse/response"))
        .map(|r| match r.get("output").or(r.get("error")) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => r.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A chat's messages, each once: Gemini writes a message again, with the same `id`, when
/// its tool calls arrive (the later record stands), and a resumed session writes the whole
/// history again in a `$set` (which only adds what was not there: the text filed before
/// stays the same, so only what is new is filed).
fn chat(jsonl: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in jsonl.lines() {
        let (ms, history) = messages(line);
        for m in ms {
            match field(&m, "id").map(str::to_string) {
                Some(id) => match at.get(&id) {
                    Some(&i) if !history => out[i] = m,
                    Some(_) => {}
                    None => {
                        at.insert(id, out.len());
                        out.push(m);
                    }
                },
                None => out.push(m),
            }
        }
    }
    out
}

/// The text of a chat's messages, in order: `user: …` / `assistant: …`, tool calls and
/// results in brackets.
pub(super) fn transcript_text(jsonl: &str) -> String {
    let mut out = String::new();
    {
        for m in chat(jsonl) {
            let role = if field(&m, "type") == Some("user") { "user" } else { "assistant" };
            let mut parts = vec![text(&m)];
            for call in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                let name = field(call, "name").unwrap_or("tool");
                let args = call.get("args").cloned().unwrap_or(Value::Null);
                let command = args.get("command").and_then(Value::as_str).unwrap_or("");
                if name.starts_with("mcp_amber_") || (name == "run_shell_command" && runs_amber(command)) {
                    continue;
                }
                let what = ["command", "file_path", "absolute_path", "path", "pattern", "query", "url"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| args.to_string());
                parts.push(format!("[tool {name}: {}]", what.chars().take(500).collect::<String>()));
                let failed = field(call, "status").is_some_and(|s| s != "success");
                if matches!(name, "write_file" | "replace") && !failed {
                    continue;
                }
                parts.push(format!("[tool result]\n{}", result_text(&result(call))));
            }
            let t = parts.into_iter().filter(|p| !p.trim().is_empty()).collect::<Vec<_>>().join("\n");
            if !t.trim().is_empty() {
                out.push_str(&format!("{role}: {}\n\n", t.trim_end()));
            }
        }
    }
    out
}

/// The last model message's text, if any.
pub(super) fn last_assistant_text(jsonl: &str) -> Option<String> {
    chat(jsonl).into_iter().rev().find_map(|m| {
        (field(&m, "type") == Some("gemini")).then_some(())?;
        let t = text(&m).trim().to_string();
        (!t.is_empty()).then_some(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chat_keeps_the_conversation_and_leaves_out_ambers_output_and_geminis_scaffolding() {
        let lines = [
            json!({ "sessionId": "s1", "kind": "main" }),
            json!({ "$set": { "messages": [{ "type": "user", "content": [{ "text": "<session_context>\nThis is the Gemini CLI." }] }] } }),
            json!({ "type": "user", "content": [{ "text": "<hook_context>Amber briefing: staging is 6432</hook_context>\n\nwhy do the ledger tests fail" }, { "text": "<hook_context>Amber interjection</hook_context>" }] }),
            json!({ "id": "m1", "type": "gemini", "content": "Looking first." }),
            json!({ "id": "m1", "type": "gemini", "content": "Looking first.", "toolCalls": [
                { "name": "run_shell_command", "args": { "command": "cargo test" }, "status": "success",
                  "result": [{ "functionResponse": { "response": { "output": "port 5432 refused" } } }] },
                { "name": "mcp_amber_recall", "args": { "query": "ledger" }, "status": "success",
                  "result": [{ "functionResponse": { "response": { "output": "[a memory Amber served]" } } }] },
                { "name": "write_file", "args": { "file_path": "/p/notes.md", "content": "x" }, "status": "success",
                  "result": [{ "functionResponse": { "response": { "output": "Successfully wrote /p/notes.md" } } }] }] }),
            json!({ "type": "gemini", "content": "The tests use port 5432; staging is 6432." }),
            json!({ "type": "user", "content": [{ "text": "Amber checkpoint: file a takeaway" }] }),
            json!({ "$set": { "lastUpdated": "2026-12-06T21:53:15Z" } }),
        ];
        let j: String = lines.iter().map(|l| format!("{l}\n")).collect();
        // A resumed session appends the history again (the same ids).
        let mut rewritten = lines[4].clone();
        rewritten["content"] = json!("Looking first (as the resumed history has it).");
        let again = json!({ "$set": { "messages": [lines[3].clone(), rewritten] } });
        let j = format!("{j}{again}\n");
        let t = transcript_text(&j);
        assert!(
            t.contains("user: why do the ledger tests fail"),
            "the prompt Gemini glued the briefing to: {t}"
        );
        assert_eq!(t.matches("Looking first.").count(), 1, "each message once: {t}");
        assert!(t.contains("[tool run_shell_command: cargo test]") && t.contains("port 5432 refused"), "{t}");
        assert!(t.contains("[tool write_file: /p/notes.md]") && !t.contains("Successfully wrote"), "{t}");
        assert!(t.contains("assistant: The tests use port 5432; staging is 6432."), "{t}");
        for gone in [
            "session_context",
            "Amber briefing",
            "Amber interjection",
            "a memory Amber served",
            "Amber checkpoint",
        ] {
            assert!(!t.contains(gone), "{gone} must be left out:\n{t}");
        }
        assert_eq!(last_assistant_text(&j).as_deref(), Some("The tests use port 5432; staging is 6432."));
    }
}
