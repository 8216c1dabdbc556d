//! The [`MemoryStore`] impl of the team store: each method delegates to the module
//! that ports it from the SQLite store.

use std::collections::HashMap;

use amber_core::graph::{Entity, Fact, GraphStats, NewEntity, NewFact};
use amber_core::{Link, Memory, MemoryId, Millis, NewMemory, NewRun, Report, Run, RunReward, Scope};

use super::PgStore;
#[allow(unused_imports)]
use crate::{
    Error, FactPage, GuardEntry, Hold, Key, KgAdded, MemoryStore, Moved, PrefixMatch, Purged, Refusal,
    Result, SessionRow, StandingRow, Vector,
};

#[allow(dead_code)]
fn unsupported(method: &str) -> Error {
    Error::Unsupported(format!("{method} is not supported on the team store yet"))
}

#[allow(unused_variables)]
impl MemoryStore for PgStore {
    fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>> {
        PgStore::insert_batch(self, memories, now)
    }

    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>> {
        PgStore::forget(self, id, now)
    }

    fn purge(&mut self, id: &MemoryId) -> Result<Purged> {
        PgStore::purge(self, id)
    }

    fn forgotten_seqs(&self) -> Result<Vec<u64>> {
        PgStore::forgotten_seqs(self)
    }

    fn forgotten_session_keys(&self) -> Result<Vec<Key>> {
        PgStore::forgotten_session_keys(self)
    }

    fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        PgStore::get(self, id)
    }

    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
        PgStore::get_by_seqs(self, seqs)
    }

    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>> {
        PgStore::scan(self, after, through, limit)
    }

    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>> {
        PgStore::scan_keys(self, after, limit)
    }

    fn count(&self) -> Result<u64> {
        PgStore::count(self)
    }

    fn count_forgotten(&self) -> Result<u64> {
        PgStore::count_forgotten(self)
    }

    fn count_through(&self, seq: u64) -> Result<u64> {
        PgStore::count_through(self, seq)
    }

    fn max_seq(&self) -> Result<u64> {
        PgStore::max_seq(self)
    }

    fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        PgStore::scope_counts(self)
    }

    fn cached_vectors(&self, model: &str, hashes: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vector>> {
        PgStore::cached_vectors(self, model, hashes)
    }

    fn put_vectors(&mut self, model: &str, vectors: &[([u8; 32], &[f32])]) -> Result<()> {
        PgStore::put_vectors(self, model, vectors)
    }

    fn cached_vector_count(&self, model: &str) -> Result<u64> {
        PgStore::cached_vector_count(self, model)
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        PgStore::meta(self, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        PgStore::set_meta(self, key, value)
    }

    fn integrity_check(&self) -> Result<bool> {
        PgStore::integrity_check(self)
    }

    fn add_links(&mut self, links: &[Link]) -> Result<usize> {
        Err(unsupported("add_links"))
    }

    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        Err(unsupported("links_of"))
    }

    fn duplicate_seqs(&self) -> Result<Vec<u64>> {
        Err(unsupported("duplicate_seqs"))
    }

    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        Err(unsupported("session_memories"))
    }

    fn put_session(&mut self, s: &SessionRow) -> Result<()> {
        Err(unsupported("put_session"))
    }

    fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        Err(unsupported("get_session"))
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        Err(unsupported("recent_sessions"))
    }

    fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded> {
        Err(unsupported("kg_add"))
    }

    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>> {
        Err(unsupported("kg_invalidate"))
    }

    fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        Err(unsupported("kg_fact"))
    }

    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
        Err(unsupported("kg_facts_sourced_by"))
    }

    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
        Err(unsupported("kg_invalidations"))
    }

    fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        Err(unsupported("kg_entity"))
    }

    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
        Err(unsupported("kg_resolve"))
    }

    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
        Err(unsupported("kg_facts_of"))
    }

    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
        Err(unsupported("kg_facts_page"))
    }

    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
        Err(unsupported("kg_names"))
    }

    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        Err(unsupported("kg_add_mentions"))
    }

    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        Err(unsupported("kg_mentions"))
    }

    fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        Err(unsupported("kg_mention_count"))
    }

    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        Err(unsupported("kg_mention_seqs"))
    }

    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
        Err(unsupported("kg_stats"))
    }

    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()> {
        Err(unsupported("note_scope_root"))
    }

    fn scope_roots(&self) -> Result<Vec<(String, String)>> {
        Err(unsupported("scope_roots"))
    }

    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64> {
        Err(unsupported("durable_since"))
    }

    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        Err(unsupported("moved_to"))
    }

    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        Err(unsupported("lookup_prefix"))
    }

    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>> {
        Err(unsupported("move_scope"))
    }

    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>> {
        Err(unsupported("report"))
    }

    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        Err(unsupported("reports"))
    }

    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        Err(unsupported("session_reports"))
    }

    fn standings(&self) -> Result<Vec<StandingRow>> {
        Err(unsupported("standings"))
    }

    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>> {
        Err(unsupported("supersession_targets"))
    }

    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>> {
        Err(unsupported("apply_supersessions"))
    }

    fn unapplied_supersessions(&self) -> Result<Vec<u64>> {
        Err(unsupported("unapplied_supersessions"))
    }

    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>> {
        Err(unsupported("refresh_targets"))
    }

    fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>> {
        Err(unsupported("archived"))
    }

    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        Err(unsupported("inbox"))
    }

    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()> {
        Err(unsupported("mark_inbox_served"))
    }

    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        Err(unsupported("thread"))
    }

    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        Err(unsupported("hold_of"))
    }

    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()> {
        Err(unsupported("hold"))
    }

    fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        Err(unsupported("release"))
    }

    fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        Err(unsupported("log_guard"))
    }

    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        Err(unsupported("guard_allowed"))
    }

    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<bool>> {
        Err(unsupported("insert_runs"))
    }

    fn run(&self, id: &str) -> Result<Option<Run>> {
        Err(unsupported("run"))
    }

    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        Err(unsupported("runs"))
    }

    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()> {
        Err(unsupported("reward_runs"))
    }

    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        Err(unsupported("run_rewards"))
    }

    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        Err(unsupported("agent_activity"))
    }
}
