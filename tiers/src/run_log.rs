//! What a session keeps to be recorded as a run (see [`crate::session_run`]): its
//! opening prompt, a trace of its tool uses, the advice it was given, the runs recorded.

use amber_core::{Millis, Scope};
use serde::{Deserialize, Serialize};

/// The most tool uses a run's trace lists (the rest are counted).
pub const MAX_TRACE_LINES: usize = 90;
/// The most characters of one trace line.
pub const MAX_LINE_CHARS: usize = 200;

/// A note a session was given by `get_advice`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviceGiven {
    /// The note's scope.
    pub scope: Scope,
    /// Its situation.
    pub situation: String,
    /// Its version.
    pub version: u32,
    /// When.
    pub at: Millis,
    /// The parts moments re-read since (`pitfalls`, `steps`), each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reread: Vec<String>,
}

/// What makes a session a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunLog {
    /// True when the client asked for the session to be recorded as a run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on: bool,
    /// The opening prompt, redacted (at most [`amber_core::MAX_TASK_CHARS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Prompts seen (the first is the opening prompt).
    #[serde(default)]
    pub prompts: u64,
    /// The tool uses since the last run, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<String>,
    /// Tool uses since the last run.
    #[serde(default)]
    pub tools: u64,
    /// Of those, failed ones.
    #[serde(default)]
    pub failed: u64,
    /// The notes `get_advice` gave the session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<AdviceGiven>,
    /// When the session's current run began (0: with the session): what came before is
    /// in its earlier runs. The trace, tool counts, servings, reports and advice since
    /// then make the current run.
    #[serde(default)]
    pub since: Millis,
    /// The runs recorded, oldest first (the last one is `open`'s when there is one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// The current run as last recorded: each end of the session rewrites it with what
    /// came since, until a reward closes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenRun>,
}

/// The run a session records at its ends, as last recorded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OpenRun {
    /// Its id.
    pub id: String,
    /// When it was last recorded.
    pub at: Millis,
    /// What it held then (`crate::session_run::digest`).
    pub digest: String,
    /// The trace lines it held then.
    pub lines: usize,
    /// The tool uses it counted then.
    pub tools: u64,
    /// Of those, the failed ones.
    pub failed: u64,
}

impl RunLog {
    /// True when there is nothing to keep (serialisation skips it).
    pub fn is_off(&self) -> bool {
        *self == RunLog::default()
    }

    /// Notes a prompt; true when it is the session's opening prompt (its task).
    pub fn note_prompt(&mut self, prompt: &str) -> bool {
        let prompt = prompt.trim();
        if self.task.is_some() || prompt.is_empty() {
            return false;
        }
        let cut: String = prompt.chars().take(amber_core::MAX_TASK_CHARS).collect();
        self.task = Some(crate::redact::redact(&cut).0);
        true
    }

    /// Notes a tool use from its event text (`Tool: what`, then its output, or
    /// `[failed]` and the error), when the session is a run.
    pub fn note_tool(&mut self, text: &str) {
        if !self.on {
            return;
        }
        self.tools += 1;
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let head = lines.next().unwrap_or("(a tool use)");
        let failed = lines.next() == Some("[failed]");
        let mut line: String = head.chars().take(MAX_LINE_CHARS).collect();
        if failed {
            self.failed += 1;
            // Claude Code's Bash error starts `Exit code N`: the code goes in brackets,
            // the first line that says what went wrong after it.
            let mut err = lines.next().unwrap_or("(no message)");
            let mut code = String::new();
            if let Some(n) = err.strip_prefix("Exit code ").filter(|n| n.parse::<i64>().is_ok()) {
                code = format!(" (exit {n})");
                err = lines.next().unwrap_or("(no message)");
            }
            let err: String = err.chars().take(MAX_LINE_CHARS / 2).collect();
            line = format!("{line} → failed{code}: {err}");
        }
        if self.trace.len() < MAX_TRACE_LINES {
            self.trace.push(crate::redact::redact(&line).0);
        }
    }

    /// Which of the session's runs the current one is (0 the first).
    pub fn part(&self) -> u32 {
        (self.runs.len() - usize::from(self.open.is_some())) as u32
    }

    /// Notes that the current run was recorded (or rewritten) as `id`, holding what
    /// `digest` says, at `now`; the session's next end rewrites it with what came since.
    pub fn recorded(&mut self, id: String, digest: String, now: Millis) {
        if self.open.as_ref().is_none_or(|o| o.id != id) {
            self.runs.push(id.clone());
        }
        let (lines, tools, failed) = (self.trace.len(), self.tools, self.failed);
        self.open = Some(OpenRun { id, at: now, digest, lines, tools, failed });
    }

    /// Closes the current run as it was last recorded (it was rewarded since): what came
    /// after goes to the session's next run.
    pub fn close(&mut self) {
        let Some(o) = self.open.take() else { return };
        self.trace.drain(..o.lines.min(self.trace.len()));
        self.tools = self.tools.saturating_sub(o.tools);
        self.failed = self.failed.saturating_sub(o.failed);
        self.since = o.at;
    }
}
