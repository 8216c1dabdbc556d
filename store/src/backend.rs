//! The storage boundary: everything the engine (and, through it, the tiers and the
//! daemon) needs of a store, as one trait. The SQLite [`Store`] implements it by
//! delegating to its own methods; a second backend (PostgreSQL, for team scopes)
//! implements the same trait, so no SQL dialect appears outside this crate. A
//! [`Backend`] opens a store's write connection and its read connections.

use std::collections::HashMap;

use amber_core::advice::{Judgement, Note, Situation};
use amber_core::graph::{Entity, Fact, GraphStats, NewEntity, NewFact};
use amber_core::{Link, Memory, MemoryId, Millis, NewMemory, NewRun, Report, Run, RunReward, Scope};

use crate::{
    FactPage, GuardEntry, Hold, Key, KgAdded, Moved, PrefixMatch, Purged, Refusal, Result, SessionRow,
    StandingRow, Store, Vector,
};

mod open;
pub use open::{Backend, SqliteBackend};

/// What the engine needs of a store. Methods that change something take `&mut self`
/// and are atomic (one transaction each); the rest read a consistent snapshot.
pub trait MemoryStore: Send {
    // Memories: the source of truth, verbatim
    /// Files memories in one transaction (see `Store::insert_batch`).
    fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>>;
    /// Marks a memory forgotten (see `Store::forget`).
    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>>;
    /// Deletes a forgotten memory for good.
    fn purge(&mut self, id: &MemoryId) -> Result<Purged>;
    /// The forgotten memories' seqs.
    fn forgotten_seqs(&self) -> Result<Vec<u64>>;
    /// The forgotten memories filed in a session.
    fn forgotten_session_keys(&self) -> Result<Vec<Key>>;
    /// A memory by id, forgotten or not.
    fn get(&self, id: &MemoryId) -> Result<Option<Memory>>;
    /// Live memories by seq, in the order asked.
    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>>;
    /// Live memories with `after < seq <= through`, in seq order, at most `limit`.
    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>>;
    /// The filter keys of live memories after `after`, at most `limit`.
    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>>;
    /// Forgets and moves other writers made, after change `after`, oldest first, at most
    /// `limit`. A store no other node writes (the SQLite store) keeps no such log:
    /// nothing.
    fn changes_after(&self, _after: u64, _limit: usize) -> Result<Vec<crate::Change>> {
        Ok(Vec::new())
    }
    /// The newest change number (0 for a store that keeps no change log).
    fn max_change(&self) -> Result<u64> {
        Ok(0)
    }
    /// Live memories.
    fn count(&self) -> Result<u64>;
    /// Forgotten memories.
    fn count_forgotten(&self) -> Result<u64>;
    /// Live raw captures (type `event`, filed in a session or by a capture).
    fn count_raw_captures(&self) -> Result<u64>;
    /// Live memories with `seq <= seq`.
    fn count_through(&self, seq: u64) -> Result<u64>;
    /// The highest seq ever given.
    fn max_seq(&self) -> Result<u64>;
    /// Live memories per scope.
    fn scope_counts(&self) -> Result<Vec<(String, u64)>>;
    /// A scope's memories from one source, archived included (`Store::by_source`).
    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>>;
    /// The document files a scope holds under a path prefix (`Store::document_sources`).
    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>>;

