//! What every importer shares: the options, the report, and the two ways in — memories
//! filed by `remember_batch` (`external`, with the tool named in their origin) and
//! documents brought in step by `ingest` (chunked at headings, kept in step with their
//! files).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use amber_core::portable::ImportTally;
use amber_core::{NewMemory, Scope};
use amber_ipc::Client;
use amber_ipc::protocol::{
    ErrorKind, IngestParams, IngestResult, IngestStatus, RememberBatchParams, RememberBatchResult,
};
use amber_ipc::sources::BATCH;
use anyhow::Context;
use serde::Serialize;

use crate::progress::Progress;

/// Memories a `remember_batch` call carries (the daemon takes up to 1000).
const MEMORY_BATCH: usize = 200;

/// The formats `amber import --from` reads.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Amber's own export (`amber export`), JSON Lines.
    Amber,
    /// A folder of Markdown notes (or one note).
    Markdown,
    /// Claude Code's memory files for a project: CLAUDE.md, CLAUDE.local.md,
    /// .claude/rules, the auto memory under ~/.claude/projects/<project>/memory/, and the
    /// user's ~/.claude/CLAUDE.md (into `user`).
    ClaudeCode,
    /// Mem0's export: the JSON of `Memory.get_all` (`{"results": [...]}`) or a list.
    Mem0,
    /// A basic-memory project folder: observations as memories, relations as graph facts.
    BasicMemory,
}

impl Format {
    /// The name `--from` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Amber => "amber",
            Format::Markdown => "markdown",
            Format::ClaudeCode => "claude-code",
            Format::Mem0 => "mem0",
            Format::BasicMemory => "basic-memory",
        }
    }
}

/// How the person asked for it.
pub(crate) struct Options {
    /// `--scope`, when given.
    pub scope: Option<Scope>,
    /// `--trust person`: the person vouches for the content. Otherwise `external`.
    pub person: bool,
    /// `--json`: no progress line.
    pub json: bool,
}

/// What an import from another tool found and did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    /// The format read.
    pub from: &'static str,
    /// The scopes filed into.
    pub scopes: Vec<String>,
    /// The trust filed with: `external`, or `person` with `--trust person`.
    pub trust: &'static str,
    /// What the source holds, by kind (`memories`, `files`, `relations`).
    pub found: BTreeMap<String, u64>,
    /// Secrets replaced by `[REDACTED:<kind>]` before storing.
    pub redacted: u64,
    /// Filed, already there, skipped and why.
    #[serde(flatten)]
    pub tally: ImportTally,
}

impl Report {
    pub(crate) fn new(format: Format, opts: &Options) -> Report {
        Report {
            from: format.name(),
            trust: if opts.person { "person" } else { "external" },
            ..Report::default()
        }
    }

    /// Notes `n` things found in the source.
    pub(crate) fn found(&mut self, kind: &str, n: u64) {
        *self.found.entry(kind.to_string()).or_default() += n;
    }

    pub(crate) fn scope(&mut self, scope: &Scope) {
        let s = scope.to_string();
        if !self.scopes.contains(&s) {
            self.scopes.push(s);
        }
    }
}

/// Retries a call the daemon answered `busy` (its write queue full, or indexing far
/// behind), backing off up to 5 s.
pub(crate) fn retry_busy<T>(
    mut call: impl FnMut() -> Result<T, amber_ipc::ClientError>,
) -> Result<T, amber_ipc::ClientError> {
    let mut wait = Duration::from_millis(200);
    loop {
        match call() {
            Err(e) if e.kind() == Some(ErrorKind::Busy) => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            other => return other,
        }
    }
}

/// Files memories a batch at a time through `remember_batch`, `external` unless the
/// person vouched, with the tool (`import:mem0`) in their origin.
pub(crate) struct Filer<'a> {
    client: &'a mut Client,
    tool: String,
    external: bool,
    pending: Vec<(NewMemory, String)>,
    progress: Progress,
    /// Memories a source holds, for the progress line.
    pub total: usize,
}

