//! `amber-eval interject`: the interjection gate calibration study.
//!
//! **LongMemEval.** Each question is an event in the middle of a session whose memory is the
//! question's own haystack, filed exactly as `amber-eval longmemeval` files it at session
//! level (user turns, one scope per question, the shared embedding cache). As a control,
//! the previous question's text is also asked against each haystack (an unrelated event:
//! nothing there is about it).
//!
//! **LoCoMo** (short memories). Each conversation's turns are filed one memory per turn,
//! exactly as `amber-eval locomo --granularity turn` files them (`speaker: text`, dated by
//! the session, one scope per conversation); each of its questions is an event against it:
//! categories 1 to 4 with evidence are answerable (gold = the evidence turns), category 5
//! (adversarial) is its own group, reported apart. As a control, each question's slot is
//! also asked, with the text of the question at the same position of the *previous*
//! conversation, against this one (unrelated: other people, other lives).
//!
//! Either way the event recalls its top `k` (hybrid, `now` = the question date, or the
//! conversation's last session date) and the gate looks at each candidate's score, by
//! default the cosine of its best chunk to the event text (`Evidence::best_chunk_cosine`),
//! in retrieval order or (`--order score`) best score first, as the daemon does. The sweep
//! and its rates are in [`amber_eval::interject`].
//!
//! What the daemon decides before searching is the daemon's own function
//! (`amber_tiers::interject::precheck`, in [`collect`]). The gate itself is a model of
//! `amber_tiers::interject::decide` that sweeps what the daemon fixes (gate, band, order,
//! score, cap, an oracle judge); where their settings meet it fires what the daemon fires
//! (a test in `amber_eval::interject` holds them together), and its judge calls are an
//! upper bound of the daemon's (see there).

mod collect;
mod plot;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use amber_core::SearchMode;
use amber_eval::interject::{self, Group, Judge, Policy, Row, ScoreKind, Target};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use self::collect::{Order, obj};
use crate::common::{EngineArgs, engine_config, open_engine, open_rankings, sha256_file, write_report};

/// Which benchmark a data file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dataset {
    /// Tell from the file: `.xz` is LongMemEval, otherwise its first keys.
    Auto,
    /// LongMemEval (`.json` or `.json.xz`): whole sessions as memories.
    Longmemeval,
    /// LoCoMo (`locomo10.json` shape): one memory per turn.
    Locomo,
}

impl Dataset {
    fn as_str(self) -> &'static str {
        match self {
            Dataset::Auto => "auto",
            Dataset::Longmemeval => "longmemeval",
            Dataset::Locomo => "locomo",
        }
    }
}

impl std::str::FromStr for Dataset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Dataset::Auto),
            "longmemeval" | "lme" => Ok(Dataset::Longmemeval),
            "locomo" => Ok(Dataset::Locomo),
            other => Err(format!("unknown dataset {other:?} (expected auto, longmemeval or locomo)")),
        }
    }
}

