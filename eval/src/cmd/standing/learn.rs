//! Parts 2 and 3, learning from use and interjection precision: a simulated agent over
//! LoCoMo. Each conversation's turns are filed one memory per turn, exactly as
//! `amber-eval locomo --granularity turn` files them (one scope per conversation, here
//! per standing strength too). Each conversation's questions with evidence are split,
//! seeded, into a *fed* half and a *held-apart* half ([`split_fed`]).
//!
//! A round: every fed question's top `feed_k` (from the recall measured after the last
//! round, i.e. the store as it stands when the round begins) is reported through
//! `EngineWriter::report`, one outcome per hit: success for an evidence turn, failure for any
//! other, with a share of the labels flipped ([`flipped`], seeded per round, question and
//! memory, so every strength sees the same coin for the same hit). Each (round, question)
//! is its own session, so every report counts; each report is dated at the
//! conversation's last session (the questions' `now`). After each round every question
//! is recalled again (top 10) and scored per half: recall@5 and @10 of the evidence turns
//! and the wrong-recall rate (non-evidence memories among the top 5).
//!
//! Interjection (part 3), on the same recalls before any report and after the last
//! round, for the answerable questions (categories 1 to 4) of each half: the study's
//! model (`amber-eval interject`: top 3 in retrieval order, cosine gate 0.42, judge off,
//! one memory: its precision is the "precision at 1 memory") and the daemon's own
//! `amber_tiers::interject::decide` (its default settings: the top 10 by cosine, gate
//! 0.42, judge off, one memory, a fresh session per event).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use amber_core::{Expand, Hit, MemoryId, Outcome, Query, Report, ReportKind, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::interject::{self as model, Candidate, Event, Group, Judge, Policy};
use amber_eval::locomo;
use amber_tiers::interject::{EventKind, InterjectConfig, decide, precheck};
use amber_tiers::session::Session;
use serde::Serialize;
use serde_json::{Value, json};

use crate::common::{EngineArgs, Rng, ingest, open_engine, progress, scope_segment};

/// How the agent is simulated.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sim {
    pub(super) rounds: usize,
    pub(super) flip: f64,
    pub(super) feed_k: usize,
    pub(super) seed: u64,
    pub(super) mode: SearchMode,
    pub(super) negative: Negative,
}

/// What the agent reports for a hit it labels not evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Negative {
    /// An outcome `failure` (−0.20): the simulated agent.
    Failure,
    /// A manifest line `used: false` (×0.95): the hit was served and not relied on.
    Unused,
}

impl Negative {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Negative::Failure => "failure",
            Negative::Unused => "unused",
        }
    }
}

impl std::str::FromStr for Negative {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "failure" => Ok(Negative::Failure),
            "unused" => Ok(Negative::Unused),
            other => Err(format!("unknown report {other:?} (expected failure or unused)")),
        }
    }
}

/// The word the agent gives on a hit it labels `positive` or not.
pub(crate) fn word(positive: bool, negative: Negative) -> (ReportKind, Option<Outcome>) {
    match (positive, negative) {
        (true, _) => (ReportKind::Outcome, Some(Outcome::Success)),
        (false, Negative::Failure) => (ReportKind::Outcome, Some(Outcome::Failure)),
        (false, Negative::Unused) => (ReportKind::Unused, None),
    }
}

/// FNV-1a, to derive seeds from names.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Which of `n` questions are fed: a seeded shuffle, the first half (rounded up) fed.
pub(crate) fn split_fed(n: usize, seed: u64) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..n).collect();
    Rng::new(seed).shuffle(&mut idx);
    let mut fed = vec![false; n];
    for &i in idx.iter().take(n.div_ceil(2)) {
        fed[i] = true;
    }
    fed
}

/// Whether the label of one hit is flipped: a coin of probability `rate`, seeded by the
/// run's seed, the round, the question and the memory.
pub(crate) fn flipped(seed: u64, round: usize, question: &str, memory: &str, rate: f64) -> bool {
    Rng::new(seed ^ fnv1a(&format!("{round}\u{1f}{question}\u{1f}{memory}"))).unit() < rate
}

