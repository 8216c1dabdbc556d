//! `amber-eval calibrate` (issue 45): where the model in force puts unrelated texts
//! ([`amber_engine::Calibration`]), the thresholds carried to it, and, with `--data`, the
//! cosine of the best gold hit of each LongMemEval question (session level) and of the
//! best hit of each question that has no answer, in the model's own units (`z`: spreads
//! above its unrelated mean), with the share of each above the relevance floor.

use std::path::PathBuf;

use amber_core::{Query, SearchMode};
use clap::Args;
use serde_json::{Value, json};

use crate::common::{
    EngineArgs, Haystack, engine_config, file_haystack, open_engine, progress, write_report,
};
use amber_eval::longmemeval;

/// Arguments of `amber-eval calibrate`.
#[derive(Args, Debug)]
pub(crate) struct CalibrateArgs {
    /// LongMemEval JSON (optionally .xz): adds the dev questions' cosines.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Quantiles of a list, and the share at or above `floor`.
fn summary(mut xs: Vec<f32>, floor: f32, mean: f32, sd: f32) -> Value {
    if xs.is_empty() {
        return json!({ "n": 0 });
    }
    xs.sort_by(f32::total_cmp);
    let q = |p: f64| xs[((xs.len() - 1) as f64 * p).round() as usize];
    let z = |c: f32| (c - mean) / sd;
    let above = xs.iter().filter(|c| **c >= floor).count() as f64 / xs.len() as f64;
    json!({
        "n": xs.len(),
        "cosine": { "p01": q(0.01), "p05": q(0.05), "p25": q(0.25), "p50": q(0.5) },
        "z": { "p01": z(q(0.01)), "p05": z(q(0.05)), "p25": z(q(0.25)), "p50": z(q(0.5)) },
        "share_at_or_above_floor": above,
    })
}

pub(crate) fn run(a: CalibrateArgs) -> anyhow::Result<()> {
    let (engine, _tmp) = open_engine(&a.engine)?;
    let c = engine.recalibrate()?;
    let floor = c.floor();
    let mut report = json!({
        "model": engine.model_id(),
        "calibration": *c,
        "floor": floor,
        "gate_default": c.default_gate(),
        "config": engine_config(&engine, &a.engine),
    });
    if let Some(data) = &a.data {
        let questions = longmemeval::load(data)?;
        let granularity = longmemeval::Granularity::Session;
        let pb = progress(questions.len(), "calibrate");
        let (mut gold_best, mut abstention_best) = (Vec::new(), Vec::new());
        for q in &questions {
            let Haystack { scope, memories, .. } = file_haystack(&engine, q, granularity, false)?;
            let now = longmemeval::parse_date(&q.question_date);
            let query =
                Query { now, mode: SearchMode::Hybrid, ..Query::new(&q.question).in_scope(scope).top(50) };
            let hits = engine.recall(&query)?;
            pb.inc(1);
            if longmemeval::is_abstention(q) {
                abstention_best.extend(hits.first().and_then(|h| h.evidence.best_chunk_cosine));
                continue;
            }
            let gold = longmemeval::gold_ids(q, granularity);
            let best = hits
                .iter()
                .filter(|h| {
                    memories.get(&h.memory.id).is_some_and(|ids| ids.iter().any(|i| gold.contains(i)))
                })
                .filter_map(|h| h.evidence.best_chunk_cosine)
                .fold(None, |m: Option<f32>, c| Some(m.map_or(c, |m| m.max(c))));
            gold_best.extend(best);
        }
        pb.finish_and_clear();
        report["longmemeval"] = json!({
            "data_file": data,
            "best_gold_hit": summary(gold_best, floor, c.unrelated_mean, c.unrelated_sd),
            "best_hit_of_abstention_questions": summary(abstention_best, floor, c.unrelated_mean, c.unrelated_sd),
        });
    }
    write_report(&report, a.engine.out.as_deref())
}
