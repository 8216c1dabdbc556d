//! Sessions: `session_start`, `session_event`, `session_checkpoint`, `session_end`,
//! `session_show`, and `lift` over ended sessions.

use amber_core::{MemoryId, Millis, Scope};
use serde::{Deserialize, Serialize};

use super::{CaptureResult, Inbox, LeadHit, ManifestEntry, ManifestResult, is_zero};
/// `session_start` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionStartParams {
    /// Who is starting it (`claude-code`, `codex`, `amplifier`, ...).
    pub agent: String,
    /// The agent's token, when its name is registered (`agent_register`): without it a
    /// registered name is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_token: Option<String>,
    /// The project root, when the caller knows it (absolute).
    #[serde(default)]
    pub project_root: Option<std::path::PathBuf>,
    /// The session's working directory (absolute); the project root is the nearest
    /// ancestor with `.git`.
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    /// The opening prompt: the briefing's query.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The scope to work in (default: derived from the project root, see `docs/PROTOCOL.md`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The client's own id for this session (Claude Code's `session_id`): the first
    /// start with a key begins a session, a later one continues it (served memories
    /// remembered, no second briefing), even after it ended.
    #[serde(default)]
    pub key: Option<String>,
    /// With `key`, when the session exists: brief again, because the agent's context
    /// that held the briefing is gone (compacted or cleared). Memories served before
    /// may be served once more in the new context.
    #[serde(default)]
    pub rebrief: Option<bool>,
    /// Record the session as a run when it ends (its opening prompt the task, its tool
    /// uses the trace, what it was served and reported on the memories it used): the
    /// Claude Code hooks ask for it. Given once, it holds for the session's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<bool>,
    /// Memories the client already put in this session's context itself (ids or id
    /// prefixes of at least 8 characters: the hook's kept standing preferences, handed
    /// over when the daemon was too late to brief): recorded as served, never briefed
    /// again in the session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<String>,
}

/// `session_start` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStartResult {
    /// The new session's id.
    pub session_id: String,
    /// The scope it works in.
    pub scope: Scope,
    /// The project root, when known.
    pub project_root: Option<std::path::PathBuf>,
    /// Tier 0: the coordination files (absent without a project root).
    pub identity: Option<amber_tiers::identity::Identity>,
    /// What is addressed to the agent, handed over before the briefing (each memory
    /// at most once per agent).
    #[serde(default)]
    pub inbox: Inbox,
    /// Tier 1: the briefing.
    pub briefing: amber_tiers::briefing::Briefing,
    /// True when an existing session (same `key`) was continued.
    #[serde(default)]
    pub resumed: bool,
    /// True when the session is in the holdout arm: served nothing (no inbox, no
    /// briefing, no interjection; identity still comes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    /// The scopes briefing and interjection search (the session's scope and `user`).
    #[serde(default)]
    pub search: Vec<Scope>,
}

/// `session_checkpoint` params: a stop of the agent (Claude Code's `Stop` hook).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCheckpointParams {
    /// The session.
    pub session_id: String,
    /// Claude Code's `stop_hook_active`: the agent is already continuing because of a
    /// block; never block then.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The agent's last message, when the client has it (a decline is read from it).
    #[serde(default)]
    pub message: Option<String>,
    /// The transcript so far: what is new since the session's last filing is filed, as
    /// at `session_end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// The source recorded on the transcript's pieces (default `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_source: Option<String>,
    /// Characters left out at the transcript's start (a very long one is sent without
    /// its beginning); default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub transcript_skipped: usize,
}

/// `session_checkpoint` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionCheckpointResult {
    /// Block this stop once, asking for the takeaway.
    pub block: bool,
    /// What to tell the agent when blocking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The session's checkpoint record.
    pub checkpoint: amber_tiers::session::Checkpoint,
}

/// `session_event` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionEventParams {
    /// The session.
    pub session_id: String,
    /// `prompt`, `tool_call`, `tool_result` or `response`.
    pub kind: amber_tiers::interject::EventKind,
    /// The event's text (the prompt, the tool call's command/path/query, the output).
    pub text: String,
    /// Where it came from, for capture (`tool:Bash`, ...; default the kind).
    #[serde(default)]
    pub source: Option<String>,
    /// File the text as a memory (default: true for prompt, tool_result and response,
    /// false for tool_call).
    #[serde(default)]
    pub capture: Option<bool>,
    /// Where the session is: `start` (default) and `next` search as usual; `fork`,
    /// `stuck` and `done` search nothing and remind the session of what it was given,
    /// narrowed to pitfalls (`fork`, `stuck`) or verification (`done`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<amber_tiers::moment::Moment>,
}

