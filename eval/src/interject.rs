//! Calibration of the interjection gate (tier 2): given, for each event, the candidates a
//! recall returned with their gate scores and whether each is gold, what would a gate with
//! an uncertain band below it have done, and how good was it?
//!
//! The policy ([`decide`]), for one event and one setting (gate `g`, band `b`, judge, at
//! most `max_fire` memories), walks the candidates in retrieval order:
//! - a candidate without a score is skipped (it never fires);
//! - a candidate whose score is `>= g` fires;
//! - one whose score is in `[g - b, g)` goes to the judge, which fires it if it says yes:
//!   judge [`Judge::Off`] says no to everything, [`Judge::Oracle`] says yes exactly to the
//!   gold candidates (the upper bound of any real judge);
//! - one below `g - b` is skipped; once `max_fire` memories fired the rest are not looked
//!   at (no judge call is spent on them).
//!
//! The rates of a group of events ([`rates`]):
//! - `fire_rate`: events where at least one memory fired, over events; `silence_rate` is
//!   its complement;
//! - `precision`: fired memories that are gold, over fired memories (`None` if nothing fired);
//! - `precision_first`: firing events whose first fired memory is gold, over firing events
//!   (the precision the same setting has with `max_fire = 1`);
//! - `band_rate`: events whose best-scoring candidate falls in the band `[g - b, g)`, i.e.
//!   events whose interjection the judge alone decides (0 when `b = 0`);
//! - `judge_calls_per_event`: judge calls the policy makes (or would make, judge off), per event.
//!
//! Events belong to a [`Group`]: answerable questions (gold = the official evidence
//! sessions, or LoCoMo's evidence turns), questions whose evidence is in assistant turns,
//! abstention questions, LoCoMo's adversarial questions (reported apart: they usually do
//! have related memories) and unrelated events (a question asked against another
//! question's haystack or another conversation), abstention and unrelated having no gold
//! candidate by construction. The gate score of a recalled memory is one of [`ScoreKind`];
//! the candidates are walked in retrieval order, or best score first ([`order_by_score`],
//! the daemon's order).
//!
//! **This is a model of the daemon's gate, not the daemon's gate** (that is
//! `amber_tiers::interject::decide`), because the study sweeps what the daemon fixes: the
//! gate score (agreement and fused are not the daemon's), the walking order (retrieval
//! order by default), up to `max_fire` memories with no character budget, and an oracle
//! judge. Where the settings meet (cosine, best score first, judge off, one or two
//! memories), the model fires exactly what the daemon fires; a test holds the two
//! together. With a judge they differ by design: the daemon asks about the best candidate
//! in the band only, and only when none cleared the gate (at most one call per event);
//! the model asks about each candidate in the band, in turn, until the cap. So
//! `judge_calls_per_event` (and the band recommended from it) is an upper bound of the
//! daemon's calls, and the oracle may fire a lower band candidate the daemon never asks
//! about.

use std::collections::BTreeMap;

use amber_core::Evidence;
use serde::Serialize;

mod sweep;

pub use sweep::{Row, Target, markdown_table, recommend_band, recommend_gate, sweep, thresholds};

/// What kind of event this is, which fixes what its gold candidates are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// A question whose official gold sessions are in its haystack.
    Answerable,
    /// A question whose evidence is in assistant turns only (single-session-assistant):
    /// no official gold; a candidate counts as gold if it is one of its `answer_session_ids`.
    AssistantEvidence,
    /// An abstention question (`_abs`): nothing in the haystack answers it; no candidate is gold.
    Abstention,
    /// A LoCoMo adversarial question (category 5): it asks about something the conversation
    /// says of the *other* speaker, or not at all; a candidate counts as gold if it is one of
    /// its evidence turns (the related turn). Not a negative: a memory firing there may be
    /// what lets the agent correct the premise. Reported, not used to choose.
    Adversarial,
    /// A question asked against another question's haystack: no candidate is gold.
    Unrelated,
}

