//! `amber-eval lanes` (issue 45): bulk work never locks the person or the hooks out.
//! A scratch daemon ingests a generated documentation tree (`--files` files of
//! `--sections` sections each: 30,000 chunks by default) through the real `amber ingest`,
//! while, every `--every-ms`, three writers file one memory each:
//!
//! - the person: `amber remember` (the command line, the open lane);
//! - a hook: `amber hook claude-code PostToolUse` for a Write (captured through the hook
//!   door, the open lane; the hook always exits 0, so what counts is whether its capture
//!   is in the store at the end);
//! - another client: one `remember` on the socket (the single lane: it may be told
//!   `busy` while indexing is `max_index_backlog` behind).
//!
//! Every `--small-every` ticks, a small file elsewhere in the project is edited and
//! brought in with `amber ingest` (which waits for its own chunks to be indexed).
//!
//! Reported: each writer's attempts, refusals and p50/p99 latency, the time until the
//! person's note is found by meaning (a vector-only recall of its text), the small
//! ingests' time to done (and the backlog each found), the bulk's chunks and its rate to
//! filed and to indexed, and the deepest backlog seen.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use amber_core::NewMemory;
use anyhow::bail;
use clap::Args;
use serde_json::{Value, json};

use super::ingest::{Scratch, wait_indexed};
use crate::common::{percentile, write_report};

