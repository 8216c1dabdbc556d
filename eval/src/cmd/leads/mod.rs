//! `amber-eval leads`: error leads (issue 19) on a hand-built fixture of real-shaped
//! traces ([`fixture`]: Python, Rust panics, rustc errors, Go, Node, Java).
//!
//! Every original and distractor error and every note is filed as a memory in one scope
//! of a fresh store. Then each rerun is a query, answered the way the daemon answers
//! one: [`signature`] of the rerun, a BM25 recall (top `--candidates`) with its
//! [`query_text`], and [`rank_with`] over those candidates; a lead is right when it is
//! the original of the same error. Scored: precision@1 (the top lead is the original)
//! and recall@3 (the original is among the first three), overall and per language,
//! against BM25 alone on the raw rerun text (what recall gives today), hybrid recall on
//! the raw text, BM25 with the normalised query text alone, and the signals alone (no
//! BM25 share), with a sweep of BM25's weight. Novel errors (never filed) measure how
//! often leads come back when none is right.

mod fixture;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{MemoryId, Query, Scope, SearchMode};
use amber_engine::Engine;
use amber_eval::FiledDoc;
use amber_tiers::leads::{Lead, Weights, query_text, rank_with, signature};
use clap::Args;
use serde_json::{Value, json};

use crate::common::{
    EngineArgs, engine_config, ingest, open_engine, open_rankings, percentile, write_report,
};

/// Arguments of `amber-eval leads`.
#[derive(Args, Debug)]
pub(crate) struct LeadsArgs {
    /// Reruns rendered per error.
    #[arg(long, default_value_t = 3)]
    reruns: usize,
    /// The fixture generator's seed.
    #[arg(long, default_value_t = 19)]
    seed: u64,
    /// BM25 candidates handed to the lead ranking (the daemon's choice).
    #[arg(long, default_value_t = 50)]
    candidates: usize,
    /// Templates [default: the built-in eval/fixtures/leads_traces.txt].
    #[arg(long, value_name = "FILE")]
    traces: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Leads returned, as the daemon would: at most this many.
const LEADS: usize = 3;
/// BM25 weights swept (the default is [`Weights::default`]'s).
const SWEEP: &[f32] = &[0.0, 0.25, 0.5, 1.0, 2.0, 4.0];

/// Precision@1 and recall@3 over some queries.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Tally {
    pub(crate) n: usize,
    pub(crate) p1: usize,
    pub(crate) r3: usize,
}

impl Tally {
    /// Scores one ranking (labels, best first) against the gold label.
    pub(crate) fn add(&mut self, ranked: &[String], gold: &str) {
        self.n += 1;
        self.p1 += usize::from(ranked.first().is_some_and(|r| r == gold));
        self.r3 += usize::from(ranked.iter().take(3).any(|r| r == gold));
    }

    pub(crate) fn json(&self) -> Value {
        let rate = |k: usize| if self.n == 0 { Value::Null } else { json!(k as f64 / self.n as f64) };
        json!({ "queries": self.n, "precision_at_1": rate(self.p1), "recall_at_3": rate(self.r3) })
    }
}

/// The arms compared, in report order.
const ARMS: &[&str] = &["leads", "signals_only", "bm25_query_text", "bm25_raw", "hybrid_raw"];