/// The agent's label: evidence is positive, anything else negative, unless flipped.
pub(crate) fn label(gold: bool, flip: bool) -> bool {
    gold != flip
}

/// Mean of `b - a` over pairs, and its standard error.
pub(crate) fn paired(a: &[f64], b: &[f64]) -> (f64, f64) {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let n = d.len() as f64;
    if d.is_empty() {
        return (0.0, 0.0);
    }
    let mean = d.iter().sum::<f64>() / n;
    let var = if d.len() > 1 { d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    (mean, (var / n).sqrt())
}

/// A conversation as filed.
struct Conv {
    sample_id: String,
    scope: Scope,
    memories: HashMap<MemoryId, Vec<String>>,
    now: i64,
}

/// A question of the simulation.
pub(super) struct Question {
    conv: usize,
    key: String,
    text: String,
    evidence: Vec<String>,
    pub(super) fed: bool,
    /// Held apart, with no evidence turn shared with a fed question.
    pub(super) disjoint: bool,
    answerable: bool,
}

/// The halves scored: fed, held apart, and the held-apart questions that share no
/// evidence turn with a fed one (nothing reported on their evidence as evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Half {
    Fed,
    HeldApart,
    Disjoint,
}

impl Half {
    const ALL: [Half; 3] = [Half::Fed, Half::HeldApart, Half::Disjoint];

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Half::Fed => "fed",
            Half::HeldApart => "held_apart",
            Half::Disjoint => "held_apart_disjoint",
        }
    }

    fn holds(self, q: &Question) -> bool {
        match self {
            Half::Fed => q.fed,
            Half::HeldApart => !q.fed,
            Half::Disjoint => q.disjoint,
        }
    }
}

/// The questions with evidence, split per conversation.
pub(super) fn questions(convs: &[locomo::Conversation], seed: u64) -> Vec<Question> {
    let mut out = Vec::new();
    for (ci, c) in convs.iter().enumerate() {
        let with: Vec<(usize, &locomo::Qa)> =
            c.qa.iter().enumerate().filter(|(_, q)| !q.evidence.is_empty()).collect();
        let fed = split_fed(with.len(), seed ^ fnv1a(&c.sample_id));
        let fed_evidence: HashSet<&str> = with
            .iter()
            .zip(&fed)
            .filter(|(_, f)| **f)
            .flat_map(|((_, qa), _)| qa.evidence.iter().map(String::as_str))
            .collect();
        for ((j, qa), fed) in with.iter().zip(fed) {
            out.push(Question {
                conv: ci,
                key: format!("{}#{j}", c.sample_id),
                text: qa.question.clone(),
                evidence: qa.evidence.clone(),
                fed,
                disjoint: !fed && !qa.evidence.iter().any(|e| fed_evidence.contains(e.as_str())),
                answerable: qa.category != 5,
            });
        }
    }
    out
}

/// Whether a hit is one of the question's evidence turns.
fn is_gold(h: &Hit, conv: &Conv, q: &Question) -> bool {
    conv.memories.get(&h.memory.id).is_some_and(|ids| ids.iter().any(|id| q.evidence.contains(id)))
}

/// Every question's top `k`.
fn measure(
    engine: &Engine,
    convs: &[Conv],
    qs: &[Question],
    k: usize,
    mode: SearchMode,
) -> anyhow::Result<Vec<Vec<Hit>>> {
    qs.iter()
        .map(|q| {
            let c = &convs[q.conv];
            let query = Query {
                now: Some(c.now),
                mode,
                expand: Expand::None,
                ..Query::new(q.text.as_str()).in_scope(c.scope.clone()).top(k)
            };
            Ok(engine.recall(&query)?)
        })
        .collect()
}

