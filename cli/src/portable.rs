//! `amber export`, `amber import`, `amber backup`, `amber restore`: a person's memory
//! taken elsewhere and brought back (docs/EXPORT.md).
//!
//! An export is JSON Lines: a header (`{"amber_export": 1, …}`), then the daemon's export
//! records page by page. An import reads a file line by line and sends its records in
//! order, a batch at a time; a line that does not parse is reported and left out. A backup
//! is SQLite's online backup, made by the daemon while it serves; a restore copies one
//! into an empty data directory (`amberd --restore`), then starts the daemon, which
//! rebuilds the indexes from the backup's embedding cache.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use amber_core::portable::{EXPORT_VERSION, ImportTally};
use amber_ipc::protocol::{BackupParams, ExportParams, ImportParams, method};
use amber_ipc::{Client, Config};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::progress::Progress;

/// Records an import sends a call.
const IMPORT_BATCH: usize = 500;

/// How long a call of long work (a page of import, a backup) may take.
const LONG_CALL: Duration = Duration::from_secs(30 * 60);

/// The commands.
#[derive(Subcommand, Debug)]
pub(crate) enum PortableCommand {
    /// Write memories, their standing, the graph, runs and sessions as JSON Lines
    /// (docs/EXPORT.md) to standard output or --out.
    Export(ExportArgs),
    /// Bring an export in: same ids and standing; importing twice changes nothing.
    Import(ImportArgs),
    /// A consistent copy of the whole store (SQLite's online backup, the embedding cache
    /// with it) into a new file, while the daemon serves.
    Backup {
        /// The new file.
        file: PathBuf,
    },
    /// Restore a backup into an empty data directory, then start the daemon on it.
    Restore {
        /// A file written by `amber backup`.
        file: PathBuf,
    },
}

/// Runs a command.
pub(crate) fn run(
    cmd: &PortableCommand,
    cfg: &Config,
    config_file: Option<&Path>,
    connect: &dyn Fn() -> anyhow::Result<Client>,
    json_mode: bool,
) -> anyhow::Result<ExitCode> {
    match cmd {
        PortableCommand::Export(args) => export(args, &mut connect()?, json_mode),
        PortableCommand::Import(args) => import(args, &mut connect()?, json_mode),
        PortableCommand::Backup { file } => backup(file, &mut connect()?, json_mode),
        PortableCommand::Restore { file } => restore(file, cfg, config_file, json_mode),
    }
}

/// `amber export`.
#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// One scope only (`user`, `project:…`, `team:…`).
    #[arg(long, conflicts_with = "all")]
    scope: Option<String>,
    /// Every scope (the default).
    #[arg(long)]
    all: bool,
    /// Only records made at or after this time: `YYYY-MM-DD`, RFC 3339, or Unix ms.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// The embedding cache too (every scope only), so an import needs no re-embedding.
    #[arg(long, conflicts_with = "scope")]
    embeddings: bool,
    /// Write to this new file (0600) instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `amber import`.
#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// An export (`amber export`), JSON Lines; `-` reads standard input. With --from,
    /// the other tool's file or folder (docs/IMPORT.md).
    #[arg(value_name = "PATH")]
    file: PathBuf,
    /// What PATH is: Amber's export, a Markdown folder, a Claude Code project (its
    /// CLAUDE.md files and auto memory; ~/.claude/CLAUDE.md goes to `user`), Mem0's
    /// get_all JSON, or a basic-memory project folder.
    #[arg(long, value_enum, default_value = "amber", value_name = "FORMAT")]
    from: crate::import::Format,
    /// Keep the trust each memory had where it was exported (your own export). Without
    /// it, imported memories are `external`: found by recall, never served unasked.
    #[arg(long)]
    keep_trust: bool,
    /// With --from: the scope to file into [default: the current directory's project;
    /// for claude-code, the project named].
    #[arg(long)]
    scope: Option<String>,
    /// With --from: `external` (the default: found by recall, never served unasked) or
    /// `person` (you vouch for it, as if you had typed it).
    #[arg(long, value_enum, default_value = "external")]
    trust: ImportTrust,
}

/// `--trust`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum ImportTrust {
    External,
    Person,
}

/// Parses `--since`.
fn parse_since(s: &str) -> anyhow::Result<i64> {
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight").and_utc().timestamp_millis());
    }
    bail!("--since {s:?}: give a date (2026-12-01), an RFC 3339 time or Unix milliseconds")
}

/// A new file, 0600, that must not exist.
fn new_private_file(path: &Path) -> anyhow::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
        .with_context(|| format!("cannot create {} (an export never overwrites a file)", path.display()))
}