impl Group {
    /// Every group, in report order.
    pub const ALL: [Group; 5] = [
        Group::Answerable,
        Group::AssistantEvidence,
        Group::Abstention,
        Group::Adversarial,
        Group::Unrelated,
    ];

    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Answerable => "answerable",
            Group::AssistantEvidence => "assistant_evidence",
            Group::Abstention => "abstention",
            Group::Adversarial => "adversarial",
            Group::Unrelated => "unrelated",
        }
    }

    /// Whether no candidate of this group can be gold (the event should stay silent).
    pub fn is_negative(self) -> bool {
        matches!(self, Group::Abstention | Group::Unrelated)
    }
}

/// Which number of a recalled memory the gate compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreKind {
    /// The cosine of its best chunk to the event text (`Evidence::best_chunk_cosine`).
    Cosine,
    /// The same cosine, counted only for a memory that BM25 and the vectors both rank first;
    /// any other memory has no score (never fires).
    Agreement,
    /// Its fused (reciprocal-rank) score over the best a memory can get from BM25 and the
    /// vectors, `(w_bm25 + w_vector) / (rrf_k + 1)`: 1 = first in both (the exact and time
    /// rankings can add more).
    Fused,
}

impl ScoreKind {
    /// The snake_case name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreKind::Cosine => "cosine",
            ScoreKind::Agreement => "agreement",
            ScoreKind::Fused => "fused",
        }
    }

    /// The score of a memory from its evidence; `fused_max` is the fused score of a memory
    /// first in BM25 and the vectors (for [`ScoreKind::Fused`]).
    pub fn score(self, e: &Evidence, fused_max: f64) -> Option<f64> {
        match self {
            ScoreKind::Cosine => e.best_chunk_cosine.map(f64::from),
            ScoreKind::Agreement => (e.bm25_rank == Some(1) && e.vector_rank == Some(1))
                .then_some(e.best_chunk_cosine.map(f64::from))
                .flatten(),
            ScoreKind::Fused => (fused_max > 0.0).then(|| f64::from(e.fused) / fused_max),
        }
    }
}

impl std::str::FromStr for ScoreKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cosine" => Ok(ScoreKind::Cosine),
            "agreement" => Ok(ScoreKind::Agreement),
            "fused" => Ok(ScoreKind::Fused),
            other => Err(format!("unknown score {other:?} (expected cosine, agreement or fused)")),
        }
    }
}

/// One recalled candidate of an event.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Its gate score (e.g. the cosine of its best chunk to the event text), if it has one.
    pub score: Option<f64>,
    /// Whether it is gold evidence for the event.
    pub gold: bool,
}

/// One event and its candidates, in retrieval order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// The event's group.
    pub group: Group,
    /// The recalled candidates, best first as the retrieval ranked them.
    pub candidates: Vec<Candidate>,
}

/// The judge asked about candidates in the band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judge {
    /// No judge: the band never fires.
    Off,
    /// A perfect judge: yes exactly for gold candidates.
    Oracle,
}

/// One gate setting.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Policy {
    /// Candidates scoring at or above this fire.
    pub gate: f64,
    /// Width of the judge band below the gate (0: no band).
    pub band: f64,
    /// The most memories one interjection carries.
    pub max_fire: usize,
    /// Who decides in the band.
    pub judge: Judge,
}

/// What the policy did with one event.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Decision {
    /// Indices (into the event's candidates) of the memories that fired, in retrieval order.
    pub fired: Vec<usize>,
    /// How many candidates went to the judge.
    pub judge_calls: usize,
    /// Whether the best-scoring candidate is in the band `[gate - band, gate)`.
    pub best_in_band: bool,
}

/// Orders candidates by their gate score, best first, candidates without a score last;
/// ties keep their retrieval order. The daemon walks its candidates in this order.
pub fn order_by_score(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        let key = |c: &Candidate| c.score.unwrap_or(f64::NEG_INFINITY);
        key(b).total_cmp(&key(a))
    });
}

