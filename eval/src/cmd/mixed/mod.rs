//! `amber-eval mixed` (issue 45): retrieval in a store grown the way use grows one.
//!
//! The fixture (`eval/fixtures/mixed/`, its README says where everything comes from) is
//! one project's curated memories (the person's, an agent's, captures the person
//! promoted, the person's standing preferences), a week of replayed agent sessions on
//! the same topics (their raw captures), the project's documentation tree (ingested)
//! and four compiled skills, filed in-process through the engine with the metadata the
//! daemon's doors stamp ([`filing`]); after filing, every memory's
//! `amber_core::filing::Filing` is checked against the one intended. The store then
//! grows to each `--scale` with filler ([`filler`]: LongMemEval conversations as raw
//! captures, a vendored documentation tree, agent notes), the same questions asked at
//! every size ([`measure`], [`brief`]), once per `--filing-strength` (1: ranking by
//! filing, the engine's default; 0: no filing prior, ranking as before).
//!
//! Reported per size and strength: answer@1/@5/@10 (by gold kind), the share of raw
//! captures in the top 5 and the questions where one ranks above a curated gold, the
//! share of the person's preferences in the session-start briefing, precision and
//! recall of "no good match" (no hits with the relevance floor), recall latency; per
//! size: the mix of filings and the time to file and index it.

mod brief;
mod filing;
mod filler;
mod fixture;
mod measure;
mod plan;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use amber_core::MemoryId;
use amber_core::filing::Filing;
use amber_core::origin::Trust;
use amber_engine::{Engine, EngineOptions, default_amber_home};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use self::filing::Planned;
use self::fixture::Fixture;
use self::measure::Asker;
use crate::common::{ModelArgs, model_report, open_rankings, progress, sha256_file, write_report};

/// Arguments of `amber-eval mixed`.
#[derive(Args, Debug)]
pub(crate) struct MixedArgs {
    /// The LongMemEval file (.json or .json.xz) whose conversations are the raw
    /// transcript filler (read in place).
    #[arg(long)]
    data: PathBuf,
    /// The folder whose files are the vendored documentation filler
    /// [default: ~/.cargo/registry/src].
    #[arg(long, value_name = "DIR")]
    docs_root: Option<PathBuf>,
    /// Store sizes to measure, in memories, ascending; one store grows through them.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    scale: Vec<usize>,
    /// Filing strengths measured at every size (the engine's `filing_strength`).
    #[arg(long, value_delimiter = ',', default_value = "1,0")]
    filing_strength: Vec<f32>,
    /// The fixture [default: eval/fixtures/mixed of this source tree].
    #[arg(long, value_name = "DIR")]
    fixture: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// The embedding cache shared by runs [default: $AMBER_HOME/eval-cache.db].
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    /// Keep the store here; a later run with a larger --scale grows it on [default: a
    /// temporary store].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Threads for the embedding model (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Memories filed per batch.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Write each question's ranking (JSON lines) here.
    #[arg(long, value_name = "FILE")]
    rankings: Option<PathBuf>,
    /// Write the report (JSON) here; it is also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// What is in the store: distinct memories by filing and by role.
#[derive(Default)]
struct Mix {
    seen: HashSet<MemoryId>,
    by_filing: BTreeMap<&'static str, usize>,
    by_role: BTreeMap<&'static str, usize>,
    /// Memories whose filing was checked after filing (all of them).
    checked: usize,
}

impl Mix {
    fn report(&self) -> Value {
        json!({
            "memories": self.seen.len(),
            "by_filing": self.by_filing,
            "by_role": self.by_role,
            "filings_checked": self.checked,
        })
    }
}

/// Files a batch, promotes what the person promoted, and checks every memory's filing.
fn file(engine: &Engine, batch: Vec<Planned>, mix: &mut Mix) -> anyhow::Result<()> {
    let (memories, meta): (Vec<_>, Vec<_>) =
        batch.into_iter().map(|p| (p.memory, (p.filing, p.role, p.promote))).unzip();
    // Bound first: a temporary in a `for` head lives through the loop, and the writer is
    // taken again inside it (set_trust).
    let filed = engine.writer()?.remember_batch(memories)?;
    for (r, (want, role, promote)) in filed.into_iter().zip(meta) {
        let mut got = Filing::of(&r.memory);
        if promote {
            let (m, _) = engine
                .writer()?
                .set_trust(&r.memory.id, Trust::Person, amber_core::origin::SetBy::Person)?
                .context("a promoted memory is gone")?;
            got = Filing::of(&m);
        }
        if got != want {
            bail!("memory {} ({role}) was filed as {got}, meant {want}", r.memory.id);
        }
        mix.checked += 1;
        if mix.seen.insert(r.memory.id.clone()) {
            *mix.by_filing.entry(got.as_str()).or_default() += 1;
            *mix.by_role.entry(role).or_default() += 1;
        }
    }
    Ok(())
}

/// The engine over `dir` with the engine's defaults but the model, the cache, the
/// threads and the filing strength.
fn open(a: &MixedArgs, dir: &Path, strength: f32) -> anyhow::Result<Engine> {
    let mut o = EngineOptions::new(dir);
    o.model = a.model.config()?;
    o.embedding_cache = Some(a.cache.clone().unwrap_or_else(|| default_amber_home().join("eval-cache.db")));
    o.threads = a.threads;
    o.filing_strength = strength;
    Engine::open(o).with_context(|| format!("opening the store in {}", dir.display()))
}

pub(crate) fn run(a: MixedArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.scale.is_empty() || a.scale.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--scale: sizes in ascending order");
    }
    if a.filing_strength.is_empty() || a.filing_strength.iter().any(|s| !(0.0..=1.0).contains(s)) {
        bail!("--filing-strength: values in 0..=1");
    }
    let fixture_dir = a.fixture.clone().unwrap_or_else(fixture::default_dir);
    let f = Fixture::load(&fixture_dir)?;
    let st = plan::stamper(&f)?;
    let (planned, ids) = plan::fixture_plan(&f, &st)?;
    let preferences: HashSet<MemoryId> = f
        .memories
        .iter()
        .filter(|m| m.preference)
        .filter_map(|m| ids.iter().find(|(id, _)| *id == m.id).map(|(_, mid)| mid.clone()))
        .collect();
    if planned.len() >= a.scale[0] {
        bail!("the fixture alone is {} memories: the smallest --scale must be larger", planned.len());
    }
    let docs_root = a.docs_root.clone().unwrap_or_else(|| {
        std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"))
            .join("registry/src")
    });
    eprintln!("mixed: loading the filler ({} and {})", a.data.display(), docs_root.display());
    let mut filler = filler::Filler::new((st.clone(), f.now(), &f.project.root), &a.data, &docs_root)?;
    let (conversations, files) = filler.sources();
    let tmp = tempfile::Builder::new().prefix("amber-eval-mixed-").tempdir()?;
    let dir = a.store.clone().unwrap_or_else(|| tmp.path().join("store"));
    let mut strength = a.filing_strength[0];
    let mut engine = open(&a, &dir, strength)?;
    let mut rankings = open_rankings(a.rankings.as_deref())?;
    let mut mix = Mix::default();

