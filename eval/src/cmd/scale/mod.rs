//! `amber-eval scale` (issue 48): a store of a million memories on one machine.
//!
//! The store is grown through the engine's own write path (`remember_batch`, the indexer,
//! BM25 and the HNSW index as the daemon builds them). Its first `--bases` memories are
//! real paragraphs of the dev corpus, embedded by the real model. The rest are variants
//! ([`fill`]): one base paragraph followed by a sentence of two others, with the vector
//! `normalize(v_i + 0.5 v_j + 0.25 v_k + noise)` built from the bases' real vectors and
//! put in the store's embedding cache before the memory is filed, so the indexer finds it
//! there and runs no model. Vectors keep the distribution of real MiniLM vectors (not
//! uniform random ones, HNSW's worst case), and the store is an ordinary MiniLM store: a
//! daemon opened on it embeds questions with the real model.
//!
//! Then, in this process: the fill's rate and resident memory, the disk per memory, the
//! HNSW index's recall against exact search over the cached vectors ([`exact`]), and
//! with `--rebuild` both indexes rebuilt from the cache. The daemon's own figures on
//! the store (start to serving, RSS, recall with 1 and 8 clients, backup) come from
//! `amber-eval cold-start` and `amber-eval load` pointed at it (docs/PERFORMANCE.md).

mod exact;
mod fill;

use std::path::PathBuf;
use std::time::Instant;

use amber_engine::{Engine, EngineOptions, default_amber_home};
use amber_eval::longmemeval;
use amber_retrieval::{ChunkConfig, Embedder, FastEmbedder, ModelPaths};
use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use crate::cmd::bench::{bench_corpus, rss_mib};
use crate::cmd::node::dir_bytes;
use crate::common::write_report;

/// Arguments of `amber-eval scale`.
#[derive(Args, Debug)]
pub(crate) struct ScaleArgs {
    /// A LongMemEval file: its turns' paragraphs become the base memories, its questions
    /// half of the HNSW check's queries.
    #[arg(long)]
    data: PathBuf,
    /// The store (kept: a rerun grows it to `--memories` or measures it as it is).
    #[arg(long, value_name = "DIR")]
    store: PathBuf,
    /// Memories to grow the store to.
    #[arg(long, default_value_t = 1_000_000)]
    memories: usize,
    /// Real paragraphs embedded by the model, of which the rest are variants.
    #[arg(long, default_value_t = 20_000)]
    bases: usize,
    /// Length of a variant vector's Gaussian noise, before normalizing (its three bases
    /// weigh 1, 0.5 and 0.25).
    #[arg(long, default_value_t = 0.35)]
    noise: f32,
    /// Seed of the variants and of the check's sample.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Queries of the HNSW check: half the dev questions embedded by the model, half
    /// stored vectors with noise (0 skips the check).
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// The HNSW search depths (usearch's `expansion_search`) the check measures.
    #[arg(long, value_delimiter = ',', default_value = "128,256,512")]
    ef: Vec<usize>,
    /// Also time rebuilding both indexes from the embedding cache.
    #[arg(long)]
    rebuild: bool,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// The scope every memory of the store is filed in (`amber-eval cold-start`'s default).
pub(crate) const SCOPE: &str = "bench";

/// SHA-256 of a text: the embedding cache's key of a one-chunk memory.
fn sha256(text: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes()).into()
}

/// `v` scaled to unit length.
fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    v.iter_mut().for_each(|x| *x /= norm);
}

/// Runs `amber-eval scale`.
pub(crate) fn run(a: ScaleArgs) -> anyhow::Result<()> {
    if a.bases == 0 || a.memories < a.bases {
        bail!("--bases must be at least 1 and at most --memories");
    }
    let questions = longmemeval::load(&a.data)?;
    let corpus = bench_corpus(&questions, a.bases);
    if corpus.len() < a.bases {
        bail!("{} holds only {} usable paragraphs, fewer than {}", a.data.display(), corpus.len(), a.bases);
    }
    let asked: Vec<String> = questions.iter().map(|q| q.question.clone()).collect();
    drop(questions);
    let engine = Engine::open(EngineOptions::new(&a.store))?;
    let model = engine.model_id();
    let mut embedder =
        FastEmbedder::load(&ModelPaths::under(&default_amber_home()), ChunkConfig::default(), Some(1))
            .context("loading the local model (scripts/setup.sh installs it)")?;
    if embedder.model_id() != model {
        bail!(
            "the store's model is {model}, the local model {}: scale measures the local model",
            embedder.model_id()
        );
    }
    let t0 = Instant::now();
    let filled = fill::grow(&engine, &mut embedder, &corpus, &a)?;
    engine.flush()?;
    let fill_secs = t0.elapsed().as_secs_f64();
    let status = engine.status()?;
    let (rss, peak) = rss_mib();
    let disk = dir_bytes(&a.store);
    let index_disk = dir_bytes(&a.store.join("index"));
    let mut report = json!({
        "benchmark": "amber-eval scale: a store grown to --memories through the engine",
        "store": a.store,
        "model": model,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "bases": a.bases,
        "noise": a.noise,
        "seed": a.seed,
        "memories": status.memories,
        "vectors": status.vectors,
        "fill": filled,
        "fill_seconds_this_run": fill_secs,
        "engine_rss_mib": rss,
        "engine_peak_rss_mib": peak,
        "disk_bytes": disk,
        "disk_bytes_per_memory": disk as f64 / status.memories.max(1) as f64,
        "disk_by_part": {
            "sqlite": disk - index_disk,
            "bm25": dir_bytes(&a.store.join("index").join("bm25")),
            "vectors": std::fs::metadata(a.store.join("index").join("vectors.usearch")).map(|m| m.len()).ok(),
        },
    });
    if a.rebuild {
        let t = Instant::now();
        let before = engine.stats();
        engine.writer()?.reindex()?;
        report["rebuild_from_cache"] = json!({
            "seconds": t.elapsed().as_secs_f64(),
            "chunks_embedded": engine.stats().chunks_embedded - before.chunks_embedded,
            "peak_rss_mib": rss_mib().1,
        });
    }
    drop(engine);
    if a.samples > 0 {
        report["hnsw_vs_exact"] = exact::check(&a.store, &model, &mut embedder, &asked, &a)?;
    }
    write_report(&report, a.out.as_deref())
}