/// `amber export`: the header, then every page.
fn export(args: &ExportArgs, client: &mut Client, json_mode: bool) -> anyhow::Result<ExitCode> {
    let scope =
        args.scope.as_deref().map(str::parse).transpose().map_err(|e| anyhow::anyhow!("--scope: {e}"))?;
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let model = client.status()?.engine["model"].as_str().map(str::to_string);
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(new_private_file(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let header = json!({
        "amber_export": EXPORT_VERSION,
        "amber": env!("CARGO_PKG_VERSION"),
        "created_at": amber_core::now_millis(),
        "scope": scope.as_ref().map(|s: &amber_core::Scope| s.to_string()),
        "since": since,
        "model": model,
        "embeddings": args.embeddings,
    });
    writeln!(out, "{header}")?;
    let progress = Progress::new(json_mode);
    let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
    let mut cursor = None;
    client.set_timeout(Some(LONG_CALL));
    loop {
        let page = client.send::<method::Export>(&ExportParams {
            scope: scope.clone(),
            since,
            embeddings: args.embeddings,
            cursor: cursor.take(),
            limit: None,
        })?;
        for r in &page.records {
            *counts.entry(r["record"].as_str().unwrap_or("?").to_string()).or_default() += 1;
            writeln!(out, "{r}")?;
        }
        let total: u64 = counts.values().sum();
        progress.line(&format!("export: {total} records"));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    out.flush()?;
    progress.finish();
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    if json_mode {
        errln!("{}", json!({ "exported": counts }));
    } else {
        errln!("exported {}", if summary.is_empty() { "nothing".into() } else { summary.join(", ") });
    }
    Ok(ExitCode::SUCCESS)
}

/// `amber import`: the header checked, then the records in batches, in the file's order.
/// With `--from`, another tool's memory (`crate::import`).
fn import(args: &ImportArgs, client: &mut Client, json_mode: bool) -> anyhow::Result<ExitCode> {
    if args.from != crate::import::Format::Amber {
        return import_from(args, client, json_mode);
    }
    if args.scope.is_some() || args.trust != ImportTrust::External {
        bail!(
            "--scope and --trust go with --from: an Amber export keeps its scopes (--keep-trust its trust)"
        );
    }
    let (reader, size): (Box<dyn BufRead>, u64) = if args.file.as_os_str() == "-" {
        (Box::new(BufReader::new(std::io::stdin().lock())), 0)
    } else {
        let f = std::fs::File::open(&args.file)
            .with_context(|| format!("cannot open {}", args.file.display()))?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(BufReader::new(f)), size)
    };
    let progress = Progress::new(json_mode);
    client.set_timeout(Some(LONG_CALL));
    let mut tally = ImportTally::default();
    let mut batch: Vec<Value> = Vec::new();
    let (mut header, mut read_bytes, mut lineno) = (false, 0u64, 0usize);
    let mut send = |batch: &mut Vec<Value>, tally: &mut ImportTally, read: u64| -> anyhow::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let got = client.send::<method::Import>(&ImportParams {
            records: std::mem::take(batch),
            keep_trust: args.keep_trust,
        })?;
        tally.absorb(got);
        let pct =
            if size > 0 { format!(" ({:.0}%)", 100.0 * read as f64 / size as f64) } else { String::new() };
        progress.line(&format!(
            "import: {} added, {} already there, {} skipped{pct}",
            tally.added_total(),
            tally.present.values().sum::<u64>(),
            tally.skipped.len()
        ));
        Ok(())
    };
    for line in reader.lines() {
        let line =
            line.with_context(|| format!("cannot read {} (line {})", args.file.display(), lineno + 1))?;
        lineno += 1;
        read_bytes += line.len() as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                if !header {
                    bail!("{} is not an Amber export: line {lineno} is not JSON ({e})", args.file.display());
                }
                tally.fail("?", format!("line {lineno}"), format!("not JSON: {e}"));
                continue;
            }
        };
        if !header {
            check_header(&v, &args.file)?;
            header = true;
            continue;
        }
        batch.push(v);
        if batch.len() >= IMPORT_BATCH {
            send(&mut batch, &mut tally, read_bytes)?;
        }
    }
    if !header {
        bail!("{} is empty: an Amber export starts with its header line", args.file.display());
    }
    send(&mut batch, &mut tally, read_bytes)?;
    progress.finish();
    report(&tally, json_mode)?;
    Ok(exit(&tally))
}

/// `amber import --from FORMAT PATH`: what the source held, what was filed, what was
/// already there and what was skipped, and why.
fn import_from(args: &ImportArgs, client: &mut Client, json_mode: bool) -> anyhow::Result<ExitCode> {
    if args.keep_trust {
        bail!("--keep-trust is for an Amber export; another tool's memory is external unless --trust person");
    }
    let opts = crate::import::Options {
        scope: args
            .scope
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--scope: {e}"))?,
        person: args.trust == ImportTrust::Person,
        json: json_mode,
    };
    client.set_timeout(Some(LONG_CALL));
    let r = crate::import::run(args.from, &args.file, &opts, client)?;
    if json_mode {
        crate::print_json(&r)?;
        return Ok(exit(&r.tally));
    }
    let found: Vec<String> = r.found.iter().map(|(k, n)| format!("{n} {k}")).collect();
    outln!(
        "found {} in {} ({}); filed into {} as {}",
        if found.is_empty() { "nothing".to_string() } else { found.join(", ") },
        args.file.display(),
        r.from,
        if r.scopes.is_empty() { "no scope".to_string() } else { r.scopes.join(", ") },
        r.trust
    );
    report(&r.tally, false)?;
    if r.redacted > 0 {
        outln!("{} secrets redacted before storing", r.redacted);
    }
    Ok(exit(&r.tally))
}

