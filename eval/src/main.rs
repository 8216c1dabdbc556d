//! `amber-eval`: Amber's retrieval measured on LongMemEval and LoCoMo with the official
//! metrics, through the same engine the CLI and daemon use.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use amber_core::{Expand, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{ChunkConfig, Engine, EngineOptions, default_amber_home};
use amber_eval::{FiledDoc, locomo, longmemeval, metrics};
use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod briefing_cmd;
mod curate;
mod interject_cmd;
mod kg_bench;
mod load;

#[derive(Parser, Debug)]
#[command(
    name = "amber-eval",
    version,
    about = "Amber's retrieval on LongMemEval and LoCoMo, official metrics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// LongMemEval retrieval: recall_any/recall_all/ndcg_any at k in {1,3,5,10,30,50}.
    Longmemeval(LmeArgs),
    /// LoCoMo retrieval: recall@k of the evidence turns (or their sessions).
    Locomo(LocomoArgs),
    /// Performance: ingest throughput with embedding, recall latency at growing sizes,
    /// index rebuild time and resident memory, on memories made from real text.
    Bench(BenchArgs),
    /// Draws recall@k curves (PNG) from LongMemEval reports.
    Plot(PlotArgs),
    /// Interjection gate calibration: each LongMemEval question as a mid-session event
    /// against its haystack; fire rate, precision and silence across gates and bands.
    Interject(interject_cmd::InterjectArgs),
    /// Load on a running daemon: throughput and p50/p99 latency of recall and remember
    /// at several client counts.
    Load(load::LoadArgs),
    /// Session-end curation on LoCoMo conversations with planted duplicates: found per
    /// edit kind, false merges, a duplicate-threshold sweep.
    Curate(curate::CurateArgs),
    /// Knowledge graph: `kg_traverse` latency per hop count on a synthetic graph (100k
    /// facts by default), against a running or private daemon.
    KgBench(kg_bench::KgBenchArgs),
    /// Tier-1 briefing, pointers (the default) against the old verbatim one: memories
    /// shown, tokens, precision and recall of evidence, on a hand-written project fixture
    /// and (with --data) on LongMemEval haystacks.
    Briefing(briefing_cmd::BriefingArgs),
}

