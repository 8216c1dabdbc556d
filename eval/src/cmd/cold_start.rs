//! `amber-eval cold-start` (issue 48): how long a session's start waits when the daemon
//! is not running, as a hook that starts it sees it. Per run: amberd is spawned on a
//! copy of a bench store, and a client polls its socket and asks `session_start` with a
//! prompt as soon as it answers; the time from the spawn to that briefing is the cold
//! figure. Then a second session starts on the warm daemon (the warm figure), and the
//! daemon is shut down. The store's files stay in the page cache between runs (the
//! person's machine used them recently); the process, its model and its indexes do not.
//! A first start, not counted, settles the copy (the model's calibration kept, an older
//! schema migrated), as a store in use is settled.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use amber_ipc::Client;
use amber_ipc::protocol::SessionStartParams;
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use crate::cmd::load::rss_of;
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval cold-start`.
#[derive(Args, Debug)]
pub(crate) struct ColdStartArgs {
    /// A bench store (`amber-eval bench --store DIR`); it is copied, never changed.
    #[arg(long, value_name = "DIR")]
    store: PathBuf,
    /// The scope the sessions start in (the bench store files everything in `bench`).
    #[arg(long, default_value = "bench")]
    scope: String,
    /// Cold starts to time.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// The amberd binary [default: the amberd next to this program].
    #[arg(long, value_name = "PATH")]
    amberd: Option<PathBuf>,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Opening prompts, one per run (in turn).
const PROMPTS: &[&str] = &[
    "what did I say about my sister's wedding?",
    "which book was I reading on vacation?",
    "how long did the flight to Tokyo take?",
    "what restaurant did I recommend last week?",
    "when did we switch the build to release mode?",
];

/// How long a start may take before the run is counted failed.
const GIVE_UP: Duration = Duration::from_secs(60);

/// Copies a directory tree (a store) file by file.
pub(crate) fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &dest)?;
        } else {
            std::fs::copy(e.path(), &dest)?;
        }
    }
    Ok(())
}

/// One cold start: ms to the briefing, to amberd's ready line and of a warm start, items
/// briefed, RSS in MiB after, the store's memories.
fn one(amberd: &Path, root: &Path, scope: &str, prompt: &str, run: usize) -> anyhow::Result<Value> {
    let socket = root.join("run").join("amber.sock");
    let t0 = Instant::now();
    let mut child =
        crate::cmd::node::amberd_command(amberd, root, &root.join("data"), &socket, "no-config.toml")
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", amberd.display()))?;
    let stdout = child.stdout.take().context("amberd's stdout")?;
    let ready = std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        (t0.elapsed().as_secs_f64() * 1000.0, line)
    });
    let params = |p: &str, key: String| -> SessionStartParams {
        serde_json::from_value(json!({ "agent": "cold-start", "prompt": p, "scope": scope, "key": key }))
            .expect("session_start params")
    };
    // As a hook does: try the socket until it answers.
    let (cold_ms, items) = loop {
        if t0.elapsed() > GIVE_UP {
            let _ = child.kill();
            bail!("amberd did not answer within {GIVE_UP:?}");
        }
        if let Ok(mut c) = Client::connect(&socket) {
            let r = c.session_start(&params(prompt, format!("cold-{run}")))?;
            break (t0.elapsed().as_secs_f64() * 1000.0, r.briefing.items.len());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let (ready_ms, line) = ready.join().map_err(|_| anyhow::anyhow!("the stdout reader panicked"))?;
    if !line.starts_with("amberd ready on ") {
        bail!("amberd's first line: {line:?}");
    }
    let mut c = Client::connect(&socket)?;
    let t = Instant::now();
    let warm = c.session_start(&params(PROMPTS[(run + 1) % PROMPTS.len()], format!("warm-{run}")))?;
    let warm_ms = t.elapsed().as_secs_f64() * 1000.0;
    let rss = rss_of(child.id());
    let memories = c.status()?.engine["memories"].clone();
    let _ = c.shutdown();
    child.wait()?;
    Ok(json!({
        "cold_ms": cold_ms, "ready_ms": ready_ms, "warm_ms": warm_ms,
        "items_cold": items, "items_warm": warm.briefing.items.len(), "rss_mib": rss, "memories": memories,
    }))
}

fn summary(runs: &[Value], key: &str) -> Value {
    let mut v: Vec<f64> = runs.iter().filter_map(|r| r[key].as_f64()).collect();
    v.sort_by(f64::total_cmp);
    json!({ "p50": percentile(&v, 0.5), "p90": percentile(&v, 0.9), "max": v.last() })
}

pub(crate) fn run(a: ColdStartArgs) -> anyhow::Result<()> {
    let amberd = match a.amberd {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name("amberd"),
    };
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    copy_dir(&a.store, &root.join("data"))?;
    // One start, not timed, settles the copy as use would have: a store that never
    // answered a recall has no calibration kept (its first recall measures it, 80 model
    // runs), and an older store is migrated once; neither belongs to every start.
    let settle = one(&amberd, root, &a.scope, PROMPTS[0], a.runs)?;
    eprintln!("cold-start settling (not counted): {settle}");
    let mut runs = Vec::new();
    for i in 0..a.runs {
        let r = one(&amberd, root, &a.scope, PROMPTS[i % PROMPTS.len()], i)?;
        eprintln!("cold-start {}/{}: {r}", i + 1, a.runs);
        runs.push(r);
    }
    let report = json!({
        "benchmark": "cold start: spawn amberd, poll its socket, session_start with a prompt",
        "store": a.store, "memories": runs.first().map(|r| r["memories"].clone()), "scope": a.scope,
        "cold_ms": summary(&runs, "cold_ms"),
        "ready_ms": summary(&runs, "ready_ms"),
        "warm_ms": summary(&runs, "warm_ms"),
        "settling_run": settle,
        "runs": runs,
    });
    write_report(&report, a.out.as_deref())
}
