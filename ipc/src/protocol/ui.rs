//! `ui_start` (the person's local web view, `amber ui`) and `sessions` (the stored
//! session records, newest first, as the web view lists them).

use amber_core::{MemoryId, Millis};
use serde::{Deserialize, Serialize};

/// `ui_start` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiStartParams {
    /// The directory `amber ui` runs in (absolute): the link it answers makes the view's
    /// search default to the scopes a recall there covers (the project's and `user`), as
    /// `amber recall` does; without it the view searches every scope by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<std::path::PathBuf>,
}

/// `ui_start` result: where the web view listens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiStartResult {
    /// The URL to open, with the per-start token (`http://127.0.0.1:PORT/?token=…`).
    pub url: String,
    /// The port on 127.0.0.1.
    pub port: u16,
    /// False when the view was already running (the same URL as before).
    pub started: bool,
}

/// `sessions` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsParams {
    /// At most this many (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only sessions that were served this memory (a whole id), each with what it was
    /// served of it and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<MemoryId>,
}

/// One session in [`SessionsResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// The agent that started it.
    pub agent: String,
    /// Its project scope.
    pub scope: String,
    /// When it started.
    pub started_at: Millis,
    /// When it ended, if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Millis>,
    /// Memories it was served (every serving counted).
    pub served: usize,
    /// Memories it filed.
    pub filed: usize,
    /// Memories it captured.
    pub captured: usize,
    /// Its reward, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f32>,
    /// The runs it was recorded as, oldest first (a session with `run`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// With `served`: each serving of that memory in this session, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servings: Vec<amber_tiers::session::Served>,
}

/// `sessions` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionsResult {
    /// Newest first.
    pub sessions: Vec<SessionSummary>,
}
