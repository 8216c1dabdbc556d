//! `amber-eval briefing`: the tier-1 briefing with pointers (the default) against the
//! old verbatim briefing (`pointers: false, event_weight: 1.0`), in the daemon's way:
//! recall the opening prompt (top `candidates`, 30, hybrid) in the session's scope, then
//! [`amber_tiers::briefing::brief`] within the 1,500-token budget.
//!
//! **Part A, the fixture** (no benchmark data): about 80 hand-written memories of one
//! project (a payments ledger service, `eval/fixtures/project_memories.jsonl`, built into
//! the binary) of every type and realistic lengths, dated `days_ago` before now, and 8
//! opening prompts (`eval/fixtures/project_prompts.json`), some aimed at one memory
//! (`target`, the opening of its text), some vague. Per prompt and in total: memories
//! shown, tokens used, memories shown in full, for each briefing; and whether the target
//! memory is shown (and in full). A third briefing, pointers with `event_weight: 1.0`,
//! isolates the weight of raw captures (`events_shown`); it is not run on LongMemEval,
//! whose memories all have one type.
//!
//! **Part B, LongMemEval** (`--data`): each question's haystack filed at session level
//! exactly as `amber-eval longmemeval` files it (user turns, one scope per question, the
//! shared embedding cache), the question as the opening prompt, the question date as now.
//! Per briefing, averaged over the questions: items shown, precision (share of the shown
//! items that are evidence sessions), recall_any (at least one evidence session shown),
//! recall_all (every one), tokens, and whether an evidence session is shown in full
//! (`recall_any_in_full`; verbatim shows everything in full). Two gold sets: `answer_session_ids` over the
//! non-abstention questions, and the official session gold (`has_answer` user turns)
//! over those that have any.

mod compared;
mod fixture;
mod longmemeval;

use std::path::PathBuf;
use std::time::Instant;

use amber_core::SearchMode;
use anyhow::bail;
use clap::Args;
use serde_json::json;

use self::compared::{config_json, configs};
use crate::common::{EngineArgs, engine_config, open_engine, write_report};

/// Arguments of `amber-eval briefing`.
#[derive(Args, Debug)]
pub(crate) struct BriefingArgs {
    /// A LongMemEval file (.json or .json.xz) for part B; without it only part A runs.
    #[arg(long)]
    data: Option<PathBuf>,
    /// The fixture's memories (JSON lines of {type, content, days_ago}) [default: the
    /// built-in eval/fixtures/project_memories.jsonl].
    #[arg(long, value_name = "FILE")]
    memories: Option<PathBuf>,
    /// The fixture's prompts (a JSON array of {prompt, target}) [default: the built-in
    /// eval/fixtures/project_prompts.json].
    #[arg(long, value_name = "FILE")]
    prompts: Option<PathBuf>,
    /// Skip part A (the fixture).
    #[arg(long)]
    no_fixture: bool,
    /// Put each fixture briefing's text in the report.
    #[arg(long)]
    texts: bool,
    /// The pointer briefing's `min_relevance` [default: the daemon's default].
    #[arg(long)]
    min_relevance: Option<f32>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs `amber-eval briefing`.
pub(crate) fn run(a: BriefingArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mode: SearchMode = a.engine.mode.parse()?;
    if a.no_fixture && a.data.is_none() {
        bail!("nothing to do: --no-fixture without --data");
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let fixture = if a.no_fixture {
        None
    } else {
        eprintln!("briefing: part A, the fixture");
        let t = Instant::now();
        let (memories, prompts) = (a.memories.as_deref(), a.prompts.as_deref());
        let mut v = fixture::run(&engine, mode, (memories, prompts, a.texts), a.min_relevance)?;
        v["wall_seconds"] = json!(t.elapsed().as_secs_f64());
        Some(v)
    };
    if a.data.is_some() {
        eprintln!("briefing: part B, LongMemEval");
    }
    let lme = match &a.data {
        Some(data) => {
            let (limit, rankings) = (a.engine.limit, a.engine.rankings.as_deref());
            Some(longmemeval::run(&engine, mode, data, (limit, rankings), a.min_relevance)?)
        }
        None => None,
    };
    engine.flush()?;
    let cfgs = configs(a.min_relevance);
    let report = json!({
        "benchmark": "tier-1 briefing: pointers (default) vs verbatim (pointers false, event_weight 1)",
        "briefings": cfgs.iter().map(|(n, c)| (n.to_string(), config_json(c))).collect::<serde_json::Map<_, _>>(),
        "recall": format!("the opening prompt, top {} ({}), in the scope", cfgs[0].1.candidates, mode.as_str()),
        "engine": engine_config(&engine, &a.engine),
        "fixture": fixture,
        "longmemeval": lme,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}
