//! `ingest`: documents as sources, kept in step with their files.
//!
//! The daemon reads each file itself (it runs as the person, on their machine), cuts it
//! into chunks that keep its headings (`amber_tiers::document`) and, on the writer,
//! brings the scope's memories of that file in step with it in one pass:
//! - chunks the file has that the scope does not are filed (verbatim, secrets redacted);
//! - chunks the scope has that the file no longer does are retired by one invalidation
//!   (`doc_revision`) that supersedes them, so newest wins as for any invalidation;
//! - chunks retired by an earlier revision of the file that are back in it (an edit
//!   undone, an editor's truncate-then-write seen half way) come back: that revision is
//!   forgotten, and what it retired and the file no longer holds is retired anew;
//! - a forgotten chunk stays forgotten: a person's forget wins over the file.
//!
//! Nothing is filed twice: an unchanged file writes nothing. Trust: the person's, when the
//! person named the files at the command line and each file belongs to the project it is
//! filed in; `external` for files of another repository inside it (a clone, a vendored
//! tree), for `external: true`, and for every ingest an agent or a library asks for.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use amber_core::document::{self, DocChunk, DocRevision};
use amber_core::origin::{Origin, Trust};
use amber_core::{Memory, MemoryId, MemoryType, NewMemory, Scope};
use amber_engine::EngineWriter;
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, IndexedParams, IndexedResult, IngestParams, IngestResult, IngestStatus,
    IngestedFile, MAX_INDEXED_RANGES, MAX_INGEST_FILES,
};
use amber_tiers::document::{Unread, bounded, read as read_document};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::peer::Peer;
use crate::rpc::invalid;
use crate::state::Shared;

/// A chunk's lines may be at most this long, so that with its locator it fits in a
/// memory.
const MAX_BODY_BYTES: usize = amber_core::MAX_CONTENT_BYTES - 4096;

pub(crate) async fn ingest(
    shared: &Arc<Shared>,
    peer: Peer,
    p: IngestParams,
) -> Result<IngestResult, ErrorObject> {
    // An importer names itself; nothing else replaces the daemon's `ingest`.
    let tool = match &p.tool {
        None => "ingest".to_string(),
        Some(t) => {
            amber_core::check_label("tool", t, 128).map_err(|e| invalid(e.to_string()))?;
            if !t.starts_with("import:") {
                return Err(invalid(format!("ingest's tool must name an importer (import:...), got {t:?}")));
            }
            t.clone()
        }
    };
    let origin = Origin {
        door: Some(peer.door.as_str().into()),
        tool: Some(tool),
        machine: super::origin::machine(),
        inside_agent: peer.under_agent,
        ..Origin::default()
    };
    if p.keep_secrets {
        crate::person_log::person_only(
            shared,
            peer,
            "keeping secrets in ingested files",
            crate::person_log::Undo::Reversible,
        )?;
    }
    let person = peer.writer_trust() == Trust::Person && !p.external;
    run(shared, p, person, origin).await
}

/// A folder of the config's `[sources]`, which the person chose: trusted as theirs,
/// stamped door `daemon`, tool `sources`.
pub(crate) async fn from_sources(shared: &Arc<Shared>, p: IngestParams) -> Result<IngestResult, ErrorObject> {
    let origin = Origin {
        door: Some(amber_core::origin::Door::Daemon.as_str().into()),
        tool: Some("sources".into()),
        machine: super::origin::machine(),
        ..Origin::default()
    };
    run(shared, p, true, origin).await
}

