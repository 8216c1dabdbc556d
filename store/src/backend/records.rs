//! Sessions and the records they leave: links, outcomes and standing, addressing. Part of the storage boundary ([`crate::MemoryStore`]):
//! each trait is implemented once per backend, in the file that owns its tables.

use amber_core::{Link, Memory, MemoryId, Millis, Report, Scope};

use crate::{GuardEntry, Hold, Refusal, Result, SessionRow, StandingRow};

/// Session records and curation links.
pub trait Sessions {
    /// Adds curation links; returns how many were new.
    fn add_links(&mut self, links: &[Link]) -> Result<usize>;
    /// Links from or to a memory.
    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>>;
    /// Seqs of memories linked as the newer copy of a duplicate.
    fn duplicate_seqs(&self) -> Result<Vec<u64>>;
    /// The live memories a session filed.
    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>>;
    /// Stores a session's record.
    fn put_session(&mut self, s: &SessionRow) -> Result<()>;
    /// A stored session record.
    fn get_session(&self, id: &str) -> Result<Option<SessionRow>>;
    /// The most recent session records.
    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>>;
}

/// Outcome reports, standing, supersession and the archive.
pub trait Standing {
    /// Logs a word on a live memory and recomputes its standing (see `Store::report`).
    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>>;
    /// Every word logged on a memory.
    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>>;
    /// The words logged in a session.
    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>>;
    /// Live memories whose standing differs from a new memory's.
    fn standings(&self) -> Result<Vec<StandingRow>>;
    /// Checks the targets of a supersession.
    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>>;
    /// Records invalidations' supersessions and recomputes what they retire.
    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>>;
    /// Invalidations whose supersessions are not recorded yet.
    fn unapplied_supersessions(&self) -> Result<Vec<u64>>;
    /// Recomputes a memory's standing and what it supersedes.
    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>>;
    /// Archived live memories.
    fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>>;
}

/// Memories addressed to agents: inboxes, threads, holds and the loop guard's log.
pub trait Addressing {
    /// Memories addressed to an agent that its inbox has not served.
    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>>;
    /// Notes what an agent's inbox served.
    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()>;
    /// A memory's thread, root first.
    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>>;
    /// The hold on a thread.
    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>>;
    /// Holds a thread.
    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()>;
    /// Lifts a hold.
    fn release(&mut self, thread: &MemoryId) -> Result<bool>;
    /// Logs a guard decision.
    fn log_guard(&mut self, e: &GuardEntry) -> Result<()>;
    /// True when the guard already allowed the agent to answer the trigger.
    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool>;
}