/// Runs `amber-eval leads`.
pub(crate) fn run(a: LeadsArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let templates = match &a.traces {
        Some(p) => fixture::parse(&std::fs::read_to_string(p)?)?,
        None => fixture::builtin()?,
    };
    let fx = fixture::build(&templates, a.seed, a.reruns);
    let (engine, _tmp) = open_engine(&a.engine)?;
    let scope: Scope = "eval/leads".parse()?;
    // Every filed text, labelled: `lang/name` (an original), `distractor:lang/name`, `note:i`.
    let mut docs: Vec<(String, String)> = Vec::new();
    for c in &fx.cases {
        if let Some(o) = &c.original {
            docs.push((format!("{}/{}", c.lang, c.name), o.clone()));
        }
    }
    for (lang, name, text) in &fx.distractors {
        docs.push((format!("distractor:{lang}/{name}"), text.clone()));
    }
    for (i, n) in fx.notes.iter().enumerate() {
        docs.push((format!("note:{i}"), n.clone()));
    }
    let detected_filed: BTreeMap<&str, (usize, usize)> =
        docs.iter().fold(BTreeMap::new(), |mut m, (l, t)| {
            let kind = if l.starts_with("note:") {
                "notes"
            } else if l.starts_with("distractor:") {
                "distractors"
            } else {
                "originals"
            };
            let e = m.entry(kind).or_insert((0, 0));
            e.0 += 1;
            e.1 += usize::from(signature(t).is_some());
            m
        });
    eprintln!("leads: filing {} memories", docs.len());
    let (memories, _) = ingest(
        &engine,
        &scope,
        docs.iter().map(|(id, text)| FiledDoc {
            id: id.clone(),
            text: text.clone(),
            time: None,
            session: None,
        }),
    )?;
    let label = |id: &MemoryId| memories.get(id).and_then(|v| v.first()).cloned().unwrap_or_default();
    let default = Weights::default();
    let mut tallies: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut sweep: Vec<Tally> = vec![Tally::default(); SWEEP.len()];
    let (mut undetected, mut no_lead, mut in_candidates) = (0, 0, 0);
    let mut novel = json!({ "queries": 0, "with_a_lead": 0, "top_lead_same_culprit_or_message": 0 });
    // The top lead's signal score: when it is right, when it is wrong, on novel errors.
    let (mut right_scores, mut wrong_scores, mut novel_scores) = (Vec::new(), Vec::new(), Vec::new());
    let mut rankings = open_rankings(a.engine.rankings.as_deref())?;
    for c in &fx.cases {
        for (ri, rerun) in c.reruns.iter().enumerate() {
            let gold = c.original.as_ref().map(|_| format!("{}/{}", c.lang, c.name));
            let sig = signature(rerun);
            let hits = match &sig {
                Some(s) => recall(&engine, &query_text(s), &scope, a.candidates, SearchMode::Bm25)?,
                None => Vec::new(),
            };
            let cands: Vec<(String, String, Option<usize>)> =
                hits.iter().enumerate().map(|(i, (id, text))| (label(id), text.clone(), Some(i))).collect();
            let ranked = |w: &Weights| -> Vec<Lead> {
                sig.as_ref().map(|s| rank_with(s, &cands, LEADS, w)).unwrap_or_default()
            };
            let keys = |ls: &[Lead]| ls.iter().map(|l| l.key.clone()).collect::<Vec<_>>();
            let leads = ranked(&default);
            let Some(gold) = gold else {
                novel["queries"] = json!(novel["queries"].as_u64().unwrap_or(0) + 1);
                if let Some(top) = leads.first() {
                    novel_scores.push(f64::from(top.why.score));
                    novel["with_a_lead"] = json!(novel["with_a_lead"].as_u64().unwrap_or(0) + 1);
                    if top.why.same_culprit || top.why.same_message {
                        let k = "top_lead_same_culprit_or_message";
                        novel[k] = json!(novel[k].as_u64().unwrap_or(0) + 1);
                    }
                }
                write_line(&mut rankings, c, ri, None, &leads, &[])?;
                continue;
            };
            if let Some(top) = leads.first() {
                let scores = if top.key == gold { &mut right_scores } else { &mut wrong_scores };
                scores.push(f64::from(top.why.score));
            }
            undetected += usize::from(sig.is_none());
            no_lead += usize::from(leads.is_empty());
            in_candidates += usize::from(cands.iter().any(|(k, _, _)| *k == gold));
            let raw = |mode| -> anyhow::Result<Vec<String>> {
                Ok(recall(&engine, rerun, &scope, LEADS, mode)?.iter().map(|(id, _)| label(id)).collect())
            };
            let bm25_raw = raw(SearchMode::Bm25)?;
            let arms: [(&str, Vec<String>); 5] = [
                ("leads", keys(&leads)),
                ("signals_only", keys(&ranked(&Weights { bm25: 0.0, ..default }))),
                ("bm25_query_text", cands.iter().take(LEADS).map(|(k, _, _)| k.clone()).collect()),
                ("bm25_raw", bm25_raw.clone()),
                ("hybrid_raw", raw(SearchMode::Hybrid)?),
            ];
            for (arm, ranking) in &arms {
                for lang in ["all", c.lang.as_str()] {
                    tallies.entry((arm.to_string(), lang.to_string())).or_default().add(ranking, &gold);
                }
            }
            for (t, w) in sweep.iter_mut().zip(SWEEP) {
                t.add(&keys(&ranked(&Weights { bm25: *w, ..default })), &gold);
            }
            write_line(&mut rankings, c, ri, Some(&gold), &leads, &bm25_raw)?;
        }
    }
    if let Some(mut w) = rankings {
        w.flush()?;
    }
    let mut langs: Vec<&str> = fx.cases.iter().map(|c| c.lang.as_str()).collect();
    langs.dedup();
    let table: Vec<Value> = std::iter::once("all")
        .chain(langs.iter().copied())
        .map(|lang| {
            let mut row = json!({ "language": lang });
            for arm in ARMS {
                row[arm] =
                    tallies.get(&(arm.to_string(), lang.to_string())).copied().unwrap_or_default().json();
            }
            row
        })
        .collect();
    print_table(&table);
    let report = json!({
        "benchmark": "error leads (issue 19), hand-built fixture",
        "fixture": {
            "templates": a.traces.as_ref().map_or("eval/fixtures/leads_traces.txt (built in)".to_string(), |p| p.display().to_string()),
            "seed": a.seed,
            "reruns_per_error": a.reruns,
            "errors": fx.cases.iter().filter(|c| c.original.is_some()).count(),
            "novel_errors": fx.cases.iter().filter(|c| c.original.is_none()).count(),
            "distractors": fx.distractors.len(),
            "notes": fx.notes.len(),
            "detected_when_filed": detected_filed.iter().map(|(k, (n, d))| (k.to_string(), json!({"filed": n, "detected": d}))).collect::<serde_json::Map<_, _>>(),
        },
        "method": {
            "leads": format!("signature(rerun); BM25 recall of query_text(signature), top {}; rank (Weights::default) to {LEADS}", a.candidates),
            "signals_only": "the same candidates ranked with BM25's weight 0",
            "bm25_query_text": "the first 3 BM25 candidates for query_text, no signals",
            "bm25_raw": "BM25 recall on the raw rerun text, top 3 (the baseline)",
            "hybrid_raw": "hybrid recall (BM25 + vectors, engine defaults) on the raw rerun text, top 3",
        },
        "weights": serde_json::to_value(default)?,
        "table": table,
        "reruns": {
            "not_detected": undetected,
            "no_lead": no_lead,
            "original_in_bm25_candidates": in_candidates,
        },
        "bm25_weight_sweep": SWEEP.iter().zip(&sweep).map(|(w, t)| json!({ "bm25": w, "result": t.json() })).collect::<Vec<_>>(),
        "novel": novel,
        "top_lead_signal_score": {
            "right": quantiles(right_scores),
            "wrong": quantiles(wrong_scores),
            "novel": quantiles(novel_scores),
        },
        "engine": engine_config(&engine, &a.engine),
        "seconds": started.elapsed().as_secs_f64(),
    });
    // The engine saves its indexes when dropped: before its temporary store goes.
    drop(engine);
    write_report(&report, a.engine.out.as_deref())
}

