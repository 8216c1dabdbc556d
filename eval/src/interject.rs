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

use std::collections::BTreeMap;

use amber_core::Evidence;
use serde::Serialize;

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

/// One row of a sweep: a gate, a band and a cap, with the judge off and with the oracle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The gate.
    pub gate: f64,
    /// The band width.
    pub band: f64,
    /// The most memories per interjection.
    pub max_fire: usize,
    /// With the judge off (the band never fires).
    pub judge_off: Outcome,
    /// With a judge that says yes exactly to gold candidates.
    pub judge_oracle: Outcome,
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

/// Thresholds from `from` to `to` inclusive by `step` (rounded to 6 decimals).
pub fn thresholds(from: f64, to: f64, step: f64) -> Vec<f64> {
    if step <= 0.0 || to < from {
        return vec![round6(from)];
    }
    let n = ((to - from) / step + 1e-6).floor() as usize;
    (0..=n).map(|i| round6(from + i as f64 * step)).collect()
}

/// Every combination of gate, band and cap, gates innermost.
pub fn sweep(events: &[Event], gates: &[f64], bands: &[f64], max_fire: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &m in max_fire {
        for &band in bands {
            for &gate in gates {
                let p = |judge| Policy { gate, band, max_fire: m, judge };
                rows.push(Row {
                    gate,
                    band,
                    max_fire: m,
                    judge_off: outcome(events, &p(Judge::Off)),
                    judge_oracle: outcome(events, &p(Judge::Oracle)),
                });
            }
        }
    }
    rows
}

/// The target on answerable events: precision of fired memories at least
/// `min_precision` with a fire rate at least `min_fire`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Target {
    /// Least precision of fired memories.
    pub min_precision: f64,
    /// Least fire rate.
    pub min_fire: f64,
}

impl Target {
    /// Whether an outcome meets the target on answerable events, with the precision of
    /// every fired memory, or (`first_only`) of each interjection's first memory: the
    /// precision of the same setting with one memory per interjection.
    pub fn met_by(&self, o: &Outcome, first_only: bool) -> bool {
        o.groups.get(&Group::Answerable).is_some_and(|r| {
            let p = if first_only { r.precision_first } else { r.precision };
            r.fire_rate >= self.min_fire && p.is_some_and(|p| p >= self.min_precision)
        })
    }

    /// Whether an outcome meets the target with negatives mixed in: the fire rate on
    /// answerable events, the precision over answerable and negative events together
    /// ([`Outcome::precision_with_negatives`]).
    pub fn met_with_negatives_by(&self, o: &Outcome) -> bool {
        o.groups.get(&Group::Answerable).is_some_and(|r| r.fire_rate >= self.min_fire)
            && o.precision_with_negatives.is_some_and(|p| p >= self.min_precision)
    }
}

fn silence(o: &Outcome, g: Group) -> f64 {
    o.groups.get(&g).map_or(0.0, |r| r.silence_rate)
}

/// The gate to recommend with the judge off. Among the rows of the narrowest band (with the
/// judge off the band changes nothing) whose answerable rates meet `target` (see
/// [`Target::met_by`]), the one that stays silent most often on unrelated events, then on
/// abstention events, then the higher gate. `None` if no row meets the target.
pub fn recommend_gate<'a>(rows: &'a [Row], target: &Target, first_only: bool) -> Option<&'a Row> {
    let narrowest = rows.iter().map(|r| r.band).min_by(f64::total_cmp)?;
    rows.iter().filter(|r| r.band == narrowest && target.met_by(&r.judge_off, first_only)).max_by(|a, b| {
        let (x, y) = (&a.judge_off, &b.judge_off);
        silence(x, Group::Unrelated)
            .total_cmp(&silence(y, Group::Unrelated))
            .then(silence(x, Group::Abstention).total_cmp(&silence(y, Group::Abstention)))
            .then(a.gate.total_cmp(&b.gate))
    })
}