#[derive(Args, Debug)]
struct PlotArgs {
    /// Report files written by `amber-eval longmemeval --out`.
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// The metric to draw at each k: recall_all, recall_any or ndcg_any.
    #[arg(long, default_value = "recall_all")]
    metric: String,
    /// Which averaging: metrics (official) or metrics_strict.
    #[arg(long, default_value = "metrics")]
    averaging: String,
    /// The PNG to write.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// A LongMemEval file: its turns' paragraphs become the memories, its questions the queries.
    #[arg(long)]
    data: PathBuf,
    /// Sizes at which recall latency is measured, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    sizes: Vec<usize>,
    /// Recall queries per size.
    #[arg(long, default_value_t = 300)]
    queries: usize,
    /// The bench store (kept, so a rerun reuses its embeddings) [default: $AMBER_HOME/bench-store].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Settings shared by every run: where the store lives and how the engine ranks.
#[derive(Args, Debug, Clone)]
struct EngineArgs {
    /// hybrid, bm25 or vector.
    #[arg(long, default_value = "hybrid")]
    mode: String,
    /// Keep the eval store here (reused by later runs) [default: a fresh temporary
    /// store per run, so results do not depend on earlier runs].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// The embedding cache shared by runs, which makes a second run cheap
    /// [default: $AMBER_HOME/eval-cache.db].
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    /// Reciprocal-rank-fusion constant (the engine's default).
    #[arg(long, default_value_t = 5.0)]
    rrf_k: f32,
    /// Fusion weight of BM25.
    #[arg(long, default_value_t = 1.0)]
    bm25_weight: f32,
    /// Fusion weight of the vector ranking (the engine's default).
    #[arg(long, default_value_t = 0.7)]
    vector_weight: f32,
    /// Fusion weight of the exact-identifier ranking.
    #[arg(long, default_value_t = 1.0)]
    exact_weight: f32,
    /// Fusion weight of the time ranking (candidates inside a time the question names,
    /// relative to the question date); 0 turns it off.
    #[arg(long, default_value_t = 1.0)]
    time_weight: f32,
    /// Fusion weight of the graph ranking (recalls with `expand: graph` only).
    #[arg(long, default_value_t = 0.5)]
    graph_weight: f32,
    /// Session neighbours: the turn just before and the one just after a candidate in its
    /// conversation session gain this times the candidate's fused score (turn level only;
    /// the engine's default); 0 turns it off.
    #[arg(long, default_value_t = 0.5)]
    neighbour_weight: f32,
    /// Session prior: a candidate turn gains this times the best fused score among the
    /// candidates of its conversation session (turn level only; the engine's default);
    /// 0 turns it off.
    #[arg(long, default_value_t = 0.3)]
    session_weight: f32,
    /// Session context: each turn also gets a vector of itself followed by the turn
    /// before it in its session (turn level only; the engine's default).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    session_context: bool,
    /// Chunk window in word pieces (the model's window: 256 for MiniLM).
    #[arg(long, default_value_t = 256)]
    chunk_tokens: usize,
    /// Word pieces shared by consecutive chunks.
    #[arg(long, default_value_t = 32)]
    chunk_overlap: usize,
    /// Threads for the embedding model (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the per-question rankings (JSON lines) here.
    #[arg(long, value_name = "FILE")]
    rankings: Option<PathBuf>,
    /// Write the report (JSON) here; it is also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Only the first N questions (LongMemEval) or conversations (LoCoMo).
    #[arg(long)]
    limit: Option<usize>,
}

#[derive(Args, Debug)]
struct LmeArgs {
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

#[derive(Args, Debug)]
struct LocomoArgs {
    /// The LoCoMo file (locomo10.json format).
    #[arg(long)]
    data: PathBuf,
    /// session or turn.
    #[arg(long, default_value = "session")]
    granularity: String,
    /// Cut-offs, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,10,20")]
    k: Vec<usize>,
    /// `graph`: build each conversation's graph with the no-model co-mention proposer
    /// (speakers and proper names; see `amber_eval::comention`) and recall with
    /// `expand: graph`.
    #[arg(long, default_value = "none")]
    expand: String,
    #[command(flatten)]
    engine: EngineArgs,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AMBER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Longmemeval(a) => run_longmemeval(a),
        Command::Locomo(a) => run_locomo(a),
        Command::Bench(a) => run_bench(a),
        Command::Plot(a) => run_plot(a),
        Command::Interject(a) => interject_cmd::run(a),
        Command::Curate(a) => curate::run(a),
        Command::Briefing(a) => briefing_cmd::run(a),
        Command::Load(a) => {
            let out = a.out.clone();
            load::run(a).and_then(|r| write_report(&r, out.as_deref()))
        }
        Command::KgBench(a) => {
            let out = a.out.clone();
            kg_bench::run(a).and_then(|r| write_report(&r, out.as_deref()))
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("amber-eval: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The engine of a run, and the temporary directory holding its store when no `--store`
/// was given (removed when dropped, after the engine).
fn open_engine(a: &EngineArgs) -> anyhow::Result<(Engine, Option<tempfile::TempDir>)> {
    let (dir, tmp) = match &a.store {
        Some(dir) => (dir.clone(), None),
        None => {
            let tmp = tempfile::Builder::new().prefix("amber-eval-").tempdir()?;
            (tmp.path().join("store"), Some(tmp))
        }
    };
    let mut opts = EngineOptions::new(&dir);
    opts.embedding_cache =
        Some(a.cache.clone().unwrap_or_else(|| default_amber_home().join("eval-cache.db")));
    opts.rrf_k = a.rrf_k;
    opts.bm25_weight = a.bm25_weight;
    opts.vector_weight = a.vector_weight;
    opts.exact_weight = a.exact_weight;
    opts.time_weight = a.time_weight;
    opts.graph_weight = a.graph_weight;
    opts.neighbour_weight = a.neighbour_weight;
    opts.session_weight = a.session_weight;
    opts.session_context = a.session_context;
    opts.chunking = ChunkConfig { max_tokens: a.chunk_tokens, overlap_tokens: a.chunk_overlap };
    opts.threads = a.threads;
    let engine =
        Engine::open(opts).with_context(|| format!("opening the eval store in {}", dir.display()))?;
    Ok((engine, tmp))
}

fn engine_config(engine: &Engine, a: &EngineArgs) -> Value {
    let o = engine.options();
    json!({
        "model": engine.model_id(),
        "chunk_tokens": o.chunking.max_tokens,
        "chunk_overlap": o.chunking.overlap_tokens,
        "chunk_aggregation": "max over chunks (best chunk cosine)",
        "rrf_k": o.rrf_k,
        "bm25_weight": o.bm25_weight,
        "vector_weight": o.vector_weight,
        "exact_weight": o.exact_weight,
        "time_weight": o.time_weight,
        "graph_weight": o.graph_weight,
        "neighbour_weight": o.neighbour_weight,
        "session_weight": o.session_weight,
        "session_context": o.session_context,
        "candidates": o.candidates,
        "mode": a.mode,
        "query": "the question text, verbatim",
        "now": "the question date (LongMemEval) or the last session's date (LoCoMo), for time expressions",
        "store": if a.store.is_some() { json!(o.data_dir) } else { json!("fresh temporary store") },
        "embedding_cache": o.embedding_cache,
        "chunks_embedded": engine.stats().chunks_embedded,
        "chunks_from_cache": engine.stats().chunks_from_cache,
    })
}

fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

fn progress(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// A scope segment from an arbitrary id: characters a scope does not allow become `_`.
fn scope_segment(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
        .collect()
}

/// Files the docs of one haystack into `scope` and returns, per memory id, the doc ids it
/// stands for (identical texts share one memory) and how many docs were empty.
fn ingest(
    engine: &Engine,
    scope: &Scope,
    docs: impl Iterator<Item = FiledDoc>,
) -> anyhow::Result<(HashMap<MemoryId, Vec<String>>, usize)> {
    let mut batch = Vec::new();
    let mut ids = Vec::new();
    let mut empty = 0;
    for d in docs {
        if d.text.trim().is_empty() {
            empty += 1;
            continue;
        }
        let mut m = NewMemory::new(d.text).in_scope(scope.clone());
        m.event_time = d.time;
        m.session_id = d.session;
        ids.push(d.id);
        batch.push(m);
    }
    let stored = engine.remember_batch(batch)?;
    let mut map: HashMap<MemoryId, Vec<String>> = HashMap::new();
    for (r, id) in stored.into_iter().zip(ids) {
        map.entry(r.memory.id).or_default().push(id);
    }
    Ok((map, empty))
}

/// The ranked doc ids for a query within a scope.
fn ranked_ids(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    (k, mode, now, expand): (usize, SearchMode, Option<i64>, Expand),
    docs: &HashMap<MemoryId, Vec<String>>,
) -> anyhow::Result<Vec<String>> {
    Ok(ranked_hits(engine, text, scope, (k, mode, now, expand), docs)?.0)
}

/// [`ranked_ids`], and whether the graph ranked any hit.
fn ranked_hits(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    (k, mode, now, expand): (usize, SearchMode, Option<i64>, Expand),
    docs: &HashMap<MemoryId, Vec<String>>,
) -> anyhow::Result<(Vec<String>, bool)> {
    let q = Query { now, mode, expand, ..Query::new(text).in_scope(scope.clone()).top(k) };
    let hits = engine.recall(&q)?;
    let graph = hits.iter().any(|h| h.evidence.graph_rank.is_some());
    Ok((hits.iter().flat_map(|h| docs.get(&h.memory.id).cloned().unwrap_or_default()).collect(), graph))
}

fn write_report(report: &Value, out: Option<&Path>) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(report)?;
    if let Some(path) = out {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("{text}");
    Ok(())
}

fn open_rankings(path: Option<&Path>) -> anyhow::Result<Option<std::io::BufWriter<std::fs::File>>> {
    path.map(|p| {
        std::fs::File::create(p)
            .map(std::io::BufWriter::new)
            .with_context(|| format!("creating {}", p.display()))
    })
    .transpose()
}

/// One LongMemEval question's haystack, filed into its own scope.
struct Haystack {
    /// `lme/<granularity>-<roles>/<question id>`.
    scope: Scope,
    /// The question's corpus at that granularity.
    docs: Vec<longmemeval::Doc>,
    /// Per memory, the doc ids it stands for.
    memories: HashMap<MemoryId, Vec<String>>,
    /// Empty docs, not filed.
    empty: usize,
}

/// Files a question's corpus (each doc dated by its session) into the question's scope:
/// the store construction of `amber-eval longmemeval`, shared by `interject`.
fn file_haystack(
    engine: &Engine,
    q: &longmemeval::Question,
    granularity: longmemeval::Granularity,
    include_assistant: bool,
) -> anyhow::Result<Haystack> {
    let roles = if include_assistant { "all" } else { "user" };
    let docs = longmemeval::corpus_with_roles(q, granularity, include_assistant);
    let scope: Scope =
        format!("lme/{}-{roles}/{}", granularity.as_str(), scope_segment(&q.question_id)).parse()?;
    let dates: HashMap<&str, Option<i64>> =
        q.sessions.iter().map(|s| (s.id.as_str(), longmemeval::parse_date(&s.date))).collect();
    let (memories, empty) = ingest(
        engine,
        &scope,
        docs.iter().map(|d| FiledDoc {
            id: d.id.clone(),
            text: d.text.clone(),
            time: dates.get(d.session_id.as_str()).copied().flatten(),
            session: (granularity == longmemeval::Granularity::Turn).then(|| d.session_id.clone()),
        }),
    )?;
    Ok(Haystack { scope, docs, memories, empty })
}

fn run_longmemeval(a: LmeArgs) -> anyhow::Result<()> {
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

fn category_name(c: u8) -> String {
    match c {
        1 => "1-multi-hop".into(),
        2 => "2-temporal".into(),
        3 => "3-open-domain".into(),
        4 => "4-single-hop".into(),
        5 => "5-adversarial".into(),
        other => format!("{other}-unknown"),
    }
}

fn run_locomo(a: LocomoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let granularity: longmemeval::Granularity =
        a.granularity.parse().map_err(|e| anyhow::anyhow!("--granularity: {e}"))?;
    let turn_level = granularity == longmemeval::Granularity::Turn;
    let mode: SearchMode = a.engine.mode.parse()?;
    if a.k.is_empty() || a.k.contains(&0) {
        bail!("--k needs positive cut-offs");
    }
    let expand = match a.expand.as_str() {
        "none" => Expand::None,
        "graph" => Expand::Graph,
        other => bail!("--expand {other:?}: expected none or graph"),
    };
    let sha = sha256_file(&a.data)?;
    let (mut convs, quirks) = locomo::load(&a.data)?;
    let n_questions: usize = convs.iter().map(|c| c.qa.len()).sum();
    if let Some(n) = a.engine.limit {
        convs.truncate(n);
    }
    let (engine, _tmp) = open_engine(&a.engine)?;
    let embed_before = engine.stats().embed_seconds;
    let mut rankings = open_rankings(a.engine.rankings.as_deref())?;
    let kmax = *a.k.iter().max().unwrap_or(&10);
    let pb = progress(convs.iter().map(|c| c.qa.len()).sum(), "locomo");
    let mut all: Vec<BTreeMap<String, f64>> = Vec::new();
    let mut by_cat: BTreeMap<String, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    let mut no_evidence = 0;
    let (mut graph_facts, mut graph_entities, mut graph_fired) = (0, 0, 0);
    for c in &convs {
        let scope: Scope =
            format!("locomo/{}/{}", granularity.as_str(), scope_segment(&c.sample_id)).parse()?;
        let docs = if turn_level { c.turn_docs() } else { c.session_docs() };
        let (memories, _) = ingest(&engine, &scope, docs.into_iter())?;
        if expand == Expand::Graph {
            let (f, e) = build_graph(&engine, &scope, c, &memories, turn_level)?;
            graph_facts += f;
            graph_entities += e;
        }
        let now = c.sessions.iter().filter_map(|s| s.time).max();
        for qa in &c.qa {
            pb.inc(1);
            let (ranked, graph) =
                ranked_hits(&engine, &qa.question, &scope, (kmax, mode, now, expand), &memories)?;
            graph_fired += usize::from(graph);
            if let Some(w) = rankings.as_mut() {
                writeln!(
                    w,
                    "{}",
                    json!({"sample_id": c.sample_id, "question": qa.question, "ranked": ranked})
                )?;
            }
            let evidence = if turn_level { qa.evidence.clone() } else { c.evidence_session_ids(qa) };
            let mut scores = BTreeMap::new();
            for &k in &a.k {
                match locomo::recall_at_k(&ranked, &evidence, k) {
                    Some(r) => {
                        scores.insert(format!("recall@{k}"), r);
                    }
                    None => break,
                }
            }
            if scores.is_empty() {
                no_evidence += 1;
                continue;
            }
            by_cat.entry(category_name(qa.category)).or_default().push(scores.clone());
            all.push(scores);
        }
    }
    pb.finish_and_clear();
    if let Some(mut w) = rankings {
        w.flush()?;
    }
    engine.flush()?;
    let mut config = engine_config(&engine, &a.engine);
    config["k"] = json!(a.k);
    config["doc_text"] = json!("\"speaker: text\" per turn; a session joins its turns with newlines");
    config["questions_without_usable_evidence"] = json!(no_evidence);
    config["expand"] = json!(a.expand);
    if expand == Expand::Graph {
        config["graph"] = json!({
            "proposer": "amber_eval::comention (speakers + proper names seen twice; mentions, mentioned_with)",
            "facts": graph_facts,
            "entities": graph_entities,
            "graph_weight": engine.options().graph_weight,
            "questions_with_graph_hits": graph_fired,
        });
    }
    config["conversations_run"] = json!(convs.len());
    let report = json!({
        "dataset": "locomo",
        "data_file": a.data,
        "data_sha256": sha,
        "n_questions": n_questions,
        "n_scored": all.len(),
        "granularity": granularity.as_str(),
        "mode": mode.as_str(),
        "config": config,
        "quirks": quirks,
        "metrics": metrics::mean(&all),
        "per_type": by_cat.iter().map(|(t, v)| (t.clone(), metrics::mean(v))).collect::<BTreeMap<_, _>>(),
        "wall_seconds": started.elapsed().as_secs_f64(),
        "embed_seconds": engine.stats().embed_seconds - embed_before,
    });
    write_report(&report, a.engine.out.as_deref())
}

/// Builds a conversation's graph with the co-mention proposer through the engine's
/// `kg_add` (which also links the memories that name each entity). Returns (facts,
/// entities) stored.
fn build_graph(
    engine: &Engine,
    scope: &Scope,
    c: &locomo::Conversation,
    memories: &HashMap<MemoryId, Vec<String>>,
    turn_level: bool,
) -> anyhow::Result<(usize, usize)> {
    let mut memory_of: HashMap<&str, &MemoryId> = HashMap::new();
    for (m, docs) in memories {
        for d in docs {
            memory_of.insert(d.as_str(), m);
        }
    }
    let mut utterances = Vec::new();
    for s in &c.sessions {
        for t in &s.turns {
            let doc = if turn_level { t.dia_id.as_str() } else { s.id.as_str() };
            if let Some(m) = memory_of.get(doc) {
                utterances.push(amber_eval::comention::Utterance {
                    memory: m,
                    speaker: &t.speaker,
                    text: &t.text,
                });
            }
        }
    }
    let (entities, facts) = amber_eval::comention::propose(&utterances);
    let mut stored = 0;
    engine.kg_add(scope, &entities, &[])?;
    for chunk in facts.chunks(1000) {
        stored += engine.kg_add(scope, &[], chunk)?.facts.len();
    }
    let n_entities = engine.read_store(|s| s.kg_stats(Some(scope), 0))?.entities as usize;
    Ok((stored, n_entities))
}

/// Resident memory now and at peak, in MiB, from /proc (Linux).
fn rss_mib() -> (Option<f64>, Option<f64>) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Paragraphs of real conversation text, 40 to 600 characters, deduplicated, in file order.
fn bench_corpus(questions: &[longmemeval::Question], want: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for q in questions {
        for s in &q.sessions {
            for t in &s.turns {
                for para in t.content.split("\n\n") {
                    let p = para.trim();
                    if (40..=600).contains(&p.len()) && seen.insert(p.to_string()) {
                        out.push(p.to_string());
                        if out.len() == want {
                            return out;
                        }
                    }
                }
            }
        }
    }
    out
}

fn run_bench(a: BenchArgs) -> anyhow::Result<()> {
    let mut sizes = a.sizes.clone();
    sizes.sort_unstable();
    let Some(&max) = sizes.last() else { bail!("--sizes needs at least one size") };
    let questions = longmemeval::load(&a.data)?;
    let corpus = bench_corpus(&questions, max);
    if corpus.len() < max {
        bail!("{} holds only {} usable paragraphs, fewer than {max}", a.data.display(), corpus.len());
    }
    let queries: Vec<String> = questions.iter().map(|q| q.question.clone()).cycle().take(a.queries).collect();
    // The parsed data file is large; what the engine holds is what is measured.
    drop(questions);
    let dir = a.store.clone().unwrap_or_else(|| default_amber_home().join("bench-store"));
    let engine = Engine::open(EngineOptions::new(&dir))?;
    let scope: Scope = "bench".parse()?;
    let mut results = Vec::new();
    let mut ingested = engine.status()?.memories as usize;
    let pb = progress(max, "bench ingest");
    pb.set_position(ingested.min(max) as u64);
    for &size in &sizes {
        let t0 = Instant::now();
        let before = engine.stats();
        let mut new = 0usize;
        while ingested < size {
            let end = (ingested + 256).min(size);
            let batch: Vec<NewMemory> = corpus[ingested..end]
                .iter()
                .map(|t| NewMemory::new(t.clone()).in_scope(scope.clone()))
                .collect();
            new += engine.remember_batch(batch)?.iter().filter(|r| r.created).count();
            pb.set_position(end as u64);
            ingested = end;
        }
        engine.flush()?;
        let ingest_secs = t0.elapsed().as_secs_f64();
        let after = engine.stats();
        // warm-up, then timed queries (each includes embedding the query)
        for q in queries.iter().take(10) {
            engine.recall(&Query::new(q.as_str()).top(10))?;
        }
        let mut lat = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            engine.recall(&Query::new(q.as_str()).top(10))?;
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        lat.sort_by(f64::total_cmp);
        let (rss, peak) = rss_mib();
        results.push(json!({
            "memories": size,
            "vectors": engine.status()?.vectors,
            "ingested_now": new,
            "ingest_seconds": ingest_secs,
            "ingest_per_second": if ingest_secs > 0.0 { new as f64 / ingest_secs } else { 0.0 },
            "chunks_embedded": after.chunks_embedded - before.chunks_embedded,
            "chunks_from_cache": after.chunks_from_cache - before.chunks_from_cache,
            "recall_queries": lat.len(),
            "recall_ms_p50": percentile(&lat, 0.50),
            "recall_ms_p90": percentile(&lat, 0.90),
            "recall_ms_p99": percentile(&lat, 0.99),
            "rss_mib": rss,
            "peak_rss_mib": peak,
        }));
    }
    pb.finish_and_clear();
    let t0 = Instant::now();
    let before = engine.stats();
    engine.reindex()?;
    let rebuild = json!({
        "memories": max,
        "seconds": t0.elapsed().as_secs_f64(),
        "chunks_embedded": engine.stats().chunks_embedded - before.chunks_embedded,
    });
    let (rss, peak) = rss_mib();
    let report = json!({
        "benchmark": "amber engine, in process",
        "data_file": a.data,
        "model": engine.model_id(),
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "corpus": "LongMemEval turn paragraphs of 40-600 characters, deduplicated",
        "queries": "LongMemEval questions, top 10, hybrid, no filter",
        "sizes": results,
        "rebuild_from_cache": rebuild,
        "final_rss_mib": rss,
        "peak_rss_mib": peak,
    });
    write_report(&report, a.out.as_deref())
}

fn run_plot(a: PlotArgs) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let mut series = Vec::new();
    for path in &a.reports {
        let r: Value = serde_json::from_slice(
            &std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
        )
        .with_context(|| format!("{} is not a report", path.display()))?;
        let label = format!(
            "{} {} {}",
            r["mode"].as_str().unwrap_or("?"),
            r["granularity"].as_str().unwrap_or("?"),
            r["config"]["corpus_roles"].as_str().unwrap_or("")
        );
        let points: Vec<(f64, f64)> = metrics::KS
            .iter()
            .enumerate()
            .filter_map(|(i, k)| r[&a.averaging][format!("{}@{k}", a.metric)].as_f64().map(|v| (i as f64, v)))
            .collect();
        if points.is_empty() {
            bail!("{} has no {} {}@k", path.display(), a.averaging, a.metric);
        }
        series.push((label, points));
    }
    let lo = series.iter().flat_map(|(_, p)| p.iter().map(|x| x.1)).fold(1.0f64, f64::min);
    let y0 = ((lo - 0.05) * 10.0).floor() / 10.0;
    let root = BitMapBackend::new(&a.out, (900, 560)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", a.out.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!("LongMemEval dev: {}@k ({})", a.metric, a.averaging);
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.2f64..(metrics::KS.len() as f64 - 0.8), y0.max(0.0)..1.0f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("k")
        .y_desc(a.metric.as_str())
        .x_labels(metrics::KS.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                metrics::KS.get(i as usize).map(|k| k.to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, points)) in series.iter().enumerate() {
        let color = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK][i % 6].to_rgba();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    eprintln!("wrote {}", a.out.display());
    Ok(())
}
