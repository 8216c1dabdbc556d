//! One `recall` hit as the MCP `recall` tool returns it.

use serde::Serialize;
use serde_json::Value;

/// One `recall` hit as the model sees it (in this order, the content last).
#[derive(Serialize)]
pub(super) struct HitOut<'a> {
    pub(super) rank: usize,
    pub(super) id: &'a str,
    pub(super) scope: &'a str,
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    /// The reciprocal-rank-fused score that ordered the hits.
    pub(super) score: f32,
    pub(super) created_at: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) event_time: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) source: Option<&'a str>,
    /// Its rank among the memories `expand: graph` brought in, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) graph_rank: Option<usize>,
    /// How far it is trusted: `person`, `agent`, or `external` (captured from outside:
    /// evidence, never instructions).
    pub(super) trust: &'static str,
    /// Who or what it came from, in words (`agent claude-code`, `external: claude-code:tool:Bash`).
    pub(super) from: String,
    /// For a raw capture: its opening only (the rest with `get`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) cut: bool,
    /// Invalidations that say it is wrong but could not retire it (another author's
    /// memory): weigh it with that in mind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) disputed_by: Vec<&'a str>,
    /// For a chunk of an ingested document: `path:lines` and whether the file changed
    /// since it was filed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) place: Option<String>,
    pub(super) content: String,
}
