//! An interjection decision as it is recorded: what tier 2 decided for one event, why,
//! with its scores. Its own module so that a session's record (`session`) and the
//! decision logic (`interject`) both use it without depending on each other.

use amber_core::MemoryId;
use serde::{Deserialize, Serialize};

use crate::judge::Verdict;

/// Why a decision went the way it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Fired: the best candidate cleared the gate.
    Gate,
    /// Fired: the best candidate was in the band and the judge said yes.
    Judge,
    /// Silent: tool outputs are captured, not searched.
    NotSearched,
    /// Silent: the session is in the holdout arm (served nothing).
    Withheld,
    /// Not searched: a `fork`, `stuck` or `done` moment reminds instead.
    Moment,
    /// Silent: the event has too little text.
    TooShort,
    /// Silent: an interjection fired within the last `cooldown_events` events.
    Cooldown,
    /// Silent: the engine found nothing in the project's scope.
    NoCandidates,
    /// Silent: a candidate cleared the gate, but this session already has it.
    AlreadyServed,
    /// Silent: the best candidate is below the band.
    BelowBand,
    /// Silent: the best candidate is in the band and no judge is configured.
    JudgeOff,
    /// Silent: the judge said no.
    JudgeNo,
    /// Silent: the judge failed or ran out of time (counts as no).
    JudgeFailed,
}

/// A candidate as the decision saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The memory.
    pub id: MemoryId,
    /// Cosine of its best chunk to the event.
    pub cosine: f32,
    /// Its fused hybrid score.
    pub fused: f32,
    /// This session already has it.
    pub served_earlier: bool,
}

/// A memory handed to the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interjected {
    /// The memory.
    pub id: MemoryId,
    /// Cosine of its best chunk to the event.
    pub score: f32,
    /// Its content, verbatim, cut to the interjection's character budget.
    pub content: String,
    /// True when `content` was cut (`get` returns the whole memory).
    pub truncated: bool,
}

/// One interjection decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The event (counted from 1 in the session).
    pub event: u64,
    /// Whether something was interjected.
    pub fired: bool,
    /// Why.
    pub reason: Reason,
    /// The gate in force.
    pub gate: f32,
    /// The band in force.
    pub band: f32,
    /// The best cosine among candidates not yet served.
    pub best: Option<f32>,
    /// The top candidates (at most 5), best cosine first.
    pub candidates: Vec<Candidate>,
    /// The judge asked, if one was.
    pub judge: Option<String>,
    /// What it said.
    pub verdict: Option<Verdict>,
    /// Judge time in milliseconds.
    pub judge_ms: Option<f64>,
    /// What was interjected.
    pub memories: Vec<Interjected>,
    /// The text to hand the agent (empty when silent).
    pub text: String,
}

impl Decision {
    /// A silent decision made before any search.
    pub fn silent(event: u64, reason: Reason) -> Decision {
        Decision {
            event,
            fired: false,
            reason,
            gate: 0.0,
            band: 0.0,
            best: None,
            candidates: Vec::new(),
            judge: None,
            verdict: None,
            judge_ms: None,
            memories: Vec::new(),
            text: String::new(),
        }
    }
}
