//! `model_use`: changing the embedding model without downtime, and how far it is.

use serde::{Deserialize, Serialize};

/// `model_use` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelUseParams {
    /// A `[models.NAME]` table of the config, `minilm` (the packaged local model) or
    /// `config` (the config's `[model]` table).
    pub name: String,
}

/// `model_use` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelUseResult {
    /// The name asked.
    pub name: String,
    /// What happened: `started` (a migration runs in the background), `in_force` (the
    /// vectors are already of that model; a running migration elsewhere was stopped).
    pub state: String,
}

/// A migration to another embedding model, in `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelMigration {
    /// The model's name (`model_use`'s, or `config`).
    pub name: String,
    /// `loading`, `embedding` (re-embedding every memory into the cache; recall serves
    /// from the old index), `switching` (the new index built from the cache, then swapped
    /// in), `done`, `stopped` or `failed`.
    pub phase: String,
    /// Memories re-embedded so far.
    pub done: u64,
    /// Memories to re-embed.
    pub total: u64,
    /// Seconds since it started.
    pub seconds: f64,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Once done: the new model's calibration, in words (where it puts unrelated texts,
    /// the relevance floor and the interjection gate carried to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<String>,
}