/// An import with records it could not read or file is done in part: exit status 2
/// (what a rule left out, a forget or a guard, is not a fault).
fn exit(t: &ImportTally) -> ExitCode {
    match t.broken() {
        0 => ExitCode::SUCCESS,
        n => {
            errln!("amber: imported in part: {n} records could not be read or filed (exit status 2)");
            ExitCode::from(2)
        }
    }
}

/// The first line must be an export header of a version this binary reads.
fn check_header(v: &Value, file: &Path) -> anyhow::Result<()> {
    let Some(version) = v.get("amber_export").and_then(Value::as_u64) else {
        bail!("{} is not an Amber export: its first line has no \"amber_export\" version", file.display());
    };
    if version > u64::from(EXPORT_VERSION) {
        bail!(
            "{} is export format {version}; this amber reads format {EXPORT_VERSION} and older: upgrade amber",
            file.display()
        );
    }
    Ok(())
}

fn report(t: &ImportTally, json_mode: bool) -> anyhow::Result<()> {
    if json_mode {
        return crate::print_json(t);
    }
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        let v: Vec<String> = m.iter().map(|(k, n)| format!("{n} {k}")).collect();
        if v.is_empty() { "nothing".to_string() } else { v.join(", ") }
    };
    outln!("imported {}", list(&t.added));
    if !t.present.is_empty() {
        outln!("already there (left as they are): {}", list(&t.present));
    }
    if !t.skipped.is_empty() {
        outln!("skipped {}:", t.skipped.len());
        for s in t.skipped.iter().take(20) {
            outln!("  {} {}: {}", s.record, s.what, s.reason);
        }
        if t.skipped.len() > 20 {
            outln!("  … and {} more (--json lists them)", t.skipped.len() - 20);
        }
    }
    Ok(())
}

/// `amber backup FILE`.
fn backup(file: &Path, client: &mut Client, json_mode: bool) -> anyhow::Result<ExitCode> {
    let path = absolute(file)?;
    client.set_timeout(Some(LONG_CALL));
    let t0 = std::time::Instant::now();
    let s = client.send::<method::Backup>(&BackupParams { path: path.clone() })?;
    if json_mode {
        return crate::print_json(&s).map(|()| ExitCode::SUCCESS);
    }
    outln!(
        "backed up {} memories and {} cached vectors to {} ({:.1} MiB, {:.1} s)",
        s.memories,
        s.vectors,
        path.display(),
        s.bytes as f64 / (1024.0 * 1024.0),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn absolute(file: &Path) -> anyhow::Result<PathBuf> {
    if file.is_absolute() {
        return Ok(file.to_path_buf());
    }
    Ok(std::env::current_dir().context("cannot read the current directory")?.join(file))
}

/// `amber restore FILE`: refused while a daemon serves this data directory; the copy by
/// `amberd --restore`; then the daemon started and its indexes awaited.
fn restore(
    file: &Path,
    cfg: &Config,
    config_file: Option<&Path>,
    json_mode: bool,
) -> anyhow::Result<ExitCode> {
    let file = absolute(file)?;
    if Client::connect(&cfg.socket_path()).is_ok() {
        bail!(
            "a daemon is serving on {}: a restore goes into an empty data directory, with no daemon on it \
             (`amber daemon stop`, then point --data-dir at an empty directory or move the old one away)",
            cfg.socket_path().display()
        );
    }
    let exe = crate::daemon::amberd_path();
    let mut cmd = Command::new(&exe);
    cmd.arg("--data-dir")
        .arg(&cfg.data_dir)
        .arg("--socket")
        .arg(cfg.socket_path())
        .arg("--restore")
        .arg(&file);
    if let Some(f) = config_file {
        cmd.arg("--config").arg(f);
    }
    let out = cmd.output().with_context(|| format!("cannot run {}", exe.display()))?;
    if !out.status.success() {
        bail!("{}", String::from_utf8_lossy(&out.stderr).trim().trim_start_matches("amberd: "));
    }
    if !json_mode {
        out!("{}", String::from_utf8_lossy(&out.stdout));
    }
    let mut client = crate::daemon::connect_or_start(cfg, config_file, true)?;
    let progress = Progress::new(json_mode);
    crate::progress::wait_indexed(&mut client, &progress)?;
    let st = client.status()?;
    let e = &st.engine;
    if json_mode {
        return crate::print_json(e).map(|()| ExitCode::SUCCESS);
    }
    outln!(
        "serving: {} memories, indexes rebuilt ({} chunks from the cache, {} embedded)",
        e["memories"],
        e["stats"]["chunks_from_cache"],
        e["stats"]["chunks_embedded"]
    );
    Ok(ExitCode::SUCCESS)
}
