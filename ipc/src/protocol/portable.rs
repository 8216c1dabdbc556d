//! `export`, `import`, `backup`: taking a person's memory elsewhere (docs/EXPORT.md).
//! All three are a person's: the `amber` command, not an agent or a client library.

use std::path::PathBuf;

use amber_core::portable::ImportOptions;
use amber_core::{Millis, Scope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use amber_core::portable::{BackupStats, ExportPage, ImportTally, Skipped};

/// Most records one `export` page or `import` call carries.
pub const MAX_PORTABLE_RECORDS: usize = 2_000;

/// `export` params: one page of the export.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    /// One scope; None: every scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Only records made at or after this time (Unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Millis>,
    /// The embedding cache of the daemon's model too (every scope only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub embeddings: bool,
    /// Where the page starts: the previous page's `next` (None: the first page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Records per page (default 500, at most [`MAX_PORTABLE_RECORDS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// `import` params: records of an export, in the file's order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportParams {
    /// The records (at most [`MAX_PORTABLE_RECORDS`]).
    pub records: Vec<Value>,
    /// Keep each memory's recorded trust (the person's own export); default: `external`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_trust: bool,
}

impl ImportParams {
    /// The import's options.
    pub fn options(&self) -> ImportOptions {
        ImportOptions { keep_trust: self.keep_trust }
    }
}

/// `backup` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupParams {
    /// The new file (absolute; it must not exist).
    pub path: PathBuf,
}
