//! `amber-eval backup-bench`: backup and restore at scale (docs/EXPORT.md), over the
//! product's own binaries. One private amberd files `--memories` paragraphs of a
//! LongMemEval file and indexes them; then, in order:
//! 1. write latency idle: one client files a memory at a time for `--seconds`;
//! 2. `amber backup` (the person's command) while the same client keeps writing: the
//!    backup's wall time and the write latencies during it, against idle;
//! 3. once indexing has caught up, a second backup of the quiet store;
//! 4. `amber restore` of that backup into an empty data directory: the wall time until a
//!    daemon serves it with its indexes rebuilt, and what it embedded (0 is the claim).
//!
//! With `--store DIR` (a store `amber-eval scale` grew, say) the daemon serves a copy of
//! that store instead of filing paragraphs.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use amber_ipc::Client;
use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use crate::cmd::cold_start::copy_dir;
use crate::cmd::node::{
    Binaries, Node, Timed, amber, dir_bytes, engine, fill, load_corpus, mib, rss_of, wait_indexed, writer,
};
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval backup-bench`.
#[derive(Args, Debug)]
pub(crate) struct BackupBenchArgs {
    /// A LongMemEval file: its turns' paragraphs become the memories.
    #[arg(long, required_unless_present = "store")]
    data: Option<PathBuf>,
    /// Serve a copy of this store instead of filling one (`--data` and `--memories`
    /// unused).
    #[arg(long, value_name = "DIR", conflicts_with = "data")]
    store: Option<PathBuf>,
    /// Memories in the store backed up.
    #[arg(long, default_value_t = 100_000)]
    memories: usize,
    /// Seconds of idle writes timed before the backup.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    #[command(flatten)]
    bins: Binaries,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(a: BackupBenchArgs) -> anyhow::Result<()> {
    let report = bench(&a)?;
    write_report(&report, a.out.as_deref())
}

/// Latency figures of a writer's remembers (none may have failed).
fn latencies(w: &Timed) -> anyhow::Result<Value> {
    if let Some(e) = &w.first_error {
        anyhow::bail!("{} writes failed: {e}", w.errors);
    }
    let mut ms = w.ms_between(f64::MIN, f64::MAX);
    ms.sort_by(f64::total_cmp);
    Ok(json!({
        "writes": ms.len(),
        "p50_ms": percentile(&ms, 0.50),
        "p95_ms": percentile(&ms, 0.95),
        "p99_ms": percentile(&ms, 0.99),
        "max_ms": ms.last(),
    }))
}

fn bench(a: &BackupBenchArgs) -> anyhow::Result<Value> {
    let started_at = chrono::Utc::now().to_rfc3339();
    let amberd = a.bins.amberd()?;
    let amber_exe = a.bins.amber()?;
    let tmp = tempfile::tempdir()?;
    // The store: filled and indexed, or a copy of one.
    let (mut node, mut c, filled, fill_seconds) = match (&a.store, &a.data) {
        (Some(store), _) => {
            eprintln!("backup-bench: a copy of {} under {}", store.display(), tmp.path().display());
            copy_dir(store, &tmp.path().join("s").join("data"))?;
            let node = Node::new("S", &amberd, &tmp.path().join("s"), None)?;
            let mut c = node.client()?;
            let t = Instant::now();
            let filled = wait_indexed(&mut c)?;
            (node, c, filled, t.elapsed().as_secs_f64())
        }
        (None, Some(data)) => {
            let (corpus, _) = load_corpus(data, a.memories)?;
            eprintln!("backup-bench: {} memories under {}", a.memories, tmp.path().display());
            let node = Node::new("S", &amberd, &tmp.path().join("s"), None)?;
            let mut c = node.client()?;
            let (filled, fill_seconds) = fill(&mut c, &corpus, "backup-bench")?;
            (node, c, filled, fill_seconds)
        }
        (None, None) => anyhow::bail!("--data or --store is needed"),
    };

    // Idle writes, then writes during a backup.
    let stop = Arc::new(AtomicBool::new(false));
    let w = writer(node.socket.clone(), stop.clone(), Instant::now(), None, "backup-bench idle");
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    stop.store(true, Ordering::Relaxed);
    let idle = w.join().map_err(|_| anyhow::anyhow!("the idle writer panicked"))??;

    let stop = Arc::new(AtomicBool::new(false));
    let w = writer(node.socket.clone(), stop.clone(), Instant::now(), None, "backup-bench during");
    std::thread::sleep(Duration::from_millis(500));
    let busy_file = tmp.path().join("busy.backup");
    let t = Instant::now();
    let said = amber(&amber_exe, &node.root, &["--json", "backup", busy_file.to_str().context("path")?])?;
    let busy_seconds = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let during = w.join().map_err(|_| anyhow::anyhow!("the writer panicked"))??;
    let busy_stats: Value = serde_json::from_str(&said)?;

    // A backup of the quiet, indexed store.
    let quiet = wait_indexed(&mut c)?;
    let quiet_file = tmp.path().join("quiet.backup");
    let t = Instant::now();
    let said = amber(&amber_exe, &node.root, &["--json", "backup", quiet_file.to_str().context("path")?])?;
    let quiet_seconds = t.elapsed().as_secs_f64();
    let quiet_stats: Value = serde_json::from_str(&said)?;
    let source_rss = node.pid().and_then(rss_of);
    let source_data_mib = mib(dir_bytes(&node.data));
    drop(c);
    node.stop()?;

    // Restored into an empty data directory, until it serves with its indexes rebuilt.
    let r_root = tmp.path().join("r");
    std::fs::create_dir_all(&r_root)?;
    let t = Instant::now();
    amber(&amber_exe, &r_root, &["restore", quiet_file.to_str().context("path")?])?;
    let restore_seconds = t.elapsed().as_secs_f64();
    let mut rc = Client::connect(&r_root.join("run").join("amber.sock"))?;
    let restored = engine(&mut rc)?;
    let _ = rc.shutdown();

    let idle_l = latencies(&idle)?;
    let during_l = latencies(&during)?;
    let ratio = |k: &str| match (during_l[k].as_f64(), idle_l[k].as_f64()) {
        (Some(d), Some(i)) if i > 0.0 => json!(d / i),
        _ => Value::Null,
    };
    let report = json!({
        "benchmark": "backup and restore: SQLite's online backup while a client writes, and a restore to a serving daemon",
        "started_at": started_at,
        "finished_at": chrono::Utc::now().to_rfc3339(),
        "data_file": a.data,
        "store": a.store,
        "memories": filled["memories"],
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "fill": { "seconds": fill_seconds, "memories": filled["memories"], "vectors": filled["vectors"],
                  "chunks_embedded": filled["stats"]["chunks_embedded"] },
        "source": { "data_mib": source_data_mib, "rss_mib": source_rss, "memories_at_quiet_backup": quiet["memories"] },
        "writes_idle": idle_l,
        "writes_during_backup": during_l,
        "during_over_idle": { "p50": ratio("p50_ms"), "p99": ratio("p99_ms") },
        "backup_during_writes": { "seconds": busy_seconds, "stats": busy_stats },
        "backup_quiet": { "seconds": quiet_seconds, "stats": quiet_stats,
                          "mib": quiet_stats["bytes"].as_f64().map(|b| b / 1048576.0) },
        "restore": {
            "seconds_to_serving_indexed": restore_seconds,
            "memories": restored["memories"],
            "vectors": restored["vectors"],
            "chunks_embedded": restored["stats"]["chunks_embedded"],
            "chunks_from_cache": restored["stats"]["chunks_from_cache"],
        },
    });
    eprintln!(
        "backup-bench: backup {busy_seconds:.1} s under writes, {quiet_seconds:.1} s quiet; write p50 {} -> {} ms, p99 {} -> {} ms; restore {restore_seconds:.1} s, {} chunks embedded",
        idle_l["p50_ms"],
        during_l["p50_ms"],
        idle_l["p99_ms"],
        during_l["p99_ms"],
        restored["stats"]["chunks_embedded"]
    );
    Ok(report)
}
