//! `amber-eval longmemeval`: LongMemEval retrieval with the official metrics
//! (recall_any, recall_all, ndcg_any at k in {1, 3, 5, 10, 30, 50}). Each question's
//! haystack is filed into its own scope and the question is recalled against it through
//! `Engine::recall`, the engine the daemon serves.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{Expand, SearchMode};
use amber_eval::{longmemeval, metrics};
use clap::Args;
use serde_json::json;

use crate::common::{
    EngineArgs, Haystack, engine_config, file_haystack, open_engine, open_rankings, progress, ranked_ids,
    sha256_file, write_report,
};

/// Arguments of `amber-eval longmemeval`.
#[derive(Args, Debug)]
pub(crate) struct LmeArgs {
    /// A LongMemEval file (.json or .json.xz, the official format).
    #[arg(long)]
    data: PathBuf,
    /// session or turn.
    #[arg(long, default_value = "session")]
    granularity: String,
    /// Index assistant turns too (the official corpus has user turns only).
    #[arg(long)]
    include_assistant: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs `amber-eval longmemeval`.
pub(crate) fn run(a: LmeArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let granularity: longmemeval::Granularity =
        a.granularity.parse().map_err(|e| anyhow::anyhow!("--granularity: {e}"))?;
    let mode: SearchMode = a.engine.mode.parse()?;
    let sha = sha256_file(&a.data)?;
    let mut questions = longmemeval::load(&a.data)?;
    let n_questions = questions.len();
    if let Some(n) = a.engine.limit {
        questions.truncate(n);
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let mut rankings = open_rankings(a.engine.rankings.as_deref())?;
    let roles = if a.include_assistant { "all" } else { "user" };
    let turn_level = granularity == longmemeval::Granularity::Turn;

    let pb = progress(questions.len(), "longmemeval");
    let mut official: Vec<BTreeMap<String, f64>> = Vec::new();
    let mut strict: Vec<BTreeMap<String, f64>> = Vec::new();
    let mut by_type: BTreeMap<String, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    let mut empty_docs = 0;
    let mut skipped_abstention = 0;
    let mut no_gold = 0;
    for q in &questions {
        let Haystack { scope, docs, memories, empty } =
            file_haystack(&engine, q, granularity, a.include_assistant)?;
        empty_docs += empty;
        // Enough turns to cover 50 sessions at turn level; 50 sessions otherwise.
        let k = if turn_level { docs.len().clamp(1, amber_core::MAX_K) } else { 50 };
        let now = longmemeval::parse_date(&q.question_date);
        let ranked = ranked_ids(&engine, &q.question, &scope, (k, mode, now, Expand::None), &memories)?;
        if let Some(w) = rankings.as_mut() {
            let top: Vec<&String> = if turn_level {
                let (_, eff) = metrics::turns_to_sessions(&ranked, 50);
                ranked.iter().take(eff).collect()
            } else {
                ranked.iter().take(50).collect()
            };
            writeln!(w, "{}", json!({"question_id": q.question_id, "ranked": top}))?;
        }
        pb.inc(1);
        if longmemeval::is_abstention(q) {
            skipped_abstention += 1;
            continue;
        }
        let gold = longmemeval::gold_ids(q, granularity);
        let corpus_ids: Vec<String> = docs.iter().map(|d| d.id.clone()).collect();
        let scores = metrics::score_question(&ranked, &gold, &corpus_ids, turn_level);
        if gold.is_empty() {
            no_gold += 1;
        } else {
            strict.push(scores.clone());
        }
        by_type.entry(q.question_type.clone()).or_default().push(scores.clone());
        official.push(scores);
    }
    pb.finish_and_clear();
    if let Some(mut w) = rankings {
        w.flush()?;
    }
    engine.flush()?;
    let mut config = engine_config(&engine, &a.engine);
    config["corpus_roles"] = json!(roles);
    config["empty_docs_skipped"] = json!(empty_docs);
    config["abstention_questions_skipped"] = json!(skipped_abstention);
    config["no_gold_questions"] = json!(no_gold);
    config["questions_run"] = json!(questions.len());
    let report = json!({
        "dataset": "longmemeval",
        "model": engine.model_id(),
        "data_file": a.data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "n_scored": official.len(),
        "granularity": granularity.as_str(),
        "mode": mode.as_str(),
        "config": config,
        "metrics": metrics::mean(&official),
        "metrics_strict": metrics::mean(&strict),
        "per_type": by_type.iter().map(|(t, v)| (t.clone(), metrics::mean(v))).collect::<BTreeMap<_, _>>(),
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}
