//! Part B of `amber-eval briefing`: LongMemEval haystacks at session level, each question
//! as the opening prompt; precision and recall of the evidence sessions each briefing shows.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use amber_core::{MemoryId, SearchMode};
use amber_engine::Engine;
use amber_eval::longmemeval::{self, Granularity};
use amber_tiers::briefing::brief;
use amber_tiers::identity::estimate_tokens;
use serde_json::{Value, json};

use super::compared::{configs, recall};
use crate::common::{file_haystack, open_rankings, progress, sha256_file};

/// The mean, NaN for none.
fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() { f64::NAN } else { xs.iter().sum::<f64>() / xs.len() as f64 }
}

/// What one briefing showed on one question.
struct Shown {
    /// Per item, the doc ids it stands for.
    docs: Vec<Vec<String>>,
    /// Per item, whether its whole text is in the briefing (always, when verbatim).
    full: Vec<bool>,
    /// Items shown in full under their pointer line.
    expanded: usize,
    tokens: usize,
}

/// One briefing's scores, question by question.
#[derive(Default, Clone)]
struct Scores {
    shown: Vec<f64>,
    tokens: Vec<f64>,
    expanded: Vec<f64>,
    precision: Vec<f64>,
    evidence: Vec<f64>,
    recall_any: Vec<f64>,
    recall_all: Vec<f64>,
    evidence_in_full: Vec<f64>,
    evidence_shown: usize,
    shown_total: usize,
    evidence_full: usize,
    full_total: usize,
}

impl Scores {
    fn push(&mut self, s: &Shown, gold: &HashSet<&str>) {
        let shown_docs = &s.docs;
        let is_gold = |docs: &Vec<String>| docs.iter().any(|d| gold.contains(d.as_str()));
        let good = shown_docs.iter().filter(|d| is_gold(d)).count();
        let in_full = shown_docs.iter().zip(&s.full).any(|(d, &f)| f && is_gold(d));
        let covered: HashSet<&str> = shown_docs.iter().flatten().map(String::as_str).collect();
        self.shown.push(shown_docs.len() as f64);
        self.tokens.push(s.tokens as f64);
        self.expanded.push(s.expanded as f64);
        self.evidence_in_full.push(if in_full { 1.0 } else { 0.0 });
        self.precision.push(if shown_docs.is_empty() { 0.0 } else { good as f64 / shown_docs.len() as f64 });
        self.evidence.push(good as f64);
        self.recall_any.push(if good > 0 { 1.0 } else { 0.0 });
        self.recall_all.push(if gold.iter().all(|g| covered.contains(g)) { 1.0 } else { 0.0 });
        self.evidence_full += shown_docs.iter().zip(&s.full).filter(|(d, f)| **f && is_gold(d)).count();
        self.full_total += s.full.iter().filter(|&&f| f).count();
        self.evidence_shown += good;
        self.shown_total += shown_docs.len();
    }

    fn report(&self) -> Value {
        json!({
            "questions": self.shown.len(),
            "items_shown": mean(&self.shown),
            "precision": mean(&self.precision),
            "precision_micro": if self.shown_total > 0 { self.evidence_shown as f64 / self.shown_total as f64 } else { f64::NAN },
            "evidence_items_shown": mean(&self.evidence),
            "recall_any": mean(&self.recall_any),
            "recall_all": mean(&self.recall_all),
            "recall_any_in_full": mean(&self.evidence_in_full),
            "in_full_total": self.full_total,
            "in_full_precision": if self.full_total > 0 { self.evidence_full as f64 / self.full_total as f64 } else { f64::NAN },
            "tokens": mean(&self.tokens),
            "expanded": mean(&self.expanded),
        })
    }
}

