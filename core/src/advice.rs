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

/// A session's serving of a note (`get_advice` records one per session and situation).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Serving {
    /// The session served.
    pub session_id: String,
    /// The note's scope.
    pub scope: Scope,
    /// Its situation.
    pub situation: String,
    /// Its series' agent ('' in the store: the shared note).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The version served.
    pub version: u32,
    /// When.
    pub at: Millis,
}

/// Who gave a word on a served note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictBy {
    /// The judge (a model), from the session's transcript.
    Judge,
    /// The person, at the command line: it overrides the judge's.
    Person,
}

impl VerdictBy {
    /// Its name in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictBy::Judge => "judge",
            VerdictBy::Person => "person",
        }
    }

    /// From its name in the store.
    pub fn parse(s: &str) -> Option<VerdictBy> {
        match s {
            "judge" => Some(VerdictBy::Judge),
            "person" => Some(VerdictBy::Person),
            _ => None,
        }
    }
}

/// A word on one note served in one session: was it applied, and did it help (None:
/// can't tell).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NoteVerdict {
    /// The session it was served in.
    pub session_id: String,
    /// The note's scope.
    pub scope: Scope,
    /// Its situation.
    pub situation: String,
    /// Its series' agent (None: the shared note).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The version served.
    pub version: u32,
    /// Whose session it was: the voice the tally counts (the session's agent).
    pub voice: String,
    /// Was the note applied.
    pub applied: Option<bool>,
    /// Did it help.
    pub helped: Option<bool>,
    /// The judge or the person.
    pub by: VerdictBy,
    /// Why, short.
    #[serde(default)]
    pub reason: String,
    /// The judge's model (`openai:<model>`); None for a person's word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When.
    pub at: Millis,
}

/// Where a note stands by its tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Not enough words either way.
    #[default]
    Open,
    /// It helped at least the bar's number of voices, more than it did not.
    Ratified,
    /// It did not help at least the bar's number of voices, more than it did: withheld.
    Unhelpful,
}

/// A note series' tally.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// The note's scope.
    pub scope: Scope,
    /// Its situation.
    pub situation: String,
    /// Its series' agent (None: the shared note).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Sessions it was served in (every version).
    pub served: u32,
    /// Voices with a word on it (their latest judged session each).
    pub voices: u32,
    /// Of those, the ones whose latest session applied it.
    pub applied: u32,
    /// Whose latest session it helped.
    pub helped: u32,
    /// Whose latest session it did not help.
    pub not_helped: u32,
    /// The evidence bar it was measured against.
    pub bar: u32,
    /// Ratified, unhelpful or open.
    pub standing: Standing,
}

impl Tally {
    /// One line for people: `served 12, helped 4 of 5 voices (ratified)`.
    pub fn line(&self) -> String {
        let standing = match self.standing {
            Standing::Open => format!("open: the bar is {}", self.bar),
            Standing::Ratified => "ratified".into(),
            Standing::Unhelpful => "withheld: it did not help".into(),
        };
        format!(
            "served {}, applied by {} and helped {} of {} voices, did not help {} ({standing})",
            self.served, self.applied, self.helped, self.voices, self.not_helped
        )
    }
}
