//! `amber-eval ingest` (issue 30): documents as sources, measured through the real
//! `amber` command and a scratch daemon it starts.
//!
//! 1. A documentation tree (`--docs`, e.g. Node.js's API docs from Debian's `nodejs`
//!    package, or the docs inside an npm or PyPI package) is copied into a scratch project
//!    and ingested: files, chunks and bytes per second, to filed (`--no-wait`) and to
//!    indexed (findable by recall), after the daemon and its model are warm.
//! 2. The same tree again, unchanged: how long nothing takes.
//! 3. `amber ingest --watch`: `--edits` saves (alternately a write in place and a
//!    temporary file renamed over) each adding a sentence with a new word; the delay from
//!    the save to the first recall that finds it (polled every 25 ms on the socket).
//! 4. `--watch-files` small files watched (after their own ingest): the CPU the watcher
//!    and the daemon use over `--idle-seconds` with nothing changing.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use amber_ipc::Client;
use amber_ipc::protocol::RecallParams;
use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use crate::common::{percentile, write_report};

/// Arguments of `amber-eval ingest`.
#[derive(Args, Debug)]
pub(crate) struct IngestArgs {
    /// The documentation tree to ingest (copied first; the original is not touched).
    #[arg(long, value_name = "DIR")]
    docs: PathBuf,
    /// The `amber` binary [default: the one beside this binary].
    #[arg(long, value_name = "PATH")]
    amber: Option<PathBuf>,
    /// Saves measured under --watch.
    #[arg(long, default_value_t = 10)]
    edits: usize,
    /// Files watched in the idle phase (0: no idle phase).
    #[arg(long, default_value_t = 10_000)]
    watch_files: usize,
    /// Seconds the idle phase measures.
    #[arg(long, default_value_t = 60.0)]
    idle_seconds: f64,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// A scratch daemon's paths and the `amber` command run in them.
pub(crate) struct Scratch {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) amber: PathBuf,
}

impl Scratch {
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let d = self.dir.path();
        let mut c = Command::new(&self.amber);
        c.arg("--data-dir")
            .arg(d.join("data"))
            .arg("--socket")
            .arg(d.join("amber.sock"))
            .args(args)
            .env("AMBER_STATE_DIR", d.join("state"))
            .env("AMBER_CONFIG", d.join("config.toml"))
            .env_remove("AMBER_NO_START");
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> anyhow::Result<Value> {
        let o = self.cmd(args).output()?;
        if !o.status.success() {
            bail!("amber {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
        Ok(serde_json::from_slice(&o.stdout).unwrap_or(Value::Null))
    }

    pub(crate) fn client(&self) -> anyhow::Result<Client> {
        Ok(Client::connect(&self.dir.path().join("amber.sock"))?)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.cmd(&["daemon", "stop"]).output();
    }
}

pub(crate) fn run(a: IngestArgs) -> anyhow::Result<()> {
    let amber = match &a.amber {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("amber"),
    };
    let s = Scratch { dir: tempfile::tempdir()?, amber };
    let proj = s.dir.path().join("proj");
    std::fs::create_dir_all(proj.join(".git"))?;
    let docs = proj.join("docs");
    copy_tree(&a.docs, &docs).with_context(|| format!("copying {}", a.docs.display()))?;
    let (files, bytes) = tree_size(&docs)?;
    // A warm daemon: started, its model loaded by one recall.
    s.run(&["--json", "status"])?;
    s.run(&["--json", "recall", "warm up", "--all-scopes"])?;

    let t = Instant::now();
    let filed = s.run(&["--json", "ingest", "--no-wait", docs.to_str().unwrap()])?;
    let to_filed = t.elapsed().as_secs_f64();
    let mut c = s.client()?;
    wait_indexed(&mut c)?;
    let to_indexed = t.elapsed().as_secs_f64();
    let chunks: u64 =
        filed["files"].as_array().map_or(0, |f| f.iter().filter_map(|x| x["added"].as_u64()).sum());
    let t = Instant::now();
    let again = s.run(&["--json", "ingest", docs.to_str().unwrap()])?;
    let unchanged_s = t.elapsed().as_secs_f64();
    let still =
        again["files"].as_array().map_or(0, |f| f.iter().filter(|x| x["status"] == "unchanged").count());
    eprintln!(
        "ingest: {files} files, {chunks} chunks, filed in {to_filed:.1} s, indexed in {to_indexed:.1} s"
    );

    let delays = watch_delays(&s, &docs, a.edits)?;
    let mut sorted = delays.clone();
    sorted.sort_by(f64::total_cmp);
    let idle = if a.watch_files > 0 { Some(idle_cpu(&s, a.watch_files, a.idle_seconds)?) } else { None };
    let report = json!({
        "bench": "ingest",
        "docs": a.docs.display().to_string(),
        "files": files,
        "bytes": bytes,
        "chunks": chunks,
        "to_filed_s": to_filed,
        "to_indexed_s": to_indexed,
        "filed_files_per_s": files as f64 / to_filed,
        "indexed_chunks_per_s": chunks as f64 / to_indexed,
        "indexed_kib_per_s": bytes as f64 / 1024.0 / to_indexed,
        "reingest_unchanged_s": unchanged_s,
        "reingest_unchanged_files": still,
        "save_to_findable_ms": {
            "edits": delays.len(),
            "p50": percentile(&sorted, 0.5),
            "max": sorted.last(),
            "all": delays,
        },
        "idle_watch": idle,
    });
    write_report(&report, a.out.as_deref())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        } else if t.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// Document files and their bytes under a folder.
fn tree_size(dir: &Path) -> std::io::Result<(u64, u64)> {
    let (mut n, mut b) = (0, 0);
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            let (n2, b2) = tree_size(&e.path())?;
            n += n2;
            b += b2;
        } else if amber_tiers::document::kind_of(&e.path()).is_some() {
            n += 1;
            b += e.metadata()?.len();
        }
    }
    Ok((n, b))
}

