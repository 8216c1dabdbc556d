//! Documents as sources on the team store: the SQLite store's `documents.rs`, ported.

use amber_core::{Memory, Scope};

use super::{MEMORY_COLUMNS, PgStore};
use crate::Documents;
use crate::Result;
use crate::listing::{Dialect, DocFile};

/// The live chunks of a scope (the scope is `$1`), as on SQLite.
fn live_chunks() -> String {
    format!(
        "scope = $1 AND forgotten_at IS NULL AND archived_at IS NULL AND {}",
        Dialect::Postgres.is_chunk()
    )
}

impl Documents for PgStore {
    fn by_source(&self, scope: &Scope, source: &str) -> Result<Vec<Memory>> {
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE scope = $1 AND source = $2 AND forgotten_at IS NULL ORDER BY seq"
            ),
            &[&scope.as_str(), &source],
        )
    }

    fn document_sources(&self, scope: &Scope, prefix: &str) -> Result<Vec<String>> {
        self.read(|c| {
            let st = self.prepared(
                c,
                "SELECT DISTINCT source FROM memories
                 WHERE scope = $1 AND starts_with(source, $2) AND forgotten_at IS NULL
                   AND jsonb_typeof(metadata::jsonb -> 'doc') = 'object'
                 ORDER BY source",
            )?;
            Ok(c.query(&st, &[&scope.as_str(), &prefix])?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<std::result::Result<Vec<String>, _>>()?)
        })
    }

    fn document_files(&self, scope: &Scope, offset: u64, limit: usize) -> Result<(Vec<DocFile>, u64)> {
        // As on SQLite: the distinct sources, each a document when it holds a live chunk;
        // only the page's files have their chunks read whole.
        let from = Dialect::Postgres.from();
        let files = format!(
            "(SELECT DISTINCT source FROM memories WHERE scope = $1 AND source IS NOT NULL) AS f
             WHERE EXISTS (SELECT 1 FROM {from} WHERE {} AND source = f.source)",
            live_chunks()
        );
        let total = self.number(&format!("SELECT count(*) FROM {files}"), &[&scope.as_str()])?;
        let (limit, offset) = (limit.min(i64::MAX as usize) as i64, offset.min(i64::MAX as u64) as i64);
        let page = format!("SELECT f.source FROM {files} ORDER BY f.source LIMIT $2 OFFSET $3");
        let each = format!(
            "SELECT min({}), count(*), max(created_at) FROM {from} WHERE {} AND source = $2",
            Dialect::Postgres.label(),
            live_chunks()
        );
        let files = self.read(|c| {
            let st = self.prepared(c, &page)?;
            let paths: Vec<String> = c
                .query(&st, &[&scope.as_str(), &limit, &offset])?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<std::result::Result<_, _>>()?;
            let st = self.prepared(c, &each)?;
            let mut out = Vec::with_capacity(paths.len());
            for path in paths {
                let r = c.query_one(&st, &[&scope.as_str(), &path])?;
                out.push(DocFile {
                    label: r.try_get::<_, Option<String>>(0)?.unwrap_or_else(|| path.clone()),
                    sections: r.try_get::<_, i64>(1)?.max(0) as u64,
                    filed: r.try_get::<_, Option<i64>>(2)?.unwrap_or(0),
                    path,
                });
            }
            Ok(out)
        })?;
        Ok((files, total))
    }

    fn document_sections(&self, scope: &Scope, source: &str, limit: usize) -> Result<Vec<Memory>> {
        let limit = limit.min(i64::MAX as usize) as i64;
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM {} WHERE {} AND source = $2 ORDER BY {}, seq LIMIT $3",
                Dialect::Postgres.from(),
                live_chunks(),
                Dialect::Postgres.first_line()
            ),
            &[&scope.as_str(), &source, &limit],
        )
    }
}