/// One `ingest`: `person` when the files are the person's choice (each still only when
/// it belongs to the project it is filed in).
async fn run(
    shared: &Arc<Shared>,
    p: IngestParams,
    person: bool,
    origin: Origin,
) -> Result<IngestResult, ErrorObject> {
    if p.files.len() > MAX_INGEST_FILES {
        return Err(invalid(format!(
            "ingest takes at most {MAX_INGEST_FILES} files a call, got {}",
            p.files.len()
        )));
    }
    if p.files.is_empty() && p.prune.is_none() {
        return Err(invalid("ingest needs `files`, `prune`, or both"));
    }
    for f in p.files.iter().chain(p.prune.iter()) {
        if !f.is_absolute() {
            return Err(invalid(format!("ingest takes absolute paths: {}", f.display())));
        }
    }
    let cwd = match (&p.cwd, p.files.first(), &p.prune) {
        (Some(c), _, _) => c.clone(),
        (None, Some(f), _) => f.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/")),
        (None, None, Some(d)) => d.clone(),
        (None, None, None) => unreachable!("checked above"),
    };
    let resolved = super::scope::resolve(shared, &existing_dir(&cwd)).await?;
    let scope = p.scope.clone().unwrap_or(resolved.scope);
    let side = shared.side_for(&scope)?;
    // A folder goes in many calls: each waits for indexing to come within reach (the
    // caller retries `busy`), so a big tree never leaves recall far behind. One file is
    // not bulk work unless it turns out large (`one_file`): re-ingesting the file just
    // edited does not queue behind another client's tree. Nor is pruning, which retires
    // gone files with one memory each.
    let single = p.files.len() <= 1;
    if !single {
        crate::rpc::within_backlog(shared, &side, crate::rpc::Lane::Bulk(0))?;
    }
    let ctx = Arc::new(Context {
        scope: scope.clone(),
        root: resolved.root.map(|r| std::fs::canonicalize(&r).unwrap_or(r)),
        named: canonical(&cwd),
        keep_secrets: p.keep_secrets,
        agent_written: crate::agent_writes::load(&shared.config.data_dir),
        person,
        origin,
    });
    let mut out = Vec::with_capacity(p.files.len());
    let mut seen = HashSet::new();
    for f in &p.files {
        let path = canonical(f);
        if !seen.insert(path.clone()) {
            continue;
        }
        out.push(one_file(shared, &side, &ctx, path, single).await?);
    }
    if let Some(dir) = &p.prune {
        let mut prefix = canonical(dir).to_string_lossy().into_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        let known = crate::rpc::read_on(shared, &side, {
            let scope = scope.clone();
            move |e| e.document_sources(&scope, &prefix)
        })
        .await?;
        for source in known {
            let path = PathBuf::from(&source);
            if seen.contains(&path) || path.exists() {
                continue;
            }
            seen.insert(path.clone());
            out.push(one_file(shared, &side, &ctx, path, true).await?);
        }
    }
    let count = |st: IngestStatus| out.iter().filter(|f| f.status == st).count();
    let (new, changed, deleted) =
        (count(IngestStatus::New), count(IngestStatus::Changed), count(IngestStatus::Deleted));
    if new + changed + deleted > 0 {
        tracing::info!(scope = %scope, new, changed, deleted, "ingest");
        // Skills compiled from a changed document are compiled again.
        let touched =
            out.iter().filter(|f| f.status != IngestStatus::Unchanged).map(|f| f.path.clone()).collect();
        super::compile::after_ingest(shared, &scope, touched);
    }
    Ok(IngestResult { scope, files: out })
}

/// `indexed`: how many of the seqs a client filed (as `ingest` returned them) are not
/// indexed yet, those queued to be indexed before the rest of any backlog.
pub(crate) async fn indexed(shared: &Arc<Shared>, p: IndexedParams) -> Result<IndexedResult, ErrorObject> {
    if p.seqs.len() > MAX_INDEXED_RANGES {
        return Err(invalid(format!(
            "indexed takes at most {MAX_INDEXED_RANGES} ranges a call, got {}",
            p.seqs.len()
        )));
    }
    if let Some(r) = p.seqs.iter().find(|[a, b]| a > b) {
        return Err(invalid(format!("a range of seqs goes up, got {r:?}")));
    }
    let side = match &p.scope {
        Some(scope) => shared.side_for(scope)?,
        None => shared.local(),
    };
    // Anything not indexed is behind the watermark, so the indexer is at work (or waits
    // to retry a failure): it looks at the queue between slices.
    let e = &side.engine;
    let left = e.unindexed(&p.seqs);
    Ok(IndexedResult { left, indexed_through: e.indexed_through(), committed_through: e.committed_through() })
}

/// What every file of one call shares.
struct Context {
    scope: Scope,
    root: Option<PathBuf>,
    /// The folder the person named (the call's `cwd`, canonical): a vendored tree below it
    /// is not theirs; naming the vendored folder itself makes it so.
    named: PathBuf,
    /// Secrets are kept as they are (`--keep-secrets`, the person's).
    keep_secrets: bool,
    /// The files agents wrote (`crate::agent_writes`): never above `agent`.
    agent_written: std::collections::HashMap<PathBuf, crate::agent_writes::AgentWrite>,
    person: bool,
    origin: Origin,
}

