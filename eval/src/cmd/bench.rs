//! `amber-eval bench`: performance of the engine in process. Ingest throughput with
//! embedding, recall latency at growing sizes, index rebuild time and resident memory, on
//! memories made from real text (LongMemEval turn paragraphs).

use std::path::PathBuf;
use std::time::Instant;

use amber_core::{NewMemory, Query, Scope};
use amber_engine::{Engine, EngineOptions, default_amber_home};
use amber_eval::longmemeval;
use anyhow::bail;
use clap::Args;
use serde_json::json;

use crate::common::{ModelArgs, model_report, percentile, progress, write_report};

/// Arguments of `amber-eval bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
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
    /// The process serving the embedding endpoint (with --model-url), when it runs on
    /// this machine: its resident memory is reported beside the engine's, and added to
    /// it in `total_rss_mib`.
    #[arg(long, value_name = "PID")]
    model_server_pid: Option<u32>,
    #[command(flatten)]
    model: ModelArgs,
}

/// Resident memory now and at peak, in MiB, from /proc (Linux).
pub(crate) fn rss_mib() -> (Option<f64>, Option<f64>) {
    proc_rss_mib("self")
}

/// A process's resident memory now and at peak, in MiB, from /proc/<pid>/status.
fn proc_rss_mib(pid: &str) -> (Option<f64>, Option<f64>) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
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

/// Paragraphs of real conversation text, 40 to 600 characters, deduplicated, in file order.
pub(crate) fn bench_corpus(questions: &[longmemeval::Question], want: usize) -> Vec<String> {
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

/// Runs `amber-eval bench`.
pub(crate) fn run(a: BenchArgs) -> anyhow::Result<()> {
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
    let mut opts = EngineOptions::new(&dir);
    opts.model = a.model.config()?;
    let engine = Engine::open(opts)?;
    let server = a.model_server_pid.map(|p| p.to_string());
    let server_rss = || server.as_deref().map(proc_rss_mib).unwrap_or_default();
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
            new += engine.writer()?.remember_batch(batch)?.iter().filter(|r| r.created).count();
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
        let (srss, speak) = server_rss();
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
            "model_server_rss_mib": srss,
            "model_server_peak_rss_mib": speak,
            "total_rss_mib": rss.map(|r| r + srss.unwrap_or(0.0)),
        }));
    }
    pb.finish_and_clear();
    let t0 = Instant::now();
    let before = engine.stats();
    engine.writer()?.reindex()?;
    let rebuild = json!({
        "memories": max,
        "seconds": t0.elapsed().as_secs_f64(),
        "chunks_embedded": engine.stats().chunks_embedded - before.chunks_embedded,
    });
    let (rss, peak) = rss_mib();
    let (srss, speak) = server_rss();
    let report = json!({
        "benchmark": "amber engine, in process",
        "data_file": a.data,
        "model": engine.model_id(),
        "model_detail": model_report(&engine),
        "model_server_pid": a.model_server_pid,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "corpus": "LongMemEval turn paragraphs of 40-600 characters, deduplicated",
        "queries": "LongMemEval questions, top 10, hybrid, no filter",
        "sizes": results,
        "rebuild_from_cache": rebuild,
        "final_rss_mib": rss,
        "peak_rss_mib": peak,
        "model_server_final_rss_mib": srss,
        "model_server_peak_rss_mib": speak,
        "total_final_rss_mib": rss.map(|r| r + srss.unwrap_or(0.0)),
    });
    write_report(&report, a.out.as_deref())
}
