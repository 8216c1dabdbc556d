//! The HTTP plumbing shared by the judge and the extractor: one OpenAI-compatible chat
//! endpoint (`POST {url}/chat/completions`), blocking, with one deadline for the whole
//! call, no redirects (a POST and its key go nowhere else), a capped response body, and
//! the API key read from an environment variable named in the config.

use std::time::Duration;

use amber_core::endpoint::snippet;

/// The most bytes of a response body read.
const MAX_BODY: u64 = 1 << 20;

/// Checks a table's `url` and `model` for kind `openai` without reading the key or
/// building a client (for config checks at start): both given, the URL http(s), the
/// model not blank.
pub(crate) fn check_settings(table: &str, url: Option<&str>, model: Option<&str>) -> Result<(), String> {
    let (url, model) = present(table, url, model)?;
    validated(table, url, model).map(|_| ())
}

/// `url` and `model` when both are given and not blank.
fn present<'a>(
    table: &str,
    url: Option<&'a str>,
    model: Option<&'a str>,
) -> Result<(&'a str, &'a str), String> {
    let url = url.filter(|u| !u.trim().is_empty()).ok_or_else(|| {
        format!("{table} kind `openai` needs {table}.url (the endpoint's base URL, e.g. http://127.0.0.1:11434/v1)")
    })?;
    let model = model.filter(|m| !m.trim().is_empty()).ok_or_else(|| {
        format!("{table} kind `openai` needs {table}.model (the model name the endpoint serves)")
    })?;
    Ok((url, model))
}

/// The URL (trimmed, no trailing `/`) and model (trimmed) an endpoint uses, or why not.
fn validated<'a>(table: &str, url: &'a str, model: &'a str) -> Result<(&'a str, &'a str), String> {
    let url = url.trim().trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("{table}.url must start with http:// or https://, got {url:?}"));
    }
    let model = model.trim();
    if model.is_empty() {
        return Err(format!("{table}.model is empty"));
    }
    Ok((url, model))
}

/// One configured chat endpoint. `table` (`judge`, `extract`) names the config table in
/// error messages.
#[derive(Clone)]
pub(crate) struct ChatEndpoint {
    endpoint: String,
    model: String,
    api_key: Option<String>,
    agent: amber_endpoint::Agent,
}

impl ChatEndpoint {
    /// The endpoint under `url` (the base; `/chat/completions` is appended), asking
    /// `model`, sending `api_key` as a bearer token.
    pub(crate) fn new(
        table: &str,
        url: &str,
        model: &str,
        api_key: Option<String>,
    ) -> Result<ChatEndpoint, String> {
        let (url, model) = validated(table, url, model)?;
        let agent = amber_endpoint::agent();
        Ok(ChatEndpoint {
            endpoint: format!("{url}/chat/completions"),
            model: model.to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            agent,
        })
    }

    /// From a table's `url`, `model` and `api_key_env` (kind `openai`): `url` and `model`
    /// are required; the key is read now from the variable named by `api_key_env`, which
    /// must then be set.
    pub(crate) fn from_settings(
        table: &str,
        url: Option<&str>,
        model: Option<&str>,
        api_key_env: Option<&str>,
    ) -> Result<ChatEndpoint, String> {
        let (url, model) = present(table, url, model)?;
        let api_key = amber_core::endpoint::api_key(table, api_key_env)?;
        ChatEndpoint::new(table, url, model, api_key)
    }

    /// The full URL posted to.
    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The model asked.
    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    /// Writes the fields for a `Debug` impl: never the key itself.
    pub(crate) fn debug(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }

    /// Posts `body` and returns `choices[0].message.content`, all within `deadline`
    /// (resolving, connecting, sending and reading the body). Any failure is a reason.
    pub(crate) fn complete(&self, body: &serde_json::Value, deadline: Duration) -> Result<String, String> {
        if deadline.is_zero() {
            return Err("no time left (deadline 0 ms)".into());
        }
        let answer = amber_endpoint::post_json(
            &self.agent,
            &self.endpoint,
            self.api_key.as_deref(),
            &body.to_string(),
            deadline,
            MAX_BODY,
        )?;
        if !answer.is_success() {
            return Err(format!("HTTP {}: {}", answer.status, snippet(&answer.body)));
        }
        let text = answer.body;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("response is not JSON ({e}): {}", snippet(&text)))?;
        json.pointer("/choices/0/message/content")
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .ok_or_else(|| format!("response has no choices[0].message.content: {}", snippet(&text)))
    }
}

/// An answer without a leading `<think>...</think>` block (reasoning models). None when
/// the block is never closed (the answer was cut off while thinking).
pub(crate) fn strip_think(content: &str) -> Option<&str> {
    let s = content.trim_start();
    match s.strip_prefix("<think>") {
        Some(rest) => rest.split_once("</think>").map(|(_, after)| after),
        None => Some(s),
    }
}

/// The first `max` characters of `s`, marked when cut.
pub(crate) fn truncate(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => s.into(),
        Some((i, _)) => format!("{}\n[... truncated]", &s[..i]).into(),
    }
}
