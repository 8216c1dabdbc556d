//! `amber-eval curate`: session-end curation measured on LoCoMo conversations with planted
//! duplicates.
//!
//! Each conversation is one agent session: its turns (`speaker: text`) go through capture
//! (limits and redaction, as the daemon captures a turn) and are filed in order, in one
//! scope per conversation, with the session's id. A seeded sample of the filed turns gets a
//! copy made by one realistic edit ([`Edit`]), filed later in the same session; each copy's
//! original is the ground truth ([`fixture`]). Curation then runs as the daemon runs it at
//! session end (`daemon/src/methods/session.rs`, `curate`), through the same calls in the
//! same order, one session after the other: [`plan_session`] (the session's memories,
//! `Engine::similar` in the scope as the neighbours, `amber_tiers::curate::plan` with the
//! default `CurationConfig`), then [`apply_plan`] (`EngineWriter::add_links`, then
//! `EngineWriter::forget` of each collapsed copy). The threshold sweep re-plans each session from
//! the neighbours its plan saw (recorded before its writes; each session has its own scope,
//! where alone `similar` looks), without writing.
//!
//! A duplicate link (exact or near) is right when it joins a planted copy to its original
//! (or to a memory with the original's text up to case and whitespace); every other
//! duplicate link is a false merge ([`score`]).

mod edits;
mod fixture;
mod score;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use amber_core::{Link, Memory, MemoryId, Scope, now_millis};
use amber_engine::{Engine, EngineOptions, default_amber_home};
use amber_eval::locomo;
use amber_tiers::capture::CaptureConfig;
use amber_tiers::curate::{CurationConfig, Plan, plan};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use self::edits::{ALL_EDITS, Edit};
use self::fixture::{Filed, file_conversation};
use self::score::{Truth, planted_similarity, score_json, spread, table};
use crate::common::{Rng, progress, sha256_file, write_report};