/// Arguments of `amber-eval interject`.
#[derive(Args, Debug)]
pub(crate) struct InterjectArgs {
    /// A LongMemEval file (.json or .json.xz, the official format) or a LoCoMo file
    /// (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// auto, longmemeval or locomo. auto: a .xz file is LongMemEval, otherwise the first
    /// keys of the file tell (LongMemEval's question_id, has_answer; LoCoMo's sample_id,
    /// evidence, dia_id).
    #[arg(long, default_value = "auto")]
    dataset: Dataset,
    /// Candidates recalled per event (the top k of the fused ranking).
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// The gate score: cosine (of the best chunk to the event), agreement (that cosine,
    /// only for a memory BM25 and the vectors both rank first) or fused (the RRF score over
    /// that of a memory first in both).
    #[arg(long, default_value = "cosine")]
    score: ScoreKind,
    /// The order the gate walks the candidates in: retrieval (the fused ranking) or score
    /// (best gate score first, as the daemon walks them).
    #[arg(long, default_value = "retrieval")]
    order: Order,
    /// The most memories one interjection carries.
    #[arg(long, default_value_t = 2)]
    max_fire: usize,
    /// Lowest gate of the sweep.
    #[arg(long, default_value_t = 0.30)]
    gate_from: f64,
    /// Highest gate of the sweep.
    #[arg(long, default_value_t = 0.90)]
    gate_to: f64,
    /// Step between gates.
    #[arg(long, default_value_t = 0.02)]
    gate_step: f64,
    /// Judge band widths below the gate, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,0.05,0.10")]
    bands: Vec<f64>,
    /// The target: least precision of fired memories on answerable questions.
    #[arg(long, default_value_t = 0.90)]
    target_precision: f64,
    /// The target: least fire rate on answerable questions.
    #[arg(long, default_value_t = 0.50)]
    target_fire: f64,
    /// The recommended band is the widest whose judge calls per unrelated event stay at
    /// most this.
    #[arg(long, default_value_t = 0.10)]
    max_judge_calls_unrelated: f64,
    /// Draw precision against fire rate, and the rates against the gate (PNG).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write the markdown table (every row) here; it is also printed to stderr.
    #[arg(long, value_name = "FILE")]
    table: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// The reference design's gate and judge band (on its own blended score).
const REFERENCE: (f64, f64) = (0.72, 0.10);

/// The dataset a file's name and first bytes point to: `.xz` is LongMemEval (LoCoMo is
/// not shipped compressed); otherwise the earliest key that only one of the formats has.
/// `None` when neither shows.
pub(crate) fn detect(name: &Path, head: &[u8]) -> Option<Dataset> {
    if name.extension().is_some_and(|e| e.eq_ignore_ascii_case("xz")) {
        return Some(Dataset::Longmemeval);
    }
    let head = String::from_utf8_lossy(head);
    let first = |keys: &[&str]| keys.iter().filter_map(|k| head.find(&format!("\"{k}\""))).min();
    let lme = first(&["question_id", "haystack_sessions", "has_answer", "answer_session_ids"]);
    let locomo = first(&["sample_id", "dia_id", "evidence", "adversarial_answer"]);
    match (lme, locomo) {
        (Some(a), Some(b)) => Some(if a < b { Dataset::Longmemeval } else { Dataset::Locomo }),
        (Some(_), None) => Some(Dataset::Longmemeval),
        (None, Some(_)) => Some(Dataset::Locomo),
        (None, None) => None,
    }
}

fn resolve_dataset(a: &InterjectArgs) -> anyhow::Result<Dataset> {
    if a.dataset != Dataset::Auto {
        return Ok(a.dataset);
    }
    let mut head = Vec::new();
    std::fs::File::open(&a.data)
        .with_context(|| format!("reading {}", a.data.display()))?
        .take(1 << 16)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {}", a.data.display()))?;
    detect(&a.data, &head).with_context(|| {
        format!(
            "cannot tell which benchmark {} holds: pass --dataset longmemeval or locomo",
            a.data.display()
        )
    })
}

/// Runs the study.
pub(crate) fn run(a: InterjectArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.k == 0 || a.k > amber_core::MAX_K {
        bail!("--k must be between 1 and {}", amber_core::MAX_K);
    }
    if a.max_fire == 0 {
        bail!("--max-fire must be at least 1");
    }
    if a.bands.iter().any(|b| !(0.0..1.0).contains(b)) || a.bands.is_empty() {
        bail!("--bands must be widths in [0, 1)");
    }
    if !(a.gate_step > 0.0 && a.gate_from <= a.gate_to) {
        bail!("--gate-from must not exceed --gate-to and --gate-step must be positive");
    }
    let mode: SearchMode = a.engine.mode.parse()?;
    let sha = sha256_file(&a.data)?;
    let dataset = resolve_dataset(&a)?;
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let o = engine.options();
    let fused_max = f64::from(o.bm25_weight + o.vector_weight) / (f64::from(o.rrf_k) + 1.0);
    let r = collect::Recall { mode, k: a.k, scoring: (a.score, fused_max, a.order) };
    let mut records = open_rankings(a.engine.rankings.as_deref())?;
    let collected = match dataset {
        Dataset::Locomo => collect::collect_locomo(&a.data, a.engine.limit, &engine, r, &mut records)?,
        Dataset::Longmemeval | Dataset::Auto => {
            collect::collect_longmemeval(&a.data, a.engine.limit, &engine, r, &mut records)?
        }
    };
    if let Some(mut w) = records {
        w.flush()?;
    }
    engine.flush()?;
    let events = &collected.events;

    let gates = interject::thresholds(a.gate_from, a.gate_to, a.gate_step);
    let rows = interject::sweep(events, &gates, &a.bands, &[a.max_fire]);
    let reference: BTreeMap<&str, interject::Outcome> = [Judge::Off, Judge::Oracle]
        .into_iter()
        .map(|j| {
            let p = Policy { gate: REFERENCE.0, band: REFERENCE.1, max_fire: a.max_fire, judge: j };
            (if j == Judge::Off { "judge_off" } else { "judge_oracle" }, interject::outcome(events, &p))
        })
        .collect();
    let met = |f: &dyn Fn(&Row) -> bool| -> Vec<Value> {
        rows.iter().filter(|r| f(r)).map(|r| json!({"gate": r.gate, "band": r.band})).collect()
    };
    let target = Target { min_precision: a.target_precision, min_fire: a.target_fire };
    // The recommended gate, with up to max_fire memories and with one, and its band.
    let choose = |first_only: bool| {
        interject::recommend_gate(&rows, &target, first_only).map(|r| {
            let band = interject::recommend_band(&rows, r.gate, a.max_judge_calls_unrelated);
            let row = rows.iter().find(|x| x.gate == r.gate && x.band == band).unwrap_or(r);
            (row, first_only)
        })
    };
    let recommended = [choose(false), choose(true)];
    let describe = |c: &Option<(&Row, bool)>| match c {
        Some((r, first_only)) => json!({
            "gate": r.gate,
            "band": r.band,
            "max_fire": if *first_only { 1 } else { a.max_fire },
            "row": r,
        }),
        None => Value::Null,
    };
    let counts: BTreeMap<&str, usize> =
        Group::ALL.iter().map(|g| (g.as_str(), events.iter().filter(|e| e.group == *g).count())).collect();

    // The markdown table: every row, bands in turn.
    let table = interject::markdown_table(&rows);
    eprintln!("{table}");
    if let Some(path) = &a.table {
        std::fs::write(path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.plot {
        plot::plot(&rows, &a.bands, &recommended, (a.score, dataset.as_str()), path)?;
    }

    let mut config = engine_config(&engine, &a.engine);
    config["k"] = json!(a.k);
    config["max_fire"] = json!(a.max_fire);
    config["order"] = json!(a.order.as_str());
    for (key, value) in collected.config {
        config[key] = value;
    }
    let mut report = obj(json!({
        "dataset": dataset.as_str(),
        "study": "interjection gate calibration",
        "data_file": a.data,
        "data_sha256": sha,
    }));
    report.extend(collected.fields);
    report.extend(obj(json!({
        "mode": mode.as_str(),
        "events": counts,
        "gate_score": a.score.as_str(),
        "gate_score_definition": match a.score {
            ScoreKind::Cosine => "cosine of the candidate's best chunk to the event text (Evidence::best_chunk_cosine)",
            ScoreKind::Agreement => "that cosine, only for a candidate BM25 and the vectors both rank first (others never fire)",
            ScoreKind::Fused => "fused RRF score / ((bm25_weight + vector_weight) / (rrf_k + 1)): 1 = first in both",
        },
        "definitions": {
            "event": collected.event_definition,
            "candidates": match a.order {
                Order::Retrieval => "the top k of the fused (hybrid) ranking, walked in that order",
                Order::Score => "the top k of the fused (hybrid) ranking, walked best gate score first (the daemon's order)",
            },
            "fires": "score >= gate, or in [gate - band, gate) and the judge says yes; at most max_fire memories",
            "gold": collected.gold_definition,
            "fire_rate": "events where at least one memory fired / events",
            "precision": "fired memories that are gold / fired memories",
            "precision_first": "firing events whose first fired memory is gold / firing events (the precision with max_fire = 1)",
            "precision_with_negatives": "precision over the answerable, abstention and unrelated events together (not assistant_evidence, not adversarial)",
            "band_rate": "events whose best candidate is in [gate - band, gate) / events: the judge alone decides them",
            "silence_rate": "1 - fire_rate (the figure that matters for abstention and unrelated events)",
            "judge_off": "the band never fires",
            "judge_oracle": "the judge says yes exactly to gold candidates: the upper bound of any judge",
        },
        "config": config,
        "gates": gates,
        "bands": a.bands,
        "reference_gate_0_72_band_0_10": reference,
        "target": {
            "min_precision": target.min_precision,
            "min_fire_rate": target.min_fire,
            "on": "answerable questions",
            "met_judge_off": met(&|r| target.met_by(&r.judge_off, false)),
            "met_judge_off_one_memory": met(&|r| target.met_by(&r.judge_off, true)),
            "met_judge_oracle": met(&|r| target.met_by(&r.judge_oracle, false)),
            "met_with_negatives_judge_off": met(&|r| target.met_with_negatives_by(&r.judge_off)),
            "met_with_negatives_judge_oracle": met(&|r| target.met_with_negatives_by(&r.judge_oracle)),
        },
        "recommendation": {
            "rule": format!(
                "gate: among judge-off settings meeting the target on answerable questions, the one most often silent on unrelated events, then on abstention events, then the higher gate; band: the widest whose judge calls per unrelated event are at most {}",
                a.max_judge_calls_unrelated
            ),
            "max_fire": describe(&recommended[0]),
            "one_memory": describe(&recommended[1]),
        },
        "rows": rows,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    })));
    write_report(&Value::Object(report), a.engine.out.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_the_dataset_from_name_and_first_keys() {
        let p = Path::new;
        assert_eq!(detect(p("x/longmemeval_s_dev.json.xz"), b"\xfd7zXZ"), Some(Dataset::Longmemeval));
        let lme = br#"[{"question_id": "q1", "question_type": "multi-session", "haystack_sessions": [[{"role": "user", "content": "hi", "has_answer": true}]]"#;
        assert_eq!(detect(p("lme.json"), lme), Some(Dataset::Longmemeval));
        // LoCoMo's records open with qa: evidence comes long before sample_id
        let locomo =
            br#"[{"qa": [{"question": "When?", "answer": "May", "evidence": ["D1:3"], "category": 2}"#;
        assert_eq!(detect(p("data.json"), locomo), Some(Dataset::Locomo));
        let conv = br#"[{"sample_id": "conv-1", "conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1"}]}}]"#;
        assert_eq!(detect(p("c.json"), conv), Some(Dataset::Locomo));
        assert_eq!(detect(p("other.json"), br#"[{"id": 1}]"#), None);
        assert_eq!("locomo".parse::<Dataset>(), Ok(Dataset::Locomo));
        assert!("lme2".parse::<Dataset>().is_err());
        assert_eq!("score".parse::<Order>(), Ok(Order::Score));
    }
}
