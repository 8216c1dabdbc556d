//! Params and results of advice: `get_advice`, `advice_learn`, `advice_show`,
//! `advice_list`, `judge_runs` and `judgements`. All need a model (`[learn]`) except
//! `advice_show`, `advice_list` and `judgements`, which read what was learned.

use amber_core::Scope;
use amber_core::advice::{Judgement, Note, NoteVerdict, Situation, Tally};
use amber_tiers::advice::plan::Skip;
use serde::{Deserialize, Serialize};

/// `get_advice` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetAdviceParams {
    /// The task about to be done.
    pub task: String,
    /// The session asking: a note is served once per session. A live session also
    /// gives the scope and agent when they are not given. Without one, a session is
    /// opened (its id is in the result: give it next time).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session's moment: `start` (default) and `next` route the task to a
    /// situation (a model call); `fork` and `stuck` re-read the Pitfalls, `done` the
    /// Pitfalls and the Steps, of the note the session was given (no model call; each
    /// part once).
    #[serde(default)]
    pub moment: Option<String>,
    /// Where the notes live (default: the session's scope, else `default`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The agent asking: its personal note is served first (default: the session's).
    #[serde(default)]
    pub agent: Option<String>,
    /// The longest a model call may take here, in ms (default and most: `[learn]
    /// timeout_ms`): a hook with a deadline gives what it has left, so that a note is
    /// only marked given when the answer can still reach the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// With a note, also the skills linked to its situation, in full (default: named
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<bool>,
    /// `notes` (default: the note as written) or `checklist` (steps and pitfalls as
    /// `- [ ]` lines, the evidence left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The most characters of the note given (500 to 100,000; cut at a line, saying so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
    /// False: no learned notes, only skills compiled from documents (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<bool>,
}

/// `get_advice` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetAdviceResult {
    /// The scope.
    pub scope: Scope,
    /// The situation the task was routed to; None when none fits (or none has a note).
    pub situation: Option<String>,
    /// The situation's line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// The note; absent when it was given earlier in the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The note's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The rewarded runs of the series when the note was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// The agent of a personal note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personal: Option<String>,
    /// True when this session was given the situation's note earlier.
    pub given_earlier: bool,
    /// The moment, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<String>,
    /// What happened, in words.
    pub message: String,
    /// Situation lines considered (after the shortlist when there were more than 60).
    pub considered: usize,
    /// The session the answer counts for (the one given, or the one opened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// True when no session was given and one was opened.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opened: bool,
    /// Skills compiled from documents served with the answer (or as it), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Where the note comes from: `runs` (learned from rewarded runs) or `documents`
    /// (a skill compiled from the project's documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// At `fork`, `stuck` and `done`: the section of the given note `note` holds
    /// (`Pitfalls` or `Steps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// The note (or the part re-read) as text for the agent, fenced and labelled with
    /// where it came from; empty when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// True when the session is in the holdout arm: it is given no advice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    /// The served note's tally: sessions served, voices it helped and did not, whether
    /// it is ratified (a note routed to but unhelpful by its tally is not served).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tally: Option<Tally>,
}

/// `advice_learn` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdviceLearnParams {
    /// The scope whose runs to learn from (its own runs, not those of scopes below it).
    pub scope: Scope,
    /// Answer repeated model calls from the cache (default: `[learn] cache`;
    /// `amber advice learn` sends true).
    #[serde(default)]
    pub cache: Option<bool>,
}

/// A note written by `advice_learn`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteWritten {
    /// The situation.
    pub situation: String,
    /// The agent of a personal note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The version written.
    pub version: u32,
    /// Runs it was written from.
    pub runs: usize,
    /// Distinct agents among them.
    pub agents: u32,
}