    eprintln!("mixed: filing the fixture ({} memories)", planned.len());
    let t = Instant::now();
    let mut batch = Vec::new();
    for p in planned {
        // An invalidation names what it supersedes: that must be filed first.
        if !p.memory.supersedes.is_empty() && !batch.is_empty() {
            file(&engine, std::mem::take(&mut batch), &mut mix)?;
        }
        batch.push(p);
    }
    file(&engine, batch, &mut mix)?;
    let fixture_report = json!({
        "dir": fixture_dir,
        "project": f.project,
        "scope": st.project,
        "mix": mix.report(),
        "files": f.docs.len(),
        "sessions": f.sessions.len(),
        "captures": f.sessions.iter().map(|s| s.captures.len()).sum::<usize>(),
        "skills": f.skills.len(),
        "curated": f.memories.len(),
        "preferences": preferences.len(),
        "answerable": f.questions.answerable.len(),
        "answerable_curated": f.questions.answerable.iter().filter(|q| q.gold[0].kind() == "curated").count(),
        "unanswerable": f.questions.unanswerable.len(),
        "openings": f.questions.openings.len() + 1,
        "filing_seconds": t.elapsed().as_secs_f64(),
    });

    let mut scales = Vec::new();
    for &size in &a.scale {
        let t = Instant::now();
        let (embedded, cached, embed_s) = {
            let s = engine.stats();
            (s.chunks_embedded, s.chunks_from_cache, s.embed_seconds)
        };
        let bar = progress(size.saturating_sub(mix.seen.len()), &format!("growing to {size}"));
        while mix.seen.len() < size {
            let before = mix.seen.len();
            let want = (size - before).min(a.batch);
            let batch: Vec<Planned> = filler.by_ref().take(want).collect();
            if batch.is_empty() {
                eprintln!("mixed: the filler ran out at {before} memories");
                break;
            }
            file(&engine, batch, &mut mix)?;
            bar.inc((mix.seen.len() - before) as u64);
        }
        bar.finish_and_clear();
        engine.flush()?;
        held_no_more(&engine, &mix, size)?;
        let s = engine.stats();
        let grown = json!({
            "size": size,
            "mix": mix.report(),
            "filler_taken": filler::SHARES.iter().zip(filler.taken()).map(|((n, _), k)| (n.to_string(), json!(k))).collect::<serde_json::Map<_, _>>(),
            "grow_seconds": t.elapsed().as_secs_f64(),
            "chunks_embedded": s.chunks_embedded - embedded,
            "chunks_from_cache": s.chunks_from_cache - cached,
            "embed_seconds": s.embed_seconds - embed_s,
        });
        eprintln!("mixed: {} memories in {:.0} s", mix.seen.len(), t.elapsed().as_secs_f64());
        let mut runs = Vec::new();
        for &fs in &a.filing_strength {
            if fs != strength {
                drop(engine);
                engine = open(&a, &dir, fs)?;
                strength = fs;
            }
            let t = Instant::now();
            let asker = Asker { engine: &engine, project: &st.project, user: &st.user, now: f.now() };
            let tag = json!({ "size": size, "filing_strength": fs });
            let w = rankings.as_mut().map(|w| w as &mut dyn std::io::Write);
            let mut run = measure::questions(&asker, &f, w, &tag)?;
            let who = (f.project.name.as_str(), f.project.root.as_str());
            run["briefing"] = brief::preferences_kept(&asker, who, &f.questions.openings, &preferences)?;
            run["filing_strength"] = json!(fs);
            run["goals"] = goals(&run);
            run["measure_seconds"] = json!(t.elapsed().as_secs_f64());
            eprintln!("mixed: {size} filing_strength {fs}: {}", summary(&run));
            runs.push(run);
        }
        scales.push(json!({ "grown": grown, "runs": runs }));
    }
    engine.flush()?;
    let report = json!({
        "benchmark": "mixed stores (issue 45): a project's curated memories, sessions, documents and skills, grown with filler",
        "fixture": fixture_report,
        "filler": {
            "data": a.data,
            "data_sha256": sha256_file(&a.data)?,
            "conversations": conversations,
            "docs_root": docs_root,
            "docs_files": files,
            "docs_files_skipped": filler.files_skipped,
            "shares_percent": filler::SHARES.iter().map(|(n, s)| (n.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
        },
        "recall": "the question verbatim, in the project's scope and user (one ranking), hybrid, at the fixture's now; \
                   ranked top 20 without the floor, and top 5 with it for 'no good match'",
        "engine": {
            "model": model_report(&engine),
            "options": "the engine's defaults but filing_strength (per run), the model, the cache and the threads",
            "store": if a.store.is_some() { json!(dir) } else { json!("a temporary store") },
            "embedding_cache": engine.options().embedding_cache,
        },
        "scales": scales,
        "wall_seconds": started.elapsed().as_secs_f64(),
    });
    if let Some(w) = rankings.as_mut() {
        std::io::Write::flush(w)?;
    }
    write_report(&report, a.out.as_deref())
}

/// A kept store (`--store`) may hold more than this run filed (a larger earlier run):
/// it would be measured as a size it is not.
fn held_no_more(engine: &Engine, mix: &Mix, size: usize) -> anyhow::Result<()> {
    let held = engine.status()?.memories;
    if held > mix.seen.len() as u64 {
        bail!(
            "the store holds {held} memories, more than the {} this run filed for --scale {size}: \
             measure a smaller size on a fresh store (or without --store)",
            mix.seen.len()
        );
    }
    Ok(())
}

/// Issue 45's goals, as met or not by one run (they are set for 100k memories).
fn goals(run: &Value) -> Value {
    let at = |k: &str| run["answerable"][k].as_f64().unwrap_or(0.0);
    json!({
        "answer_at_5_ge_0.98": at("answer_at_5") >= 0.98,
        "answer_at_1_ge_0.85": at("answer_at_1") >= 0.85,
        "no_raw_above_curated": run["raw_above_curated"].as_u64() == Some(0),
        "preferences_kept_everywhere": run["briefing"]["kept_all_everywhere"].as_bool() == Some(true),
    })
}

/// One line for stderr.
fn summary(run: &Value) -> String {
    let n = |v: &Value| v.as_f64().map_or("-".to_string(), |x| format!("{x:.3}"));
    format!(
        "answer@1 {} @5 {} (curated @1 {}, document @1 {}), raw share top5 {}, raw above curated {}, \
         preferences in briefing {}, no-good-match precision {} recall {}",
        n(&run["answerable"]["answer_at_1"]),
        n(&run["answerable"]["answer_at_5"]),
        n(&run["curated"]["answer_at_1"]),
        n(&run["document"]["answer_at_1"]),
        n(&run["raw_share_top5_curated"]),
        run["raw_above_curated"],
        n(&run["briefing"]["mean_share"]),
        n(&run["no_good_match"]["precision"]),
        n(&run["no_good_match"]["recall"]),
    )
}
