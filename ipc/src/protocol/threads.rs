//! Params and results of addressing: the inbox `session_start` hands over, `thread`,
//! `guard` and `release`.

use amber_core::{Memory, MemoryId};
use serde::{Deserialize, Serialize};

/// Memories addressed to the agent, handed over at session start before the briefing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Inbox {
    /// The text to hand the agent (empty when nothing is addressed to it).
    pub text: String,
    /// The memories, oldest first.
    pub items: Vec<InboxItem>,
    /// Estimated tokens used (taken from the briefing's budget).
    pub tokens: usize,
    /// Addressed memories that did not fit (handed over by a later session).
    #[serde(default)]
    pub waiting: usize,
}

/// One memory of an inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxItem {
    /// The memory.
    pub id: MemoryId,
    /// Its seq.
    pub seq: u64,
    /// Its author.
    pub from: Option<String>,
    /// Its recipient (the agent, or `all`).
    pub to: Option<String>,
    /// What it answers, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<MemoryId>,
    /// Its opening, cut at a word.
    pub opening: String,
}

/// `thread` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadParams {
    /// Any memory of the thread (an id or a prefix).
    pub id: String,
    /// The session reading it: an agent is given only the memories its session may read
    /// (another agent's mail and diary stay theirs; see `get`); a person reads everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `thread` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// The thread's root (the memory it starts from).
    pub thread: MemoryId,
    /// Its memories in filing order, root first.
    pub memories: Vec<Memory>,
    /// Why it is held, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// `guard` params: may `agent` answer `memory_id`?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardParams {
    /// The trigger (an id or a prefix).
    pub memory_id: String,
    /// The agent that would answer.
    pub agent: String,
}

/// `guard` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardResult {
    /// The decision and the rule that made it.
    #[serde(flatten)]
    pub decision: amber_tiers::guard::Decision,
    /// The trigger.
    pub memory_id: MemoryId,
    /// The thread's root.
    pub thread: MemoryId,
}

/// `release` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseParams {
    /// The thread (its root, or any memory of it; an id or a prefix).
    pub thread: String,
}

/// `release` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseResult {
    /// The thread's root.
    pub thread: MemoryId,
    /// True when a hold was lifted.
    pub released: bool,
}
