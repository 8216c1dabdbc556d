//! Documents as sources (`amber ingest`): a file's memories, found by their `source`
//! (the file's absolute path), and the files a scope holds under a folder.

use amber_core::{Memory, Scope};
use rusqlite::params;

use crate::Documents;
use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Result, Store};

impl Documents for Store {
    /// The memories of a scope whose `source` is exactly `source`, archived ones
    /// included, forgotten ones not, in seq order.
    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE scope = ?1 AND source = ?2 AND forgotten_at IS NULL ORDER BY seq"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![scope.as_str(), source], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// The distinct `source`s starting with `prefix` of a scope's live memories whose
    /// metadata names a document chunk, sorted.
    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT source FROM memories
                 WHERE scope = ?1 AND source >= ?2 AND substr(source, 1, length(?2)) = ?2
                   AND forgotten_at IS NULL AND json_type(metadata, '$.doc') = 'object'
                 ORDER BY source",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![scope.as_str(), prefix], |r| r.get(0)).map_err(self.sql())?;
        rows.map(|r| r.map_err(self.sql())).collect()
    }
}