/// A memory the session was given, reminded at a moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reminder {
    /// The memory.
    pub id: MemoryId,
    /// What the moment reminds of (`pitfalls` or `verification`).
    pub focus: amber_tiers::moment::Focus,
    /// The part of the memory that fits (its section under a heading, or all of it).
    pub text: String,
}

/// `session_event` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEventResult {
    /// The event's number in the session (from 1).
    pub event: u64,
    /// The interjection decision, with its scores and reason.
    pub decision: amber_tiers::interject::Decision,
    /// What capture did, when it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured: Option<CaptureResult>,
    /// At `fork`, `stuck` and `done`: what the session was given that fits the moment,
    /// each memory at most once per moment and session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reminders: Vec<Reminder>,
    /// The reminders as text for the agent (empty when none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reminder_text: String,
    /// When the event's text carries an error: up to 3 earlier memories and runs with an
    /// error like it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leads: Vec<LeadHit>,
    /// True for the session's opening prompt (its first `prompt` event): the moment a
    /// client asks `get_advice`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opening: bool,
}

/// `session_end` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionEndParams {
    /// The session.
    pub session_id: String,
    /// The transcript, filed in pieces of at most the capture limit before curation.
    #[serde(default)]
    pub transcript: Option<String>,
    /// The source recorded on the transcript's pieces (default `transcript`), e.g.
    /// `claude-code:transcript:<path>`.
    #[serde(default)]
    pub transcript_source: Option<String>,
    /// Characters left out at the transcript's start (a very long one is sent without
    /// its beginning); default 0. Only what follows the part already filed is filed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub transcript_skipped: usize,
    /// What the session relied on: each line moves the memory's weight (used with
    /// success +0.15, used with failure −0.10, not used ×0.95).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest: Vec<ManifestEntry>,
    /// How the session went: a reward in -1..1, or `success` (1), `failure` (-1),
    /// `unclear` (stored, no reward). Counted by `lift`; used manifest lines without a
    /// result take its sign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SessionOutcome>,
}

/// A session's outcome as a client gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SessionOutcome {
    /// A reward in -1..1.
    Reward(f64),
    /// `success`, `failure` or `unclear`.
    Label(String),
}

impl SessionOutcome {
    /// The reward and the label to store, or why not.
    pub fn parse(&self) -> Result<(Option<f32>, String), String> {
        match self {
            SessionOutcome::Reward(r) if (-1.0..=1.0).contains(r) => Ok((Some(*r as f32), format!("{r}"))),
            SessionOutcome::Reward(r) => Err(format!("outcome: a reward must be in -1..1, got {r}")),
            SessionOutcome::Label(l) => match l.as_str() {
                "success" => Ok((Some(1.0), l.clone())),
                "failure" => Ok((Some(-1.0), l.clone())),
                "unclear" => Ok((None, l.clone())),
                other => Err(format!(
                    "outcome: expected a reward in -1..1 or success, failure, unclear; got {:?}",
                    other.chars().take(40).collect::<String>()
                )),
            },
        }
    }
}

/// `lift` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiftParams {
    /// Only sessions of this scope (and those under it).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Only sessions started at or after this.
    #[serde(default)]
    pub since: Option<Millis>,
    /// How many of the most recent sessions to read (default 10,000, at most 100,000).
    #[serde(default)]
    pub sessions: Option<usize>,
    /// Count the judge's verdicts on sessions nobody rewarded (default true); false
    /// counts only rewards given by a client or a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<bool>,
}

/// `lift` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiftResult {
    /// Sessions read.
    pub sessions: usize,
    /// Rewarded sessions among them (ended, with a reward).
    pub rewarded: usize,
    /// Of those, rewarded by a reward of their run (a person's, after the session).
    #[serde(default)]
    pub by_run: usize,
    /// Of those, rewarded by the judge's verdict only (none given by anyone).
    #[serde(default)]
    pub judged: usize,
    /// The comparison.
    #[serde(flatten)]
    pub lift: amber_tiers::lift::Lift,
}

/// `session_show` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionShowParams {
    /// The session.
    pub session_id: String,
}

/// `session_end` and `session_show` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionResult {
    /// The session's record.
    pub session: amber_tiers::session::Session,
    /// True while the session is live.
    pub live: bool,
    /// What `session_end` did with its manifest, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<ManifestResult>,
}
