//! Amber's export format (`amber export`, `amber import`): JSON Lines, one record a line,
//! a header first. Documented in docs/EXPORT.md; this module holds what the store, the
//! engine and the wire share about it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Millis, Scope};

/// The version of the export format this binary writes and reads. An import refuses a
/// file of a newer version.
pub const EXPORT_VERSION: u32 = 1;

/// The kinds of record an export holds, in the order they are written (a record only
/// names what came before it: an outcome its memory, a fact its entities).
pub const RECORD_KINDS: &[&str] = &[
    "memory",
    "outcome",
    "supersession",
    "link",
    "moved",
    "thread_hold",
    "entity",
    "fact",
    "run",
    "reward",
    "session",
    "embedding",
];

/// What an export holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportFilter {
    /// One scope's records; None: every scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Only records made at or after this time (each record by its own time: a memory
    /// by when it was filed, an outcome by when it was reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Millis>,
    /// The embedding cache of this model too (every scope only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<String>,
}

/// One page of an export.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportPage {
    /// Records, each a JSON object with its `record` kind.
    pub records: Vec<serde_json::Value>,
    /// Where the next page starts; None when this was the last.
    pub next: Option<String>,
}

/// How an import treats the trust recorded in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportOptions {
    /// Keep each memory's recorded trust (the person's own export). Default: memories
    /// come in as `external`, their recorded trust kept beside it (`imported.trust`).
    #[serde(default)]
    pub keep_trust: bool,
}

/// A record an import left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Its kind (`memory`, `fact`, …), or `?` when it has none.
    pub record: String,
    /// What it was (a memory's id, a fact's subject and predicate).
    pub what: String,
    /// Why it was left out.
    pub reason: String,
    /// True when the record could not be read or filed (malformed, over a limit, naming
    /// what is not there): the import is done in part. False when a rule left it out (a
    /// forget, a move, a guard against what the file did not bring).
    #[serde(default)]
    pub broken: bool,
}

/// What an import did, by record kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportTally {
    /// Records written.
    pub added: BTreeMap<String, u64>,
    /// Records the store already held (an import twice changes nothing).
    pub present: BTreeMap<String, u64>,
    /// Records left out, with the reason.
    pub skipped: Vec<Skipped>,
}

impl ImportTally {
    /// Adds another tally to this one.
    pub fn absorb(&mut self, other: ImportTally) {
        for (k, n) in other.added {
            *self.added.entry(k).or_default() += n;
        }
        for (k, n) in other.present {
            *self.present.entry(k).or_default() += n;
        }
        self.skipped.extend(other.skipped);
    }

    /// Records written, over every kind.
    pub fn added_total(&self) -> u64 {
        self.added.values().sum()
    }

    /// Notes one record written.
    pub fn add(&mut self, kind: &str) {
        *self.added.entry(kind.to_string()).or_default() += 1;
    }

    /// Notes one record already held.
    pub fn had(&mut self, kind: &str) {
        *self.present.entry(kind.to_string()).or_default() += 1;
    }

    /// Notes one record a rule left out.
    pub fn skip(&mut self, kind: &str, what: impl Into<String>, reason: impl Into<String>) {
        let (record, what, reason) = (kind.to_string(), what.into(), reason.into());
        self.skipped.push(Skipped { record, what, reason, broken: false });
    }

    /// Notes one record that could not be read or filed.
    pub fn fail(&mut self, kind: &str, what: impl Into<String>, reason: impl Into<String>) {
        let (record, what, reason) = (kind.to_string(), what.into(), reason.into());
        self.skipped.push(Skipped { record, what, reason, broken: true });
    }

    /// How many records could not be read or filed (not those a rule left out).
    pub fn broken(&self) -> usize {
        self.skipped.iter().filter(|s| s.broken).count()
    }
}

/// What a backup wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupStats {
    /// Bytes of the backup file.
    pub bytes: u64,
    /// Database pages copied.
    pub pages: u64,
    /// Memories in it (forgotten ones included).
    pub memories: u64,
    /// Vectors of the embedding cache in it.
    pub vectors: u64,
}
