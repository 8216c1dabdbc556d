//! The interjection judge: asked only when a candidate memory's similarity to a session
//! event falls in the uncertain band below the gate. A judge that errs or runs past its
//! deadline counts as "no"; the session is never held up beyond the deadline.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which judge the daemon uses (`[judge]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeKind {
    /// No judge: the band stays silent.
    #[default]
    Off,
    /// A local cross-encoder reranker model, when one is installed.
    Reranker,
    /// An OpenAI-compatible chat endpoint (Ollama, llama.cpp's server, a hosted API).
    Openai,
}

/// Judge settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeConfig {
    /// `off` (default), `reranker` or `openai`.
    pub kind: JudgeKind,
    /// How long one judgement may take before it counts as "no" (default 1,500 ms).
    pub timeout_ms: u64,
    /// OpenAI-compatible: the base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: Option<String>,
    /// OpenAI-compatible: the model name.
    pub model: Option<String>,
    /// OpenAI-compatible: the name of the environment variable holding the API key (the
    /// key itself is never written in the config).
    pub api_key_env: Option<String>,
    /// Reranker: the score at or above which the answer is "yes".
    pub reranker_threshold: f32,
}

impl Default for JudgeConfig {
    fn default() -> JudgeConfig {
        JudgeConfig {
            kind: JudgeKind::Off,
            timeout_ms: 1500,
            url: None,
            model: None,
            api_key_env: None,
            reranker_threshold: 0.5,
        }
    }
}

/// What a judge said about one (event, memory) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    /// The memory helps with the event.
    Yes {
        /// The judge's own score, when it has one.
        score: Option<f32>,
    },
    /// It does not.
    No {
        /// The judge's own score, when it has one.
        score: Option<f32>,
    },
    /// The judge failed or ran out of time: counts as no.
    Failed {
        /// Why, for the decision log.
        reason: String,
    },
}

impl Verdict {
    /// True only for a yes.
    pub fn is_yes(&self) -> bool {
        matches!(self, Verdict::Yes { .. })
    }
}

/// A judge of whether a memory should be interjected into a session event.
pub trait Judge: Send + Sync {
    /// A short name for logs and decision records (`off`, `reranker:<model>`, `openai:<model>`).
    fn name(&self) -> String;
    /// Judges one pair within `deadline`. Must return by then (a late answer is `Failed`).
    fn judge(&self, event: &str, memory: &str, deadline: Duration) -> Verdict;
}

/// The judge that is not there: every pair is "no", without a call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Off;

impl Judge for Off {
    fn name(&self) -> String {
        "off".into()
    }
    fn judge(&self, _event: &str, _memory: &str, _deadline: Duration) -> Verdict {
        Verdict::No { score: None }
    }
}

/// A judge that always gives the same answer (tests, and `yes` for an always-trusting band).
#[derive(Debug, Clone, Copy)]
pub struct Fixed(pub bool);

impl Judge for Fixed {
    fn name(&self) -> String {
        format!("fixed:{}", if self.0 { "yes" } else { "no" })
    }
    fn judge(&self, _event: &str, _memory: &str, _deadline: Duration) -> Verdict {
        if self.0 { Verdict::Yes { score: None } } else { Verdict::No { score: None } }
    }
}