/// Arguments of `amber-eval curate`.
#[derive(Args, Debug)]
pub(crate) struct CurateArgs {
    /// The LoCoMo file (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// Only the first N conversations (each conversation is one session).
    #[arg(long)]
    sessions: Option<usize>,
    /// Seed of the planting (which turns, which edit, where the copy goes).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Fraction of the filed turns that get a planted copy.
    #[arg(long, default_value_t = 0.10)]
    rate: f64,
    /// Edit kinds to plant, comma-separated [default: all of case_whitespace, typo,
    /// punctuation, filler, dropped_clause, synonym], assigned in turn.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<Edit>,
    /// Turns shorter than this (characters, with the speaker) are not filed [default:
    /// capture's own limit, 50, as the daemon captures].
    #[arg(long)]
    min_chars: Option<usize>,
    /// Duplicate thresholds of the sweep (planned from the same neighbours, not written).
    #[arg(long, value_delimiter = ',', default_value = "0.90,0.93,0.95,0.97")]
    thresholds: Vec<f32>,
    /// The embedding cache shared by runs [default: $AMBER_HOME/eval-cache.db].
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    /// Threads for the embedding model (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write every link of the default plan (JSON lines, with both texts) here.
    #[arg(long, value_name = "FILE")]
    links: Option<PathBuf>,
    /// Write the report (JSON) here; it is also printed, and the table goes to stderr.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Plans the curation of one session as the daemon does at session end: the memories the
/// session filed (`Engine::session_memories`), each one's neighbours from `Engine::similar`
/// within the session's scope, `amber_tiers::curate::plan`. A failed `similar` fails the
/// plan. `seen` gets each memory's neighbours as they were planned from.
fn plan_session(
    engine: &Engine,
    session_id: &str,
    scope: &Scope,
    cfg: &CurationConfig,
    mut seen: impl FnMut(&MemoryId, &[(Memory, f32)]),
) -> anyhow::Result<(Vec<Memory>, Plan)> {
    let mine = engine.session_memories(session_id)?;
    let mut failed = None;
    let p = plan(
        &mine,
        |m| match engine.similar(&m.id, Some(scope), cfg.neighbours) {
            Ok(v) => {
                seen(&m.id, &v);
                v
            }
            Err(e) => {
                failed.get_or_insert(e);
                Vec::new()
            }
        },
        now_millis(),
        cfg,
    );
    if let Some(e) = failed {
        return Err(e).context("similar() during curation");
    }
    Ok((mine, p))
}

/// Writes a plan as the daemon does: its links (`EngineWriter::add_links`), then each collapsed
/// copy forgotten (`EngineWriter::forget`); fills in the report's `links_added` and `collapsed`.
fn apply_plan(engine: &Engine, p: &mut Plan) -> anyhow::Result<()> {
    p.report.links_added = engine.writer()?.add_links(&p.links)?;
    for id in &p.forget {
        if engine.writer()?.forget(id)?.is_some() {
            p.report.collapsed += 1;
        }
    }
    Ok(())
}

/// Runs `amber-eval curate`.
pub(crate) fn run(a: CurateArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if !(0.0..=1.0).contains(&a.rate) {
        bail!("--rate must be between 0 and 1");
    }
    if a.thresholds.is_empty() || a.thresholds.iter().any(|t| !(0.0..=1.0).contains(t)) {
        bail!("--thresholds needs values between 0 and 1");
    }
    let kinds: Vec<Edit> = if a.kinds.is_empty() { ALL_EDITS.to_vec() } else { a.kinds.clone() };
    let sha = sha256_file(&a.data)?;
    let (mut convs, _) = locomo::load(&a.data)?;
    let n_conversations = convs.len();
    if let Some(n) = a.sessions {
        convs.truncate(n);
    }

    let tmp = tempfile::Builder::new().prefix("amber-eval-curate-").tempdir()?;
    let mut opts = EngineOptions::new(tmp.path().join("store"));
    opts.embedding_cache =
        Some(a.cache.clone().unwrap_or_else(|| default_amber_home().join("eval-cache.db")));
    opts.threads = a.threads;
    // similar() compares stored vectors: no query embedding, no second model.
    opts.query_model = false;
    let engine = Engine::open(opts).context("opening the eval store")?;

    let mut capture_cfg = CaptureConfig::default();
    if let Some(n) = a.min_chars {
        capture_cfg.min_chars = n;
    }
    let mut rng = Rng::new(a.seed);
    let mut order = kinds.clone();
    rng.shuffle(&mut order);
    let mut next_kind = 0;
    let mut truth = Truth { planted: Vec::new(), copy_of: HashMap::new(), text: HashMap::new() };
    let t_file = Instant::now();
    let pb = progress(convs.len(), "filing");
    let mut filed = Vec::new();
    for c in &convs {
        let plant = (a.rate, order.as_slice(), &mut next_kind);
        filed.push(file_conversation(&engine, c, &mut rng, plant, &capture_cfg, &mut truth)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let file_seconds = t_file.elapsed().as_secs_f64();

    // The daemon's curation, one session after the other as each ends: planned (recording
    // the neighbours), then written.
    let cfg = CurationConfig::default();
    let (mut plan_seconds, mut apply_seconds) = (0.0, 0.0);
    let mut neighbours: HashMap<MemoryId, Vec<(Memory, f32)>> = HashMap::new();
    let mut sessions: Vec<(Vec<Memory>, Plan)> = Vec::new();
    let pb = progress(filed.len(), "curating");
    for f in &filed {
        let t = Instant::now();
        let seen = |id: &MemoryId, v: &[(Memory, f32)]| {
            neighbours.insert(id.clone(), v.to_vec());
        };
        let (mine, mut p) = plan_session(&engine, &f.session_id, &f.scope, &cfg, seen)?;
        plan_seconds += t.elapsed().as_secs_f64();
        let t = Instant::now();
        apply_plan(&engine, &mut p)?;
        apply_seconds += t.elapsed().as_secs_f64();
        sessions.push((mine, p));
        pb.inc(1);
    }
    pb.finish_and_clear();
    engine.flush()?;
    let examined: usize = sessions.iter().map(|(_, p)| p.report.examined).sum();
    let links_added: usize = sessions.iter().map(|(_, p)| p.report.links_added).sum();
    let collapsed: usize = sessions.iter().map(|(_, p)| p.report.collapsed).sum();

    // The sweep: the same memories and neighbours (as each session's plan saw them, before
    // its writes), another duplicate threshold, not written.
    let mut sweep: Vec<(f32, Vec<Link>)> = Vec::new();
    for &t in &a.thresholds {
        let c = CurationConfig { duplicate_threshold: t, ..cfg.clone() };
        let links = sessions
            .iter()
            .flat_map(|(mine, _)| {
                plan(mine, |m| neighbours.get(&m.id).cloned().unwrap_or_default(), now_millis(), &c).links
            })
            .collect();
        sweep.push((t, links));
    }

    let default_links: Vec<Link> = sessions.iter().flat_map(|(_, p)| p.links.clone()).collect();
    let default_score = truth.score(&default_links);
    let mut default_json = score_json(&default_score, cfg.duplicate_threshold);
    default_json["links_added"] = json!(links_added);
    default_json["collapsed"] = json!(collapsed);
    default_json["examined"] = json!(examined);

    // Similarity of each planted copy to its original, per edit.
    let mut sims: BTreeMap<Edit, Vec<f32>> = BTreeMap::new();
    let mut not_neighbours: BTreeMap<Edit, usize> = BTreeMap::new();
    for p in &truth.planted {
        match planted_similarity(p, &neighbours) {
            Some(s) => sims.entry(p.edit).or_default().push(s),
            None => *not_neighbours.entry(p.edit).or_default() += 1,
        }
    }
    let similarity: BTreeMap<&str, Value> = kinds
        .iter()
        .map(|k| {
            let mut v = sims.remove(k).unwrap_or_default();
            let mut s = spread(&mut v);
            if let Some(o) = s.as_object_mut() {
                o.insert("not_among_neighbours".into(), json!(not_neighbours.get(k).copied().unwrap_or(0)));
            }
            (k.as_str(), s)
        })
        .collect();

    // Sweep rows and the false merges across them (a lower threshold's set holds a higher's).
    let mut rows = Vec::new();
    let mut false_pairs: BTreeMap<(MemoryId, MemoryId), (Link, Vec<f32>)> = BTreeMap::new();
    let mut scores = Vec::new();
    for (t, links) in &sweep {
        let s = truth.score(links);
        for l in s.false_exact.iter().chain(&s.false_near) {
            false_pairs
                .entry((l.from.clone(), l.to.clone()))
                .or_insert_with(|| (l.clone(), Vec::new()))
                .1
                .push(*t);
        }
        rows.push(score_json(&s, *t));
        scores.push((*t, s));
    }
    let mut examples: Vec<&(Link, Vec<f32>)> = false_pairs.values().collect();
    examples.sort_by(|a, b| b.0.similarity.total_cmp(&a.0.similarity).then(a.0.from.cmp(&b.0.from)));
    let text = |id: &MemoryId| truth.text.get(id).cloned().unwrap_or_default();
    let examples: Vec<Value> = examples
        .iter()
        .take(20)
        .map(|(l, ts)| {
            json!({
                "kind": l.kind.as_str(),
                "similarity": l.similarity,
                "at_thresholds": ts,
                "newer": text(&l.from),
                "older": text(&l.to),
                "newer_is_planted_copy": truth.copy_of.contains_key(&l.from),
                "older_is_planted_copy": truth.copy_of.contains_key(&l.to),
            })
        })
        .collect();

    if let Some(path) = &a.links {
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        );
        for l in &default_links {
            let planted = truth.planted_pair(l).map(|i| truth.planted[i].edit.as_str());
            writeln!(
                w,
                "{}",
                json!({
                    "kind": l.kind.as_str(), "similarity": l.similarity,
                    "from": l.from, "to": l.to, "from_text": text(&l.from), "to_text": text(&l.to),
                    "planted_edit": planted,
                })
            )?;
        }
        w.flush()?;
    }

    let mut planted_by_edit: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &truth.planted {
        *planted_by_edit.entry(p.edit.as_str()).or_default() += 1;
    }
    let mut unplaced: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &filed {
        for (e, n) in &f.unplaced {
            *unplaced.entry(e.as_str()).or_default() += n;
        }
    }
    let sum = |g: fn(&Filed) -> usize| filed.iter().map(g).sum::<usize>();
    let stats = engine.stats();
    let report = json!({
        "dataset": "locomo",
        "study": "session-end curation with planted duplicates",
        "data_file": a.data,
        "data_sha256": sha,
        "n_conversations": n_conversations,
        "config": {
            "model": engine.model_id(),
            "seed": a.seed,
            "rate": a.rate,
            "edit_kinds": kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "curation": cfg,
            "capture": capture_cfg,
            "thresholds": a.thresholds,
            "memory_text": "\"speaker: text\" per turn, through capture (limits, redaction)",
            "session": "one conversation = one session, one scope, filed in order; copies later in it",
            "embedding_cache": engine.options().embedding_cache,
            "chunks_embedded": stats.chunks_embedded,
            "chunks_from_cache": stats.chunks_from_cache,
        },
        "fixture": {
            "conversations": filed.len(),
            "turns": sum(|f| f.turns),
            "originals_filed": sum(|f| f.filed),
            "skipped_too_short": sum(|f| f.too_short),
            "skipped_too_long": sum(|f| f.too_long),
            "identical_originals": sum(|f| f.identical_originals),
            "identical_originals_note": "turns whose text was already filed in the conversation (same scope and content = same memory: collapsed by the store at filing, never seen by curation)",
            "planted": truth.planted.len(),
            "planted_by_edit": planted_by_edit,
            "unplaced_by_edit": unplaced,
        },
        "planted_similarity": similarity,
        "default": default_json,
        "sweep": rows,
        "false_merge_examples": examples,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "file_seconds": file_seconds,
        "plan_seconds": plan_seconds,
        "apply_seconds": apply_seconds,
        "embed_seconds": stats.embed_seconds,
    });
    eprint!("{}", table(&kinds, &report, &scores));
    drop(engine);
    drop(tmp);
    write_report(&report, a.out.as_deref())
}
