//! `amber-eval fairness`: does one client's flood of writes take the daemon from the
//! others? One honest client recalls in a closed loop for `--seconds` with the daemon
//! idle, then again while `--flooders` connections each send `remember_batch` of
//! `--batch` new memories as fast as they are answered (20 ms after a `busy`). Reported:
//! the honest client's p50/p99 in both phases and their ratios (measured in the same
//! run), how many of its recalls answered `fresh: false` (not waiting for the flood's
//! indexing), the flood's memories/s and errors, and the daemon's resident memory.
//!
//! Then (unless `--huge-kib 0`) one huge memory: a client files `--huge-kib` KiB of
//! distinct words in one `remember` (the content cap is 1 MiB), and while it is indexed
//! the honest client alternates a recall and a `session_start` (left to idle out). Reported:
//! how long the huge memory took to index, and the honest calls' latencies meanwhile.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use amber_core::NewMemory;
use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use super::load::rss_of;
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval fairness`.
#[derive(Args, Debug)]
pub(crate) struct FairnessArgs {
    /// The daemon's socket [default: as `amber` finds it]. It should be a scratch daemon:
    /// the flood files thousands of memories in scope `fairness/run<pid>`.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Flooding connections.
    #[arg(long, default_value_t = 4)]
    flooders: usize,
    /// Memories per `remember_batch` of a flooder.
    #[arg(long, default_value_t = 50)]
    batch: usize,
    /// Seconds per phase.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// Memories filed before the idle phase, so recall searches something.
    #[arg(long, default_value_t = 500)]
    seed: usize,
    /// The huge memory's size in KiB (0: no huge-memory phase).
    #[arg(long, default_value_t = 1000)]
    huge_kib: usize,
    /// The longest the huge-memory phase runs (it ends when the memory is indexed).
    #[arg(long, default_value_t = 60.0)]
    huge_seconds: f64,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

const QUERIES: &[&str] = &[
    "which port does the staging database use?",
    "how do I rotate the deploy key?",
    "where does the CI cache live?",
    "what was the cause of the outage in April?",
    "who leads the payments project now?",
];

const TOPICS: &[&str] = &[
    "the staging database",
    "the deploy key",
    "the CI cache",
    "the April outage",
    "the payments project",
    "the release train",
    "the on-call rota",
    "the nightly job",
    "the VPN",
    "the billing export",
];

fn note(run: u64, who: &str, i: usize) -> String {
    format!(
        "{who} note {i} of run {run}: {} changed on day {} after review {}",
        TOPICS[i % TOPICS.len()],
        i % 31,
        i / 31
    )
}

/// One honest recall (top 10, the `i`th query), tallied: its latency (ms) into `lat`
/// and whether it was not fresh into `stale`, or an error into `errors`.
fn recall_once(c: &mut Client, i: usize, lat: &mut Vec<f64>, stale: &mut u64, errors: &mut u64) {
    let mut p = RecallParams::new(QUERIES[i % QUERIES.len()]);
    p.k = Some(10);
    let t = Instant::now();
    match c.recall(&p) {
        Ok(r) => {
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
            *stale += u64::from(!r.fresh);
        }
        Err(_) => *errors += 1,
    }
}

/// The honest client's recalls until `stop`: latencies (ms) and how many were not fresh.
fn honest(
    socket: &std::path::Path,
    stop: &AtomicBool,
    deadline: Instant,
) -> anyhow::Result<(Vec<f64>, u64, u64)> {
    let mut c = Client::connect(socket)?;
    let (mut lat, mut stale, mut errors) = (Vec::new(), 0u64, 0u64);
    let mut i = 0usize;
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        recall_once(&mut c, i, &mut lat, &mut stale, &mut errors);
        i += 1;
    }
    lat.sort_by(f64::total_cmp);
    Ok((lat, stale, errors))
}

fn summary(lat: &[f64], stale: u64, errors: u64) -> Value {
    json!({
        "recalls": lat.len(),
        "ms_p50": percentile(lat, 0.50),
        "ms_p90": percentile(lat, 0.90),
        "ms_p99": percentile(lat, 0.99),
        "ms_max": lat.last(),
        "not_fresh": stale,
        "errors": errors,
    })
}

/// Runs `amber-eval fairness`.
pub(crate) fn run(a: FairnessArgs) -> anyhow::Result<()> {
    let out = a.out.clone();
    let report = measure(a)?;
    write_report(&report, out.as_deref())
}

fn measure(a: FairnessArgs) -> anyhow::Result<Value> {
    let socket = match &a.socket {
        Some(s) => s.clone(),
        None => amber_ipc::Config::resolve(None, None, None)?.socket_path(),
    };
    let mut c = Client::connect(&socket).context("is amberd running? (`amber daemon start`)")?;
    let run = std::process::id() as u64;
    let scope: amber_core::Scope = format!("fairness/run{run}").parse()?;
    // The seed, then wait until it is indexed (a fresh recall waits for it).
    for chunk in (0..a.seed).collect::<Vec<_>>().chunks(100) {
        let batch =
            chunk.iter().map(|&i| NewMemory::new(note(run, "seed", i)).in_scope(scope.clone())).collect();
        c.remember_batch(batch)?;
    }
    let mut warm = RecallParams::new(QUERIES[0]);
    warm.fresh = Some(true);
    c.recall(&warm)?;
    let pid = c.status()?.pid;
    let rss_idle = rss_of(pid);

    eprintln!("fairness: idle, {}s", a.seconds);
    let never = AtomicBool::new(false);
    let (idle, idle_stale, idle_err) =
        honest(&socket, &never, Instant::now() + Duration::from_secs_f64(a.seconds))?;

    eprintln!("fairness: {} flooders of {} memories per batch, {}s", a.flooders, a.batch, a.seconds);
    let stop = AtomicBool::new(false);
    let filed = AtomicU64::new(0);
    let errors = Mutex::new(BTreeMap::<String, u64>::new());
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(a.seconds);
    let rss_peak = Mutex::new(rss_idle);
    let honest_result = std::thread::scope(|s| {
        for f in 0..a.flooders {
            let (stop, filed, errors, scope, socket) = (&stop, &filed, &errors, &scope, &socket);
            s.spawn(move || {
                let Ok(mut fc) = Client::connect(socket) else { return };
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let batch: Vec<NewMemory> = (0..a.batch)
                        .map(|j| {
                            NewMemory::new(note(run, &format!("flood{f}"), i * a.batch + j))
                                .in_scope(scope.clone())
                        })
                        .collect();
                    match fc.remember_batch(batch) {
                        Ok(_) => {
                            filed.fetch_add(a.batch as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            let kind =
                                e.kind().map(|k| k.as_str().to_string()).unwrap_or_else(|| e.to_string());
                            *errors.lock().unwrap().entry(kind).or_default() += 1;
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                    i += 1;
                }
            });
        }
        let (rss_peak, stop) = (&rss_peak, &stop);
        s.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let r = rss_of(pid);
                let mut peak = rss_peak.lock().unwrap();
                if r > *peak {
                    *peak = r;
                }
                drop(peak);
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        let r = honest(&socket, &AtomicBool::new(false), deadline);
        stop.store(true, Ordering::Relaxed);
        r
    });
    let wall = started.elapsed().as_secs_f64();
    let (flood, flood_stale, flood_err) = honest_result?;
    // Let the flood's backlog drain before the next phase.
    let mut fresh = RecallParams::new(QUERIES[0]);
    fresh.fresh = Some(true);
    while !c.recall(&fresh)?.fresh {}
    let huge =
        if a.huge_kib > 0 { Some(huge_phase(&socket, &scope, a.huge_kib, a.huge_seconds)?) } else { None };
    let ratio = |q: f64| -> Option<f64> { Some(percentile(&flood, q)? / percentile(&idle, q)?) };
    let status = c.status()?;
    Ok(json!({
        "benchmark": "one honest client's recall (top 10, fresh by default) idle and during a write flood",
        "socket": socket,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "seed_memories": a.seed,
        "idle": summary(&idle, idle_stale, idle_err),
        "flood": summary(&flood, flood_stale, flood_err),
        "p50_ratio": ratio(0.50),
        "p99_ratio": ratio(0.99),
        "flooders": a.flooders,
        "batch": a.batch,
        "flood_seconds": wall,
        "flood_memories_filed": filed.load(Ordering::Relaxed),
        "flood_memories_per_second": filed.load(Ordering::Relaxed) as f64 / wall,
        "flood_errors": errors.into_inner().unwrap(),
        "daemon_rss_mib_idle": rss_idle,
        "daemon_rss_mib_peak": rss_peak.into_inner().unwrap(),
        "memories_at_end": status.engine["memories"],
        "huge": huge,
    }))
}

/// About `kib` KiB of words that repeat rarely (syllables drawn by a fixed LCG): many
/// distinct terms for BM25 and about a thousand chunks per MiB to embed.
fn distinct_words(kib: usize) -> String {
    const SYL: &[&str] = &[
        "ka", "be", "mo", "ru", "ti", "sa", "lo", "ne", "pi", "du", "fa", "ge", "ho", "ji", "ku", "le", "mi",
        "no", "po", "qua", "re", "si", "to", "vu", "wa", "xe", "yo", "ze",
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = String::with_capacity(kib * 1024 + 16);
    while out.len() < kib * 1024 - 16 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        for k in 0..(2 + (x >> 60) % 3) {
            out.push_str(SYL[((x >> (8 * k + 8)) % SYL.len() as u64) as usize]);
        }
        out.push(' ');
    }
    out
}

/// One huge memory filed and indexed while the honest client recalls and starts sessions.
fn huge_phase(
    socket: &std::path::Path,
    scope: &amber_core::Scope,
    kib: usize,
    seconds: f64,
) -> anyhow::Result<Value> {
    eprintln!("fairness: one memory of {kib} KiB, up to {seconds}s of its indexing");
    let mut c = Client::connect(socket)?;
    let mut h = Client::connect(socket)?;
    let t0 = Instant::now();
    c.remember(&NewMemory::new(distinct_words(kib)).in_scope(scope.clone()))?;
    let filed_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let indexed = |c: &mut Client| -> anyhow::Result<bool> {
        let e = c.status()?.engine;
        Ok(e["indexed_through"].as_u64() >= e["committed_through"].as_u64())
    };
    let deadline = t0 + Duration::from_secs_f64(seconds);
    let (mut recalls, mut starts, mut stale, mut errors) = (Vec::new(), Vec::new(), 0u64, 0u64);
    let mut i = 0usize;
    let mut index_seconds = None;
    while Instant::now() < deadline {
        if indexed(&mut c)? {
            index_seconds = Some(t0.elapsed().as_secs_f64());
            break;
        }
        recall_once(&mut h, i, &mut recalls, &mut stale, &mut errors);
        let t = Instant::now();
        let started = h.call_value(
            "session_start",
            json!({ "agent": "fairness", "scope": scope.as_str(), "prompt": QUERIES[i % QUERIES.len()] }),
        );
        match started {
            // Left to idle out: ending one waits for indexing to curate it.
            Ok(_) => starts.push(t.elapsed().as_secs_f64() * 1000.0),
            Err(_) => errors += 1,
        }
        i += 1;
    }
    recalls.sort_by(f64::total_cmp);
    starts.sort_by(f64::total_cmp);
    Ok(json!({
        "kib": kib,
        "remember_ms": filed_ms,
        "indexed_within_seconds": index_seconds,
        "recall": summary(&recalls, stale, errors),
        "session_start": summary(&starts, 0, 0),
    }))
}
