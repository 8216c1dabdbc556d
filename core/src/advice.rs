//! Advice: situations (what a task is an instance of), the notes a model writes for a
//! situation from its runs, and the judgements a model gives unrewarded runs.

use crate::{Millis, Scope};

/// A situation: a kind of task, under a category, with one line that describes it (the
/// line the router reads).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Situation {
    /// Where it lives.
    pub scope: Scope,
    /// Its key, `category/name` in lower-case words joined by `-`.
    pub key: String,
    /// Its category (the part of the key before `/`).
    pub category: String,
    /// One line describing the tasks it holds.
    pub line: String,
    /// Other keys merged into this one (a task sorted under an alias is under this key).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// When it was first sorted.
    pub created_at: Millis,
}

/// One version of an advice note for a situation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Note {
    /// Where it lives.
    pub scope: Scope,
    /// The situation's key.
    pub situation: String,
    /// For a personal note, the agent whose runs it was written from (served to that
    /// agent first); None for the scope's shared note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its version, from 1.
    pub version: u32,
    /// The note: `When`, `Steps`, `Pitfalls` and `Evidence` sections.
    pub text: String,
    /// The runs it was written from.
    pub runs: Vec<String>,
    /// The situation's rewarded runs when it was written (the rewrite rule counts from it).
    pub run_count: u32,
    /// Of those, the wrong ones (reward below 0).
    pub wrong_count: u32,
    /// Distinct agents among the runs it was written from.
    pub agents: u32,
    /// When it was written.
    pub created_at: Millis,
    /// Why curation withholds it, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

/// A model's judgement of a run nobody rewarded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Judgement {
    /// The run.
    pub run_id: String,
    /// 1 (it went right), -1 (it went wrong), or None (the model could not tell).
    pub verdict: Option<i8>,
    /// The model's reason, short.
    pub reason: String,
    /// The model (`openai:<model>`).
    pub model: String,
    /// When.
    pub at: Millis,
}
