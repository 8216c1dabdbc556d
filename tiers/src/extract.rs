//! Fact extraction: when a model is configured, a captured text is sent to it and the
//! facts it proposes (`subject predicate object-or-literal`, with an optional start date
//! and a confidence) go into the knowledge graph with the captured memory as their
//! source. Off by default: nothing leaves the machine unless the `[extract]` table names
//! an endpoint.
//!
//! Extractors: [`Off`] (the default) and [`OpenAiExtractor`] (an OpenAI-compatible chat
//! endpoint: Ollama, llama.cpp's server, a hosted API), built by [`from_config`]. The
//! model's answer is parsed defensively by [`parse_facts`]: code fences, prose around the
//! JSON and a leading `<think>` block are tolerated; items that are not valid facts are
//! skipped and counted.

use std::time::Duration;

use amber_core::Millis;
use amber_core::graph::NewFact;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{ChatEndpoint, strip_think, truncate};
use amber_core::endpoint::snippet;

/// The most facts one answer may propose (`max_facts` is checked against it).
pub const MAX_FACTS: usize = 50;

/// The most characters of a text put into the prompt.
pub const PROMPT_MAX_CHARS: usize = 8192;

/// The most JSON candidates tried in one answer (each `{` or `[` where a value may start).
const MAX_JSON_TRIES: usize = 64;

/// Which extractor the daemon uses (`[extract]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractKind {
    /// No extraction: the graph grows from explicit `kg_add` calls and entity linking.
    #[default]
    Off,
    /// An OpenAI-compatible chat endpoint (Ollama, llama.cpp's server, a hosted API).
    Openai,
}

/// Extraction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractConfig {
    /// `off` (default) or `openai`.
    pub kind: ExtractKind,
    /// How long one extraction may take before it is given up (default 30,000 ms). It
    /// runs in the background: a capture never waits for it.
    pub timeout_ms: u64,
    /// OpenAI-compatible: the base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: Option<String>,
    /// OpenAI-compatible: the model name.
    pub model: Option<String>,
    /// OpenAI-compatible: the name of the environment variable holding the API key (the
    /// key itself is never written in the config).
    pub api_key_env: Option<String>,
    /// The most facts kept from one text (default 10, at most [`MAX_FACTS`]).
    pub max_facts: usize,
    /// Facts the model gives a lower confidence are dropped (default 0.5). A fact
    /// without a confidence is kept.
    pub min_confidence: f32,
    /// Extractions running at once (default 1, at most 8); a capture arriving when all
    /// are busy is not extracted (and counted).
    pub max_in_flight: usize,
}

impl Default for ExtractConfig {
    fn default() -> ExtractConfig {
        ExtractConfig {
            kind: ExtractKind::Off,
            timeout_ms: 30_000,
            url: None,
            model: None,
            api_key_env: None,
            max_facts: 10,
            min_confidence: 0.5,
            max_in_flight: 1,
        }
    }
}

impl ExtractConfig {
    /// True when captures are sent to an extractor.
    pub fn is_on(&self) -> bool {
        self.kind != ExtractKind::Off
    }

    /// Checks the values (not the API key variable, read when the extractor is built).
    pub fn check(&self) -> Result<(), String> {
        if self.timeout_ms == 0 || self.timeout_ms > 600_000 {
            return Err(format!("extract.timeout_ms is {}, it must be 1 to 600000", self.timeout_ms));
        }
        if !(1..=MAX_FACTS).contains(&self.max_facts) {
            return Err(format!("extract.max_facts is {}, it must be 1 to {MAX_FACTS}", self.max_facts));
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(format!("extract.min_confidence is {}, it must be in 0..=1", self.min_confidence));
        }
        if !(1..=8).contains(&self.max_in_flight) {
            return Err(format!("extract.max_in_flight is {}, it must be 1 to 8", self.max_in_flight));
        }
        if self.kind == ExtractKind::Openai {
            crate::chat::check_settings("extract", self.url.as_deref(), self.model.as_deref())?;
        }
        Ok(())
    }
}

/// What one extraction proposed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// Valid facts, at most `max_facts`, without sources (the caller adds them).
    pub facts: Vec<NewFact>,
    /// Items that were not valid facts (missing parts, wrong types, too long...).
    pub skipped: usize,
    /// Valid facts below `min_confidence`.
    pub low_confidence: usize,
    /// Valid facts past `max_facts`.
    pub over_cap: usize,
}

