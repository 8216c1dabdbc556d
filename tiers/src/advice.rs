//! Advice learned by a model from runs (issue 19): tasks sorted into category →
//! situation ([`sort`]), one note per situation written from its runs ([`write`]),
//! which situations get a note and from which runs ([`plan`]), a task routed to one
//! situation ([`route`]), notes withheld, edited and merged ([`curate`]), and unrewarded
//! runs judged ([`judge`]). Skills (procedures with a step graph) are compiled from a
//! scope's chosen documents, citing them ([`compile`]). Every model call goes through
//! a [`Learner`]: one OpenAI-compatible chat endpoint (the `[learn]` table), with the
//! [`ModelCache`] when asked.
//!
//! Nothing here measures whether the advice is good: no model runs on the machine that
//! builds Amber, so only the plumbing is tested (against a local fake endpoint).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache::ModelCache;
use crate::chat::{ChatEndpoint, strip_think};
use amber_core::endpoint::snippet;

pub mod compile;
pub mod curate;
pub mod judge;
pub mod link;
pub mod merge;
pub mod plan;
pub mod render;
pub mod route;
pub mod sort;
pub mod tally;
pub mod write;

/// Which model learns advice (`[learn]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearnKind {
    /// None: `get_advice` answers `no_model`, nothing is learned or judged.
    #[default]
    Off,
    /// An OpenAI-compatible chat endpoint (Ollama, llama.cpp's server, a hosted API).
    Openai,
}

/// The `[learn]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LearnConfig {
    /// `off` (default) or `openai`.
    pub kind: LearnKind,
    /// OpenAI-compatible: the base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: Option<String>,
    /// OpenAI-compatible: the model name.
    pub model: Option<String>,
    /// The name of the environment variable holding the API key (never the key).
    pub api_key_env: Option<String>,
    /// How long one model call may take (default 60,000 ms).
    pub timeout_ms: u64,
    /// Runs and ended sessions are judged once they are this old and still unrewarded
    /// (default 1,800 s).
    pub judge_delay_s: u64,
    /// The judge alone (default false): runs, sessions and served notes are judged, but
    /// the timer learns nothing and `get_advice` serves nothing (`amber advice learn`
    /// still learns when asked).
    pub judge_only: bool,
    /// At most this many sessions of one voice (agent) a day are judged (by the day they
    /// ended, UTC); the rest are left unjudged (default 20; 0: no cap).
    pub judged_per_day: u32,
    /// The timer learns a scope again once this many more of its runs are rewarded
    /// (default 10).
    pub relearn_after: u32,
    /// A compile batch holds at most this many documents (default 12).
    pub compile_batch_sources: usize,
    /// and this many characters of them (default 60,000; one longer is cut).
    pub compile_batch_chars: usize,
    /// A situation gets a note once it has this many wrong runs (reward < 0; default 2).
    pub min_wrong: usize,
    /// A team note (scope under `team/`) needs runs from this many distinct agents
    /// (default 3, never fewer than 2).
    pub team_min_agents: usize,
    /// A personal note needs this many of the agent's own rewarded runs (default 10).
    pub personal_min_runs: usize,
    /// Every this many seconds (default 600; 0: never) the daemon judges what is due and
    /// learns each scope again whose rewarded runs grew by 5.
    pub interval_s: u64,
    /// Answer repeated model calls of the daemon from the cache (default false;
    /// `amber advice learn` uses it unless told not to).
    pub cache: bool,
    /// Count the judge's verdicts on runs nobody rewarded (default true; they are
    /// counted as the judge's in `advice_learn`'s result and in `lift`).
    pub judged: bool,
    /// A note is ratified once it helped at least this many distinct voices (people, or
    /// agents where no person is known), more than it did not; one that did not help as
    /// many, more than it did, is withheld (default 3, at least 1).
    pub evidence_bar: u32,
}

impl Default for LearnConfig {
    fn default() -> LearnConfig {
        LearnConfig {
            kind: LearnKind::Off,
            url: None,
            model: None,
            api_key_env: None,
            timeout_ms: 60_000,
            judge_delay_s: 1_800,
            judge_only: false,
            judged_per_day: 20,
            relearn_after: 10,
            compile_batch_sources: 12,
            compile_batch_chars: 60_000,
            min_wrong: 2,
            team_min_agents: 3,
            personal_min_runs: 10,
            interval_s: 600,
            cache: false,
            judged: true,
            evidence_bar: 3,
        }
    }
}

impl LearnConfig {
    /// True when a model is configured.
    pub fn is_on(&self) -> bool {
        self.kind != LearnKind::Off
    }

    /// Checks the values (not the API key variable, read when the learner is built).
    pub fn check(&self) -> Result<(), String> {
        if self.timeout_ms == 0 || self.timeout_ms > 600_000 {
            return Err(format!("learn.timeout_ms is {}, it must be 1 to 600000", self.timeout_ms));
        }
        if self.min_wrong == 0 {
            return Err("learn.min_wrong must be at least 1".into());
        }
        if self.team_min_agents < 2 {
            return Err(format!("learn.team_min_agents is {}, it must be at least 2", self.team_min_agents));
        }
        if self.personal_min_runs == 0 {
            return Err("learn.personal_min_runs must be at least 1".into());
        }
        if self.relearn_after == 0 {
            return Err("learn.relearn_after must be at least 1".into());
        }
        if self.compile_batch_sources == 0 || self.compile_batch_chars < 1_000 {
            return Err(
                "learn.compile_batch_sources must be at least 1 and compile_batch_chars at least 1000".into(),
            );
        }
        if self.evidence_bar == 0 {
            return Err("learn.evidence_bar must be at least 1".into());
        }
        if self.kind == LearnKind::Openai {
            crate::chat::check_settings("learn", self.url.as_deref(), self.model.as_deref())?;
        }
        Ok(())
    }
}

