//! A memory's standing: the weight that outcomes move, the age factor of its type's
//! lifespan, and when it is archived. Pure arithmetic, no store: the store keeps the
//! outcome log and calls [`fold`] to derive the weight; the engine calls
//! [`age_factor`] and [`prior`] while ranking.
//!
//! The rules (after the RxAi AMP protocol, v2.13, with one change, see [`age_factor`]):
//! - a weight starts at 1.0 and every step is clamped to 0..1;
//! - an outcome: success +0.30, failure −0.20, neutral 0;
//! - a session manifest: used with success +0.15, used with failure −0.10, used with no
//!   result 0, served but not used ×0.95;
//! - within one session the latest word on a memory wins (an outcome or a manifest
//!   line, whichever came last); words given outside any session all count;
//! - `unarchive` raises the weight to at least [`UNARCHIVED_WEIGHT`];
//! - a `lifefact` stays at 1.0 whatever is reported;
//! - a memory is archived while its weight is below [`ARCHIVE_BELOW`] or while an active
//!   invalidation supersedes it. Age never archives.
//!
//! Who gave a word matters ([`Basis`], set by the daemon when it logs the word): an
//! `outcome` from an agent whose session was never served the memory counts half
//! (success +0.15, failure −0.10), and once any failure has counted, a low weight
//! archives only when a person reported a failure or failures came from at least two
//! reporters in sessions that were served the memory. A reporter is a registered agent
//! (its token checked at `session_start`); every session of an unregistered name counts
//! as one reporter together, whatever names it gives. So no single client can bury a
//! memory by reporting failures on it, however many sessions it opens.

use std::fmt;
use std::str::FromStr;

use crate::{InvalidInput, MemoryType, Millis};

/// A memory is archived while its weight is below this.
pub const ARCHIVE_BELOW: f32 = 0.10;
/// What `unarchive` raises a weight to (at least): one failure (−0.20) does not archive
/// it again, two do.
pub const UNARCHIVED_WEIGHT: f32 = 0.30;
/// The step of the lifespan rates: they are given per 6 hours.
pub const LIFESPAN_STEP_MS: f64 = 6.0 * 3_600_000.0;

/// What came of relying on a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It was right and it helped.
    Success,
    /// It was wrong or misleading.
    Failure,
    /// Neither.
    Neutral,
}

impl Outcome {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Neutral => "neutral",
        }
    }
}

impl FromStr for Outcome {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "success" => Ok(Outcome::Success),
            "failure" => Ok(Outcome::Failure),
            "neutral" => Ok(Outcome::Neutral),
            _ => Err(InvalidInput::UnknownOutcome { given: s.chars().take(64).collect() }),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One word on a memory, as the outcome log keeps it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// What kind of word it is.
    pub kind: ReportKind,
    /// The result, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Outcome>,
    /// The session it was given in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The agent that gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was given.
    pub at: Millis,
    /// On what footing it was given; `None` for words logged before the daemon said
    /// (they count as a person's without a session, as a served session's with one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
}

/// On what footing a word on a memory was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// A person said it (the command line, outside any agent).
    Person,
    /// A registered agent (its token checked) said it in a session that was served the
    /// memory.
    Served,
    /// An agent of a name nobody registered said it in a session that was served the
    /// memory: every such word is one reporter's, whatever name the session gave.
    ServedUnregistered,
    /// An agent said it without having been served the memory in that session (or with
    /// no session at all), or a run said it.
    Unserved,
}

impl Basis {
    /// The name kept in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Person => "person",
            Basis::Served => "served",
            Basis::ServedUnregistered => "served_unregistered",
            Basis::Unserved => "unserved",
        }
    }

    /// The basis a log name stands for.
    pub fn parse(s: &str) -> Option<Basis> {
        [Basis::Person, Basis::Served, Basis::ServedUnregistered, Basis::Unserved]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// Where a word on a memory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    /// The `outcome` method.
    Outcome,
    /// A session manifest's line with `used: true`.
    Used,
    /// A session manifest's line with `used: false`.
    Unused,
    /// A run's reward, through the memories it says it used.
    Run,
    /// An explicit `unarchive`.
    Unarchive,
}

