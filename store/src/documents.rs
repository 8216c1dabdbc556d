//! Documents as sources (`amber ingest`): a file's memories, found by their `source`
//! (the file's absolute path), and the files a scope holds under a folder.

use amber_core::{Memory, Scope};
use rusqlite::params;

use crate::Documents;
use crate::listing::{Dialect, DocFile};
use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Result, Store};

/// The live chunks of a scope: the rows [`Documents::document_files`] and
/// [`Documents::document_sections`] read (the scope is `?1`).
fn live_chunks() -> String {
    format!("scope = ?1 AND forgotten_at IS NULL AND archived_at IS NULL AND {}", Dialect::Sqlite.is_chunk())
}

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

    fn document_files(&self, scope: &Scope, offset: u64, limit: usize) -> Result<(Vec<DocFile>, u64)> {
        // The scope's distinct sources come from the (scope, source) index; each is a
        // document when it holds a live chunk (the first row of it usually says so), so
        // only the page's files have their chunks read whole.
        let files = format!(
            "(SELECT DISTINCT source FROM memories WHERE scope = ?1 AND source IS NOT NULL) AS f
             WHERE EXISTS (SELECT 1 FROM memories WHERE {} AND source = f.source)",
            live_chunks()
        );
        let total: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) FROM {files}"))
            .and_then(|mut st| st.query_row(params![scope.as_str()], |r| r.get(0)))
            .map_err(self.sql())?;
        let (limit, offset) = (limit.min(i64::MAX as usize) as i64, offset.min(i64::MAX as u64) as i64);
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT f.source FROM {files} ORDER BY f.source LIMIT ?2 OFFSET ?3"))
            .map_err(self.sql())?;
        let paths = stmt
            .query_map(params![scope.as_str(), limit, offset], |r| r.get::<_, String>(0))
            .map_err(self.sql())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())?;
        let mut each = self
            .conn
            .prepare_cached(&format!(
                "SELECT min({}), count(*), max(created_at) FROM memories WHERE {} AND source = ?2",
                Dialect::Sqlite.label(),
                live_chunks()
            ))
            .map_err(self.sql())?;
        let mut out = Vec::with_capacity(paths.len());
        for path in paths {
            let (label, sections, filed) = each
                .query_row(params![scope.as_str(), path], |r| {
                    Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?))
                })
                .map_err(self.sql())?;
            out.push(DocFile {
                label: label.unwrap_or_else(|| path.clone()),
                path,
                sections: sections.max(0) as u64,
                filed: filed.unwrap_or(0),
            });
        }
        Ok((out, total.max(0) as u64))
    }

    fn document_sections(&self, scope: &Scope, source: &str, limit: usize) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE {} AND source = ?2
                 ORDER BY {}, seq LIMIT ?3",
                live_chunks(),
                Dialect::Sqlite.first_line()
            ))
            .map_err(self.sql())?;
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = stmt.query_map(params![scope.as_str(), source, limit], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }
}
