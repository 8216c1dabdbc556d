//! The interjection judge: asked only when a candidate memory's similarity to a session
//! event falls in the uncertain band below the gate. A judge that errs or runs past its
//! deadline counts as "no"; the session is never held up beyond the deadline.
//!
//! Judges: [`Off`] (the default), [`OpenAiJudge`] (an OpenAI-compatible chat endpoint:
//! Ollama, llama.cpp's server, a hosted API) and [`Fixed`] (tests). [`from_config`] builds
//! the one the `[judge]` table asks for; `reranker` is refused until a reranker model is
//! packaged for `scripts/setup.sh`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chat::{ChatEndpoint, strip_think, truncate};
use amber_core::endpoint::snippet;

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

/// Builds the judge that `cfg` asks for. An `openai` judge needs `url` and `model`, and
/// the variable named by `api_key_env` (when given) must be set. `reranker` is an error:
/// no reranker model is installed by `scripts/setup.sh` yet.
pub fn from_config(cfg: &JudgeConfig) -> Result<Box<dyn Judge>, String> {
    match cfg.kind {
        JudgeKind::Off => Ok(Box::new(Off)),
        JudgeKind::Openai => Ok(Box::new(OpenAiJudge::from_config(cfg)?)),
        JudgeKind::Reranker => Err("judge kind `reranker`: no reranker model is installed (none is \
             packaged for `scripts/setup.sh` yet); use kind = \"openai\" with a local endpoint, or \"off\""
            .into()),
    }
}

/// The most characters of the event, and of the memory, put into the prompt.
pub const PROMPT_MAX_CHARS: usize = 4000;

const SYSTEM_PROMPT: &str = "You decide whether a stored memory should be shown to an AI coding agent \
right now. Answer \"yes\" only if the memory is directly useful to the agent for what it is doing in the \
event; otherwise answer \"no\". Reply with exactly one word: yes or no.";

/// A judge that asks an OpenAI-compatible chat endpoint (`POST {url}/chat/completions`):
/// Ollama (`http://127.0.0.1:11434/v1`), llama.cpp's server (`http://127.0.0.1:8080/v1`)
/// or a hosted API. The answer must start with the word yes or no; anything else, an
/// HTTP error or a timeout is [`Verdict::Failed`], logged as a warning.
#[derive(Clone)]
pub struct OpenAiJudge {
    chat: ChatEndpoint,
}

impl std::fmt::Debug for OpenAiJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.chat.debug("OpenAiJudge", f)
    }
}

impl OpenAiJudge {
    /// A judge for the chat endpoint under `url` (the base, e.g. `http://127.0.0.1:11434/v1`;
    /// `/chat/completions` is appended), asking `model`, sending `api_key` as a bearer token.
    pub fn new(url: &str, model: &str, api_key: Option<String>) -> Result<OpenAiJudge, String> {
        Ok(OpenAiJudge { chat: ChatEndpoint::new("judge", url, model, api_key)? })
    }

    /// From the `[judge]` settings: `url` and `model` are required; the key is read now
    /// from the environment variable named by `api_key_env`, which must then be set.
    pub fn from_config(cfg: &JudgeConfig) -> Result<OpenAiJudge, String> {
        let chat = ChatEndpoint::from_settings(
            "judge",
            cfg.url.as_deref(),
            cfg.model.as_deref(),
            cfg.api_key_env.as_deref(),
        )?;
        Ok(OpenAiJudge { chat })
    }

    /// The full URL posted to.
    pub fn endpoint(&self) -> &str {
        self.chat.endpoint()
    }

    /// The request body for one pair.
    pub fn request_body(&self, event: &str, memory: &str) -> serde_json::Value {
        let user = format!(
            "Event:\n<event>\n{}\n</event>\n\nMemory:\n<memory>\n{}\n</memory>\n\n\
             Is this memory directly useful to the agent for this event? Answer yes or no.",
            truncate(event, PROMPT_MAX_CHARS),
            truncate(memory, PROMPT_MAX_CHARS)
        );
        serde_json::json!({
            "model": self.chat.model(),
            "messages": [
                { "role": "system", "content": SYSTEM_PROMPT },
                { "role": "user", "content": user },
            ],
            "temperature": 0,
            "max_tokens": 5,
            "stream": false,
        })
    }

    fn ask(&self, event: &str, memory: &str, deadline: Duration) -> Result<bool, String> {
        let content = self.chat.complete(&self.request_body(event, memory), deadline)?;
        parse_answer(&content).ok_or_else(|| format!("answer is neither yes nor no: {}", snippet(&content)))
    }
}

impl Judge for OpenAiJudge {
    fn name(&self) -> String {
        format!("openai:{}", self.chat.model())
    }

    fn judge(&self, event: &str, memory: &str, deadline: Duration) -> Verdict {
        match self.ask(event, memory, deadline) {
            Ok(true) => Verdict::Yes { score: None },
            Ok(false) => Verdict::No { score: None },
            Err(reason) => {
                tracing::warn!(judge = %self.name(), endpoint = %self.chat.endpoint(), %reason, "judge failed; counted as no");
                Verdict::Failed { reason }
            }
        }
    }
}

/// Yes or no from a chat answer: the first word, case-insensitive, ignoring punctuation
/// and markup around it (`Yes.`, `**No**`, `"yes"`) and a leading `<think>` block.
/// Anything else (`Maybe`, an empty answer) is None.
pub fn parse_answer(content: &str) -> Option<bool> {
    let s = strip_think(content)?;
    let word: String = s
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    match word.as_str() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}