impl ReportKind {
    /// The name kept in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportKind::Outcome => "outcome",
            ReportKind::Used => "used",
            ReportKind::Unused => "unused",
            ReportKind::Run => "run",
            ReportKind::Unarchive => "unarchive",
        }
    }

    /// The kind a log name stands for.
    pub fn parse(s: &str) -> Option<ReportKind> {
        [ReportKind::Outcome, ReportKind::Used, ReportKind::Unused, ReportKind::Run, ReportKind::Unarchive]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

impl Report {
    /// The weight after this word.
    fn step(&self, w: f32) -> f32 {
        // An agent's outcome on a memory its session was never served counts half.
        let half = self.basis == Some(Basis::Unserved);
        let next = match (self.kind, self.result) {
            (ReportKind::Outcome, Some(Outcome::Success)) if half => w + 0.15,
            (ReportKind::Outcome, Some(Outcome::Failure)) if half => w - 0.10,
            (ReportKind::Outcome, Some(Outcome::Success)) => w + 0.30,
            (ReportKind::Outcome, Some(Outcome::Failure)) => w - 0.20,
            (ReportKind::Used | ReportKind::Run, Some(Outcome::Success)) => w + 0.15,
            (ReportKind::Used | ReportKind::Run, Some(Outcome::Failure)) => w - 0.10,
            (ReportKind::Unused, _) => w * 0.95,
            (ReportKind::Unarchive, _) => w.max(UNARCHIVED_WEIGHT),
            _ => w,
        };
        next.clamp(0.0, 1.0)
    }

    /// True when this word says the memory was relied on and not found wrong: its age
    /// counts from then.
    fn confirms(&self) -> bool {
        match self.kind {
            ReportKind::Outcome | ReportKind::Used | ReportKind::Run => self.result != Some(Outcome::Failure),
            ReportKind::Unarchive => true,
            ReportKind::Unused => false,
        }
    }
}

/// What [`fold`] derives from a memory's log.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Folded {
    /// The weight, 0..1.
    pub weight: f32,
    /// The last time the memory was relied on and not found wrong.
    pub used_at: Option<Millis>,
    /// Successes that count (the latest word per session).
    pub successes: u32,
    /// Failures that count.
    pub failures: u32,
    /// False when failures counted but neither a person nor two served sessions gave
    /// one: a low weight then ranks the memory down without archiving it.
    pub archivable: bool,
}

