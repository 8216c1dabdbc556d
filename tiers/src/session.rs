//! Sessions: what one agent session was served, decided and captured.
//!
//! The daemon keeps a [`Session`] per live session and stores it (as JSON) when it
//! starts, whenever it is served something, and when it ends.

use std::path::PathBuf;

use amber_core::{MemoryId, Millis, Scope};
use serde::{Deserialize, Serialize};

use crate::curate::CurationReport;
use crate::decision::Decision;

mod event;
pub use event::Arrival;

/// Session settings (`[session]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// A session with no call for this long is ended by the daemon (default 1,800 s).
    pub idle_timeout_s: u64,
    /// Interjection decisions kept in a session's record, newest (default 200).
    pub max_decisions: usize,
    /// The checkpoint: at the first stop of a session that did real work and filed
    /// nothing durable, ask once for the takeaway (default true).
    pub checkpoint: bool,
    /// What counts as real work for the checkpoint: tool uses seen (default 3).
    pub checkpoint_tool_uses: u64,
}

impl Default for SessionConfig {
    fn default() -> SessionConfig {
        SessionConfig { idle_timeout_s: 1800, max_decisions: 200, checkpoint: true, checkpoint_tool_uses: 3 }
    }
}

/// Which tier served a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The session-start briefing.
    Briefing,
    /// A mid-session interjection.
    Interjection,
    /// The inbox: a memory addressed to the agent, handed over at start.
    Inbox,
}

/// One memory served to the session, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Served {
    /// The memory.
    pub id: MemoryId,
    /// The tier that served it.
    pub tier: Tier,
    /// The event it answered (interjections), counted from 1.
    pub event: Option<u64>,
    /// When.
    pub at: Millis,
    /// Its score there (briefing score, or cosine to the event).
    pub score: f32,
    /// Why, in words.
    pub why: String,
    /// The context it was served into (see [`Session::context`]).
    #[serde(default)]
    pub context: u32,
}

/// What one capture did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureNote {
    /// The memory filed (or found already filed).
    pub id: MemoryId,
    /// False when the same content was already filed in the scope.
    pub created: bool,
    /// Secrets redacted.
    pub redacted: usize,
    /// Where it came from (`tool:Bash`, `prompt`, ...).
    pub source: Option<String>,
}

/// Captures that were not filed, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CaptureSkips {
    /// Under the minimum size.
    pub too_short: usize,
    /// Over the maximum size.
    pub too_long: usize,
}

/// The checkpoint of a session (see [`SessionConfig::checkpoint`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Checkpoint {
    /// When the stop was blocked to ask for the takeaway.
    pub blocked_at: Option<Millis>,
    /// Tool uses seen then.
    pub tool_uses: u64,
    /// What came of it: `filed` (a durable memory was filed after the ask), `declined`
    /// (the agent said there was nothing to keep), `none` (neither was seen).
    pub outcome: Option<String>,
    /// The agent's one-line decline, verbatim, when it declined.
    pub decline: Option<String>,
}

