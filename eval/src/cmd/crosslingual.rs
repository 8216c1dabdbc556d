//! `amber-eval crosslingual`: English facts found by questions in other languages
//! (`tests/fixtures/crosslingual`, issue 34). The facts are filed into a fresh store,
//! each question is recalled with k = 5 in hybrid mode, vector-only and BM25 alone, and
//! R@1 and R@5 of its own fact are reported per language and overall, for the model the
//! run selects (`--model-url`; the local MiniLM by default).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{Expand, Scope, SearchMode};
use amber_eval::FiledDoc;
use amber_eval::crosslingual::{self, LANGUAGES, Tally};
use anyhow::bail;
use clap::Args;
use serde_json::json;

use crate::common::{
    EngineArgs, engine_config, ingest, model_report, open_engine, open_rankings, ranked_ids, sha256_file,
    write_report,
};

/// Places recalled per question.
const K: usize = 5;

/// Arguments of `amber-eval crosslingual`.
#[derive(Args, Debug)]
pub(crate) struct CrosslingualArgs {
    /// The fixture (JSON lines: id, fact, questions per language).
    #[arg(long, default_value = "tests/fixtures/crosslingual/facts.jsonl")]
    data: PathBuf,
    /// The modes to score, comma-separated (hybrid, vector, bm25); --mode is not used.
    #[arg(long, value_delimiter = ',', default_value = "hybrid,vector,bm25")]
    modes: Vec<String>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs `amber-eval crosslingual`.
pub(crate) fn run(a: CrosslingualArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let modes: Vec<SearchMode> = a.modes.iter().map(|m| m.parse()).collect::<Result<_, _>>()?;
    if modes.is_empty() {
        bail!("--modes needs at least one mode");
    }
    let sha = sha256_file(&a.data)?;
    let facts = crosslingual::load(&a.data).map_err(anyhow::Error::msg)?;
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let scope: Scope = "crosslingual".parse()?;
    let docs =
        facts.iter().map(|f| FiledDoc { id: f.id.clone(), text: f.fact.clone(), time: None, session: None });
    let (memories, _) = ingest(&engine, &scope, docs)?;
    engine.flush()?;
    let filed_seconds = started.elapsed().as_secs_f64();
    let mut rankings = open_rankings(a.engine.rankings.as_deref())?;
    let mut by_mode = serde_json::Map::new();
    let mut recall_ms = serde_json::Map::new();
    for mode in modes {
        let mut tally = Tally::default();
        let t0 = Instant::now();
        let mut asked = 0usize;
        for f in &facts {
            for lang in LANGUAGES {
                let Some(q) = f.questions.get(lang) else { continue };
                let ranked = ranked_ids(&engine, q, &scope, (K, mode, None, Expand::None), &memories)?;
                let rank = tally.add(lang, &f.id, &ranked);
                asked += 1;
                if let Some(w) = rankings.as_mut() {
                    let line = json!({"mode": mode.as_str(), "id": f.id, "language": lang, "rank": rank, "ranked": ranked});
                    writeln!(w, "{line}")?;
                }
            }
        }
        let ms = t0.elapsed().as_secs_f64() * 1000.0 / asked.max(1) as f64;
        recall_ms.insert(mode.as_str().to_string(), json!(ms));
        by_mode.insert(mode.as_str().to_string(), tally.report());
    }
    if let Some(mut w) = rankings {
        w.flush()?;
    }
    let mut config = engine_config(&engine, &a.engine);
    config["mode"] = json!("each of `modes`");
    config["now"] = json!("not given (the facts carry no time)");
    let report = json!({
        "benchmark": "crosslingual",
        "data_file": a.data,
        "data_sha256": sha,
        "model": engine.model_id(),
        "model_detail": model_report(&engine),
        "facts": facts.len(),
        "memories": memories.len(),
        "languages": LANGUAGES,
        "k": K,
        "recall": by_mode,
        "mean_recall_ms": recall_ms,
        "config": config,
        "filed_seconds": filed_seconds,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}