pub(crate) fn wait_indexed(c: &mut Client) -> anyhow::Result<()> {
    let target = c.status()?.engine["committed_through"].as_u64().unwrap_or(0);
    while c.status()?.engine["indexed_through"].as_u64().unwrap_or(0) < target {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Starts `amber ingest --watch` on `dir` and waits for its first pass.
fn watcher(s: &Scratch, dir: &Path) -> anyhow::Result<Child> {
    let mut child = s
        .cmd(&["--json", "ingest", "--watch", "--no-wait", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut out = std::io::BufReader::new(child.stdout.take().context("watcher stdout")?);
    let mut first = String::new();
    out.read_line(&mut first)?;
    // Keep reading its reports so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in out.lines() {});
    Ok(child)
}

fn watch_delays(s: &Scratch, docs: &Path, edits: usize) -> anyhow::Result<Vec<f64>> {
    let mut targets: Vec<PathBuf> = walk_md(docs);
    targets.sort();
    if targets.is_empty() || edits == 0 {
        return Ok(Vec::new());
    }
    let mut child = watcher(s, docs)?;
    let mut c = s.client()?;
    let mut delays = Vec::new();
    for i in 0..edits {
        let path = &targets[(i * 7919) % targets.len()];
        let word = format!("zephyrine{i}quartz");
        let mut text = std::fs::read_to_string(path)?;
        text.push_str(&format!("\n\nThe release checklist now names {word} as its owner.\n"));
        let t = Instant::now();
        if i % 2 == 0 {
            std::fs::write(path, &text)?;
        } else {
            let tmp = path.with_file_name(format!(".{}.tmp", i));
            std::fs::write(&tmp, &text)?;
            std::fs::rename(&tmp, path)?;
        }
        let found = loop {
            let mut p = RecallParams::new(word.clone());
            p.k = Some(3);
            p.fresh = Some(false);
            let hits = c.recall(&p)?.hits;
            if hits.iter().any(|h| h.memory.content.contains(&word)) {
                break Some(t.elapsed());
            }
            if t.elapsed() > Duration::from_secs(60) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        match found {
            Some(d) => delays.push(d.as_secs_f64() * 1000.0),
            None => bail!("edit {i} of {} was not findable within 60 s", path.display()),
        }
    }
    child.kill().ok();
    child.wait().ok();
    Ok(delays)
}

fn walk_md(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_md(&p));
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

/// CPU seconds (user + system) a process has used, from /proc.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let rest = stat.rsplit_once(')').context("stat")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>()? + f[12].parse::<f64>()?;
    Ok(ticks / 100.0)
}

fn idle_cpu(s: &Scratch, n: usize, seconds: f64) -> anyhow::Result<Value> {
    let dir = s.dir.path().join("proj").join("notes");
    for i in 0..n {
        let sub = dir.join(format!("d{:03}", i / 100));
        std::fs::create_dir_all(&sub)?;
        std::fs::write(
            sub.join(format!("n{i:05}.md")),
            format!("Note {i}: shelf {} holds box {}.\n", i % 97, i),
        )?;
    }
    let t = Instant::now();
    let child = watcher(s, &dir)?;
    let first_pass = t.elapsed().as_secs_f64();
    let mut c = s.client()?;
    wait_indexed(&mut c)?;
    let daemon = c.status()?.pid;
    std::thread::sleep(Duration::from_secs(2));
    let (w0, d0) = (cpu_seconds(child.id())?, cpu_seconds(daemon)?);
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let wall = t.elapsed().as_secs_f64();
    let (w1, d1) = (cpu_seconds(child.id())?, cpu_seconds(daemon)?);
    let mut child = child;
    child.kill().ok();
    child.wait().ok();
    Ok(json!({
        "files": n,
        "first_pass_s": first_pass,
        "seconds": wall,
        "watcher_cpu_s": w1 - w0,
        "watcher_cpu_percent": (w1 - w0) / wall * 100.0,
        "daemon_cpu_s": d1 - d0,
        "daemon_cpu_percent": (d1 - d0) / wall * 100.0,
    }))
}
