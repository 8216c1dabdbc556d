//! Params and results of runs: `run_record`, `run_reward`, `runs`, `run_show`.

use amber_core::{MemoryId, NewRun, Run, RunReward, Scope};
use serde::{Deserialize, Serialize};

/// The most runs (or rewards) in one batch.
pub const MAX_RUN_BATCH: usize = 1_000;
/// The most bytes of task and trace text in one batch of runs (16 MiB; the request line
/// must also fit `max_frame_bytes`).
pub const MAX_RUN_BATCH_BYTES: usize = 16 << 20;

/// `run_record` params: one run (`task`, ...) or a batch (`runs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecordParams {
    /// The agent recording (the only one that may reward the runs).
    pub agent: String,
    /// Where the runs live (default `default`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// One run's task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// One run's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// One run's used memories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub used: Vec<MemoryId>,
    /// One run's outcome, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// One run's advice keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<String>,
    /// A batch: 1 to 1,000 runs, checked before any is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<NewRun>>,
}

/// One recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecorded {
    /// Its id.
    pub id: String,
    /// False when the same run was already recorded.
    pub created: bool,
}

/// `run_record` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecordResult {
    /// The scope.
    pub scope: Scope,
    /// One per run, in order.
    pub results: Vec<RunRecorded>,
    /// Runs of the batch rewarded inline (new runs with a `reward`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rewarded: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One reward in a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardEntry {
    /// The run.
    pub run_id: String,
    /// -1..1.
    pub reward: f64,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// `run_reward` params: one (`run_id`, `reward`) or a batch (`rewards`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRewardParams {
    /// The agent rewarding: it must be the one that recorded the runs.
    pub agent: String,
    /// One run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Its reward, -1..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A batch of 1 to 1,000 rewards, checked before any is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<Vec<RewardEntry>>,
}

/// `run_reward` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRewardResult {
    /// Rewards stored.
    pub rewarded: usize,
    /// Memory weights moved (the used memories of the rewarded runs).
    pub weights_moved: usize,
}

/// `runs` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsParams {
    /// Only this scope and those under it.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Only this agent's runs.
    #[serde(default)]
    pub agent: Option<String>,
    /// At most this many (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `runs` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsResult {
    /// The newest first.
    pub runs: Vec<Run>,
}

/// `run_show` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunShowParams {
    /// The run id.
    pub id: String,
}

/// `run_show` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunShowResult {
    /// The run.
    pub run: Run,
    /// Every reward, oldest first (the latest counts).
    pub rewards: Vec<RunReward>,
}

/// `review` params: which earlier memories and runs touched these files?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewParams {
    /// The files (1 to 100 paths; compared by their trailing directories).
    pub files: Vec<String>,
    /// Only this scope and those under it (default: every scope).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// At most this many memories and this many runs (default 10, at most 100).
    #[serde(default)]
    pub k: Option<usize>,
}

/// A memory that touched some of the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewMemory {
    /// The memory.
    pub memory: amber_core::Memory,
    /// The sum of the shared files' idf.
    pub score: f32,
    /// The asked files it names.
    pub files: Vec<String>,
}

/// A run that touched some of the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRun {
    /// The run.
    pub run: Run,
    /// The sum of the shared files' idf.
    pub score: f32,
    /// The asked files it names.
    pub files: Vec<String>,
}

/// `review` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewResult {
    /// Memories, best first.
    pub memories: Vec<ReviewMemory>,
    /// Runs, best first.
    pub runs: Vec<ReviewRun>,
    /// Per asked file: how many documents of the scope name it (its df), as counted.
    pub df: std::collections::BTreeMap<String, usize>,
}

/// An earlier memory or run carrying an error like the one in a recall's or an event's
/// text (`amber_tiers::leads`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeadHit {
    /// `memory` or `run`.
    pub kind: String,
    /// The memory's or the run's id.
    pub id: String,
    /// The fused score (the error signals plus BM25's reciprocal-rank share).
    pub score: f32,
    /// What matched: kinds, message shape, culprit, frames, files.
    pub why: amber_tiers::leads::Match,
    /// Its BM25 rank (0-based) for the error's normalised text, when BM25 found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bm25_rank: Option<usize>,
    /// Its opening, cut at a word.
    pub opening: String,
}