impl<'a> Filer<'a> {
    pub(crate) fn new(client: &'a mut Client, format: Format, opts: &Options) -> Filer<'a> {
        Filer {
            client,
            tool: format!("import:{}", format.name()),
            external: !opts.person,
            pending: Vec::new(),
            progress: Progress::new(opts.json),
            total: 0,
        }
    }

    /// The connection, for calls besides filing (`kg_add`).
    pub(crate) fn client(&mut self) -> &mut Client {
        self.client
    }

    /// Queues one memory (`what` names it in the report: the source's id or place);
    /// files the queue when full.
    pub(crate) fn push(&mut self, m: NewMemory, what: String, report: &mut Report) -> anyhow::Result<()> {
        self.pending.push((m, what));
        if self.pending.len() >= MEMORY_BATCH {
            self.flush(report)?;
        }
        Ok(())
    }

    /// Files what is queued. A memory that would fail the batch (empty, too long, a bad
    /// field) is skipped with the reason, and so is one a person forgot in Amber: a
    /// forget wins over an import run again.
    pub(crate) fn flush(&mut self, report: &mut Report) -> anyhow::Result<()> {
        let mut memories = Vec::new();
        for (m, what) in std::mem::take(&mut self.pending) {
            if let Err(e) = m.validate() {
                report.tally.fail("memory", what, e.to_string());
                continue;
            }
            if self.forgotten(&m)? {
                report.tally.skip(
                    "memory",
                    what,
                    "forgotten in Amber: left forgotten (`amber unforget` brings it back)",
                );
                continue;
            }
            report.scope(&m.scope);
            memories.push(m);
        }
        if memories.is_empty() {
            return Ok(());
        }
        let p = RememberBatchParams {
            memories,
            allow_secrets: false,
            external: self.external,
            tool: Some(self.tool.clone()),
        };
        let client = &mut *self.client;
        let got: RememberBatchResult = retry_busy(|| client.remember_batch_with(&p))?;
        for r in got.results {
            if r.created {
                report.tally.add("memories");
                report.redacted += r.redacted as u64;
            } else {
                report.tally.had("memories");
            }
        }
        let done = report.tally.added_total() + report.tally.present.values().sum::<u64>();
        self.progress.line(&format!(
            "import: {done}/{} memories, {} new, {} skipped",
            self.total,
            report.tally.added_total(),
            report.tally.skipped.len()
        ));
        Ok(())
    }

    /// True when the memory's id names a forgotten memory: the id of its text as the
    /// daemon will store it, secrets redacted by the same rules.
    fn forgotten(&mut self, m: &NewMemory) -> anyhow::Result<bool> {
        let mut stored = m.clone();
        amber_tiers::redact::redact_memory(&mut stored);
        match self.client.get(&stored.id()) {
            Ok(r) => Ok(r.memory.forgotten_at.is_some()),
            Err(e) if e.kind() == Some(ErrorKind::NotFound) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Files the rest and clears the progress line.
    pub(crate) fn finish(&mut self, report: &mut Report) -> anyhow::Result<()> {
        self.flush(report)?;
        self.progress.finish();
        Ok(())
    }
}

/// Brings documents in step through `ingest`, [`BATCH`] files a call: `cwd` the folder
/// their labels are shown from, `prune` a folder whose deleted files' chunks are retired.
pub(crate) fn ingest(
    client: &mut Client,
    files: &[PathBuf],
    cwd: &Path,
    scope: &Scope,
    opts: &Options,
    prune: Option<&Path>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let progress = Progress::new(opts.json);
    report.scope(scope);
    let tool = format!("import:{}", report.from);
    let call = |client: &mut Client, files: Vec<PathBuf>, prune: Option<PathBuf>| {
        let p = IngestParams {
            files,
            prune,
            cwd: Some(cwd.to_path_buf()),
            scope: Some(scope.clone()),
            external: !opts.person,
            tool: Some(tool.clone()),
            keep_secrets: false,
        };
        retry_busy(|| client.call::<_, IngestResult>("ingest", &p)).context("ingest")
    };
    let mut done = 0;
    for batch in files.chunks(BATCH) {
        tally_files(&call(client, batch.to_vec(), None)?, report);
        done += batch.len();
        progress.line(&format!("import: {done}/{} files", files.len()));
    }
    if let Some(dir) = prune {
        tally_files(&call(client, Vec::new(), Some(dir.to_path_buf()))?, report);
    }
    progress.finish();
    Ok(())
}

/// An `ingest` result in the report: chunks filed, files unchanged, chunks retired (an
/// edited or deleted file), files skipped and why.
fn tally_files(r: &IngestResult, report: &mut Report) {
    for f in &r.files {
        for _ in 0..f.added {
            report.tally.add("chunks");
        }
        for _ in 0..f.retired {
            report.tally.add("retired chunks");
        }
        report.redacted += f.redacted as u64;
        match f.status {
            IngestStatus::Unchanged => report.tally.had("files"),
            IngestStatus::Skipped => {
                report.tally.fail("file", f.path.clone(), f.reason.clone().unwrap_or_default())
            }
            IngestStatus::New | IngestStatus::Changed | IngestStatus::Deleted => {}
        }
    }
}

/// Markdown files by extension (what `ingest` cuts at headings).
pub(crate) fn is_markdown(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(),
        Some("md" | "markdown" | "mdx")
    )
}

/// The Markdown files under a folder (`.gitignore` honoured, hidden files left out), or
/// the one file named.
pub(crate) fn markdown_files(path: &Path) -> anyhow::Result<(amber_ipc::sources::Root, Vec<PathBuf>)> {
    let root =
        amber_ipc::sources::Root::new(path).with_context(|| format!("cannot read {}", path.display()))?;
    let files = amber_ipc::sources::walk(&root).into_iter().filter(|p| is_markdown(p)).collect();
    Ok((root, files))
}