/// Count, min, 10th percentile, median, max.
fn quantiles(mut xs: Vec<f64>) -> Value {
    xs.sort_by(f64::total_cmp);
    let q = |p: f64| percentile(&xs, p).map(|x| (x * 1000.0).round() / 1000.0);
    json!({ "n": xs.len(), "min": q(0.0), "p10": q(0.1), "median": q(0.5), "max": q(1.0) })
}

/// Ids and texts of a recall's hits.
fn recall(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    k: usize,
    mode: SearchMode,
) -> anyhow::Result<Vec<(MemoryId, String)>> {
    let q = Query { mode, ..Query::new(text).in_scope(scope.clone()).top(k) };
    Ok(engine.recall(&q)?.into_iter().map(|h| (h.memory.id, h.memory.content)).collect())
}

fn write_line(
    out: &mut Option<std::io::BufWriter<std::fs::File>>,
    c: &fixture::Case,
    rerun: usize,
    gold: Option<&str>,
    leads: &[Lead],
    bm25_raw: &[String],
) -> anyhow::Result<()> {
    if let Some(w) = out {
        let line = json!({
            "language": c.lang, "error": c.name, "rerun": rerun, "gold": gold,
            "leads": leads, "bm25_raw": bm25_raw,
        });
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// The table on stderr: precision@1 / recall@3 per arm and language.
fn print_table(table: &[Value]) {
    let cell = |v: &Value| {
        let f = |k: &str| v[k].as_f64().map_or("-".to_string(), |x| format!("{x:.3}"));
        format!("{} / {}", f("precision_at_1"), f("recall_at_3"))
    };
    eprintln!(
        "{:<8} {:>5}  {}",
        "language",
        "n",
        ARMS.iter().map(|a| format!("{a:>17}")).collect::<Vec<_>>().join(" ")
    );
    for row in table {
        let n = row["leads"]["queries"].as_u64().unwrap_or(0);
        let cells: Vec<String> = ARMS.iter().map(|a| format!("{:>17}", cell(&row[*a]))).collect();
        eprintln!("{:<8} {:>5}  {}", row["language"].as_str().unwrap_or(""), n, cells.join(" "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_scores_precision_and_recall() {
        let mut t = Tally::default();
        let r = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        t.add(&r(&["a", "b", "c"]), "a");
        t.add(&r(&["b", "a"]), "a");
        t.add(&r(&["b", "c", "d", "a"]), "a");
        t.add(&r(&[]), "a");
        assert_eq!(t, Tally { n: 4, p1: 1, r3: 2 });
        let j = t.json();
        assert_eq!((j["precision_at_1"].as_f64(), j["recall_at_3"].as_f64()), (Some(0.25), Some(0.5)));
        assert!(Tally::default().json()["precision_at_1"].is_null());
    }

    #[test]
    fn fixture_reruns_keep_their_originals_kinds() {
        let templates = fixture::builtin().unwrap();
        let fx = fixture::build(&templates, 19, 4);
        let mut per_lang: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &fx.cases {
            let Some(original) = &c.original else { continue };
            *per_lang.entry(c.lang.as_str()).or_default() += 1;
            let o = signature(original).unwrap_or_else(|| panic!("{}: original not detected", c.name));
            for r in &c.reruns {
                assert_ne!(r, original, "{}: a rerun equal to its original", c.name);
                let s = signature(r).unwrap_or_else(|| panic!("{}: rerun not detected:\n{r}", c.name));
                // A rerun cut to a few lines may lose a chained cause's kind, never gain one.
                assert!(
                    !s.kinds.is_empty() && s.kinds.iter().all(|k| o.kinds.contains(k)),
                    "{}: kinds {:?} not within the original's {:?}:\n{r}",
                    c.name,
                    s.kinds,
                    o.kinds
                );
            }
        }
        for lang in ["python", "rust", "rustc", "go", "node", "java"] {
            assert!(per_lang.get(lang).copied().unwrap_or(0) >= 8, "{lang}: {per_lang:?}");
        }
        for (_, name, text) in &fx.distractors {
            assert!(signature(text).is_some(), "distractor {name} not detected");
        }
        for n in &fx.notes {
            assert!(signature(n).is_none(), "a note detected as an error: {n}");
        }
        assert!(fx.cases.iter().any(|c| c.original.is_none()), "no novel errors");
        // The held-out templates parse, and every error in them (not the novel ones) is detected.
        let held_out = fixture::parse(include_str!("../../../fixtures/leads_traces_heldout.txt")).unwrap();
        let ho = fixture::build(&held_out, 19, 4);
        for c in ho.cases.iter().filter(|c| c.original.is_some()) {
            for t in c.original.iter().chain(&c.reruns) {
                assert!(signature(t).is_some(), "held-out {} not detected:\n{t}", c.name);
            }
        }
        assert!(ho.cases.len() >= 30 && ho.notes.iter().all(|n| signature(n).is_none()));
        // The same seed gives the same fixture.
        let again = fixture::build(&templates, 19, 4);
        assert_eq!(again.cases[0].reruns, fx.cases[0].reruns);
    }
}