/// A session's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The session id.
    pub id: String,
    /// The client's own id for the session (Claude Code's `session_id`), when it gave
    /// one: a later `session_start` with the same key continues this session.
    #[serde(default)]
    pub key: Option<String>,
    /// Scopes searched together with `scope` (the `user` scope).
    #[serde(default)]
    pub also: Vec<Scope>,
    /// The agent's context window this session is in: 0 at start, one more at every
    /// re-briefing after the context was compacted or cleared. A memory is served at
    /// most once per context.
    #[serde(default)]
    pub context: u32,
    /// Tool uses seen (`tool_call` or `tool_result` events).
    #[serde(default)]
    pub tool_uses: u64,
    /// The checkpoint, once it was considered.
    #[serde(default)]
    pub checkpoint: Checkpoint,
    /// The agent that started it (`claude-code`, `codex`, ...).
    pub agent: String,
    /// The project root (nearest `.git` above the cwd), when known.
    pub project_root: Option<PathBuf>,
    /// The scope of the project: briefing, interjection and capture work there.
    pub scope: Scope,
    /// When it started.
    pub started_at: Millis,
    /// The last call about it.
    pub last_active: Millis,
    /// When it ended.
    pub ended_at: Option<Millis>,
    /// `ended` (by `session_end`), `idle` (timeout) or `shutdown`.
    pub end_reason: Option<String>,
    /// Events seen.
    pub events: u64,
    /// The event of the last interjection.
    pub last_fire: Option<u64>,
    /// Every memory served, in order.
    pub served: Vec<Served>,
    /// Interjection decisions, newest last (bounded by `max_decisions`).
    pub decisions: Vec<Decision>,
    /// Decisions dropped from the front of `decisions` to keep it bounded.
    pub decisions_dropped: u64,
    /// What was captured.
    pub captured: Vec<CaptureNote>,
    /// What was not.
    pub capture_skipped: CaptureSkips,
    /// What curation did at the end.
    pub curation: Option<CurationReport>,
    /// True when the session is in the holdout arm (`[holdout] share`): routed as
    /// usual, served nothing (identity still comes; its inbox waits for a later one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    /// How the session went, as its client said at the end: a reward in -1..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f32>,
    /// The outcome as given: `success`, `failure`, `unclear`, or the reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// What moments reminded it of: (memory, moment), each pair once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reminded: Vec<(MemoryId, crate::moment::Moment)>,
    /// What the session filed on purpose (`remember` naming it), new or found already
    /// filed: only these silence its checkpoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filed: Vec<Filed>,
    /// How much of its transcript was filed already, so a resumed session's next end
    /// files only what is new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<crate::transcript::TranscriptMark>,
    /// What makes it a run, when its client asked for one (`session_start` with `run`):
    /// its task, its trace, the advice it was given, the runs recorded (see
    /// `crate::session_run`).
    #[serde(default, skip_serializing_if = "crate::run_log::RunLog::is_off")]
    pub run: crate::run_log::RunLog,
}

/// A memory a session filed on purpose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filed {
    /// The memory.
    pub id: MemoryId,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: amber_core::MemoryType,
    /// False when the same text was already filed (it still counts as filed).
    pub created: bool,
    /// When.
    pub at: Millis,
}

/// True for a memory captured from outside (trust `external`: tool output, pages,
/// files, transcripts), which is never served unasked until a person promotes it.
pub fn is_external(m: &amber_core::Memory) -> bool {
    amber_core::origin::trust_of(&m.metadata) == amber_core::origin::Trust::External
}

/// True for a raw capture: an `event` filed by a capture (metadata `captured`) or in a
/// session (prompts, tool output, transcript pieces). Raw captures are evidence: `recall`
/// finds them, labelled, but they are never briefed nor interjected. A person promotes
/// one by filing its text again with a durable type (`amber remember --type fact`).
pub fn is_raw_capture(m: &amber_core::Memory) -> bool {
    m.kind == amber_core::MemoryType::Event
        && (m.session_id.is_some()
            || m.metadata.get("captured").and_then(serde_json::Value::as_bool) == Some(true))
}