/// Retrieval scores of one half.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(super) struct Scores {
    pub(super) questions: usize,
    pub(super) recall_at_1: f64,
    pub(super) recall_at_5: f64,
    pub(super) recall_at_10: f64,
    pub(super) wrong_at_5: f64,
}

/// Per-question recall@1, @5, @10 and wrong@5 of one half.
fn per_question(hits: &[Vec<Hit>], convs: &[Conv], qs: &[Question], half: Half) -> Vec<[f64; 4]> {
    qs.iter()
        .zip(hits)
        .filter(|(q, _)| half.holds(q))
        .map(|(q, h)| {
            let c = &convs[q.conv];
            let ranked: Vec<String> =
                h.iter().flat_map(|x| c.memories.get(&x.memory.id).cloned().unwrap_or_default()).collect();
            let top5 = &h[..h.len().min(5)];
            let wrong = top5.iter().filter(|x| !is_gold(x, c, q)).count() as f64 / top5.len().max(1) as f64;
            [
                locomo::recall_at_k(&ranked, &q.evidence, 1).unwrap_or(0.0),
                locomo::recall_at_k(&ranked, &q.evidence, 5).unwrap_or(0.0),
                locomo::recall_at_k(&ranked, &q.evidence, 10).unwrap_or(0.0),
                wrong,
            ]
        })
        .collect()
}

fn scores(v: &[[f64; 4]]) -> Scores {
    let n = v.len().max(1) as f64;
    let mean = |i: usize| v.iter().map(|x| x[i]).sum::<f64>() / n;
    Scores {
        questions: v.len(),
        recall_at_1: mean(0),
        recall_at_5: mean(1),
        recall_at_10: mean(2),
        wrong_at_5: mean(3),
    }
}

/// One point of the curve.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Round {
    pub(super) round: usize,
    pub(super) fed: Scores,
    pub(super) held_apart: Scores,
    pub(super) held_apart_disjoint: Scores,
    /// Reports made in this round (positive, negative) and labels flipped.
    pub(super) reports: (usize, usize),
    pub(super) flipped: usize,
    /// Memories archived in the study's scopes after this round.
    pub(super) archived: usize,
}

/// Interjection on one half's answerable questions.
fn interjection(hits: &[Vec<Hit>], convs: &[Conv], qs: &[Question], half: Half) -> Value {
    let policy = Policy { gate: 0.42, band: 0.0, max_fire: 1, judge: Judge::Off };
    let cfg = InterjectConfig::default();
    let mut events = Vec::new();
    let (mut n, mut fired, mut gold) = (0usize, 0usize, 0usize);
    for (q, h) in qs.iter().zip(hits).filter(|(q, _)| half.holds(q) && q.answerable) {
        let c = &convs[q.conv];
        let candidates = h
            .iter()
            .take(3)
            .map(|x| Candidate { score: x.evidence.best_chunk_cosine.map(f64::from), gold: is_gold(x, c, q) })
            .collect();
        events.push(Event { group: Group::Answerable, candidates });
        n += 1;
        let session = Session::new(String::new(), String::new(), None, c.scope.clone(), c.now);
        if precheck(EventKind::Prompt, &q.text, 1, &session, &cfg).is_some() {
            continue;
        }
        let top = &h[..h.len().min(cfg.candidates)];
        let d = decide(1, &q.text, top, &session, &amber_tiers::judge::Off, Duration::ZERO, &cfg);
        if let Some(m) = d.memories.first() {
            fired += 1;
            gold += usize::from(
                c.memories.get(&m.id).is_some_and(|ids| ids.iter().any(|id| q.evidence.contains(id))),
            );
        }
    }
    let r = model::rates(&events, &policy);
    json!({
        "events": n,
        "study_model": {"fire_rate": r.fire_rate, "precision_1_memory": r.precision_first},
        "daemon_decide": {
            "fire_rate": if n == 0 { 0.0 } else { fired as f64 / n as f64 },
            "precision": (fired > 0).then(|| gold as f64 / fired as f64),
        },
    })
}

