//! `amber ingest PATH…`: documents as sources, kept in step with their files.
//!
//! Folders are walked here (`amber_ipc::sources`: `.gitignore`, `.ignore` and git's
//! excludes honoured, hidden files and other types left out); the daemon reads each file,
//! cuts it and brings the scope's memories of it in step (`ingest` in docs/PROTOCOL.md).
//! With `--watch`, the folders are then watched (`amber_ipc::sources::watch`, the same
//! watch the daemon's `[sources]` runs) and each changed file brought in step once quiet.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use amber_ipc::Client;
use amber_ipc::protocol::{
    ErrorKind, IngestParams, IngestResult, IngestStatus, IngestedFile, MAX_INGEST_FILES, method,
};
use amber_ipc::sources::{self, BATCH, Root, Work, walk};
use anyhow::Context;
use clap::Args;

/// `amber ingest`.
#[derive(Args, Debug)]
pub(crate) struct IngestArgs {
    /// Files and folders to bring in. A folder is walked with .gitignore honoured.
    /// Types: Markdown (cut at headings), text (.txt .rst .adoc .org, README…) and source
    /// and config files (cut at blank lines); not lock, minified, data or binary files.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The scope to file into [default: the project of each PATH].
    #[arg(long)]
    scope: Option<String>,
    /// File them as `external` (a repository you have not read): never briefed nor
    /// interjected, only found by recall. What you name is otherwise yours (`person`),
    /// except files of another git repository inside it.
    #[arg(long)]
    external: bool,
    /// Keep secrets (keys, tokens, passwords) as they are in the files; by default they
    /// are redacted (yours to ask, not an agent's).
    #[arg(long)]
    keep_secrets: bool,
    /// Keep watching the paths and bring each changed file in step as it changes.
    #[arg(long)]
    watch: bool,
    /// With --watch: how long a file must be quiet before it is read (milliseconds).
    #[arg(long, default_value_t = 300, value_name = "MS")]
    debounce_ms: u64,
    /// Return once filed, without waiting for its chunks to be indexed (by default it
    /// waits for its own files alone, which the daemon indexes before other work).
    #[arg(long)]
    no_wait: bool,
}

/// An `ingest` call for a root: its project, the scope and trust asked for.
fn call_for(root: &Root, scope: &Option<amber_core::Scope>, args: &IngestArgs) -> IngestParams {
    IngestParams {
        cwd: Some(root.cwd().to_path_buf()),
        scope: scope.clone(),
        external: args.external,
        keep_secrets: args.keep_secrets,
        ..IngestParams::default()
    }
}

/// What one run did, summed.
#[derive(Default)]
struct Tally {
    files: BTreeMap<&'static str, usize>,
    added: usize,
    retired: usize,
    revived: usize,
    redacted: usize,
    external: usize,
    skipped: Vec<(String, String)>,
    scopes: Vec<String>,
    results: Vec<IngestedFile>,
    /// The seqs filed, by scope: what this run waits to see indexed.
    filed: crate::progress::Filed,
}

impl Tally {
    fn add(&mut self, r: IngestResult) {
        if !self.scopes.contains(&r.scope.to_string()) {
            self.scopes.push(r.scope.to_string());
        }
        for f in r.files {
            if let Some(seqs) = f.seqs {
                self.filed.add(&r.scope, seqs);
            }
            *self.files.entry(f.status.as_str()).or_default() += 1;
            self.added += f.added;
            self.retired += f.retired;
            self.revived += f.revived;
            self.redacted += f.redacted;
            if f.trust == Some(amber_core::origin::Trust::External) {
                self.external += 1;
            }
            if f.status == IngestStatus::Skipped {
                self.skipped.push((f.path.clone(), f.reason.clone().unwrap_or_default()));
            }
            self.results.push(f);
        }
    }

    fn done(&self) -> usize {
        self.files.values().sum()
    }
}