/// Whether a new session falls in the holdout arm: a stable draw from its id (FNV-1a,
/// as a fraction of 2^64) under `share`. The same id always draws the same.
pub fn held_out(id: &str, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Mix the high bits down so that near ids differ (FNV's low bits are weak).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h as f64 / u64::MAX as f64) < share
}

impl Session {
    /// A new session.
    pub fn new(
        id: String,
        agent: String,
        project_root: Option<PathBuf>,
        scope: Scope,
        now: Millis,
    ) -> Session {
        Session {
            id,
            key: None,
            also: Vec::new(),
            context: 0,
            tool_uses: 0,
            checkpoint: Checkpoint::default(),
            agent,
            project_root,
            scope,
            started_at: now,
            last_active: now,
            ended_at: None,
            end_reason: None,
            events: 0,
            last_fire: None,
            served: Vec::new(),
            decisions: Vec::new(),
            decisions_dropped: 0,
            captured: Vec::new(),
            capture_skipped: CaptureSkips::default(),
            curation: None,
            withheld: false,
            reward: None,
            outcome: None,
            reminded: Vec::new(),
            filed: Vec::new(),
            transcript: None,
            run: Default::default(),
        }
    }

    /// When and how this session was given a memory in its current context, if it was.
    pub fn served_earlier(&self, id: &MemoryId) -> Option<&Served> {
        self.served.iter().find(|s| &s.id == id && s.context == self.context)
    }

    /// True for a memory the session must not be served unasked (briefing,
    /// interjection): one it filed itself (its own prompts and captures are in its
    /// context already), or a raw capture of any session, however old ([`is_raw_capture`]):
    /// evidence for `recall`, not a memory to put in a prompt; anything from outside; and
    /// the bookkeeping of a changed document (`amber ingest`); and a skill compiled from
    /// documents (served by `get_advice`).
    pub fn is_echo(&self, m: &amber_core::Memory) -> bool {
        m.session_id.as_deref() == Some(self.id.as_str())
            || is_raw_capture(m)
            || is_external(m)
            || amber_core::document::is_revision(&m.metadata)
            || amber_core::skill::is_skill(&m.metadata)
    }

    /// Notes a durable memory filed by this session (re-filing the same text counts:
    /// the agent did file it).
    pub fn note_filed(&mut self, id: MemoryId, kind: amber_core::MemoryType, created: bool, at: Millis) {
        self.filed.push(Filed { id, kind, created, at });
    }

    /// Durable memories this session filed since `since` (the checkpoint's count).
    pub fn filed_since(&self, since: Millis) -> usize {
        self.filed.iter().filter(|f| f.at >= since && f.kind != amber_core::MemoryType::Event).count()
    }

    /// True when a memory may be served to this session: not addressed to another agent,
    /// and not another author's diary (`to: self`). Unaddressed memories and those to
    /// `all` may.
    pub fn may_serve(&self, m: &amber_core::Memory) -> bool {
        match m.to.as_deref() {
            None | Some("all") => true,
            Some("self") => m.author.as_deref() == Some(self.agent.as_str()),
            Some(name) => name == self.agent,
        }
    }

    /// True when this session's agent may read a memory through `recall` or `get`: what
    /// it may be served, what it addressed to another itself, and what it was served.
    pub fn may_read(&self, m: &amber_core::Memory) -> bool {
        self.may_serve(m) || m.author.as_deref() == Some(self.agent.as_str()) || self.was_served(&m.id)
    }

    /// True when the session was served this memory, in any of its contexts.
    pub fn was_served(&self, id: &MemoryId) -> bool {
        self.served.iter().any(|s| s.id == *id)
    }
}

/// True when an agent in no known session may read a memory through `recall` or `get`:
/// only what is addressed to no one in particular (unaddressed, or to `all`). A person
/// reads everything.
pub fn anyone_may_read(m: &amber_core::Memory) -> bool {
    matches!(m.to.as_deref(), None | Some("all"))
}

impl Session {
    /// Every scope the session searches: its own, then `also`.
    pub fn scopes(&self) -> Vec<Scope> {
        std::iter::once(self.scope.clone()).chain(self.also.iter().cloned()).collect()
    }

    /// Records a decision, keeping at most `max` of them.
    pub fn push_decision(&mut self, d: Decision, max: usize) {
        self.decisions.push(d);
        if self.decisions.len() > max {
            let extra = self.decisions.len() - max;
            self.decisions.drain(..extra);
            self.decisions_dropped += extra as u64;
        }
    }
}

/// The id of a session a client names by its own key (Claude Code's `session_id`):
/// stable, so any later `session_start` (or a hook that only knows the key) finds it.
pub fn keyed_session_id(agent: &str, key: &str) -> String {
    let safe = |t: &str| -> String {
        t.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
    };
    format!("k-{}-{}", safe(agent.trim()), safe(key.trim()))
}

pub use amber_core::calendar::date;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holdout_draw_is_stable_and_near_its_share() {
        assert!(!held_out("s-1", 0.0) && held_out("s-1", 1.0));
        assert_eq!(held_out("k-claude-code-x", 0.5), held_out("k-claude-code-x", 0.5));
        let ids: Vec<String> = (0..10_000).map(|i| format!("s-19a2b3c{i:x}-1-{i}")).collect();
        let n = ids.iter().filter(|id| held_out(id, 0.3)).count();
        assert!((2_800..=3_200).contains(&n), "{n} of 10,000 at share 0.3");
    }

    #[test]
    fn decisions_stay_bounded() {
        let mut s = Session::new("s".into(), "a".into(), None, Scope::default(), 0);
        for i in 0..5 {
            s.push_decision(Decision::silent(i, crate::decision::Reason::TooShort), 3);
        }
        assert_eq!(s.decisions.len(), 3);
        assert_eq!(s.decisions_dropped, 2);
        assert_eq!(s.decisions[0].event, 2);
    }
}
