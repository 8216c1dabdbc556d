//! Documents as sources on the team store: the SQLite store's `documents.rs`, ported.

use amber_core::{Memory, Scope};

use super::{MEMORY_COLUMNS, PgStore};
use crate::Documents;
use crate::Result;

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
}