/// A model call that gave nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The call failed: HTTP error, refused connection, timeout.
    Call(String),
    /// The reply came but is not what was asked for.
    Malformed(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Call(r) => write!(f, "the model call failed: {r}"),
            ModelError::Malformed(r) => write!(f, "the model's reply is malformed: {r}"),
        }
    }
}

/// The model that learns advice: one chat endpoint, a deadline a call, and the cache
/// when one is given.
#[derive(Clone)]
pub struct Learner {
    chat: ChatEndpoint,
    timeout: Duration,
    cache: Option<ModelCache>,
}

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.chat.debug("Learner", f)
    }
}

impl Learner {
    /// A learner for the chat endpoint under `url`, asking `model`.
    pub fn new(
        url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<Learner, String> {
        Ok(Learner { chat: ChatEndpoint::new("learn", url, model, api_key)?, timeout, cache: None })
    }

    /// From the `[learn]` table; None when it is off.
    pub fn from_config(cfg: &LearnConfig) -> Result<Option<Learner>, String> {
        cfg.check()?;
        if !cfg.is_on() {
            return Ok(None);
        }
        let chat = ChatEndpoint::from_settings(
            "learn",
            cfg.url.as_deref(),
            cfg.model.as_deref(),
            cfg.api_key_env.as_deref(),
        )?;
        Ok(Some(Learner { chat, timeout: Duration::from_millis(cfg.timeout_ms), cache: None }))
    }

    /// The same learner answering repeated calls from a cache in `dir` (None: no cache).
    pub fn with_cache(&self, dir: Option<PathBuf>) -> Learner {
        Learner { cache: dir.map(ModelCache::new), ..self.clone() }
    }

    /// The same learner with a shorter deadline a call, when `limit` is shorter.
    pub fn within(&self, limit: Duration) -> Learner {
        Learner { timeout: self.timeout.min(limit), ..self.clone() }
    }

    /// `openai:<model>`.
    pub fn name(&self) -> String {
        format!("openai:{}", self.chat.model())
    }

    /// One short call, never from the cache, within `limit`: does the model answer?
    pub fn ping(&self, limit: Duration) -> Result<(), ModelError> {
        let l = Learner { cache: None, ..self.within(limit) };
        l.ask("Reply with the word ok.", "ping", 2).map(|_| ())
    }

    /// Asks the model once (or the cache): the reply's text, a leading `<think>` block
    /// dropped.
    pub(crate) fn ask(&self, system: &str, user: &str, max_tokens: u32) -> Result<String, ModelError> {
        let body = serde_json::json!({
            "model": self.chat.model(),
            "messages": [
                { "role": "system", "content": system },
                { "role": "user", "content": user },
            ],
            "temperature": 0,
            "max_tokens": max_tokens,
            "stream": false,
        });
        let key = self
            .cache
            .as_ref()
            .map(|_| ModelCache::key(self.chat.endpoint(), self.chat.model(), &body.to_string()));
        let cached = self.cache.as_ref().zip(key.as_deref()).and_then(|(c, k)| c.get(k));
        let content = match cached {
            Some(c) => c,
            None => {
                let c = self.chat.complete(&body, self.timeout).map_err(ModelError::Call)?;
                if let (Some(cache), Some(k)) = (&self.cache, &key)
                    && let Err(e) = cache.put(k, &c)
                {
                    tracing::warn!(dir = %cache.dir().display(), cause = %e, "the model cache could not keep a reply");
                }
                c
            }
        };
        strip_think(&content)
            .map(|s| s.trim().to_string())
            .ok_or_else(|| ModelError::Malformed("the reply never finished its <think> block".into()))
    }
}

/// The first JSON object in a reply: the whole reply, a fenced block, or the first `{`
/// from which one parses.
pub(crate) fn json_object(reply: &str) -> Result<serde_json::Map<String, Value>, ModelError> {
    let candidates = std::iter::once(reply.trim())
        .chain(crate::extract::fenced_blocks(reply))
        .chain(reply.char_indices().filter(|(_, c)| *c == '{').take(32).map(|(i, _)| &reply[i..]));
    for c in candidates {
        let mut stream = serde_json::Deserializer::from_str(c.trim()).into_iter::<Value>();
        if let Some(Ok(Value::Object(o))) = stream.next() {
            return Ok(o);
        }
    }
    Err(ModelError::Malformed(format!("no JSON object in the reply: {}", snippet(reply))))
}

/// Text put between data tags with the closing tag neutralised, so a record cannot end
/// its own fence and speak as the prompt.
pub(crate) fn fenced(tag: &str, text: &str) -> String {
    let close = format!("</{tag}");
    format!("<{tag}>\n{}\n</{tag}>", text.replace(&close, &format!("<\\/{tag}")))
}
