//! The [`MemoryStore`] impl of the team store: each method delegates to the module
//! that ports it from the SQLite store.

use std::collections::HashMap;

use amber_core::advice::{Judgement, Note, Situation};
use amber_core::graph::{Entity, Fact, GraphStats, NewEntity, NewFact};
use amber_core::{Link, Memory, MemoryId, Millis, NewMemory, NewRun, Report, Run, RunReward, Scope};

use super::PgStore;
use crate::{
    FactPage, GuardEntry, Hold, Key, KgAdded, MemoryStore, Moved, PrefixMatch, Purged, Refusal, Result,
    SessionRow, StandingRow, Vector,
};

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

    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<crate::Change>> {
        PgStore::changes_after(self, after, limit)
    }

    fn max_change(&self) -> Result<u64> {
        PgStore::max_change(self)
    }

    fn count(&self) -> Result<u64> {
        PgStore::count(self)
    }

    fn count_forgotten(&self) -> Result<u64> {
        PgStore::count_forgotten(self)
    }

    fn count_raw_captures(&self) -> Result<u64> {
        PgStore::count_raw_captures(self)
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

    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>> {
        PgStore::by_source(self, scope, source)
    }

    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>> {
        PgStore::document_sources(self, scope, prefix)
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
        PgStore::add_links(self, links)
    }

    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        PgStore::links_of(self, id)
    }

    fn duplicate_seqs(&self) -> Result<Vec<u64>> {
        PgStore::duplicate_seqs(self)
    }

    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        PgStore::session_memories(self, session_id)
    }

    fn put_session(&mut self, s: &SessionRow) -> Result<()> {
        PgStore::put_session(self, s)
    }

    fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        PgStore::get_session(self, id)
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        PgStore::recent_sessions(self, limit)
    }

    fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded> {
        PgStore::kg_add(self, scope, entities, facts, now)
    }

    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>> {
        PgStore::kg_invalidate(self, id, at, reason, now)
    }

    fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        PgStore::kg_fact(self, id)
    }

    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
        PgStore::kg_facts_sourced_by(self, memory)
    }

    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
        PgStore::kg_invalidations(self, fact)
    }

    fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        PgStore::kg_entity(self, id)
    }

    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
        PgStore::kg_resolve(self, scope, name)
    }

    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
        PgStore::kg_facts_of(self, entity, as_of)
    }

    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
        PgStore::kg_facts_page(self, entity, as_of, after, limit)
    }

    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
        PgStore::kg_names(self)
    }

    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        PgStore::kg_add_mentions(self, pairs)
    }

    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        PgStore::kg_mentions(self, entity, limit)
    }

    fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        PgStore::kg_mention_count(self, entity)
    }

    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        PgStore::kg_mention_seqs(self, entities, per_entity)
    }

    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
        PgStore::kg_stats(self, scope, now)
    }

    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()> {
        PgStore::note_scope_root(self, scope, root, now)
    }

    fn scope_roots(&self) -> Result<Vec<(String, String)>> {
        PgStore::scope_roots(self)
    }

    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64> {
        PgStore::durable_since(self, scopes, since)
    }

    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        PgStore::moved_to(self, id)
    }

    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        PgStore::lookup_prefix(self, prefix)
    }

    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>> {
        PgStore::move_scope(self, from, to, now)
    }

    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>> {
        PgStore::report(self, id, report, now)
    }

    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        PgStore::reports(self, id)
    }

    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        PgStore::session_reports(self, session_id)
    }

    fn standings(&self) -> Result<Vec<StandingRow>> {
        PgStore::standings(self)
    }

    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>> {
        PgStore::supersession_targets(self, ids)
    }

    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>> {
        PgStore::apply_supersessions(self, seqs, now)
    }

    fn unapplied_supersessions(&self) -> Result<Vec<u64>> {
        PgStore::unapplied_supersessions(self)
    }

    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>> {
        PgStore::refresh_targets(self, seq, now)
    }

    fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>> {
        PgStore::archived(self, scope, limit)
    }

    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        PgStore::inbox(self, agent, scopes, limit)
    }

    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()> {
        PgStore::mark_inbox_served(self, agent, seqs, now)
    }

    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        PgStore::thread(self, id)
    }

    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        PgStore::hold_of(self, thread)
    }

    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()> {
        PgStore::hold(self, thread, reason, now)
    }

    fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        PgStore::release(self, thread)
    }

    fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        PgStore::log_guard(self, e)
    }

    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        PgStore::guard_allowed(self, agent, trigger)
    }

    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<bool>> {
        PgStore::insert_runs(self, scope, agent, runs, now)
    }

    fn run(&self, id: &str) -> Result<Option<Run>> {
        PgStore::run(self, id)
    }

    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        PgStore::runs(self, scope, agent, limit)
    }

    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()> {
        PgStore::reward_runs(self, rewards)
    }

    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        PgStore::run_rewards(self, id)
    }

    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        PgStore::agent_activity(self, agent, since)
    }

    fn put_situations(&mut self, situations: &[Situation]) -> Result<()> {
        PgStore::put_situations(self, situations)
    }

    fn situations(&self, scope: &Scope) -> Result<Vec<Situation>> {
        PgStore::situations(self, scope)
    }

    fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()> {
        PgStore::merge_situation(self, scope, from, into)
    }

    fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()> {
        PgStore::sort_runs(self, scope, sorted)
    }

    fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>> {
        PgStore::sorted_runs(self, scope)
    }

    fn put_note(&mut self, note: &Note) -> Result<u32> {
        PgStore::put_note(self, note)
    }

    fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>> {
        PgStore::notes(self, scope, situation, history)
    }

    fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()> {
        PgStore::set_withheld(self, note, withheld)
    }

    fn mark_served(&mut self, session_id: &str, note: &Note, at: Millis) -> Result<Option<(u32, Millis)>> {
        PgStore::mark_served(self, session_id, note, at)
    }

    fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()> {
        PgStore::put_judgements(self, judgements)
    }

    fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>> {
        PgStore::judgements(self, scope, limit)
    }
}
