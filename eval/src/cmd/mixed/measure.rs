//! The questions asked of a filled store, the way `amber recall` asks them from inside
//! the project (its scope and `user` as one ranking, at the fixture's now):
//!
//! - each answerable question, top 20 (no floor): answer@1, @5, @10 (a gold memory, or
//!   any chunk of the gold section, that high), by gold kind; for a curated gold, the
//!   share of raw captures in the top 5 and whether any raw capture ranks above the gold;
//! - every question, top 5 with the relevance floor (`Query::floor`): which get no hits.
//!   "No good match" is an empty answer; its precision is over all questions that got
//!   one, its recall over the unanswerable ones.

use std::io::Write;
use std::time::Instant;

use amber_core::filing::Filing;
use amber_core::{Hit, Millis, Query, Scope};
use amber_engine::Engine;
use serde_json::{Value, json};

use super::fixture::Fixture;
use crate::common::percentile;

/// How deep the answerable questions are ranked.
const DEPTH: usize = 20;

/// Where and when questions are asked.
pub(crate) struct Asker<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) project: &'a Scope,
    pub(crate) user: &'a Scope,
    pub(crate) now: Millis,
}

impl Asker<'_> {
    /// The recall `amber recall -k K` makes from the project.
    pub(crate) fn query(&self, text: &str, k: usize) -> Query {
        Query {
            now: Some(self.now),
            ..Query::new(text).in_scope(self.project.clone()).also_in(self.user.clone()).top(k)
        }
    }

    /// The hits and the time taken (ms).
    fn ask(&self, q: &Query) -> anyhow::Result<(Vec<Hit>, f64)> {
        let t = Instant::now();
        let hits = self.engine.recall(q)?;
        Ok((hits, t.elapsed().as_secs_f64() * 1000.0))
    }
}

/// Sums over a set of questions.
#[derive(Default)]
struct Tally {
    n: usize,
    at: [usize; 3],
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        for (i, k) in [1, 5, 10].into_iter().enumerate() {
            self.at[i] += usize::from(rank.is_some_and(|r| r < k));
        }
    }

    fn report(&self) -> Value {
        let r = |x: usize| if self.n == 0 { Value::Null } else { json!(x as f64 / self.n as f64) };
        json!({ "questions": self.n, "answer_at_1": r(self.at[0]), "answer_at_5": r(self.at[1]), "answer_at_10": r(self.at[2]) })
    }
}