/// Arguments of `amber-eval lanes`.
#[derive(Args, Debug)]
pub(crate) struct LanesArgs {
    /// Files in the generated tree.
    #[arg(long, default_value_t = 300)]
    files: usize,
    /// Sections a file (each one chunk; at most 256 a file keeps them unfolded).
    #[arg(long, default_value_t = 100)]
    sections: usize,
    /// How often each of the three writers files one memory, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    every_ms: u64,
    /// Every this many ticks, a small file is edited and ingested beside the bulk.
    #[arg(long, default_value_t = 10)]
    small_every: usize,
    /// The `amber` binary [default: the one beside this binary].
    #[arg(long, value_name = "PATH")]
    amber: Option<PathBuf>,
    /// Write the results (JSON) here; they are also printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// One writer's attempts: latencies of those that went through, and refusals.
#[derive(Default)]
struct Tally {
    ms: Vec<f64>,
    refused: usize,
    errors: Vec<String>,
}

impl Tally {
    fn report(&mut self) -> Value {
        self.ms.sort_by(f64::total_cmp);
        json!({
            "attempts": self.ms.len() + self.refused + self.errors.len(),
            "ok": self.ms.len(),
            "refused_busy": self.refused,
            "other_errors": self.errors.iter().take(3).collect::<Vec<_>>(),
            "p50_ms": percentile(&self.ms, 0.5),
            "p99_ms": percentile(&self.ms, 0.99),
            "max_ms": self.ms.last(),
        })
    }
}

pub(crate) fn run(a: LanesArgs) -> anyhow::Result<()> {
    let amber = match &a.amber {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("amber"),
    };
    let s = Scratch { dir: tempfile::tempdir()?, amber };
    let proj = s.dir.path().join("proj");
    std::fs::create_dir_all(proj.join(".git"))?;
    let docs = proj.join("docs");
    std::fs::create_dir_all(&docs)?;
    for f in 0..a.files {
        let body: String = (0..a.sections)
            .map(|i| {
                format!("## Setting {f}-{i}\n\nThe service knob k{f}x{i} controls batch window {i} of module {f}.\n\n")
            })
            .collect();
        std::fs::write(docs.join(format!("module-{f}.md")), format!("# Module {f}\n\n{body}"))?;
    }
    s.run(&["--json", "status"])?;
    s.run(&["--json", "recall", "warm up", "--all-scopes"])?;
    let here = s.cmd(&["--json", "scope", "here"]).current_dir(&proj).output()?;
    let here: Value = serde_json::from_slice(&here.stdout).unwrap_or(Value::Null);
    let Some(scope) = here["scope"].as_str().map(str::to_string) else {
        bail!("no scope for {}: {here}", proj.display())
    };
    let mut c = s.client()?;
    let max_backlog = amber_ipc::Config::default().max_index_backlog;

    let t0 = Instant::now();
    let mut bulk = s
        .cmd(&["--json", "ingest", docs.to_str().unwrap()])
        .current_dir(&proj)
        .stdout(Stdio::piped())
        .spawn()?;
    let (mut person, mut hook, mut single) = (Tally::default(), Tally::default(), Tally::default());
    let (mut findable, mut small) = (Tally::default(), Tally::default());
    let mut small_behind = Vec::new();
    let small_file = proj.join("small.md");
    let mut deepest = 0u64;
    let mut hooked = Vec::new();
    let mut filed_s = None;
    let mut n = 0;
    let bulk_out = loop {
        if let Some(status) = bulk.try_wait()? {
            if !status.success() {
                bail!("amber ingest failed: {status}");
            }
            break bulk.wait_with_output()?;
        }
        let st = c.status()?;
        let behind = st.engine["committed_through"].as_u64().unwrap_or(0)
            - st.engine["indexed_through"]
                .as_u64()
                .unwrap_or(0)
                .min(st.engine["committed_through"].as_u64().unwrap_or(0));
        deepest = deepest.max(behind);
        if filed_s.is_none() && st.engine["memories"].as_u64().unwrap_or(0) as usize >= a.files * a.sections {
            filed_s = Some(t0.elapsed().as_secs_f64());
        }
        n += 1;
        // The person.
        let t = Instant::now();
        let o = s
            .cmd(&["--json", "remember", &format!("person note {n}: the lanes bench ran tick {n}")])
            .current_dir(&proj)
            .output()?;
        match o.status.success() {
            true => person.ms.push(t.elapsed().as_secs_f64() * 1e3),
            false if String::from_utf8_lossy(&o.stderr).contains("behind") => person.refused += 1,
            false => person.errors.push(String::from_utf8_lossy(&o.stderr).into_owned()),
        }
        if o.status.success() {
            let note = format!("person note {n}: the lanes bench ran tick {n}");
            match found_by_meaning(&mut c, &note, &scope, t)? {
                Some(ms) => findable.ms.push(ms),
                None => findable.errors.push("not found by meaning within 60 s".into()),
            }
        }
        // A small file edited and ingested beside the bulk.
        if a.small_every > 0 && n % a.small_every == 0 {
            std::fs::write(
                &small_file,
                format!(
                    "# Pager

## Rota {n}

The pager rota swaps at tick {n}.
"
                ),
            )?;
            small_behind.push(behind);
            let t = Instant::now();
            let o = s.cmd(&["--json", "ingest", small_file.to_str().unwrap()]).current_dir(&proj).output()?;
            match o.status.success() {
                true => small.ms.push(t.elapsed().as_secs_f64() * 1e3),
                false => small.errors.push(String::from_utf8_lossy(&o.stderr).into_owned()),
            }
        }
        // A hook: Claude Code's PostToolUse for a Write.
        let marker = format!("hookmark{n}q");
        let path = proj.join(format!("notes-{n}.md"));
        let payload = json!({
            "session_id": "lanes-bench", "cwd": proj, "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": { "file_path": path, "content": format!("# Note {n}\n\n{marker} written by the agent") },
            "tool_response": { "filePath": path },
        });
        let t = Instant::now();
        let mut h = s
            .cmd(&["hook", "claude-code", "PostToolUse"])
            .current_dir(&proj)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        std::io::Write::write_all(&mut h.stdin.take().expect("stdin"), payload.to_string().as_bytes())?;
        h.wait()?;
        hook.ms.push(t.elapsed().as_secs_f64() * 1e3);
        hooked.push(marker);
        // Another client: one memory on the socket.
        let t = Instant::now();
        match c.remember(
            &NewMemory::new(format!("client note {n}: tick {n} of the lanes bench")).in_scope(scope.parse()?),
        ) {
            Ok(_) => single.ms.push(t.elapsed().as_secs_f64() * 1e3),
            Err(e) if e.kind() == Some(amber_ipc::protocol::ErrorKind::Busy) => single.refused += 1,
            Err(e) => single.errors.push(e.to_string()),
        }
        std::thread::sleep(Duration::from_millis(a.every_ms));
    };
    let indexed_s = t0.elapsed().as_secs_f64();
    wait_indexed(&mut c)?;
    let report: Value = serde_json::from_slice(&bulk_out.stdout).unwrap_or(Value::Null);
    let chunks: u64 =
        report["files"].as_array().map_or(0, |f| f.iter().filter_map(|x| x["added"].as_u64()).sum());
    // A hook's capture that is not in the store was refused (the hook itself exits 0).
    let mut missing = 0;
    for m in &hooked {
        let mut p = amber_ipc::protocol::RecallParams::new(m.clone());
        p.mode = Some(amber_core::SearchMode::Bm25);
        p.scope = Some(scope.parse()?);
        p.archived = Some(true);
        if !c.recall(&p)?.hits.iter().any(|h| h.memory.content.contains(m.as_str())) {
            missing += 1;
        }
    }
    hook.refused = missing;
    hook.ms.truncate(hooked.len() - missing);
    let out = json!({
        "bench": "lanes",
        "files": a.files,
        "sections_per_file": a.sections,
        "bulk": {
            "chunks": chunks,
            "to_filed_s": filed_s,
            "to_indexed_s": indexed_s,
            "indexed_chunks_per_s": chunks as f64 / indexed_s,
        },
        "max_index_backlog": max_backlog,
        "deepest_backlog_seen": deepest,
        "person_remember": person.report(),
        "person_note_found_by_meaning": findable.report(),
        "small_ingest_to_indexed": small.report(),
        "small_ingest_backlog_found": small_behind,
        "hook_post_tool_use": hook.report(),
        "other_client_single_remember": single.report(),
    });
    write_report(&out, a.out.as_deref())
}

/// Milliseconds from `since` until a vector-only recall of `text` in `scope` finds it
/// (polled every 10 ms), or None after 60 s.
fn found_by_meaning(
    c: &mut amber_ipc::Client,
    text: &str,
    scope: &str,
    since: Instant,
) -> anyhow::Result<Option<f64>> {
    let mut p = amber_ipc::protocol::RecallParams::new(text.to_string());
    p.mode = Some(amber_core::SearchMode::Vector);
    p.scope = Some(scope.parse()?);
    p.k = Some(3);
    while since.elapsed() < Duration::from_secs(60) {
        if c.recall(&p)?.hits.iter().any(|h| h.memory.content == text) {
            return Ok(Some(since.elapsed().as_secs_f64() * 1e3));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(None)
}