/// The weight a memory of this type has after these words (in any order: they are
/// sorted by time). Within one session only the latest word counts; a `lifefact` stays
/// at 1.0.
pub fn fold(kind: MemoryType, reports: &[Report]) -> Folded {
    let mut sorted: Vec<(usize, &Report)> = reports.iter().enumerate().collect();
    sorted.sort_by_key(|(i, r)| (r.at, *i));
    // The latest word per session, by position in time order.
    let mut latest: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (pos, (_, r)) in sorted.iter().enumerate() {
        if let Some(s) = r.session_id.as_deref()
            && r.kind != ReportKind::Unarchive
        {
            latest.insert(s, pos);
        }
    }
    let mut out = Folded { weight: 1.0, archivable: true, ..Folded::default() };
    let mut person_failure = false;
    // Distinct reporters of failures in served sessions: a registered agent by name, every
    // unregistered one as one, a word logged before the basis was kept by its session.
    let mut served_failures: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (pos, (_, r)) in sorted.iter().enumerate() {
        let counts = match r.session_id.as_deref() {
            Some(s) if r.kind != ReportKind::Unarchive => latest.get(s) == Some(&pos),
            _ => true,
        };
        if !counts {
            continue;
        }
        out.weight = r.step(out.weight);
        if r.confirms() {
            out.used_at = Some(out.used_at.map_or(r.at, |u| u.max(r.at)));
        }
        match r.result {
            Some(Outcome::Success) => out.successes += 1,
            Some(Outcome::Failure) => {
                out.failures += 1;
                match (r.basis, r.session_id.as_deref()) {
                    (Some(Basis::Person), _) | (None, None) => person_failure = true,
                    (Some(Basis::Served), Some(s)) => {
                        served_failures.insert(match r.agent.as_deref() {
                            Some(a) => format!("agent {a}"),
                            None => format!("session {s}"),
                        });
                    }
                    (Some(Basis::ServedUnregistered), _) => {
                        served_failures.insert("unregistered".into());
                    }
                    (None, Some(s)) => {
                        served_failures.insert(format!("session {s}"));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if out.failures > 0 {
        out.archivable = person_failure || served_failures.len() >= 2;
    }
    if kind == MemoryType::Lifefact {
        out.weight = 1.0;
    }
    out
}

/// The reference's lifespan of a type: the factor its weight loses per 6 hours.
pub fn lifespan_rate(kind: MemoryType) -> f64 {
    match kind {
        MemoryType::Intent => 0.97,
        MemoryType::Fact | MemoryType::Invalidation => 0.95,
        MemoryType::Pattern => 0.98,
        MemoryType::Discovery | MemoryType::Event => 0.85,
        MemoryType::Lifefact => 1.0,
    }
}

/// The age factor of a memory: its type's rate per 6 hours, over the time since it was
/// last relied on (else since its time: the event time when known, else when it was
/// filed), never below `floor`.
///
/// Where Amber departs from the reference: there the rate multiplies the stored weight
/// itself, so age alone archives (records cited in 23 of 24 sessions were archived
/// within 16 days). Here age is a separate factor with a floor, it restarts whenever a
/// session relies on the memory, it only orders (the weight, which archives, moves by
/// outcomes alone), and a memory never contradicted keeps at least `floor` of its
/// standing however old it is.
pub fn age_factor(kind: MemoryType, anchor: Millis, now: Millis, floor: f32) -> f32 {
    let elapsed = (now - anchor).max(0) as f64;
    let f = lifespan_rate(kind).powf(elapsed / LIFESPAN_STEP_MS) as f32;
    f.max(floor).min(1.0)
}

/// The prior on a fused score: `1 − strength + strength × weight × age`, so a memory
/// with full standing keeps its score and one with none keeps `1 − strength` of it.
pub fn prior(weight: f32, age: f32, strength: f32) -> f32 {
    1.0 - strength + strength * (weight * age).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: ReportKind, result: Option<Outcome>, session: Option<&str>, at: Millis) -> Report {
        Report {
            kind,
            result,
            session_id: session.map(String::from),
            agent: None,
            note: None,
            at,
            basis: None,
        }
    }

    #[test]
    fn outcomes_move_the_weight_with_clamping() {
        let f = fold(MemoryType::Fact, &[r(ReportKind::Outcome, Some(Outcome::Failure), None, 1)]);
        assert!((f.weight - 0.8).abs() < 1e-6);
        let f = fold(
            MemoryType::Fact,
            &[
                r(ReportKind::Outcome, Some(Outcome::Failure), None, 1),
                r(ReportKind::Outcome, Some(Outcome::Success), None, 2),
            ],
        );
        assert!((f.weight - 1.0).abs() < 1e-6, "clamped at 1: {}", f.weight);
        let five: Vec<Report> =
            (0..5).map(|i| r(ReportKind::Outcome, Some(Outcome::Failure), None, i)).collect();
        let f = fold(MemoryType::Fact, &five);
        assert!(f.weight.abs() < 1e-6 && f.weight >= 0.0, "{}", f.weight);
        assert_eq!(f.failures, 5);
    }

    #[test]
    fn manifest_steps_and_the_unused_penalty() {
        let used_fail = fold(MemoryType::Fact, &[r(ReportKind::Used, Some(Outcome::Failure), Some("s"), 1)]);
        assert!((used_fail.weight - 0.9).abs() < 1e-6);
        let unused: Vec<Report> =
            (0..3).map(|i| r(ReportKind::Unused, None, Some(&format!("s{i}")), i)).collect();
        let f = fold(MemoryType::Fact, &unused);
        assert!((f.weight - 0.95f32.powi(3)).abs() < 1e-5, "{}", f.weight);
        assert_eq!(f.used_at, None, "an unused line is not a use");
    }

    #[test]
    fn the_latest_word_in_a_session_wins() {
        let f = fold(
            MemoryType::Fact,
            &[
                r(ReportKind::Outcome, Some(Outcome::Failure), Some("s"), 1),
                r(ReportKind::Outcome, Some(Outcome::Failure), Some("s"), 2),
                r(ReportKind::Outcome, Some(Outcome::Neutral), Some("s"), 3),
                r(ReportKind::Outcome, Some(Outcome::Failure), Some("t"), 4),
            ],
        );
        assert!((f.weight - 0.8).abs() < 1e-6, "one failure counts (t); s ended neutral: {}", f.weight);
        assert_eq!((f.successes, f.failures), (0, 1));
    }

    #[test]
    fn lifefacts_stay_at_one_and_unarchive_lifts() {
        let fails: Vec<Report> =
            (0..6).map(|i| r(ReportKind::Outcome, Some(Outcome::Failure), None, i)).collect();
        assert_eq!(fold(MemoryType::Lifefact, &fails).weight, 1.0);
        let mut log = fails.clone();
        log.push(r(ReportKind::Unarchive, None, None, 10));
        let f = fold(MemoryType::Fact, &log);
        assert!((f.weight - UNARCHIVED_WEIGHT).abs() < 1e-6);
        assert!(f.weight >= ARCHIVE_BELOW);
    }

    #[test]
    fn age_has_a_floor_and_restarts_with_use() {
        let day = 86_400_000;
        // fact: 0.95 per 6 h, 4 steps a day
        let a = age_factor(MemoryType::Fact, 0, day, 0.0);
        assert!((a - 0.95f32.powi(4)).abs() < 1e-4, "{a}");
        assert_eq!(age_factor(MemoryType::Fact, 0, 365 * day, 0.5), 0.5);
        assert_eq!(age_factor(MemoryType::Lifefact, 0, 365 * day, 0.0), 1.0);
        assert_eq!(age_factor(MemoryType::Event, 10, 5, 0.0), 1.0, "the future is age 0");
        assert_eq!(prior(1.0, 1.0, 0.5), 1.0);
        assert!((prior(0.0, 1.0, 0.5) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn one_client_cannot_bury_a_memory_by_reporting_failures() {
        let word = |basis, session: Option<&str>, at| Report {
            basis: Some(basis),
            ..r(ReportKind::Outcome, Some(Outcome::Failure), session, at)
        };
        // Ten failures from an agent never served the memory: half weight each, and
        // never archivable.
        let unserved: Vec<Report> = (0..10).map(|i| word(Basis::Unserved, None, i)).collect();
        let f = fold(MemoryType::Fact, &unserved[..3]);
        assert!((f.weight - 0.7).abs() < 1e-6, "{}", f.weight);
        let f = fold(MemoryType::Fact, &unserved);
        assert!(f.weight < ARCHIVE_BELOW && !f.archivable, "{f:?}");
        // Failures from one served session: the latest word counts, not archivable.
        let one: Vec<Report> = (0..5).map(|i| word(Basis::Served, Some("s1"), i)).collect();
        assert!(!fold(MemoryType::Fact, &one).archivable);
        let by = |basis, session, agent: &str, at| Report {
            agent: Some(agent.into()),
            ..word(basis, Some(session), at)
        };
        // Two served sessions of two registered agents: archivable once the weight is low.
        let two = [
            by(Basis::Served, "s1", "claude-code", 1),
            by(Basis::Served, "s2", "codex", 2),
            word(Basis::Unserved, None, 3),
        ];
        assert!(fold(MemoryType::Fact, &two).archivable);
        // Two sessions of one registered agent: one reporter, not archivable.
        let same = [by(Basis::Served, "s1", "claude-code", 1), by(Basis::Served, "s2", "claude-code", 2)];
        assert!(!fold(MemoryType::Fact, &same).archivable);
        // Five sessions under five unregistered names (agent-b1 … agent-b5): one reporter.
        let five: Vec<Report> = [
            ("s1", "agent-b1"),
            ("s2", "agent-b2"),
            ("s3", "agent-b3"),
            ("s4", "agent-b4"),
            ("s5", "agent-b5"),
        ]
        .into_iter()
        .zip(1..)
        .map(|((s, a), at)| by(Basis::ServedUnregistered, s, a, at))
        .collect();
        let f = fold(MemoryType::Fact, &five);
        assert!(f.weight < ARCHIVE_BELOW && !f.archivable, "{f:?}");
        // An unregistered reporter and a registered one: two.
        let mixed =
            [by(Basis::ServedUnregistered, "s1", "agent-b1", 1), by(Basis::Served, "s2", "claude-code", 2)];
        assert!(fold(MemoryType::Fact, &mixed).archivable);
        // A person's failure is enough.
        assert!(fold(MemoryType::Fact, &[word(Basis::Person, None, 1)]).archivable);
        // Words from before the basis was kept count as they did.
        assert!(
            fold(MemoryType::Fact, &[r(ReportKind::Outcome, Some(Outcome::Failure), None, 1)]).archivable
        );
        // A served memory's half-success: +0.15 after a failure.
        let up = [
            word(Basis::Person, None, 1),
            Report {
                basis: Some(Basis::Unserved),
                ..r(ReportKind::Outcome, Some(Outcome::Success), None, 2)
            },
        ];
        assert!((fold(MemoryType::Fact, &up).weight - 0.95).abs() < 1e-6);
    }
}