/// The band to pair with `gate`: the widest band of the rows whose judge calls per
/// unrelated event stay at most `max_calls` (those events should stay silent: each call
/// costs time and risks a wrong yes); 0 if there is none.
pub fn recommend_band(rows: &[Row], gate: f64, max_calls: f64) -> f64 {
    rows.iter()
        .filter(|r| (r.gate - gate).abs() < 1e-9)
        .filter(|r| {
            r.judge_off.groups.get(&Group::Unrelated).map_or(0.0, |u| u.judge_calls_per_event) <= max_calls
        })
        .map(|r| r.band)
        .max_by(f64::total_cmp)
        .unwrap_or(0.0)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn get(o: &Outcome, g: Group, f: impl Fn(&Rates) -> Option<f64>) -> String {
    pct(o.groups.get(&g).and_then(f))
}

/// The markdown table of rows (one line per row, in the given order).
pub fn markdown_table<'a>(rows: impl IntoIterator<Item = &'a Row>) -> String {
    let mut out = String::from(
        "| gate | band | max | fire (off) | precision (off) | precision, first (off) | prec. w/ negatives (off) \
         | silence abs (off) | silence unrelated (off) | silence adversarial (off) | band rate \
         | judge calls unrelated | fire (oracle) | precision (oracle) | prec. w/ negatives (oracle) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (off, or) = (&r.judge_off, &r.judge_oracle);
        out.push_str(&format!(
            "| {:.2} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.gate,
            r.band,
            r.max_fire,
            get(off, Group::Answerable, |x| Some(x.fire_rate)),
            get(off, Group::Answerable, |x| x.precision),
            get(off, Group::Answerable, |x| x.precision_first),
            pct(off.precision_with_negatives),
            get(off, Group::Abstention, |x| Some(x.silence_rate)),
            get(off, Group::Unrelated, |x| Some(x.silence_rate)),
            get(off, Group::Adversarial, |x| Some(x.silence_rate)),
            get(off, Group::Answerable, |x| Some(x.band_rate)),
            get(off, Group::Unrelated, |x| Some(x.judge_calls_per_event)),
            get(or, Group::Answerable, |x| Some(x.fire_rate)),
            get(or, Group::Answerable, |x| x.precision),
            pct(or.precision_with_negatives),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(score: f64, gold: bool) -> Candidate {
        Candidate { score: Some(score), gold }
    }

    fn p(gate: f64, band: f64, max_fire: usize, judge: Judge) -> Policy {
        Policy { gate, band, max_fire, judge }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Four events worked by hand (scores in retrieval order):
    /// - A answerable: [0.80 gold, 0.65 not, 0.50 gold]
    /// - B answerable: [0.70 not, 0.66 gold]  (retrieval put the wrong one first)
    /// - C abstention: [0.75 not]
    /// - D unrelated:  [0.40 not, none not]
    fn fixture() -> Vec<Event> {
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
    fn sweep_thresholds_and_recommendation() {
        let gates = thresholds(0.30, 0.90, 0.02);
        assert_eq!(gates.len(), 31);
        assert_eq!(gates[0], 0.30);
        assert_eq!(gates[21], 0.72);
        assert_eq!(gates[30], 0.90);
        assert_eq!(thresholds(0.5, 0.4, 0.1), [0.5]);
        let ev = fixture();
        let rows = sweep(&ev, &[0.60, 0.68, 0.76, 0.82], &[0.0, 0.10], &[1, 2]);
        assert_eq!(rows.len(), 16);
        assert_eq!((rows[0].max_fire, rows[0].band, rows[0].gate), (1, 0.0, 0.60));
        assert_eq!((rows[15].max_fire, rows[15].band, rows[15].gate), (2, 0.10, 0.82));
        let cap2: Vec<Row> = rows.iter().filter(|r| r.max_fire == 2).cloned().collect();
        // Judge off, cap 2, answerable (A, B), abstention C, unrelated D:
        // 0.60: A fires 0.80 g + 0.65, B 0.70 + 0.66 g: fire 1, precision 2/4, first 1/2; C fires
        // 0.68: A 0.80 g, B 0.70: fire 1, precision 1/2; C fires
        // 0.76: A 0.80 g only: fire 1/2, precision 1; C (0.75) silent
        // 0.82: nothing fires. D never fires.
        let t = Target { min_precision: 0.9, min_fire: 0.5 };
        assert_eq!(recommend_gate(&cap2, &t, false).map(|r| r.gate), Some(0.76));
        assert_eq!(recommend_gate(&cap2, &t, true).map(|r| r.gate), Some(0.76));
        // a looser target: 0.60, 0.68 and 0.76 meet it; 0.76 is silent on C
        let loose = Target { min_precision: 0.5, min_fire: 0.5 };
        assert_eq!(recommend_gate(&cap2, &loose, false).map(|r| r.gate), Some(0.76));
        // fire >= 0.9: 0.60 and 0.68, equally silent; the higher gate wins
        let busy = Target { min_precision: 0.5, min_fire: 0.9 };
        assert_eq!(recommend_gate(&cap2, &busy, false).map(|r| r.gate), Some(0.68));
        assert!(recommend_gate(&cap2, &Target { min_precision: 1.0, min_fire: 0.6 }, false).is_none());
        assert!(t.met_by(&cap2[2].judge_off, false));
        assert!(t.met_with_negatives_by(&cap2[2].judge_off), "A's gold alone fired: 1/1");
        assert!(!t.met_by(&cap2[0].judge_off, false), "gate 0.60: precision 0.5");
        assert!(!t.met_by(&cap2[0].judge_off, true), "gate 0.60: first memories 1/2");
        // A alone at 0.60 fires 0.80 g and 0.65: precision 1/2, but its first memory is gold
        let a_only = outcome(&ev[..1], &p(0.60, 0.0, 2, Judge::Off));
        assert!(!t.met_by(&a_only, false));
        assert!(t.met_by(&a_only, true));
        let table = markdown_table(&rows[..2]);
        assert_eq!(table.lines().count(), 4);
        assert!(
            table
                .lines()
                .nth(2)
                .unwrap()
                .starts_with("| 0.60 | 0.00 | 1 | 1.000 | 0.500 | 0.500 | 0.333 | 0.000 | 1.000 |"),
            "{table}"
        );
    }

    #[test]
    fn band_recommendation_bounds_judge_calls_on_unrelated_events() {
        // unrelated U scores 0.55: inside [0.55, 0.60) and [0.50, 0.60), so both bands call once
        let ev =
            vec![fixture()[0].clone(), Event { group: Group::Unrelated, candidates: vec![c(0.55, false)] }];
        let rows = sweep(&ev, &[0.60], &[0.0, 0.05, 0.10], &[2]);
        assert!(close(rows[1].judge_off.groups[&Group::Unrelated].judge_calls_per_event, 1.0));
        assert_eq!(recommend_band(&rows, 0.60, 0.1), 0.0);
        assert_eq!(recommend_band(&rows, 0.60, 1.0), 0.10);
        assert_eq!(recommend_band(&rows, 0.70, 1.0), 0.0, "no row at that gate");
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
    fn adversarial_events_are_reported_but_not_negatives() {
        // answerable A fires its gold 0.80; adversarial V fires its related turn 0.70 and a
        // wrong 0.65: neither counts in the precision with negatives, which stays A's 1/1
        let ev = vec![
            Event { group: Group::Answerable, candidates: vec![c(0.80, true)] },
            Event { group: Group::Adversarial, candidates: vec![c(0.70, true), c(0.65, false)] },
        ];
        let o = outcome(&ev, &p(0.60, 0.0, 2, Judge::Off));
        let v = o.groups[&Group::Adversarial];
        assert_eq!((v.events, v.fired_events, v.fired, v.fired_gold), (1, 1, 2, 1));
        assert!(close(v.silence_rate, 0.0));
        assert!(close(o.precision_with_negatives.unwrap(), 1.0));
        assert!(!Group::Adversarial.is_negative());
        let rows = sweep(&ev, &[0.60, 0.75], &[0.0], &[2]);
        let table = markdown_table(&rows);
        // silence abs "-", silence unrelated "-", silence adversarial 0 at 0.60 and 1 at 0.75
        assert!(table.lines().nth(2).unwrap().contains("| - | - | 0.000 |"), "{table}");
        assert!(table.lines().nth(3).unwrap().contains("| - | - | 1.000 |"), "{table}");
    }

    #[test]
    fn empty_groups_have_zero_rates() {
        let r = rates(std::iter::empty(), &p(0.5, 0.1, 2, Judge::Off));
        assert_eq!(r.events, 0);
        assert_eq!(r.fire_rate, 0.0);
        assert_eq!(r.silence_rate, 0.0);
        assert_eq!(r.precision, None);
    }
}