/// Counts of what extraction did since the daemon started (`status` shows them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractStats {
    /// The extractor (`openai:<model>`).
    pub extractor: String,
    /// Extractions started.
    pub runs: u64,
    /// Extractions that failed (HTTP, timeout, an answer with no JSON) or whose facts
    /// could not be written.
    pub failed: u64,
    /// Captures not extracted because `max_in_flight` extractions were running.
    pub skipped_busy: u64,
    /// Valid facts proposed.
    pub proposed: u64,
    /// Facts written to the graph (new, or an identical one given another source).
    pub facts_added: u64,
    /// Proposed items dropped: not valid facts, below `min_confidence`, or past `max_facts`.
    pub items_dropped: u64,
}

/// Something that proposes facts from a text.
pub trait Extractor: Send + Sync {
    /// A short name for logs and status (`off`, `openai:<model>`).
    fn name(&self) -> String;
    /// Proposes facts from `text` within `deadline`. Must return by then.
    fn extract(&self, text: &str, deadline: Duration) -> Result<Extracted, String>;
}

/// The extractor that is not there: nothing, without a call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Off;

impl Extractor for Off {
    fn name(&self) -> String {
        "off".into()
    }
    fn extract(&self, _text: &str, _deadline: Duration) -> Result<Extracted, String> {
        Ok(Extracted::default())
    }
}

/// Builds the extractor that `cfg` asks for (after [`ExtractConfig::check`]). An `openai`
/// extractor needs `url` and `model`, and the variable named by `api_key_env` (when
/// given) must be set.
pub fn from_config(cfg: &ExtractConfig) -> Result<Box<dyn Extractor>, String> {
    cfg.check()?;
    match cfg.kind {
        ExtractKind::Off => Ok(Box::new(Off)),
        ExtractKind::Openai => Ok(Box::new(OpenAiExtractor::from_config(cfg)?)),
    }
}

const SYSTEM_PROMPT: &str = "You extract facts for a knowledge graph from a note that an AI coding \
agent's memory captured. Reply with JSON only, no prose, in this shape:\n\
{\"facts\": [{\"subject\": \"...\", \"predicate\": \"...\", \"object\": \"...\", \"valid_from\": \"YYYY-MM-DD\", \
\"confidence\": 0.9}]}\n\
Rules:\n\
- Only facts the text states; never guess.\n\
- subject (and object) are short names of entities as the text writes them: people, teams, projects, \
services, libraries, files, places.\n\
- predicate is a short snake_case relation: works_on, leads, depends_on, uses, located_in, version_is.\n\
- Use \"object\" when the other end is an entity; use \"literal\" instead of \"object\" when it is a value \
(a version, a number, a setting, a date).\n\
- valid_from only when the text gives the date from which the fact holds, as an ISO date; omit it otherwise.\n\
- confidence from 0 to 1: how clearly the text states the fact.\n\
- If the text states no such facts, reply {\"facts\": []}.";

/// An extractor that asks an OpenAI-compatible chat endpoint (`POST {url}/chat/completions`):
/// Ollama (`http://127.0.0.1:11434/v1`), llama.cpp's server (`http://127.0.0.1:8080/v1`)
/// or a hosted API. An HTTP error, a timeout, or an answer with no JSON in it is an
/// error; bad items in good JSON are skipped.
#[derive(Clone)]
pub struct OpenAiExtractor {
    chat: ChatEndpoint,
    max_facts: usize,
    min_confidence: f32,
}

impl std::fmt::Debug for OpenAiExtractor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.chat.debug("OpenAiExtractor", f)
    }
}

impl OpenAiExtractor {
    /// An extractor for the chat endpoint under `url` (the base; `/chat/completions` is
    /// appended), asking `model`, sending `api_key` as a bearer token, keeping at most
    /// `max_facts` facts of at least `min_confidence`.
    pub fn new(
        url: &str,
        model: &str,
        api_key: Option<String>,
        max_facts: usize,
        min_confidence: f32,
    ) -> Result<OpenAiExtractor, String> {
        Ok(OpenAiExtractor {
            chat: ChatEndpoint::new("extract", url, model, api_key)?,
            max_facts: max_facts.clamp(1, MAX_FACTS),
            min_confidence,
        })
    }

    /// From the `[extract]` settings: `url` and `model` are required; the key is read
    /// now from the environment variable named by `api_key_env`, which must then be set.
    pub fn from_config(cfg: &ExtractConfig) -> Result<OpenAiExtractor, String> {
        let chat = ChatEndpoint::from_settings(
            "extract",
            cfg.url.as_deref(),
            cfg.model.as_deref(),
            cfg.api_key_env.as_deref(),
        )?;
        Ok(OpenAiExtractor {
            chat,
            max_facts: cfg.max_facts.clamp(1, MAX_FACTS),
            min_confidence: cfg.min_confidence,
        })
    }