/// Part B: LongMemEval, session level: the first `limit` questions of `data`, each one's
/// briefings recorded in `rankings` if given.
pub(super) fn run(
    engine: &Engine,
    mode: SearchMode,
    data: &Path,
    (limit, rankings): (Option<usize>, Option<&Path>),
    min_relevance: Option<f32>,
) -> anyhow::Result<Value> {
    let started = Instant::now();
    let sha = sha256_file(data)?;
    let mut questions = longmemeval::load(data)?;
    let n_questions = questions.len();
    if let Some(n) = limit {
        questions.truncate(n);
    }
    let mut records = open_rankings(rankings)?;
    let all = configs(min_relevance);
    let cfgs = &all[..2];
    let k = cfgs[0].1.candidates.clamp(1, amber_core::MAX_K);
    // [gold set][config]
    let mut scores: Vec<Vec<Scores>> = vec![vec![Scores::default(); cfgs.len()]; 2];
    let mut cand_any = [Vec::new(), Vec::new()];
    // Per question type, with the answer_session_ids gold.
    let mut by_type: BTreeMap<String, Vec<Scores>> = BTreeMap::new();
    let mut abstention = 0usize;
    // Per scored question, the best chunk cosine of its best evidence candidate.
    let mut evidence_cosine: Vec<f64> = Vec::new();
    let mut session_tokens: Vec<usize> = Vec::new();
    let pb = progress(questions.len(), "briefing");
    for q in &questions {
        pb.inc(1);
        let hay = file_haystack(engine, q, Granularity::Session, false)?;
        session_tokens
            .extend(hay.docs.iter().filter(|d| !d.text.trim().is_empty()).map(|d| estimate_tokens(&d.text)));
        let now = longmemeval::parse_date(&q.question_date);
        let hits = recall(engine, &q.question, &hay.scope, (k, mode, now))?;
        if longmemeval::is_abstention(q) {
            abstention += 1;
            continue;
        }
        let official = longmemeval::gold_ids(q, Granularity::Session);
        let golds: [HashSet<&str>; 2] = [
            q.answer_session_ids.iter().map(String::as_str).collect(),
            official.iter().map(String::as_str).collect(),
        ];
        let now_ms = now.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
        let docs_of = |id: &MemoryId| hay.memories.get(id).cloned().unwrap_or_default();
        let cand_docs: Vec<Vec<String>> = hits.iter().map(|h| docs_of(&h.memory.id)).collect();
        let mut record = json!({"question_id": q.question_id, "question_type": q.question_type});
        let mut shown_by_cfg = Vec::new();
        for (name, cfg) in cfgs {
            let b = brief(&q.question, &hits, now_ms, cfg, |_| false);
            let docs: Vec<Vec<String>> = b.items.iter().map(|i| docs_of(&i.id)).collect();
            let full: Vec<bool> = b.items.iter().map(|i| i.expanded || !cfg.pointers).collect();
            let expanded = b.items.iter().filter(|i| i.expanded).count();
            record[*name] = json!({"shown": docs, "in_full": full, "tokens": b.tokens});
            shown_by_cfg.push(Shown { docs, full, expanded, tokens: b.tokens });
        }
        let best = hits
            .iter()
            .filter(|h| docs_of(&h.memory.id).iter().any(|d| golds[0].contains(d.as_str())))
            .filter_map(|h| h.evidence.best_chunk_cosine)
            .fold(f32::NEG_INFINITY, f32::max);
        if best.is_finite() {
            evidence_cosine.push(f64::from(best));
        }
        for (gi, gold) in golds.iter().enumerate() {
            if gold.is_empty() {
                continue;
            }
            let any = cand_docs.iter().any(|d| d.iter().any(|x| gold.contains(x.as_str())));
            cand_any[gi].push(if any { 1.0 } else { 0.0 });
            for (ci, shown) in shown_by_cfg.iter().enumerate() {
                scores[gi][ci].push(shown, gold);
                if gi == 0 {
                    by_type
                        .entry(q.question_type.clone())
                        .or_insert_with(|| vec![Scores::default(); cfgs.len()])[ci]
                        .push(shown, gold);
                }
            }
        }
        if let Some(w) = records.as_mut() {
            writeln!(w, "{record}")?;
        }
    }
    pb.finish_and_clear();
    if let Some(mut w) = records {
        w.flush()?;
    }
    session_tokens.sort_unstable();
    let budget = cfgs[1].1.budget_tokens;
    let fits = session_tokens.iter().filter(|&&t| t + 40 <= budget).count();
    evidence_cosine.sort_by(f64::total_cmp);
    let expand_cosine = f64::from(cfgs[0].1.expand_cosine);
    let gold_sets = ["answer_session_ids", "official"];
    let mut metrics = serde_json::Map::new();
    for (gi, g) in gold_sets.iter().enumerate() {
        let mut m = serde_json::Map::new();
        for (ci, (name, _)) in cfgs.iter().enumerate() {
            m.insert(name.to_string(), scores[gi][ci].report());
        }
        m.insert("candidates_recall_any_at_30".into(), json!(mean(&cand_any[gi])));
        metrics.insert(g.to_string(), Value::Object(m));
    }
    Ok(json!({
        "data_file": data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "questions_run": questions.len(),
        "abstention_skipped": abstention,
        "gold": {
            "answer_session_ids": "the benchmark's evidence sessions (answer_session_ids), every non-abstention question",
            "official": "the official session gold (answer_* sessions with a has_answer user turn), questions that have any",
        },
        "corpus": "session level, user turns joined by a space, one scope per question (as amber-eval longmemeval)",
        "query": "the question text, verbatim; now = the question date (recall and recency)",
        "session_tokens": {
            "sessions": session_tokens.len(),
            "median": session_tokens.get(session_tokens.len() / 2),
            "mean": mean(&session_tokens.iter().map(|&t| t as f64).collect::<Vec<_>>()),
            "share_fitting_the_budget_verbatim": if session_tokens.is_empty() { f64::NAN } else { fits as f64 / session_tokens.len() as f64 },
        },
        "evidence_best_cosine": {
            "definition": "per question, the best chunk cosine to the question of its best answer_session_ids candidate in the top 30",
            "questions": evidence_cosine.len(),
            "median": evidence_cosine.get(evidence_cosine.len() / 2),
            "share_at_least_expand_cosine": if evidence_cosine.is_empty() { f64::NAN } else {
                evidence_cosine.iter().filter(|&&c| c >= expand_cosine).count() as f64 / evidence_cosine.len() as f64
            },
        },
        "metrics": metrics,
        "per_type_answer_session_ids": by_type
            .iter()
            .map(|(t, v)| {
                let m: serde_json::Map<String, Value> =
                    cfgs.iter().zip(v).map(|((n, _), s)| (n.to_string(), s.report())).collect();
                (t.clone(), Value::Object(m))
            })
            .collect::<serde_json::Map<_, _>>(),
        "wall_seconds": started.elapsed().as_secs_f64(),
    }))
}
