//! `ingest`: documents as sources, kept in step with their files.

use std::path::PathBuf;

use amber_core::Scope;
use amber_core::origin::Trust;
use serde::{Deserialize, Serialize};

/// Most files one `ingest` call brings in step (a folder goes in several calls).
pub const MAX_INGEST_FILES: usize = 256;

/// `ingest` params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestParams {
    /// Files to bring in step, absolute paths (at most [`MAX_INGEST_FILES`]). A file that
    /// is gone retires what the scope holds of it.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// An absolute folder: after `files`, every document the scope holds under it whose
    /// file is gone is retired (a folder's deleted files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<PathBuf>,
    /// The directory whose project the files belong to (their scope and the root their
    /// paths are shown from); default: the first file's folder, else `prune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The scope to file into instead of the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// File them as `external` even for a person (a repository they have not read).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// The importer that read the files (`import:markdown`, `import:claude-code`), named
    /// in their origin's `tool` instead of `ingest`; it must start with `import:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Keep secrets in the files as they are (the person's alone, as `allow_secrets`);
    /// by default they are redacted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_secrets: bool,
}

/// `ingest` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestResult {
    /// The scope the documents are in.
    pub scope: Scope,
    /// Each file, in the order given, then the pruned ones.
    pub files: Vec<IngestedFile>,
}

/// What `ingest` did with one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestedFile {
    /// The file's absolute path.
    pub path: String,
    /// What happened.
    pub status: IngestStatus,
    /// The trust its chunks were filed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    /// Chunks the file has now.
    #[serde(default)]
    pub chunks: usize,
    /// Chunks filed by this call.
    #[serde(default)]
    pub added: usize,
    /// Chunks retired by this call (no longer in the file, or the file is gone).
    #[serde(default)]
    pub retired: usize,
    /// Retired chunks back in the file again (an undone edit), live again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub revived: usize,
    /// Chunks held at a higher trust than the file now earns (an agent wrote it since),
    /// lowered to it by this call.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lowered: usize,
    /// Secrets replaced by `[REDACTED:<kind>]` in its chunks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redacted: usize,
    /// Why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The seqs of the memories this call filed of it, `[first, last]`: what to ask
    /// `indexed` about to wait for this file alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seqs: Option<[u64; 2]>,
}

/// Most seq ranges one `indexed` call asks about.
pub const MAX_INDEXED_RANGES: usize = 4096;

/// `indexed` params: seqs a client filed (as `ingest` returns them), to be indexed
/// before the rest of any backlog.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexedParams {
    /// Inclusive ranges `[first, last]` (at most [`MAX_INDEXED_RANGES`]).
    pub seqs: Vec<[u64; 2]>,
    /// The scope they were filed in (which store: local, or a team's); default local.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

/// `indexed` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedResult {
    /// How many of those seqs are not in the indexes yet (0: all are recallable).
    pub left: u64,
    /// The seq through which everything filed, by anyone, is indexed.
    pub indexed_through: u64,
    /// The highest seq committed.
    pub committed_through: u64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `ingest` did with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IngestStatus {
    /// Filed for the first time.
    New,
    /// Changed since it was last filed: new chunks filed, old ones retired.
    Changed,
    /// As it was last filed: nothing written.
    Unchanged,
    /// Gone: its chunks retired.
    Deleted,
    /// Not ingested (`reason` says why): not a document, too large, not UTF-8, or a
    /// missing file the scope never held.
    Skipped,
}

impl IngestStatus {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            IngestStatus::New => "new",
            IngestStatus::Changed => "changed",
            IngestStatus::Unchanged => "unchanged",
            IngestStatus::Deleted => "deleted",
            IngestStatus::Skipped => "skipped",
        }
    }
}

/// The daemon's `[sources]` as `status` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourcesStatus {
    /// The folders and files watched (those that could be read).
    pub watching: Vec<PathBuf>,
    /// Configured paths that cannot be read, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// True once the first pass (every file brought in step) is done.
    pub ready: bool,
    /// Files brought in step so far (the first pass, then each change).
    pub files: u64,
    /// When a file last changed what the store holds (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change: Option<amber_core::Millis>,
    /// The last failure, when one happened (the watch goes on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}