    /// The full URL posted to.
    pub fn endpoint(&self) -> &str {
        self.chat.endpoint()
    }

    /// The request body for one text.
    pub fn request_body(&self, text: &str) -> Value {
        let user = format!(
            "Text:\n<text>\n{}\n</text>\n\nExtract at most {} facts. Reply with the JSON only.",
            truncate(text, PROMPT_MAX_CHARS),
            self.max_facts
        );
        serde_json::json!({
            "model": self.chat.model(),
            "messages": [
                { "role": "system", "content": SYSTEM_PROMPT },
                { "role": "user", "content": user },
            ],
            "temperature": 0,
            "max_tokens": (256 + 96 * self.max_facts).min(4096),
            "stream": false,
        })
    }
}

impl Extractor for OpenAiExtractor {
    fn name(&self) -> String {
        format!("openai:{}", self.chat.model())
    }

    fn extract(&self, text: &str, deadline: Duration) -> Result<Extracted, String> {
        let content = self.chat.complete(&self.request_body(text), deadline)?;
        parse_facts(&content, self.max_facts, self.min_confidence)
    }
}

/// The facts in a model's answer. The JSON may be the whole answer, inside a code fence,
/// or surrounded by prose; it may be `{"facts": [...]}`, a bare array of facts, or one
/// fact object. An item that is not a valid fact is skipped (and counted); one below
/// `min_confidence` is dropped (and counted); at most `max_facts` are kept. An answer
/// with no such JSON in it is an error.
pub fn parse_facts(content: &str, max_facts: usize, min_confidence: f32) -> Result<Extracted, String> {
    let body =
        strip_think(content).ok_or_else(|| "the answer never finished its <think> block".to_string())?;
    let items = find_items(body).ok_or_else(|| format!("no JSON facts in the answer: {}", snippet(body)))?;
    let mut out = Extracted::default();
    for item in &items {
        match to_fact(item) {
            Some(f) if f.confidence.is_some_and(|c| c < min_confidence) => out.low_confidence += 1,
            Some(f) if out.facts.contains(&f) => {}
            Some(_) if out.facts.len() >= max_facts => out.over_cap += 1,
            Some(f) => out.facts.push(f),
            None => out.skipped += 1,
        }
    }
    Ok(out)
}

/// The fact items of the first JSON value in `s` that holds some: code fences are looked
/// into first, then every `{` or `[` in order.
fn find_items(s: &str) -> Option<Vec<Value>> {
    let trimmed = s.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed)
        && let Some(items) = items_of(v)
    {
        return Some(items);
    }
    for block in fenced_blocks(s) {
        if let Some(items) = first_json_items(block) {
            return Some(items);
        }
    }
    first_json_items(s)
}

/// The insides of ```` ``` ```` fences, language tag dropped.
pub(crate) fn fenced_blocks(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

/// Tries a JSON value at each `{` or `[` (trailing text ignored) until one holds facts.
fn first_json_items(s: &str) -> Option<Vec<Value>> {
    for (i, _) in s.char_indices().filter(|(_, c)| *c == '{' || *c == '[').take(MAX_JSON_TRIES) {
        let mut stream = serde_json::Deserializer::from_str(&s[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next()
            && let Some(items) = items_of(v)
        {
            return Some(items);
        }
    }
    None
}

/// `{"facts": [...]}`, `[...]` (of objects, or empty) or one fact object.
fn items_of(v: Value) -> Option<Vec<Value>> {
    match v {
        Value::Array(a) if a.iter().all(Value::is_object) => Some(a),
        Value::Object(mut o) => match o.remove("facts") {
            Some(Value::Array(a)) => Some(a),
            Some(_) => None,
            None if o.contains_key("subject") && o.contains_key("predicate") => Some(vec![Value::Object(o)]),
            None => None,
        },
        _ => None,
    }
}

/// One item as a valid fact, or None.
fn to_fact(item: &Value) -> Option<NewFact> {
    let o = item.as_object()?;
    let text = |k: &str| -> Option<Option<String>> {
        match o.get(k) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) if s.trim().is_empty() => Some(None),
            Some(Value::String(s)) => Some(Some(s.trim().to_string())),
            Some(Value::Number(n)) => Some(Some(n.to_string())),
            Some(Value::Bool(b)) => Some(Some(b.to_string())),
            Some(_) => None,
        }
    };
    let subject = text("subject")??;
    let predicate = text("predicate")??;
    let mut object = text("object")?;
    let mut literal = text("literal")?;
    // A number or a boolean given as the object is a value, not an entity.
    if matches!(o.get("object"), Some(Value::Number(_) | Value::Bool(_))) && literal.is_none() {
        literal = object.take();
    }
    let valid_from = match o.get("valid_from") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => parse_date(s),
        Some(_) => None,
    };
    let confidence = match o.get("confidence") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.as_f64()? as f32),
        Some(_) => return None,
    };
    let fact = NewFact { subject, predicate, object, literal, valid_from, confidence, ..NewFact::default() };
    fact.validate().ok()?;
    Some(fact)
}