/// Rounds to 6 decimals, so that thresholds built by arithmetic compare as written.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Applies one setting to one event's candidates (see the module docs).
pub fn decide(candidates: &[Candidate], p: &Policy) -> Decision {
    let low = round6(p.gate - p.band);
    let best = candidates.iter().filter_map(|c| c.score).max_by(f64::total_cmp);
    let mut d = Decision {
        best_in_band: p.band > 0.0 && best.is_some_and(|s| s < p.gate && s >= low),
        ..Decision::default()
    };
    for (i, c) in candidates.iter().enumerate() {
        if d.fired.len() >= p.max_fire {
            break;
        }
        let Some(s) = c.score else { continue };
        if s >= p.gate {
            d.fired.push(i);
        } else if p.band > 0.0 && s >= low {
            d.judge_calls += 1;
            if p.judge == Judge::Oracle && c.gold {
                d.fired.push(i);
            }
        }
    }
    d
}

/// The rates of one group of events under one setting (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Events in the group.
    pub events: usize,
    /// Events where at least one memory fired.
    pub fired_events: usize,
    /// `fired_events / events` (0 for no events).
    pub fire_rate: f64,
    /// `1 - fire_rate`.
    pub silence_rate: f64,
    /// Memories fired, over all events.
    pub fired: usize,
    /// Of those, the gold ones.
    pub fired_gold: usize,
    /// `fired_gold / fired`; `None` if nothing fired.
    pub precision: Option<f64>,
    /// Events whose first fired memory is gold, over firing events (the precision with
    /// `max_fire = 1`); `None` if nothing fired.
    pub precision_first: Option<f64>,
    /// Events whose best candidate is in the band, over events.
    pub band_rate: f64,
    /// Judge calls per event (made, or that would be made with the judge off).
    pub judge_calls_per_event: f64,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The rates of `events` under `p` (all events given are counted, whatever their group).
pub fn rates<'a>(events: impl IntoIterator<Item = &'a Event>, p: &Policy) -> Rates {
    let (mut n, mut fired_events, mut fired, mut fired_gold, mut first_gold, mut in_band, mut calls) =
        (0, 0, 0, 0, 0, 0, 0);
    for e in events {
        n += 1;
        let d = decide(&e.candidates, p);
        if let Some(&first) = d.fired.first() {
            fired_events += 1;
            first_gold += usize::from(e.candidates[first].gold);
        }
        fired += d.fired.len();
        fired_gold += d.fired.iter().filter(|&&i| e.candidates[i].gold).count();
        in_band += usize::from(d.best_in_band);
        calls += d.judge_calls;
    }
    let fire_rate = ratio(fired_events, n);
    Rates {
        events: n,
        fired_events,
        fire_rate,
        silence_rate: if n == 0 { 0.0 } else { 1.0 - fire_rate },
        fired,
        fired_gold,
        precision: (fired > 0).then(|| ratio(fired_gold, fired)),
        precision_first: (fired_events > 0).then(|| ratio(first_gold, fired_events)),
        band_rate: ratio(in_band, n),
        judge_calls_per_event: ratio(calls, n),
    }
}

/// The outcome of one setting under one judge, per group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Rates per group present in the events.
    pub groups: BTreeMap<Group, Rates>,
    /// Precision of everything fired on answerable and negative (abstention, unrelated)
    /// events together: what fraction of interjections would have been right in a stream
    /// mixing them in the proportions of the data. `None` if nothing fired.
    pub precision_with_negatives: Option<f64>,
}