/// `advice_learn` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdviceLearnResult {
    /// The scope.
    pub scope: Scope,
    /// Runs newly sorted into a situation.
    pub sorted: usize,
    /// Tasks the model left unsorted (tried again next time).
    pub unsorted: usize,
    /// Situations newly made.
    pub new_situations: usize,
    /// Notes written.
    pub written: Vec<NoteWritten>,
    /// Notes not written, and why (rules: too few wrong runs, the people rule, current).
    pub skipped: Vec<Skip>,
    /// Notes the model failed to write (a malformed reply, a literal named, an edit
    /// dropping too much): these are tried again next time.
    pub failed: Vec<Skip>,
    /// Notes withheld or given back by curation in this pass.
    pub withheld: Vec<Skip>,
    /// Situations merged (`from` → `into`).
    pub merged: Vec<(String, String)>,
    /// Model calls made (answered by the model or the cache).
    pub calls: usize,
    /// Situations linked to skills compiled from documents (when the scope has both).
    #[serde(default)]
    pub linked: usize,
    /// Runs counted with a reward: given by their recorder or a person.
    #[serde(default)]
    pub rewarded: usize,
    /// Runs counted with the judge's verdict, nobody having rewarded them (none when
    /// `[learn] judged` is false).
    #[serde(default)]
    pub judged: usize,
}

/// `advice_show` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdviceShowParams {
    /// The scope.
    pub scope: Scope,
    /// The situation (a key or an alias).
    pub situation: String,
}

/// `advice_show` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviceShowResult {
    /// The situation.
    pub situation: Situation,
    /// Every version of its notes, shared and personal, oldest first per series.
    pub notes: Vec<Note>,
    /// Each note series' tally (served, applied, helped, ratified).
    #[serde(default)]
    pub tallies: Vec<Tally>,
}

/// `advice_list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdviceListParams {
    /// The scope.
    pub scope: Scope,
}

/// One situation in `advice_list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SituationListed {
    /// The situation.
    pub situation: Situation,
    /// Runs sorted under it.
    pub runs: usize,
    /// The newest version of each of its note series (text left out).
    pub notes: Vec<Note>,
    /// Each note series' tally (served, applied, helped, ratified).
    #[serde(default)]
    pub tallies: Vec<Tally>,
}

/// `advice_list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviceListResult {
    /// The scope.
    pub scope: Scope,
    /// Its situations, by key.
    pub situations: Vec<SituationListed>,
}

/// `judge_runs` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeRunsParams {
    /// The scope whose runs to judge (and those below it).
    pub scope: Scope,
    /// The most runs judged in this call (default 50, at most 1,000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `judge_runs` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeRunsResult {
    /// Runs judged now.
    pub judged: Vec<Judgement>,
    /// Runs the model failed to judge (a reason each), tried again next time.
    pub failed: Vec<(String, String)>,
    /// Words on the notes served in ended sessions, one call a session.
    #[serde(default)]
    pub notes: Vec<NoteVerdict>,
    /// Sessions whose notes the model failed to judge (a reason each), tried again.
    #[serde(default)]
    pub notes_failed: Vec<(String, String)>,
}

/// `judgements` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgementsParams {
    /// The scope (and those below it).
    pub scope: Scope,
    /// The most shown (default 50, at most 1,000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One judgement as `judgements` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgementShown {
    /// The judgement.
    #[serde(flatten)]
    pub judgement: Judgement,
    /// The recorder's own reward, when one came: it counts instead of the judgement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f32>,
}

/// `judgements` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgementsResult {
    /// Newest first.
    pub judgements: Vec<JudgementShown>,
}

/// Yes, no or can't tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Yes.
    Yes,
    /// No.
    No,
    /// Can't tell.
    Unsure,
}

impl Answer {
    /// Yes and no as booleans, unsure as None.
    pub fn as_bool(self) -> Option<bool> {
        match self {
            Answer::Yes => Some(true),
            Answer::No => Some(false),
            Answer::Unsure => None,
        }
    }
}

/// `note_verdict` params: the person's word on a note a session was served (it
/// overrides the judge's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteVerdictParams {
    /// The session that was served the note.
    pub session_id: String,
    /// The note's situation (as `advice list` and the session show it).
    pub situation: String,
    /// The note's scope, when the session was served the situation from two scopes.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Was it applied.
    pub applied: Answer,
    /// Did it help.
    pub helped: Answer,
    /// Why, in a few words (at most 300 characters).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `note_verdict` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoteVerdictResult {
    /// The word as stored.
    pub verdict: NoteVerdict,
    /// The note series' tally with it.
    pub tally: Tally,
}
