//! Which memories mention which entities (`kg_mentions`): recorded as facts are added
//! from memories, read for traversal and for the entity hits of recall.

use amber_core::{Memory, MemoryId};
use rusqlite::params;

use super::sql_err;
use crate::Mentions;
use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Result, Store};

impl Mentions for Store {
    /// Records that memories mention entities; returns how many links were new.
    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        if pairs.is_empty() {
            return Ok(0);
        }
        let path = self.path.clone();
        let sql = sql_err(&path);
        let tx = self.conn.transaction().map_err(&sql)?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR IGNORE INTO kg_mentions (entity, memory) VALUES (?1, ?2)")
                .map_err(&sql)?;
            for (e, m) in pairs {
                added += stmt.execute(params![e, m.as_str()]).map_err(&sql)?;
            }
        }
        tx.commit().map_err(&sql)?;
        Ok(added)
    }

    /// The live memories that mention an entity, newest first, at most `limit`.
    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        let cols = MEMORY_COLUMNS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", ");
        // The limit is written into the SQL (one cached statement per value), so the plan
        // never depends on a bound value (see `Store::open_reader` for why that matters).
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {cols} FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT {limit}"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![entity], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// How many live memories mention each entity.
    fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        self.conn
            .prepare_cached(
                "SELECT count(*) FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL",
            )
            .map_err(self.sql())?
            .query_row([entity], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The seqs of live memories that mention any of these entities, newest first per
    /// entity, at most `per_entity` each: (entity, seq).
    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT m.seq FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT ?2",
            )
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for &e in entities {
            let rows =
                stmt.query_map(params![e, per_entity as i64], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
            for r in rows {
                out.push((e, r.map_err(self.sql())? as u64));
            }
        }
        Ok(out)
    }
}
