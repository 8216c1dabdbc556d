//! Params and results of the outcome methods: `outcome`, `outcomes`, `unarchive`,
//! `archived`, `audit`, and the manifest `session_end` takes.

use amber_core::{Memory, MemoryId, Millis, Outcome, Report, Scope};
use serde::{Deserialize, Serialize};

/// `outcome` params: what came of relying on a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeParams {
    /// The memory (an id or a prefix of at least 4 hex digits).
    pub memory_id: String,
    /// `success`, `failure` or `neutral`.
    pub result: Outcome,
    /// The session it was relied on in: within a session the latest word on a memory
    /// wins, and the session's agent is recorded.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The agent reporting, when no session names it.
    #[serde(default)]
    pub agent: Option<String>,
    /// Free text, kept in the log.
    #[serde(default)]
    pub note: Option<String>,
}

/// One line of a session's manifest: a memory the session was given or found, and
/// whether it relied on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestEntry {
    /// The memory (an id or a prefix of at least 4 hex digits).
    pub memory_id: String,
    /// True when the session relied on it.
    pub used: bool,
    /// What came of it, when used.
    #[serde(default)]
    pub result: Option<Outcome>,
}

/// A memory's standing after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandingResult {
    /// The memory's id.
    pub id: MemoryId,
    /// Its weight, 0..1.
    pub weight: f32,
    /// When it was archived, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Millis>,
    /// The invalidation that retires it, if one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<MemoryId>,
}

impl From<&Memory> for StandingResult {
    fn from(m: &Memory) -> StandingResult {
        StandingResult {
            id: m.id.clone(),
            weight: m.weight,
            archived_at: m.archived_at,
            superseded_by: m.superseded_by.clone(),
        }
    }
}

/// What `session_end` did with a manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestResult {
    /// The standing of every memory the manifest named, in its order.
    pub applied: Vec<StandingResult>,
    /// Lines that named no live memory, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

/// `outcomes` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomesParams {
    /// The memory (an id or a prefix).
    pub memory_id: String,
    /// The session reading it: another agent's mail or diary is `not_found` to an agent
    /// whose session may not read it (see `get`); a person reads everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `outcomes` result: the memory and every word logged on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomesResult {
    /// The memory as it stands.
    pub memory: Memory,
    /// The log, oldest first.
    pub reports: Vec<Report>,
}

/// `archived` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchivedParams {
    /// Only this scope and those under it (default: every scope).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// At most this many (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `archived` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedResult {
    /// Archived memories, newest archived first.
    pub memories: Vec<Memory>,
}

/// `audit` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditParams {
    /// How many of the most recent sessions to look at (default 200, at most 10,000).
    #[serde(default)]
    pub sessions: Option<usize>,
}

/// A success claimed for a memory that the session was never served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnbackedClaim {
    /// The memory.
    pub memory_id: MemoryId,
    /// The session that claimed it.
    pub session_id: String,
    /// The agent that claimed it.
    pub agent: Option<String>,
    /// When.
    pub at: Millis,
}

/// A memory served in a session that never reported on it either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unreported {
    /// The memory.
    pub memory_id: MemoryId,
    /// The session.
    pub session_id: String,
    /// Its agent.
    pub agent: String,
    /// When it was served.
    pub served_at: Millis,
}

/// `audit` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditResult {
    /// Sessions looked at.
    pub sessions: usize,
    /// Successes claimed in a session that was never served the memory.
    pub unbacked_successes: Vec<UnbackedClaim>,
    /// Memories served in an ended session that never reported on them.
    pub unreported: Vec<Unreported>,
    /// The person's methods asked while an agent session was live, most recent last
    /// (at most 50): whoever asked them, as the daemon saw the caller.
    #[serde(default)]
    pub person_actions: Vec<PersonAction>,
}

/// A person's method asked while an agent session was live, and its caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonAction {
    /// When.
    pub at: Millis,
    /// What was asked (`purge`, `setting a memory's trust`, ...).
    pub what: String,
    /// The caller's pid.
    pub pid: Option<u32>,
    /// The caller's real executable.
    pub exe: Option<String>,
    /// The caller's command line (one line, at most 200 characters, secrets redacted).
    pub command: String,
    /// The caller had a controlling terminal.
    pub tty: bool,
    /// The caller's parent was init: it had left whatever started it.
    pub detached: bool,
    /// The agent sessions live at the time (`id (agent)`).
    pub live_sessions: Vec<String>,
    /// It was refused (irreversible, asked by a detached caller with no terminal).
    pub refused: bool,
}

/// `set_trust` params: a person's word on how far a memory is trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetTrustParams {
    /// The memory's id or a prefix of it.
    pub id: String,
    /// `person` (promote: served like the person's own word), `agent` or `external`
    /// (demote: found by recall, never served unasked).
    pub trust: amber_core::origin::Trust,
}