/// What one strength's simulation produced.
pub(super) struct Run {
    pub(super) strength: f32,
    pub(super) curve: Vec<Round>,
    pub(super) report: Value,
}

/// Runs the simulation at one standing strength, in a fresh store.
pub(super) fn run_strength(
    engine_args: &EngineArgs,
    strength: f32,
    data: &[locomo::Conversation],
    qs: &[Question],
    sim: Sim,
) -> anyhow::Result<Run> {
    let mut args = engine_args.clone();
    args.standing_strength = strength;
    let (engine, _tmp) = open_engine(&args)?;
    let mut convs = Vec::new();
    for c in data {
        let scope: Scope =
            format!("locomo-standing/s{strength:.2}/turn/{}", scope_segment(&c.sample_id)).parse()?;
        let (memories, _) = ingest(&engine, &scope, c.turn_docs().into_iter())?;
        let now = c.sessions.iter().filter_map(|s| s.time).max().unwrap_or_else(amber_core::now_millis);
        convs.push(Conv { sample_id: c.sample_id.clone(), scope, memories, now });
    }
    let k = sim.feed_k.max(10);
    let archived = |engine: &Engine| -> anyhow::Result<usize> {
        let mut n = 0;
        for c in &convs {
            n += engine.archived(Some(&c.scope), 1_000_000)?.len();
        }
        Ok(n)
    };
    let pb = progress(sim.rounds + 1, &format!("standing s={strength}"));
    let mut hits = measure(&engine, &convs, qs, k, sim.mode)?;
    let before = hits.clone();
    let point = |round, hits: &[Vec<Hit>], reports, flipped, archived| Round {
        round,
        fed: scores(&per_question(hits, &convs, qs, Half::Fed)),
        held_apart: scores(&per_question(hits, &convs, qs, Half::HeldApart)),
        held_apart_disjoint: scores(&per_question(hits, &convs, qs, Half::Disjoint)),
        reports,
        flipped,
        archived,
    };
    let mut curve = vec![point(0, &hits, (0, 0), 0, 0)];
    pb.inc(1);
    for round in 1..=sim.rounds {
        let (mut ok, mut bad, mut flips) = (0, 0, 0);
        for (q, h) in qs.iter().zip(&hits).filter(|(q, _)| q.fed) {
            let c = &convs[q.conv];
            for x in h.iter().take(sim.feed_k) {
                let flip = flipped(sim.seed, round, &q.key, x.memory.id.as_str(), sim.flip);
                let positive = label(is_gold(x, c, q), flip);
                let (kind, answer) = word(positive, sim.negative);
                flips += usize::from(flip);
                if positive {
                    ok += 1
                } else {
                    bad += 1
                }
                engine.writer()?.report(
                    &x.memory.id,
                    Report {
                        kind,
                        result: answer,
                        session_id: Some(format!("amber-eval-standing/r{round}/{}", q.key)),
                        agent: Some("amber-eval".into()),
                        note: None,
                        at: c.now,
                        basis: None,
                    },
                )?;
            }
        }
        hits = measure(&engine, &convs, qs, k, sim.mode)?;
        curve.push(point(round, &hits, (ok, bad), flips, archived(&engine)?));
        pb.inc(1);
    }
    pb.finish_and_clear();
    // The change from round 0 to the last round, per half, with its paired standard error.
    let change = |half: Half| {
        let a = per_question(&before, &convs, qs, half);
        let b = per_question(&hits, &convs, qs, half);
        let col = |v: &[[f64; 4]], i: usize| v.iter().map(|x| x[i]).collect::<Vec<f64>>();
        let d = |i: usize| {
            let (m, se) = paired(&col(&a, i), &col(&b, i));
            json!({"change": m, "standard_error": se})
        };
        json!({"recall_at_1": d(0), "recall_at_5": d(1), "recall_at_10": d(2), "wrong_at_5": d(3)})
    };
    let per_half = |f: &dyn Fn(Half) -> Value| -> Value {
        Value::Object(Half::ALL.iter().map(|h| (h.as_str().to_string(), f(*h))).collect())
    };
    // The evidence memories of each half, and how many of them ended archived.
    let mut evidence_archived = serde_json::Map::new();
    for half in Half::ALL {
        let mut seen: HashSet<&MemoryId> = HashSet::new();
        let mut archived_n = 0;
        for c in &convs {
            let wanted: HashSet<&str> = qs
                .iter()
                .filter(|q| half.holds(q) && std::ptr::eq(&convs[q.conv], c))
                .flat_map(|q| q.evidence.iter().map(String::as_str))
                .collect();
            for (m, ids) in &c.memories {
                if ids.iter().any(|id| wanted.contains(id.as_str())) && seen.insert(m) {
                    archived_n += usize::from(engine.get(m)?.is_some_and(|m| m.is_archived()));
                }
            }
        }
        evidence_archived
            .insert(half.as_str().into(), json!({"memories": seen.len(), "archived": archived_n}));
    }
    let report = json!({
        "standing_strength": strength,
        "curve": curve,
        "change_after_last_round": per_half(&change),
        "evidence_memories_archived": evidence_archived,
        "interjection": {
            "without_outcomes": per_half(&|h| interjection(&before, &convs, qs, h)),
            "after_feedback": per_half(&|h| interjection(&hits, &convs, qs, h)),
        },
        "conversations": convs.iter().map(|c| json!({"sample_id": c.sample_id, "memories": c.memories.len()})).collect::<Vec<_>>(),
    });
    engine.flush()?;
    Ok(Run { strength, curve, report })
}

