//! `amber-eval standing`: what a memory's standing (issue 18: outcome weights, age,
//! supersession) does to retrieval, in three parts:
//!
//! 1. **Stale facts** ([`stale`], with `--data`, a LongMemEval file): knowledge-update
//!    questions with each newer evidence session filed as an invalidation superseding
//!    the older ones, against plain filing.
//! 2. **Learning from use** ([`learn`], with `--locomo`): a simulated agent reports
//!    outcomes for its top 5 on half of each conversation's questions, round after
//!    round, with noisy labels; recall and wrong recall on both halves after each round,
//!    at several standing strengths.
//! 3. **Interjection precision** ([`learn`]) on the same simulation, before any outcome
//!    and after the last round.
//!
//! Every figure comes from the engine the daemon serves (`Engine::recall`,
//! `EngineWriter::report`, `EngineWriter::remember`) and the daemon's interjection function.

mod learn;
mod plot;
mod stale;

use std::path::PathBuf;
use std::time::Instant;

use amber_core::SearchMode;
use anyhow::bail;
use clap::Args;
use serde_json::{Value, json};

use crate::common::{EngineArgs, engine_config, open_engine, sha256_file, write_report};

/// Arguments of `amber-eval standing`.
#[derive(Args, Debug)]
pub(crate) struct StandingArgs {
    /// A LongMemEval file (.json or .json.xz): runs part 1, stale facts, on its
    /// knowledge-update questions.
    #[arg(long)]
    data: Option<PathBuf>,
    /// A LoCoMo file (locomo10.json format): runs parts 2 and 3, learning from use and
    /// interjection precision.
    #[arg(long, value_name = "FILE")]
    locomo: Option<PathBuf>,
    /// Feedback rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Share of the agent's labels flipped.
    #[arg(long, default_value_t = 0.15)]
    flip: f64,
    /// Hits per fed question the agent reports on.
    #[arg(long, default_value_t = 5)]
    feed_k: usize,
    /// What the agent reports for a hit it labels not evidence: failure (an outcome,
    /// −0.20: the agent) or unused (a manifest line `used: false`, ×0.95).
    #[arg(long, default_value = "failure")]
    negative: learn::Negative,
    /// Seed of the split and the label noise.
    #[arg(long, default_value_t = 18)]
    seed: u64,
    /// Standing strengths compared on the simulation, comma-separated (--standing-strength
    /// is added when missing; its run is the headline).
    #[arg(long, value_delimiter = ',', default_value = "0.25,0.5,0.75,1")]
    strengths: Vec<f32>,
    /// Draw the curves over rounds (PNG).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// The recommended strength and why: the largest fed recall@5 gain among the strengths
/// whose held-apart recall@5 and recall@10 fall by no more than one paired standard
/// error; when none holds that, the one whose held-apart recall@5 falls least (ties: the
/// smaller strength).
fn recommend(runs: &[learn::Run]) -> Value {
    let get = |r: &learn::Run, half: &str, m: &str, f: &str| {
        r.report["change_after_last_round"][half][m][f].as_f64().unwrap_or(0.0)
    };
    let safe = |r: &&learn::Run| {
        ["recall_at_5", "recall_at_10"]
            .iter()
            .all(|m| get(r, "held_apart", m, "change") >= -get(r, "held_apart", m, "standard_error"))
    };
    let by = |m: &'static str, half: &'static str| {
        move |a: &&learn::Run, b: &&learn::Run| {
            get(a, half, m, "change")
                .total_cmp(&get(b, half, m, "change"))
                .then(b.strength.total_cmp(&a.strength))
        }
    };
    if let Some(r) = runs.iter().filter(safe).max_by(by("recall_at_5", "fed")) {
        return json!({"strength": r.strength, "basis": "largest fed recall@5 gain with held-apart recall within one standard error"});
    }
    match runs.iter().max_by(by("recall_at_5", "held_apart")) {
        Some(r) => {
            json!({"strength": r.strength, "basis": "no strength kept held-apart recall@5 and @10 within one standard error: the one whose held-apart recall@5 fell least"})
        }
        None => Value::Null,
    }
}

/// Runs `amber-eval standing`.
pub(crate) fn run(a: StandingArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.data.is_none() && a.locomo.is_none() {
        bail!(
            "give --data (a LongMemEval file: stale facts) and/or --locomo (a LoCoMo file: learning from use)"
        );
    }
    if a.engine.store.is_some() {
        bail!("--store: this study reports outcomes into its store; it needs a fresh one per run");
    }
    if !(0.0..=1.0).contains(&a.flip) || a.feed_k == 0 || a.strengths.iter().any(|s| !(0.0..=1.0).contains(s))
    {
        bail!("--flip and --strengths must be in [0, 1], --feed-k at least 1");
    }
    let mode: SearchMode = a.engine.mode.parse()?;
    let mut report = json!({"study": "standing (issue 18)", "mode": mode.as_str()});
    if let Some(data) = &a.data {
        let (engine, _tmp) = open_engine(&a.engine)?;
        let mut part = stale::run(&engine, data, a.engine.limit, mode)?;
        engine.flush()?;
        part["data_sha256"] = json!(sha256_file(data)?);
        part["config"] = engine_config(&engine, &a.engine);
        report["stale_facts"] = part;
    }
    if let Some(data) = &a.locomo {
        report["learning"] = learning(&a, data, mode)?;
    }
    report["wall_seconds"] = json!(started.elapsed().as_secs_f64());
    write_report(&report, a.engine.out.as_deref())
}

/// Parts 2 and 3.
fn learning(a: &StandingArgs, data: &std::path::Path, mode: SearchMode) -> anyhow::Result<Value> {
    let (convs, quirks) = learn::load(data, a.engine.limit)?;
    let qs = learn::questions(&convs, a.seed);
    let sim = learn::Sim {
        rounds: a.rounds,
        flip: a.flip,
        feed_k: a.feed_k,
        seed: a.seed,
        mode,
        negative: a.negative,
    };
    let headline = a.engine.standing_strength;
    let mut strengths = a.strengths.clone();
    if !strengths.contains(&headline) {
        strengths.push(headline);
    }
    strengths.sort_by(f32::total_cmp);
    strengths.dedup();
    let mut runs = Vec::new();
    for &s in &strengths {
        runs.push(learn::run_strength(&a.engine, s, &convs, &qs, sim)?);
    }
    if let Some(path) = &a.plot {
        plot::plot(&runs, headline, a.negative.as_str(), path)?;
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let mut config = engine_config(&engine, &a.engine);
    config["standing_strength"] = json!(format!("per run (headline {headline})"));
    config["granularity"] = json!("turn");
    config["doc_text"] =
        json!("\"speaker: text\" per turn, dated by its session: as amber-eval locomo --granularity turn");
    let fed = qs.iter().filter(|q| q.fed).count();
    let disjoint = qs.iter().filter(|q| q.disjoint).count();
    Ok(json!({
        "data_file": data,
        "data_sha256": sha256_file(data)?,
        "quirks": quirks,
        "conversations": convs.len(),
        "questions": {"with_evidence": qs.len(), "fed": fed, "held_apart": qs.len() - fed, "held_apart_disjoint": disjoint},
        "simulation": {
            "rounds": a.rounds,
            "feed_k": a.feed_k,
            "label_flip": a.flip,
            "negative_report": a.negative.as_str(),
            "seed": a.seed,
            "split": "per conversation, its questions with evidence shuffled (seeded by the seed and the sample id), the first half (rounded up) fed",
            "report": "one word per hit of a fed question's top feed_k, as the store stood when the round began: an outcome success for an evidence turn, negative_report otherwise (an outcome failure, or a manifest line used: false), the label flipped with probability label_flip (a seeded coin per round, question and memory); session = (round, question); at = the conversation's last session date",
            "measure": "after each round, every question recalled (top 10, hybrid, now = the conversation's last session date)",
        },
        "definitions": {
            "recall_at_k": "share of the question's evidence turns in the top k (as amber-eval locomo --granularity turn)",
            "held_apart_disjoint": "held-apart questions none of whose evidence turns is evidence of a fed question (so no success was ever reported for them as evidence)",
            "wrong_at_5": "share of the top 5 memories that are no evidence turn of the question",
            "change_after_last_round": "mean over the half's questions of (last round - round 0), and its paired standard error",
            "interjection.study_model": "amber-eval interject's model: top 3 in retrieval order, cosine gate 0.42, no band, one memory; precision_1_memory = firing events whose memory is evidence / firing events (answerable questions: categories 1-4)",
            "interjection.daemon_decide": "amber_tiers::interject::decide with its defaults (top 10 ordered by cosine, gate 0.42, judge off, one memory), a fresh session per event",
            "recommendation": "the largest fed recall@5 gain among strengths whose held-apart recall@5 and @10 fall by no more than one paired standard error",
        },
        "config": config,
        "headline_strength": headline,
        "recommended_strength": recommend(&runs),
        "runs": runs.into_iter().map(|r| r.report).collect::<Vec<_>>(),
    }))
}
