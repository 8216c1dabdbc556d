//! What every runtime's transcript reader shares: how a tool result is kept, and how
//! Amber's own checkpoint is known when a runtime sends it back as a turn.

use serde_json::Value;

/// A string field of a JSON object.
pub(crate) fn field<'a>(p: &'a Value, k: &str) -> Option<&'a str> {
    p.get(k).and_then(Value::as_str)
}

/// A tool result as the transcript keeps it: whole up to 2,000 characters, else its
/// first 1,500 and last 500 (an error's last lines are often what matters).
pub(crate) fn result_text(text: &str) -> String {
    const HEAD: usize = 1500;
    const TAIL: usize = 500;
    let n = text.chars().count();
    if n <= HEAD + TAIL {
        return text.to_string();
    }
    let head: String = text.chars().take(HEAD).collect();
    let tail: String = text.chars().skip(n - TAIL).collect();
    format!("{head}\n[… {} characters …]\n{tail}", n - HEAD - TAIL)
}

/// True for a turn that carries Amber's own stop answer back to the model: the
/// checkpoint, or the steps of the advice it was given (Claude Code sends a Stop hook's
/// text as `Stop hook feedback: …` or `Stop hook additional context: …`, Codex as a
/// `<hook_prompt>`, Gemini CLI as a new prompt).
pub(crate) fn is_ambers_feedback(text: &str) -> bool {
    text.contains("Amber checkpoint:") || text.contains(DONE_STEPS)
}

/// How the stop's answer ends when it carries only the advice's steps.
pub(crate) const DONE_STEPS: &str = "Before you finish, check the work against these steps.";