/// Loads the conversations (the first `limit` of them).
pub(super) fn load(data: &Path, limit: Option<usize>) -> anyhow::Result<(Vec<locomo::Conversation>, Value)> {
    let (mut convs, quirks) = locomo::load(data)?;
    if let Some(n) = limit {
        convs.truncate(n);
    }
    Ok((convs, json!(quirks)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_seeded_half_and_half() {
        let a = split_fed(11, 7);
        assert_eq!(a, split_fed(11, 7), "deterministic");
        assert_eq!(a.iter().filter(|&&f| f).count(), 6, "the fed half rounds up");
        assert_ne!(a, split_fed(11, 8), "another seed, another split");
        assert!(split_fed(0, 1).is_empty());
        assert_eq!(split_fed(1, 1), [true]);
    }

    #[test]
    fn labels_flip_at_the_rate_asked_and_deterministically() {
        assert!(label(true, false));
        assert!(!label(false, false));
        assert!(!label(true, true), "a flipped evidence hit is labelled negative");
        assert!(label(false, true));
        assert_eq!(word(true, Negative::Unused), (ReportKind::Outcome, Some(Outcome::Success)));
        assert_eq!(word(false, Negative::Failure), (ReportKind::Outcome, Some(Outcome::Failure)));
        assert_eq!(word(false, Negative::Unused), (ReportKind::Unused, None));
        let n = 20_000;
        let flips = (0..n).filter(|i| flipped(42, i % 5, &format!("q{}", i / 5), "m", 0.15)).count();
        let share = flips as f64 / n as f64;
        assert!((share - 0.15).abs() < 0.01, "{share}");
        assert_eq!(flipped(42, 1, "q", "m", 0.15), flipped(42, 1, "q", "m", 0.15));
        assert!(!flipped(42, 1, "q", "m", 0.0));
        assert!(flipped(42, 1, "q", "m", 1.0));
    }

    #[test]
    fn paired_change_and_its_error() {
        let (m, se) = paired(&[0.0, 0.5, 1.0, 1.0], &[0.5, 0.5, 1.0, 0.5]);
        assert!((m - 0.0).abs() < 1e-12);
        // differences 0.5, 0, 0, -0.5: sample variance 1/6, se = sqrt(1/24)
        assert!((se - (1.0f64 / 24.0).sqrt()).abs() < 1e-12);
        assert_eq!(paired(&[], &[]), (0.0, 0.0));
    }
}