/// An ISO date (`2024-03-01`, `2024-03`, `2024`, or a date-time, whose date is taken) as
/// ms since the epoch at 00:00 UTC. None for anything else.
pub fn parse_date(s: &str) -> Option<Millis> {
    let s = s.trim();
    let date = s.split(['T', 't', ' ']).next()?;
    let mut parts = date.split('-');
    let num = |p: Option<&str>, len: usize| -> Option<Option<i64>> {
        match p {
            None => Some(None),
            Some(p) if p.len() == len && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()),
            Some(_) => None,
        }
    };
    let year = num(parts.next(), 4)??;
    let month = num(parts.next(), 2)?.unwrap_or(1);
    let day = num(parts.next(), 2)?.unwrap_or(1);
    if parts.next().is_some() {
        return None;
    }
    let days = amber_core::calendar::days_from(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)?;
    Some(days * amber_core::calendar::DAY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_become_midnight_utc() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2020-01-01"), Some(1_577_836_800_000));
        assert_eq!(parse_date("2024-03-01"), Some(1_709_251_200_000));
        assert_eq!(parse_date("2024-03"), Some(1_709_251_200_000));
        assert_eq!(parse_date("2023"), Some(1_672_531_200_000));
        assert_eq!(parse_date("2024-03-01T12:30:00Z"), Some(1_709_251_200_000));
        assert_eq!(parse_date("2024-02-29"), Some(1_709_164_800_000));
        for bad in ["2023-02-29", "2024-13-01", "March 2024", "24-03-01", "", "2024-03-01-02", "2024-3-1"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn items_are_checked_one_by_one() {
        let answer = r#"{"facts": [
            {"subject": "Ada", "predicate": "works on", "object": "Falcon", "confidence": 0.9},
            {"subject": "Falcon", "predicate": "version", "object": 3},
            {"subject": "", "predicate": "x", "object": "y"},
            {"subject": "a", "predicate": "p", "object": "b", "literal": "c"},
            {"subject": "a", "predicate": "p", "object": ["b"]},
            {"subject": "a", "predicate": "p", "object": "b", "confidence": "high"},
            {"subject": "a", "predicate": "p", "object": "b", "confidence": 0.2},
            {"subject": "Ada", "predicate": "works on", "object": "Falcon", "confidence": 0.9},
            "not an object"
        ]}"#;
        let e = parse_facts(answer, 10, 0.5).unwrap();
        assert_eq!(e.facts.len(), 2, "{e:?}");
        assert_eq!(e.facts[0].object.as_deref(), Some("Falcon"));
        assert_eq!(e.facts[1].literal.as_deref(), Some("3"));
        assert_eq!((e.skipped, e.low_confidence, e.over_cap), (5, 1, 0));
        let capped = parse_facts(answer, 1, 0.0).unwrap();
        assert_eq!((capped.facts.len(), capped.over_cap), (1, 2));
    }

    #[test]
    fn config_check_needs_url_and_model_for_openai() {
        assert!(ExtractConfig::default().check().is_ok());
        let c = ExtractConfig { kind: ExtractKind::Openai, ..Default::default() };
        assert!(c.check().unwrap_err().contains("extract.url"));
        let c = ExtractConfig { url: Some("http://127.0.0.1:1/v1".into()), ..c };
        assert!(c.check().unwrap_err().contains("extract.model"));
        let c = ExtractConfig { model: Some("m".into()), ..c };
        assert!(c.check().is_ok());
        assert!(ExtractConfig { max_facts: 0, ..c.clone() }.check().is_err());
        assert!(ExtractConfig { min_confidence: 1.5, ..c.clone() }.check().is_err());
        assert!(ExtractConfig { max_in_flight: 0, ..c }.check().is_err());
    }
}
