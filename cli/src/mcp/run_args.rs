//! The MCP run tools' arguments: recording a run and rewarding it.

use rmcp::schemars;
use serde::{Deserialize, Serialize};

/// `run_record` arguments: one run of a task.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct RunRecordArgs {
    /// The agent recording it (default `mcp`); only it may reward the run.
    #[serde(default = "super::args::default_agent")]
    pub(super) agent: String,
    /// What the run set out to do.
    pub(super) task: String,
    /// What happened (at most 20,000 characters; secrets are redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) trace: Option<String>,
    /// The ids of the memories it relied on: its reward moves their weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) used: Option<Vec<String>>,
    /// How it went, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) outcome: Option<String>,
    /// The advice it was given (the `situation` keys `get_advice` answered), so that its
    /// reward counts for that advice and lift can compare runs with and without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) advice: Option<Vec<String>>,
    /// Where it lives (default: the client's project, where `get_advice` looks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<String>,
}

/// `run_reward` arguments.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub(super) struct RunRewardArgs {
    /// The agent that recorded the run (default `mcp`).
    #[serde(default = "super::args::default_agent")]
    pub(super) agent: String,
    /// The run's id (from `run_record`).
    pub(super) run_id: String,
    /// From -1 (it went badly) to 1 (it went well).
    pub(super) reward: f64,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) reason: Option<String>,
}
