//! `amber-eval load`: throughput and latency of a running daemon under N clients.
//!
//! For each client count, two phases of `--seconds` each: recall only, then remember
//! only. Every client has its own connection and sends its next request as soon as the
//! previous one is answered (closed loop), or 20 ms after a `busy`. Errors are counted by
//! kind, never hidden.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use amber_core::NewMemory;
use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use crate::common::{percentile, write_report};

/// Arguments of `amber-eval load`.
#[derive(Args, Debug)]
pub(crate) struct LoadArgs {
    /// The daemon's socket [default: as `amber` finds it].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Client counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    clients: Vec<usize>,
    /// Seconds per phase.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// A LongMemEval file whose questions become the recall queries [default: a built-in list].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Skip the remember phases (to keep a benchmark store unchanged).
    #[arg(long)]
    no_writes: bool,
    /// Make every recall's text unique (a client and request number appended), so the
    /// daemon's recent-question vectors never answer for the model.
    #[arg(long)]
    distinct: bool,
    /// Also measure the model alone, in this process, for `--seconds`: two instances of
    /// one thread each embedding distinct questions at once (the daemon's layout): the
    /// ceiling of recalls per second on this machine.
    #[arg(long)]
    model_ceiling: bool,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// How long a client waits after a `busy` answer.
const BUSY_BACKOFF: Duration = Duration::from_millis(20);

const BUILTIN_QUERIES: &[&str] = &[
    "where does the CI cache live?",
    "what did I say about my sister's wedding?",
    "which port does the staging database use?",
    "how long did the flight to Tokyo take?",
    "what is the name of the new project lead?",
    "when did we switch the build to release mode?",
    "what restaurant did I recommend last week?",
    "how do I rotate the deploy key?",
    "what was the cause of the outage in April?",
    "which book was I reading on vacation?",
];

/// Resident memory of a process, in MiB (Linux).
pub(crate) fn rss_of(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 =
        status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Recall,
    Remember,
}

fn phase(
    socket: &std::path::Path,
    clients: usize,
    seconds: f64,
    op: Op,
    queries: &[String],
    run: u64,
    distinct: bool,
) -> Value {
    let lat = Mutex::new(Vec::<f64>::new());
    let errors = Mutex::new(BTreeMap::<String, u64>::new());
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    std::thread::scope(|s| {
        for c in 0..clients {
            let (lat, errors) = (&lat, &errors);
            s.spawn(move || {
                let mut client = match Client::connect(socket) {
                    Ok(cl) => cl,
                    Err(e) => {
                        *errors.lock().unwrap().entry(format!("connect: {e}")).or_default() += 1;
                        return;
                    }
                };
                let mut mine = Vec::new();
                let mut i = 0usize;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let r = match op {
                        Op::Recall => {
                            let q = &queries[(c * 7 + i) % queries.len()];
                            let mut p = RecallParams::new(if distinct {
                                format!("{q} [{c}.{i}]")
                            } else {
                                q.clone()
                            });
                            p.k = Some(10);
                            client.recall(&p).map(|_| ())
                        }
                        Op::Remember => {
                            let text = format!(
                                "load run {run} client {c} note {i}: {}",
                                queries[(c + i) % queries.len()].trim_end_matches('?')
                            );
                            let m = NewMemory::new(text).in_scope(format!("load/run{run}").parse().unwrap());
                            client.remember(&m).map(|_| ())
                        }
                    };
                    match r {
                        Ok(()) => mine.push(t.elapsed().as_secs_f64() * 1000.0),
                        Err(e) => {
                            let kind =
                                e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| e.to_string());
                            *errors.lock().unwrap().entry(kind).or_default() += 1;
                            // As a well-behaved client does: back off before retrying.
                            if e.kind() == Some(amber_ipc::ErrorKind::Busy) {
                                std::thread::sleep(BUSY_BACKOFF);
                            }
                        }
                    }
                    i += 1;
                }
                lat.lock().unwrap().extend(mine);
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let mut lat = lat.into_inner().unwrap();
    lat.sort_by(f64::total_cmp);
    json!({
        "op": if op == Op::Recall { "recall" } else { "remember" },
        "clients": clients,
        "seconds": wall,
        "ok": lat.len(),
        "per_second": lat.len() as f64 / wall,
        "ms_p50": percentile(&lat, 0.50),
        "ms_p90": percentile(&lat, 0.90),
        "ms_p99": percentile(&lat, 0.99),
        "ms_max": lat.last(),
        "errors": errors.into_inner().unwrap(),
    })
}

/// Runs `amber-eval load`: the load phases, then the report.
pub(crate) fn run(a: LoadArgs) -> anyhow::Result<()> {
    let out = a.out.clone();
    let report = measure(a)?;
    write_report(&report, out.as_deref())
}

/// Runs the load phases; returns the report.
fn measure(a: LoadArgs) -> anyhow::Result<Value> {
    let socket = match &a.socket {
        Some(s) => s.clone(),
        None => amber_ipc::Config::resolve(None, None, None)?.socket_path(),
    };
    let mut c = Client::connect(&socket).context("is amberd running? (`amber daemon start`)")?;
    let before = c.status()?;
    let queries: Vec<String> = match &a.data {
        Some(p) => amber_eval::longmemeval::load(p)?.into_iter().map(|q| q.question).collect(),
        None => BUILTIN_QUERIES.iter().map(|s| s.to_string()).collect(),
    };
    let run = std::process::id() as u64;
    // Every recall phase first: a remember phase leaves indexing work behind it, which a
    // fresh recall would wait for.
    let mut phases = Vec::new();
    for &n in &a.clients {
        eprintln!("load: {n} clients, recall for {}s", a.seconds);
        phases.push(phase(&socket, n, a.seconds, Op::Recall, &queries, run, a.distinct));
    }
    let rss_after_recalls = rss_of(before.pid);
    if !a.no_writes {
        for &n in &a.clients {
            eprintln!("load: {n} clients, remember for {}s", a.seconds);
            phases.push(phase(&socket, n, a.seconds, Op::Remember, &queries, run, a.distinct));
        }
    }
    let after = c.status()?;
    let ceiling = if a.model_ceiling { Some(model_ceiling(&queries, a.seconds)?) } else { None };
    Ok(json!({
        "benchmark": "amberd under load: closed-loop clients on the local socket",
        "socket": socket,
        "memories_before": before.engine["memories"],
        "memories_after": after.engine["memories"],
        "model": before.engine["model"],
        "daemon_pid": after.pid,
        "daemon_rss_mib_after_recalls": rss_after_recalls,
        "daemon_rss_mib_at_end": rss_of(after.pid),
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "recall": "top 10, hybrid, fresh (waits for earlier writes to be indexed)",
        "distinct_queries": a.distinct,
        "phases": phases,
        "model_ceiling": ceiling,
    }))
}

/// The model alone: two single-threaded instances (as the daemon loads them) embedding
/// distinct questions at once for `seconds`; questions per second and per-question ms.
fn model_ceiling(queries: &[String], seconds: f64) -> anyhow::Result<Value> {
    use amber_engine::{ChunkConfig, Embedder, FastEmbedder, ModelPaths, default_amber_home};
    let paths = ModelPaths::under(&default_amber_home());
    let lat = Mutex::new(Vec::<f64>::new());
    // Both start once both are loaded.
    let loaded = std::sync::Barrier::new(2);
    std::thread::scope(|s| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (lat, paths, loaded) = (&lat, &paths, &loaded);
                s.spawn(move || -> anyhow::Result<()> {
                    let m = FastEmbedder::load_tuned(paths, ChunkConfig::default(), Some(1), false);
                    loaded.wait();
                    let mut m = m?;
                    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
                    let mut mine = Vec::new();
                    let mut i = 0;
                    while Instant::now() < deadline {
                        let q = format!("{} [{w}.{i}]", queries[(w * 7 + i) % queries.len()]);
                        let t = Instant::now();
                        m.embed_queries(&[q.as_str()])?;
                        mine.push(t.elapsed().as_secs_f64() * 1000.0);
                        i += 1;
                    }
                    lat.lock().unwrap().extend(mine);
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().map_err(|_| anyhow::anyhow!("a model thread panicked"))??;
        }
        Ok(())
    })?;
    let mut lat = lat.into_inner().unwrap();
    lat.sort_by(f64::total_cmp);
    Ok(json!({
        "layout": "two instances of one thread each, distinct questions, no daemon in the way",
        "questions": lat.len(),
        "per_second": lat.len() as f64 / seconds,
        "ms_p50": percentile(&lat, 0.50),
        "ms_p99": percentile(&lat, 0.99),
    }))
}
