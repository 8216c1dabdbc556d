//! Runs, rewards and the advice learned from them. Part of the storage boundary ([`crate::MemoryStore`]):
//! each trait is implemented once per backend, in the file that owns its tables.

use amber_core::advice::{Judgement, Note, NoteVerdict, Serving, Situation};
use amber_core::{Millis, NewRun, Run, RunReward, RunWrite, Scope};

use crate::Result;

/// Runs and their rewards.
pub trait Runs {
    /// Records runs in one transaction (all or nothing); each is (id, run with its trace
    /// already redacted), its time `now`. A run with that id already there is kept as it
    /// was, unless it is a session's run (`NewRun::session`) nobody has rewarded: that one
    /// is rewritten (time `now`) and its judgement dropped. Per run, what was done.
    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<RunWrite>>;
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
}

/// Advice learned from runs: situations, notes, judgements.
pub trait Advice {
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

/// Words on served notes: the servings, and per session and note whether it was applied
/// and helped (the judge's and the person's).
pub trait Verdicts {
    /// The servings of notes in a scope and below (every scope when None) since a time,
    /// oldest first.
    fn servings(&self, scope: Option<&Scope>, since: Millis) -> Result<Vec<Serving>>;
    /// Stores words on served notes (one per session, note and giver: a later one replaces).
    fn put_note_verdicts(&mut self, verdicts: &[NoteVerdict]) -> Result<()>;
    /// The words on notes of a scope and below (every scope when None), oldest first.
    fn note_verdicts(&self, scope: Option<&Scope>) -> Result<Vec<NoteVerdict>>;
}