/// Runs every question; per-question lines go to `rankings` with `tag` merged in.
pub(crate) fn questions(
    a: &Asker<'_>,
    f: &Fixture,
    mut rankings: Option<&mut dyn Write>,
    tag: &Value,
) -> anyhow::Result<Value> {
    let (mut all, mut curated, mut document) = (Tally::default(), Tally::default(), Tally::default());
    let (mut raw_top5, mut raw_slots, mut raw_above) = (0usize, 0usize, Vec::new());
    let mut top5: std::collections::BTreeMap<&str, usize> = Default::default();
    let (mut ms_rank, mut gold_cos, mut none_cos) = (Vec::new(), Vec::new(), Vec::new());
    let best_cos = |h: &Hit| f64::from(h.evidence.best_chunk_cosine.unwrap_or(0.0));
    for q in &f.questions.answerable {
        let (hits, ms) = a.ask(&a.query(&q.question, DEPTH))?;
        ms_rank.push(ms);
        let rank = hits.iter().position(|h| q.gold.iter().any(|g| g.matches(&h.memory)));
        gold_cos.extend(rank.map(|r| best_cos(&hits[r])));
        let filings: Vec<Filing> = hits.iter().map(|h| Filing::of(&h.memory)).collect();
        let kind = q.gold[0].kind();
        all.add(rank);
        if kind == "curated" {
            curated.add(rank);
            let head = &filings[..filings.len().min(5)];
            raw_top5 += head.iter().filter(|x| **x == Filing::Raw).count();
            raw_slots += head.len();
            if filings[..rank.unwrap_or(filings.len())].contains(&Filing::Raw) {
                raw_above.push(q.id.clone());
            }
        } else {
            document.add(rank);
        }
        for x in filings.iter().take(5) {
            *top5.entry(x.as_str()).or_default() += 1;
        }
        if let Some(w) = rankings.as_deref_mut() {
            let mut line = json!({
                "id": q.id, "question": q.question, "gold_kind": kind, "gold_rank": rank.map(|r| r + 1),
                "top5": hits.iter().take(5).map(|h| json!({
                    "filing": Filing::of(&h.memory).as_str(),
                    "fused": h.evidence.fused,
                    "opening": h.memory.content.chars().take(100).collect::<String>(),
                })).collect::<Vec<_>>(),
            });
            merge(&mut line, tag);
            writeln!(w, "{line}")?;
        }
    }
    // What the unanswerable questions' best hits look like to the floor.
    for q in &f.questions.unanswerable {
        let (hits, _) = a.ask(&a.query(&q.question, DEPTH))?;
        none_cos.push(hits.iter().map(best_cos).fold(0.0, f64::max));
    }
    gold_cos.sort_by(f64::total_cmp);
    none_cos.sort_by(f64::total_cmp);
    let spread = |xs: &[f64]| json!({ "min": xs.first(), "p10": percentile(xs, 0.1), "p50": percentile(xs, 0.5), "max": xs.last() });
    // "No good match": every question with the floor on, as `amber recall` asks.
    let (mut empty_answerable, mut empty_unanswerable, mut ms_floor) = (Vec::new(), Vec::new(), Vec::new());
    let asked = f.questions.answerable.iter().map(|q| (&q.id, &q.question, true));
    for (id, text, answerable) in
        asked.chain(f.questions.unanswerable.iter().map(|q| (&q.id, &q.question, false)))
    {
        let (hits, ms) = a.ask(&a.query(text, 5).with_floor(true))?;
        ms_floor.push(ms);
        if hits.is_empty() {
            if answerable { &mut empty_answerable } else { &mut empty_unanswerable }.push(id.clone());
        }
    }
    let (u, e) = (f.questions.unanswerable.len(), empty_answerable.len() + empty_unanswerable.len());
    ms_rank.sort_by(f64::total_cmp);
    ms_floor.sort_by(f64::total_cmp);
    Ok(json!({
        "answerable": all.report(),
        "curated": curated.report(),
        "document": document.report(),
        "raw_share_top5_curated": if raw_slots == 0 { Value::Null } else { json!(raw_top5 as f64 / raw_slots as f64) },
        "raw_above_curated": raw_above.len(),
        "raw_above_curated_questions": raw_above,
        "top5_filings": top5,
        "no_good_match": {
            "floor": "Query::with_floor(true), top 5: no hits is 'no good match'",
            "unanswerable": u,
            "unanswerable_with_no_hits": empty_unanswerable.len(),
            "answerable_with_no_hits": empty_answerable.len(),
            "answerable_with_no_hits_questions": empty_answerable,
            "precision": if e == 0 { Value::Null } else { json!(empty_unanswerable.len() as f64 / e as f64) },
            "recall": if u == 0 { Value::Null } else { json!(empty_unanswerable.len() as f64 / u as f64) },
            "floor_cosine": a.engine.calibration()?.floor(),
            "gold_best_chunk_cosine": spread(&gold_cos),
            "unanswerable_top_best_chunk_cosine": spread(&none_cos),
        },
        "latency_ms": {
            "ranking_top20": { "p50": percentile(&ms_rank, 0.5), "p95": percentile(&ms_rank, 0.95) },
            "recall_top5_floor": { "p50": percentile(&ms_floor, 0.5), "p95": percentile(&ms_floor, 0.95) },
        },
    }))
}

/// Adds `tag`'s fields to `line`.
fn merge(line: &mut Value, tag: &Value) {
    if let (Some(l), Some(t)) = (line.as_object_mut(), tag.as_object()) {
        for (k, v) in t {
            l.insert(k.clone(), v.clone());
        }
    }
}