/// The outcome of one policy over the events, per group.
pub fn outcome(events: &[Event], p: &Policy) -> Outcome {
    let mut groups = BTreeMap::new();
    for g in Group::ALL {
        if events.iter().any(|e| e.group == g) {
            groups.insert(g, rates(events.iter().filter(|e| e.group == g), p));
        }
    }
    let mixed = rates(events.iter().filter(|e| e.group == Group::Answerable || e.group.is_negative()), p);
    Outcome { groups, precision_with_negatives: mixed.precision }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn c(score: f64, gold: bool) -> Candidate {
        Candidate { score: Some(score), gold }
    }

    pub(crate) fn p(gate: f64, band: f64, max_fire: usize, judge: Judge) -> Policy {
        Policy { gate, band, max_fire, judge }
    }

    pub(crate) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Four events worked by hand (scores in retrieval order):
    /// - A answerable: [0.80 gold, 0.65 not, 0.50 gold]
    /// - B answerable: [0.70 not, 0.66 gold]  (retrieval put the wrong one first)
    /// - C abstention: [0.75 not]
    /// - D unrelated:  [0.40 not, none not]
    pub(crate) fn fixture() -> Vec<Event> {
        vec![
            Event {
                group: Group::Answerable,
                candidates: vec![c(0.80, true), c(0.65, false), c(0.50, true)],
            },
            Event { group: Group::Answerable, candidates: vec![c(0.70, false), c(0.66, true)] },
            Event { group: Group::Abstention, candidates: vec![c(0.75, false)] },
            Event {
                group: Group::Unrelated,
                candidates: vec![c(0.40, false), Candidate { score: None, gold: false }],
            },
        ]
    }

    #[test]
    fn decide_walks_retrieval_order_and_stops_at_the_cap() {
        let e = &fixture()[0].candidates;
        // gate 0.6, no band, cap 2: 0.80 and 0.65 fire
        assert_eq!(decide(e, &p(0.6, 0.0, 2, Judge::Off)).fired, [0, 1]);
        // cap 1: only the best
        assert_eq!(decide(e, &p(0.6, 0.0, 1, Judge::Off)).fired, [0]);
        // candidates are taken in retrieval order: the first that clears the gate fires,
        // even if a later one scores higher
        let later = [c(0.30, true), c(0.45, false), c(0.62, true)];
        assert_eq!(decide(&later, &p(0.40, 0.0, 1, Judge::Off)).fired, [1]);
        assert_eq!(decide(&later, &p(0.40, 0.0, 2, Judge::Off)).fired, [1, 2]);
        // ...and one below the band is skipped, not a stop: the oracle still finds 0.30
        let d = decide(&later, &p(0.70, 0.45, 3, Judge::Oracle));
        assert_eq!(d.fired, [0, 2]);
        assert_eq!(d.judge_calls, 3);
        assert!(d.best_in_band);
        // a gate exactly met fires (0.72f32 as f64 is a hair above 0.72)
        assert_eq!(decide(&[c(f64::from(0.72f32), true)], &p(0.72, 0.0, 1, Judge::Off)).fired, [0]);
        assert_eq!(decide(&[c(0.72, true)], &p(0.72, 0.0, 1, Judge::Off)).fired, [0]);
        // no scores: nothing fires, nothing is in the band
        let none = [Candidate { score: None, gold: true }];
        assert_eq!(decide(&none, &p(0.0, 0.5, 2, Judge::Oracle)), Decision::default());
    }

    #[test]
    fn decide_band_and_judges() {
        let e = &fixture()[0].candidates;
        // gate 0.85, band 0.20: [0.65, 0.85) holds 0.80 and 0.65; 0.50 is below
        let off = decide(e, &p(0.85, 0.20, 2, Judge::Off));
        assert!(off.fired.is_empty());
        assert_eq!(off.judge_calls, 2);
        assert!(off.best_in_band);
        let oracle = decide(e, &p(0.85, 0.20, 2, Judge::Oracle));
        assert_eq!(oracle.fired, [0], "the oracle takes the gold 0.80, refuses 0.65");
        assert_eq!(oracle.judge_calls, 2);
        // band edge: 0.70 - 0.05 = 0.65 is inside [0.65, 0.70)
        let edge = decide(e, &p(0.70, 0.05, 2, Judge::Off));
        assert_eq!(edge.fired, [0]);
        assert_eq!(edge.judge_calls, 1);
        assert!(!edge.best_in_band, "the best candidate cleared the gate");
        // once the cap is reached, no judge call is spent
        let capped = decide(e, &p(0.70, 0.10, 1, Judge::Oracle));
        assert_eq!(capped.fired, [0]);
        assert_eq!(capped.judge_calls, 0);
    }

    #[test]
    fn rates_worked_by_hand() {
        let ev = fixture();
        // gate 0.68, no band, cap 2:
        // A fires 0.80 (gold); B fires 0.70 (not gold); C fires 0.75 (not); D silent.
        let o = outcome(&ev, &p(0.68, 0.0, 2, Judge::Off));
        let a = o.groups[&Group::Answerable];
        assert_eq!((a.events, a.fired_events, a.fired, a.fired_gold), (2, 2, 2, 1));
        assert!(close(a.fire_rate, 1.0));
        assert!(close(a.precision.unwrap(), 0.5));
        assert!(close(a.precision_first.unwrap(), 0.5));
        assert!(close(a.band_rate, 0.0));
        assert!(close(o.groups[&Group::Abstention].silence_rate, 0.0));
        assert!(close(o.groups[&Group::Unrelated].silence_rate, 1.0));
        assert_eq!(o.groups[&Group::Unrelated].precision, None);
        // with negatives: 1 gold of 3 fired
        assert!(close(o.precision_with_negatives.unwrap(), 1.0 / 3.0));
        assert!(!o.groups.contains_key(&Group::AssistantEvidence));

        // gate 0.72, band 0.10 ([0.62, 0.72)), cap 2:
        // A: 0.80 fires, 0.65 to the judge, 0.50 below -> 1 call
        // B: best 0.70 in band -> calls for 0.70 and 0.66
        // C: 0.75 fires; D: 0.40 below
        let off = outcome(&ev, &p(0.72, 0.10, 2, Judge::Off));
        let a = off.groups[&Group::Answerable];
        assert!(close(a.fire_rate, 0.5));
        assert!(close(a.precision.unwrap(), 1.0));
        assert!(close(a.band_rate, 0.5));
        assert!(close(a.judge_calls_per_event, 1.5));
        assert!(close(off.precision_with_negatives.unwrap(), 0.5));
        // the oracle adds B's gold 0.66 (and refuses A's 0.65 and B's 0.70)
        let or = outcome(&ev, &p(0.72, 0.10, 2, Judge::Oracle));
        let a = or.groups[&Group::Answerable];
        assert!(close(a.fire_rate, 1.0));
        assert_eq!((a.fired, a.fired_gold), (2, 2));
        assert!(close(a.precision.unwrap(), 1.0));
        assert!(close(or.groups[&Group::Abstention].silence_rate, 0.0), "C fires above the gate");
        assert!(close(or.precision_with_negatives.unwrap(), 2.0 / 3.0));
    }

    #[test]
    fn scores_from_evidence() {
        let e = Evidence {
            bm25_rank: Some(1),
            vector_rank: Some(1),
            best_chunk_cosine: Some(0.5),
            fused: 2.0 / 61.0,
            ..Evidence::default()
        };
        let max = 2.0 / 61.0;
        assert!(close(ScoreKind::Cosine.score(&e, max).unwrap(), 0.5));
        assert!(close(ScoreKind::Agreement.score(&e, max).unwrap(), 0.5));
        assert!((ScoreKind::Fused.score(&e, max).unwrap() - 1.0).abs() < 1e-6);
        // second in BM25: no agreement; fused (1/61 + 1/62) / (2/61) = 0.9919354838709677
        let e2 = Evidence { bm25_rank: Some(2), fused: 1.0 / 61.0 + 1.0 / 62.0, ..e.clone() };
        assert_eq!(ScoreKind::Agreement.score(&e2, max), None);
        assert!((ScoreKind::Fused.score(&e2, max).unwrap() - 0.9919354838709677).abs() < 1e-6);
        // found by BM25 only: no cosine
        let e3 = Evidence { bm25_rank: Some(1), fused: 1.0 / 61.0, ..Evidence::default() };
        assert_eq!(ScoreKind::Cosine.score(&e3, max), None);
        assert_eq!(ScoreKind::Agreement.score(&e3, max), None);
        assert_eq!("agreement".parse::<ScoreKind>(), Ok(ScoreKind::Agreement));
        assert!("blend".parse::<ScoreKind>().is_err());
    }

    #[test]
    fn order_by_score_is_the_daemons_order() {
        let mut cs = vec![
            c(0.40, false),
            Candidate { score: None, gold: true },
            c(0.55, true),
            c(0.40, true),
            c(0.61, false),
        ];
        order_by_score(&mut cs);
        let scores: Vec<Option<f64>> = cs.iter().map(|x| x.score).collect();
        assert_eq!(scores, [Some(0.61), Some(0.55), Some(0.40), Some(0.40), None]);
        // ties keep retrieval order: the 0.40 not gold came first
        assert_eq!(cs.iter().map(|x| x.gold).collect::<Vec<_>>(), [false, true, false, true, true]);
        // with one memory, the gate now takes the best score, not the first above it
        let mut later = vec![c(0.30, true), c(0.45, false), c(0.62, true)];
        assert_eq!(decide(&later, &p(0.40, 0.0, 1, Judge::Off)).fired, [1]);
        order_by_score(&mut later);
        assert_eq!(decide(&later, &p(0.40, 0.0, 1, Judge::Off)).fired, [0]);
        assert!(later[0].gold);
    }

    #[test]
    fn empty_groups_have_zero_rates() {
        let r = rates(std::iter::empty(), &p(0.5, 0.1, 2, Judge::Off));
        assert_eq!(r.events, 0);
        assert_eq!(r.fire_rate, 0.0);
        assert_eq!(r.silence_rate, 0.0);
        assert_eq!(r.precision, None);
    }

    /// The model against the daemon's own decision where their settings meet: the cosine
    /// gate, candidates walked best score first, no judge, one or two memories. Both must
    /// fire the same memories on every event.
    #[test]
    fn fires_what_the_daemons_decide_fires_at_its_settings() {
        use std::time::Duration;

        use amber_core::{Hit, Memory, NewMemory, Scope};
        use amber_tiers::interject::{InterjectConfig, decide as daemon_decide};
        use amber_tiers::judge::Off;
        use amber_tiers::session::Session;

        let session = Session::new("s".into(), "agent".into(), None, Scope::default(), 0);
        let mut state = 0x5EED_u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let mut fired_events = 0;
        for event in 0..2000u64 {
            let n = 1 + next() % 4;
            let mut hits = Vec::new();
            let mut gold = Vec::new();
            for i in 0..n {
                let content = format!("memory {i} of event {event}");
                let memory = Memory::filed(NewMemory::new(content), i + 1, 0);
                // cosines around the daemon's gate and band; some memories found by BM25 only
                let mut cos = (next() % 8 != 0).then(|| 0.25 + (next() % 25_000) as f32 / 100_000.0);
                if event % 50 == 0 && i == 0 {
                    // exactly at the gate: fires on both sides
                    cos = Some(InterjectConfig::default().gate);
                }
                let evidence = Evidence { best_chunk_cosine: cos, fused: 0.01, ..Evidence::default() };
                hits.push(Hit { memory, evidence, place: None });
                gold.push(next() % 3 == 0);
            }
            for max in [1, 2] {
                let cfg = InterjectConfig { max_memories: max, ..InterjectConfig::default() };
                let daemon = daemon_decide(event, "event", &hits, &session, &Off, Duration::ZERO, &cfg);
                let mut cands: Vec<Candidate> = hits
                    .iter()
                    .zip(&gold)
                    .map(|(h, &gold)| Candidate { score: ScoreKind::Cosine.score(&h.evidence, 0.0), gold })
                    .collect();
                order_by_score(&mut cands);
                let policy = Policy {
                    gate: f64::from(cfg.gate),
                    band: f64::from(cfg.band),
                    max_fire: max,
                    judge: Judge::Off,
                };
                let model: Vec<f64> =
                    decide(&cands, &policy).fired.iter().filter_map(|&i| cands[i].score).collect();
                let theirs: Vec<f64> = daemon.memories.iter().map(|m| f64::from(m.score)).collect();
                assert_eq!(model, theirs, "event {event}, at most {max}");
                assert_eq!(daemon.fired, !model.is_empty());
                fired_events += usize::from(daemon.fired);
            }
        }
        assert!((500..3500).contains(&fired_events), "{fired_events} of 4000 fired: both outcomes exercised");
    }
}