pub(crate) fn run(
    args: &IngestArgs,
    connect: &dyn Fn() -> anyhow::Result<Client>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let scope = args.scope.as_deref().map(str::parse).transpose().context("--scope")?;
    let mut roots = Vec::new();
    for p in &args.paths {
        let path = std::fs::canonicalize(p).with_context(|| format!("cannot read {}", p.display()))?;
        let meta = std::fs::metadata(&path).with_context(|| format!("cannot read {}", path.display()))?;
        roots.push(Root { dir: meta.is_dir(), path });
    }
    let mut client = connect()?;
    let mut tally = Tally::default();
    let mut known: HashSet<PathBuf> = HashSet::new();
    let progress = crate::progress::Progress::new(json);
    let mut total = 0;
    let walked: Vec<Vec<PathBuf>> = roots.iter().map(walk).collect();
    total += walked.iter().map(Vec::len).sum::<usize>();
    for (root, files) in roots.iter().zip(walked) {
        for batch in files.chunks(BATCH) {
            let p = IngestParams { files: batch.to_vec(), ..call_for(root, &scope, args) };
            tally.add(call(&mut client, &p)?);
            progress.line(&format!(
                "ingest: {}/{total} files, {} chunks filed, {} retired",
                tally.done(),
                tally.added,
                tally.retired
            ));
        }
        known.extend(files);
        if root.dir {
            let p = IngestParams { prune: Some(root.path.clone()), ..call_for(root, &scope, args) };
            tally.add(call(&mut client, &p)?);
        }
    }
    progress.finish();
    // Waits for what this run filed, not for another client's backlog (the daemon
    // indexes what is waited for first); nothing filed, nothing to wait for.
    if !args.no_wait {
        crate::progress::wait_filed(&mut client, &tally.filed, &progress)?;
    }
    report(&tally, json, args.watch)?;
    if args.watch {
        watch(args, &roots, scope, known, connect, json)?;
    }
    // Files that could not be read: done in part, exit status 2 (scripts see it).
    Ok(if tally.skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// One `ingest` call; `busy` (indexing far behind) is waited out.
fn call(client: &mut Client, p: &IngestParams) -> anyhow::Result<IngestResult> {
    debug_assert!(p.files.len() <= MAX_INGEST_FILES);
    let mut wait = Duration::from_millis(200);
    loop {
        match client.send::<method::Ingest>(p) {
            Err(e) if e.kind() == Some(ErrorKind::Busy) => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            other => return Ok(other?),
        }
    }
}

/// The summary; with `lines` (watching), JSON on one line, as each change after it is.
fn report(t: &Tally, json: bool, lines: bool) -> anyhow::Result<()> {
    let v = serde_json::json!({ "scopes": t.scopes, "files": t.results });
    if json && lines {
        outln!("{v}");
        return Ok(());
    } else if json {
        return crate::print_json(&v);
    }
    let counts: Vec<String> = t.files.iter().map(|(k, n)| format!("{n} {k}")).collect();
    outln!(
        "ingested {} files into {}: {}; {} chunks filed, {} retired{}{}",
        t.done(),
        t.scopes.join(", "),
        counts.join(", "),
        t.added,
        t.retired,
        if t.revived > 0 { format!(", {} back", t.revived) } else { String::new() },
        if t.redacted > 0 { format!(", {} secrets redacted", t.redacted) } else { String::new() },
    );
    if t.external > 0 {
        outln!(
            "{} files filed as external (another repository's, or --external): recall finds them, \
             nothing serves them unasked",
            t.external
        );
    }
    for (path, why) in t.skipped.iter().take(10) {
        outln!("  skipped {path}: {why}");
    }
    if t.skipped.len() > 10 {
        outln!("  … and {} more skipped (--json lists them)", t.skipped.len() - 10);
    }
    Ok(())
}

/// Watches the roots until interrupted, bringing each file in step once quiet
/// (`amber_ipc::sources::watch`), printing each change.
fn watch(
    args: &IngestArgs,
    roots: &[Root],
    scope: Option<amber_core::Scope>,
    known: HashSet<PathBuf>,
    connect: &dyn Fn() -> anyhow::Result<Client>,
    json: bool,
) -> anyhow::Result<()> {
    if !json {
        errln!("amber: watching {} path(s); Ctrl-C stops", roots.len());
    }
    let debounce = Duration::from_millis(args.debounce_ms.max(10));
    let mut client: Option<Client> = None;
    let mut one = |root: &Root, work: Work| -> anyhow::Result<Vec<IngestedFile>> {
        let p = match work {
            Work::Files(files) => IngestParams { files, ..call_for(root, &scope, args) },
            Work::Prune(dir) => IngestParams { prune: Some(dir), ..call_for(root, &scope, args) },
        };
        let result = match client.as_mut().map(|c| call(c, &p)) {
            Some(Ok(r)) => r,
            // The daemon restarted, or this is the first call: connect again.
            _ => {
                let mut c = connect()?;
                let r = call(&mut c, &p)?;
                client = Some(c);
                r
            }
        };
        for f in result
            .files
            .iter()
            .filter(|f| !matches!(f.status, IngestStatus::Unchanged | IngestStatus::Skipped))
        {
            if json {
                outln!("{}", serde_json::to_string(f)?);
            } else {
                outln!(
                    "{} {}: {} chunks filed, {} retired{}",
                    f.path,
                    f.status.as_str(),
                    f.added,
                    f.retired,
                    if f.revived > 0 { format!(", {} back", f.revived) } else { String::new() }
                );
            }
        }
        use std::io::Write;
        std::io::stdout().flush().ok();
        Ok(result.files)
    };
    sources::watch(roots, debounce, known, &|| false, |root, work| {
        one(root, work).map_err(|e| format!("{e:#}"))
    })
    .map_err(anyhow::Error::msg)
}