/// The longest one file of an ingest waits for indexing to come within the bulk lane.
const BULK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Before each file of an ingest: waits (at most [`BULK_WAIT`]) until indexing is within
/// the bulk lane (`rpc::Lane::Bulk`: half of `max_index_backlog`), so that a call of many
/// large files is slowed here rather than pushing the backlog past where single writes
/// from other clients are refused.
async fn bulk_waits(shared: &Shared, side: &crate::team::Side) {
    let t0 = std::time::Instant::now();
    while crate::rpc::within_backlog(shared, side, crate::rpc::Lane::Bulk(0)).is_err()
        && t0.elapsed() < BULK_WAIT
        && !*shared.shutdown.borrow()
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `path` made canonical when it exists (its folder when only the file is gone), so the
/// same file is the same source whichever way it was named.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(path) {
        return c;
    }
    match (path.parent().and_then(|d| std::fs::canonicalize(d).ok()), path.file_name()) {
        (Some(d), Some(n)) => d.join(n),
        _ => path.to_path_buf(),
    }
}

/// The nearest existing directory at or above `p`.
fn existing_dir(p: &Path) -> PathBuf {
    p.ancestors().find(|d| d.is_dir()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"))
}

/// A file read and cut, ready for the writer.
enum Read {
    /// The file is gone (or is no longer a file).
    Gone,
    /// Not ingested, and why.
    Skipped(String),
    /// What it holds now.
    Doc(FileNow),
}

/// A file as it is now: its chunks as memories (each with the secrets redacted from it),
/// its hash, and the trust they are filed with.
struct FileNow {
    memories: Vec<(NewMemory, usize)>,
    file_sha256: String,
    trust: Trust,
    /// An agent wrote the file (the ledger of agent writes), at the earliest then: what
    /// was filed of it since at a higher trust is lowered to `trust`.
    agent_wrote: Option<amber_core::Millis>,
}

/// The most chunks a call's only file may have to go in without waiting for the bulk
/// lane: a long document (those already filed add nothing to the backlog); a file is cut
/// into at most 2,000.
const SMALL_FILE_CHUNKS: usize = 256;

/// Brings one file in step. Before writing, waits for the bulk lane ([`bulk_waits`])
/// unless `single` (the call's only file) and the file is small.
async fn one_file(
    shared: &Arc<Shared>,
    side: &crate::team::Side,
    ctx: &Arc<Context>,
    path: PathBuf,
    single: bool,
) -> Result<IngestedFile, ErrorObject> {
    let source = path.to_string_lossy().into_owned();
    let read = tokio::task::spawn_blocking({
        let (ctx, path) = (ctx.clone(), path.clone());
        move || read_file(&ctx, &path)
    })
    .await
    .map_err(|e| ErrorObject::new(ErrorKind::Internal, format!("reading a file failed: {e}")))?;
    let label = label_of(ctx, &path);
    let small = match &read {
        Read::Doc(now) => now.memories.len() <= SMALL_FILE_CHUNKS,
        _ => true,
    };
    if !(single && small) {
        bulk_waits(shared, side).await;
    }
    let trust = match &read {
        Read::Doc(now) => Some(now.trust),
        _ => None,
    };
    let mut r = match read {
        Read::Skipped(reason) => return Ok(skipped(source, reason)),
        Read::Gone => {
            let ctx = ctx.clone();
            crate::rpc::write_with_on(shared, side, move |e| sync(e, &ctx, &source, &label, None)).await?
        }
        Read::Doc(now) => {
            let ctx = ctx.clone();
            crate::rpc::write_with_on(shared, side, move |e| sync(e, &ctx, &source, &label, Some(now)))
                .await?
        }
    };
    r.trust = trust;
    Ok(r)
}

fn skipped(path: String, reason: String) -> IngestedFile {
    IngestedFile { status: IngestStatus::Skipped, reason: Some(reason), ..empty(&path) }
}

/// The path shown: relative to the project root when under it.
fn label_of(ctx: &Context, path: &Path) -> String {
    ctx.root
        .as_deref()
        .and_then(|r| path.strip_prefix(r).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Reads and cuts one file (on the blocking pool).
fn read_file(ctx: &Context, path: &Path) -> Read {
    let (kind, text) = match read_document(path) {
        Ok(read) => read,
        Err(Unread::Gone) => return Read::Gone,
        Err(Unread::Skipped(why)) => return Read::Skipped(why),
    };
    let file_sha256 = hex::encode(Sha256::digest(text.as_bytes()));
    let pieces = match bounded(kind, &text) {
        Ok(p) => p,
        Err(why) => return Read::Skipped(why),
    };
    if pieces.iter().any(|p| p.body.len() > MAX_BODY_BYTES) {
        return Read::Skipped(format!("a block of lines over {MAX_BODY_BYTES} bytes with no blank line"));
    }
    let theirs = ctx.person && belongs_to_project(ctx, path) && !super::vendored::vendored(&ctx.named, path);
    let agent_wrote = ctx.agent_written.get(path).map(|w| w.since());
    let trust = match agent_wrote {
        // An agent wrote it: its word at most, whoever names the file.
        Some(_) if theirs => Trust::Agent,
        _ if theirs => Trust::Person,
        _ => Trust::External,
    };
    let label = label_of(ctx, path);
    let source = path.to_string_lossy().into_owned();
    let memories = pieces
        .into_iter()
        .map(|p| {
            let place = DocChunk {
                path: source.clone(),
                label: label.clone(),
                lines: [p.first, p.last],
                sha256: hex::encode(Sha256::digest(p.body.as_bytes())),
                file_sha256: file_sha256.clone(),
                headings: p.headings.clone(),
            };
            let mut m = NewMemory::new(document::chunk_content(&label, &p.headings, &p.body))
                .in_scope(ctx.scope.clone())
                .of_type(MemoryType::Fact);
            m.source = Some(source.clone());
            m.metadata = json!({ document::DOC_KEY: place });
            amber_core::origin::stamp(&mut m.metadata, &ctx.origin, trust);
            let redacted = if ctx.keep_secrets { 0 } else { amber_tiers::redact::redact_memory(&mut m) };
            (m, redacted)
        })
        .collect();
    Read::Doc(FileNow { memories, file_sha256, trust, agent_wrote })
}

/// True when the file's own repository (the nearest folder above it holding `.git`) is
/// the project's, or it is in none: a file of another repository inside the project (a
/// clone, a vendored tree, a submodule) was not chosen by naming the project.
fn belongs_to_project(ctx: &Context, path: &Path) -> bool {
    let own = path.parent().and_then(|d| d.ancestors().find(|a| a.join(".git").exists()));
    match (own, &ctx.root) {
        (None, _) => true,
        (Some(own), Some(root)) => own == root,
        (Some(_), None) => false,
    }
}

/// Brings the scope's memories of one file in step with it (on the writer): `new` is
/// the file's chunks now, its hash and trust; None when the file is gone.
fn sync(
    e: &mut EngineWriter<'_>,
    ctx: &Context,
    source: &str,
    label: &str,
    new: Option<FileNow>,
) -> amber_engine::Result<IngestedFile> {
    let mut held = e.by_source(&ctx.scope, source)?;
    let was_known = held.iter().any(|m| document::is_chunk(&m.metadata));
    let (memories, file_sha256, trust, agent_wrote) = match new {
        Some(now) => (now.memories, Some(now.file_sha256), now.trust, now.agent_wrote),
        None => (Vec::new(), None, if ctx.person { Trust::Person } else { Trust::External }, None),
    };
    let want: HashSet<MemoryId> = memories.iter().map(|(m, _)| m.id()).collect();
    // Chunks back in the file that an earlier revision of it retired: that revision goes.
    let revisions: HashSet<&MemoryId> =
        held.iter().filter(|m| document::is_revision(&m.metadata)).map(|m| &m.id).collect();
    let undo: HashSet<MemoryId> = held
        .iter()
        .filter(|m| document::is_chunk(&m.metadata) && want.contains(&m.id))
        .filter_map(|m| m.superseded_by.as_ref().filter(|by| revisions.contains(by)).cloned())
        .collect();
    let mut revived = 0;
    if !undo.is_empty() {
        let before: HashSet<MemoryId> =
            held.iter().filter(|m| is_live_chunk(m)).map(|m| m.id.clone()).collect();
        for id in &undo {
            e.forget(id)?;
        }
        held = e.by_source(&ctx.scope, source)?;
        revived = held
            .iter()
            .filter(|m| is_live_chunk(m) && want.contains(&m.id) && !before.contains(&m.id))
            .count();
    }
    let live: HashSet<MemoryId> = held.iter().filter(|m| is_live_chunk(m)).map(|m| m.id.clone()).collect();
    // Chunks filed of the file after an agent wrote it, before the write was noted (a
    // watched folder is read within moments): the agent's word (the daemon only ever
    // lowers a trust). What was filed before the write stays the person's.
    let mut lowered = 0;
    if let Some(since) = agent_wrote {
        let after = |m: &&Memory| m.created_at >= since.saturating_sub(crate::agent_writes::SLACK_MS);
        for m in held.iter().filter(|m| is_live_chunk(m) && want.contains(&m.id)).filter(after) {
            if amber_core::origin::trust_of(&m.metadata) > trust
                && e.set_trust(&m.id, trust, amber_core::origin::SetBy::Daemon)?.is_some_and(|(_, c)| c)
            {
                lowered += 1;
            }
        }
    }
    let gone: Vec<MemoryId> =
        held.iter().filter(|m| is_live_chunk(m) && !want.contains(&m.id)).map(|m| m.id.clone()).collect();
    let mut batch: Vec<NewMemory> = Vec::new();
    let mut seen = HashSet::new();
    let mut redacted = 0;
    for (m, secrets) in memories {
        let id = m.id();
        if live.contains(&id) || !seen.insert(id.clone()) {
            continue;
        }
        // A chunk a person forgot stays forgotten.
        if e.get(&id)?.is_some_and(|old| old.is_forgotten()) {
            continue;
        }
        batch.push(m);
        redacted += secrets;
    }
    let added = batch.len();
    if !gone.is_empty() {
        batch.push(revision(ctx, source, label, &gone, file_sha256.as_deref(), &held, trust));
    }
    let filed = e.commit_batch(batch)?;
    let seqs = filed.iter().filter(|r| r.created).map(|r| r.memory.seq);
    let seqs = seqs.clone().min().zip(seqs.max()).map(|(a, b)| [a, b]);
    let status = match (&file_sha256, was_known) {
        (None, true) => IngestStatus::Deleted,
        (None, false) => {
            return Ok(skipped(source.to_string(), "no such file, and the scope holds none of it".into()));
        }
        (Some(_), false) => IngestStatus::New,
        (Some(_), true) if added == 0 && gone.is_empty() && revived == 0 && lowered == 0 => {
            IngestStatus::Unchanged
        }
        (Some(_), true) => IngestStatus::Changed,
    };
    Ok(IngestedFile {
        status,
        chunks: want.len(),
        added,
        retired: gone.len(),
        revived,
        lowered,
        redacted,
        seqs,
        ..empty(source)
    })
}

fn empty(source: &str) -> IngestedFile {
    IngestedFile {
        path: source.to_string(),
        status: IngestStatus::Unchanged,
        trust: None,
        chunks: 0,
        added: 0,
        retired: 0,
        revived: 0,
        lowered: 0,
        redacted: 0,
        reason: None,
        seqs: None,
    }
}

fn is_live_chunk(m: &Memory) -> bool {
    document::is_chunk(&m.metadata) && m.archived_at.is_none() && !m.is_forgotten()
}

/// The invalidation that retires a file's chunks no longer in it. Its text names the
/// file, how many chunks went and the file's new (or last) hash, so that each revision
/// is its own memory.
fn revision(
    ctx: &Context,
    source: &str,
    label: &str,
    gone: &[MemoryId],
    file_sha256: Option<&str>,
    held: &[Memory],
    trust: Trust,
) -> NewMemory {
    let last = held
        .iter()
        .rev()
        .find_map(|m| document::chunk_of(&m.metadata).map(|d| d.file_sha256))
        .unwrap_or_default();
    let short = |h: &str| h.chars().take(12).collect::<String>();
    let n = gone.len();
    let content = match file_sha256 {
        Some(h) => format!(
            "{label} changed: {n} earlier part{} of it no longer in the file (its sha256 now {}).",
            if n == 1 { " is" } else { "s are" },
            short(h)
        ),
        None => format!(
            "{label} was deleted: its {n} part{} retired (its last sha256 {}).",
            if n == 1 { " is" } else { "s are" },
            short(&last)
        ),
    };
    let mut m = NewMemory::new(content).in_scope(ctx.scope.clone()).of_type(MemoryType::Invalidation);
    m.source = Some(source.to_string());
    m.supersedes = gone.to_vec();
    let record = DocRevision {
        path: source.into(),
        label: label.into(),
        file_sha256: file_sha256.map(str::to_string),
    };
    m.metadata = json!({ document::REVISION_KEY: record });
    amber_core::origin::stamp(&mut m.metadata, &ctx.origin, trust);
    m
}