    // The embedding cache and metadata
    /// Cached vectors of these chunk hashes under a model.
    fn cached_vectors(&self, model: &str, hashes: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vector>>;
    /// Caches vectors under a model. A hash already cached keeps its vector (the team
    /// store is insert-only for every role from schema 6; the local store does the same).
    fn put_vectors(&mut self, model: &str, vectors: &[([u8; 32], &[f32])]) -> Result<()>;
    /// Vectors cached under a model.
    fn cached_vector_count(&self, model: &str) -> Result<u64>;
    /// A metadata value.
    fn meta(&self, key: &str) -> Result<Option<String>>;
    /// Sets a metadata value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    /// True when the backend's own consistency check passes.
    fn integrity_check(&self) -> Result<bool>;

    // Links and sessions
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

    // The knowledge graph
    /// Adds entities and facts to a scope's graph in one transaction.
    fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded>;
    /// Ends a fact's window.
    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>>;
    /// A fact by id.
    fn kg_fact(&self, id: i64) -> Result<Option<Fact>>;
    /// The facts not invalidated yet that a memory is a source of.
    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>>;
    /// A fact's invalidations: (when its window ended, why).
    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>>;
    /// An entity by id.
    fn kg_entity(&self, id: i64) -> Result<Option<Entity>>;
    /// The entity a name or alias names in a scope.
    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>>;
    /// An entity's facts (valid at `as_of` when given).
    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>>;
    /// A page of an entity's facts valid at `as_of`, after a fact id.
    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage>;
    /// Every name and alias: (entity, scope, normalized name).
    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>>;
    /// Links entities to memories that mention them.
    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize>;
    /// The newest memories mentioning an entity.
    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>>;
    /// How many memories mention an entity.
    fn kg_mention_count(&self, entity: i64) -> Result<u64>;
    /// Seqs of the newest memories mentioning each entity.
    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>>;
    /// Counts of one scope's graph, or all.
    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats>;

    // Scopes
    /// Notes the project root a scope stands for.
    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()>;
    /// Every scope with a known root.
    fn scope_roots(&self) -> Result<Vec<(String, String)>>;
    /// Live durable memories filed since a time in these scopes.
    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64>;
    /// Where a moved memory went.
    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>>;
    /// The memory an id prefix names.
    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch>;
    /// Re-files a scope's memories into another, in one transaction.
    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>>;

    // Standing: outcomes, supersession, the archive
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

    // Addressing: inboxes, threads, holds, the guard's log
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

    // Runs and rewards
    /// Records runs in one transaction; per run, whether it was new.
    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<bool>>;
    /// A run by id.
    fn run(&self, id: &str) -> Result<Option<Run>>;
    /// The newest runs.
    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>>;
    /// Rewards runs in one transaction.
    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()>;
    /// A run's rewards, oldest first.
    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>>;
    /// Runs and rewards an agent recorded since a time.
    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)>;

    // Advice
    /// Adds situations or updates them (see `Store::put_situations`).
    fn put_situations(&mut self, situations: &[Situation]) -> Result<()>;
    /// A scope's situations.
    fn situations(&self, scope: &Scope) -> Result<Vec<Situation>>;
    /// Merges one situation into another, its key kept as an alias.
    fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()>;
    /// Records which situation each run was sorted under.
    fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()>;
    /// (run id, situation) of every run sorted in a scope.
    fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>>;
    /// Stores a note as the next version of its series; returns that version.
    fn put_note(&mut self, note: &Note) -> Result<u32>;
    /// A scope's notes (newest of each series, or every version).
    fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>>;
    /// Sets or clears why a note version is withheld.
    fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()>;
    /// Records a session's serving of a note; the earlier serving when there was one.
    fn mark_served(&mut self, session_id: &str, note: &Note, at: Millis) -> Result<Option<(u32, Millis)>>;
    /// Stores judgements of runs.
    fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()>;
    /// The judgements of a scope's runs and sessions (every scope's when None), newest first.
    fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>>;
}

impl MemoryStore for Store {
    fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>> {
        Store::insert_batch(self, memories, now)
    }

    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>> {
        Store::forget(self, id, now)
    }

    fn purge(&mut self, id: &MemoryId) -> Result<Purged> {
        Store::purge(self, id)
    }

    fn forgotten_seqs(&self) -> Result<Vec<u64>> {
        Store::forgotten_seqs(self)
    }

    fn forgotten_session_keys(&self) -> Result<Vec<Key>> {
        Store::forgotten_session_keys(self)
    }

    fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        Store::get(self, id)
    }

    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
        Store::get_by_seqs(self, seqs)
    }

    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>> {
        Store::scan(self, after, through, limit)
    }

    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>> {
        Store::scan_keys(self, after, limit)
    }

    fn count(&self) -> Result<u64> {
        Store::count(self)
    }

    fn count_forgotten(&self) -> Result<u64> {
        Store::count_forgotten(self)
    }

    fn count_raw_captures(&self) -> Result<u64> {
        Store::count_raw_captures(self)
    }

    fn count_through(&self, seq: u64) -> Result<u64> {
        Store::count_through(self, seq)
    }

    fn max_seq(&self) -> Result<u64> {
        Store::max_seq(self)
    }

    fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        Store::scope_counts(self)
    }

    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>> {
        Store::by_source(self, scope, source)
    }

    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>> {
        Store::document_sources(self, scope, prefix)
    }

    fn cached_vectors(&self, model: &str, hashes: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vector>> {
        Store::cached_vectors(self, model, hashes)
    }

    fn put_vectors(&mut self, model: &str, vectors: &[([u8; 32], &[f32])]) -> Result<()> {
        Store::put_vectors(self, model, vectors)
    }

    fn cached_vector_count(&self, model: &str) -> Result<u64> {
        Store::cached_vector_count(self, model)
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        Store::meta(self, key)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        Store::set_meta(self, key, value)
    }

    fn integrity_check(&self) -> Result<bool> {
        Store::integrity_check(self)
    }

    fn add_links(&mut self, links: &[Link]) -> Result<usize> {
        Store::add_links(self, links)
    }

    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        Store::links_of(self, id)
    }

    fn duplicate_seqs(&self) -> Result<Vec<u64>> {
        Store::duplicate_seqs(self)
    }

    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        Store::session_memories(self, session_id)
    }

    fn put_session(&mut self, s: &SessionRow) -> Result<()> {
        Store::put_session(self, s)
    }

    fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        Store::get_session(self, id)
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        Store::recent_sessions(self, limit)
    }

    fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded> {
        Store::kg_add(self, scope, entities, facts, now)
    }

    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>> {
        Store::kg_invalidate(self, id, at, reason, now)
    }

    fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        Store::kg_fact(self, id)
    }

    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
        Store::kg_facts_sourced_by(self, memory)
    }

    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
        Store::kg_invalidations(self, fact)
    }

    fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        Store::kg_entity(self, id)
    }

    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
        Store::kg_resolve(self, scope, name)
    }

    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
        Store::kg_facts_of(self, entity, as_of)
    }

    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
        Store::kg_facts_page(self, entity, as_of, after, limit)
    }

    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
        Store::kg_names(self)
    }

    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        Store::kg_add_mentions(self, pairs)
    }

    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        Store::kg_mentions(self, entity, limit)
    }

    fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        Store::kg_mention_count(self, entity)
    }

    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        Store::kg_mention_seqs(self, entities, per_entity)
    }

    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
        Store::kg_stats(self, scope, now)
    }

    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()> {
        Store::note_scope_root(self, scope, root, now)
    }

    fn scope_roots(&self) -> Result<Vec<(String, String)>> {
        Store::scope_roots(self)
    }

    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64> {
        Store::durable_since(self, scopes, since)
    }

    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        Store::moved_to(self, id)
    }

    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        Store::lookup_prefix(self, prefix)
    }

    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>> {
        Store::move_scope(self, from, to, now)
    }

    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>> {
        Store::report(self, id, report, now)
    }

    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        Store::reports(self, id)
    }

    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        Store::session_reports(self, session_id)
    }

    fn standings(&self) -> Result<Vec<StandingRow>> {
        Store::standings(self)
    }

    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>> {
        Store::supersession_targets(self, ids)
    }

    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>> {
        Store::apply_supersessions(self, seqs, now)
    }

    fn unapplied_supersessions(&self) -> Result<Vec<u64>> {
        Store::unapplied_supersessions(self)
    }

    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>> {
        Store::refresh_targets(self, seq, now)
    }

    fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>> {
        Store::archived(self, scope, limit)
    }

    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        Store::inbox(self, agent, scopes, limit)
    }

    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()> {
        Store::mark_inbox_served(self, agent, seqs, now)
    }

    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        Store::thread(self, id)
    }

    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        Store::hold_of(self, thread)
    }

    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()> {
        Store::hold(self, thread, reason, now)
    }

    fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        Store::release(self, thread)
    }

    fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        Store::log_guard(self, e)
    }

    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        Store::guard_allowed(self, agent, trigger)
    }

    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<bool>> {
        Store::insert_runs(self, scope, agent, runs, now)
    }

    fn run(&self, id: &str) -> Result<Option<Run>> {
        Store::run(self, id)
    }

    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        Store::runs(self, scope, agent, limit)
    }

    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()> {
        Store::reward_runs(self, rewards)
    }

    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        Store::run_rewards(self, id)
    }

    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        Store::agent_activity(self, agent, since)
    }

    fn put_situations(&mut self, situations: &[Situation]) -> Result<()> {
        Store::put_situations(self, situations)
    }

    fn situations(&self, scope: &Scope) -> Result<Vec<Situation>> {
        Store::situations(self, scope)
    }

    fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()> {
        Store::merge_situation(self, scope, from, into)
    }

    fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()> {
        Store::sort_runs(self, scope, sorted)
    }

    fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>> {
        Store::sorted_runs(self, scope)
    }

    fn put_note(&mut self, note: &Note) -> Result<u32> {
        Store::put_note(self, note)
    }

    fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>> {
        Store::notes(self, scope, situation, history)
    }

    fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()> {
        Store::set_withheld(self, note, withheld)
    }

    fn mark_served(&mut self, session_id: &str, note: &Note, at: Millis) -> Result<Option<(u32, Millis)>> {
        Store::mark_served(self, session_id, note, at)
    }

    fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()> {
        Store::put_judgements(self, judgements)
    }

    fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>> {
        Store::judgements(self, scope, limit)
    }
}
