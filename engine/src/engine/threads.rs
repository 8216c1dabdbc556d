//! Addressing through the engine: inboxes, threads, holds and the guard's log (the
//! store keeps them; the rules live in `amber_tiers::guard`).

use amber_core::{Memory, MemoryId, Scope, now_millis};
use amber_store::{GuardEntry, Hold};

use super::{Engine, EngineWriter, read};
use crate::Result;

impl Engine {
    /// Memories addressed to `agent` (or `all`) within these scopes that its inbox has
    /// not served, oldest first; archived ones never come.
    pub fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        self.read(|s| s.inbox(agent, scopes, limit))
    }

    /// A memory's thread: its root first, then every answer, in filing order.
    pub fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        self.read(|s| s.thread(id))
    }

    /// The hold on a thread (by its root), if any.
    pub fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        self.read(|s| s.hold_of(thread))
    }

    /// True when the guard already allowed `agent` to answer `trigger`.
    pub fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        self.read(|s| s.guard_allowed(agent, trigger))
    }

    /// Failures reported for a memory (the latest word per session).
    pub fn failures(&self, seq: u64) -> u32 {
        read(&self.standing).get(&seq).map_or(0, |s| s.failures)
    }
}

impl EngineWriter<'_> {
    /// Holds a thread (by its root).
    pub fn hold(&mut self, thread: &MemoryId, reason: &str) -> Result<()> {
        Ok(self.store().hold(thread, reason, now_millis())?)
    }

    /// Logs a guard decision.
    pub fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        Ok(self.store().log_guard(e)?)
    }

    /// Notes what an agent's inbox served (each memory at most once per agent).
    pub fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64]) -> Result<()> {
        Ok(self.store().mark_inbox_served(agent, seqs, now_millis())?)
    }

    /// Lifts a thread's hold; true when there was one.
    pub fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        Ok(self.store().release(thread)?)
    }
}
