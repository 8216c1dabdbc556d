//! Memories and metadata on PostgreSQL (as `store.rs` does on SQLite; the embedding
//! cache is in `vectors.rs`).

use std::collections::HashMap;

use amber_core::{Memory, MemoryId, MemoryType, Millis, NewMemory};
use postgres::GenericClient;

use super::{MEMORY_COLUMNS, PgStore, Q, memories, raw_row, raw_row_at, seq_lock};
use crate::Memories;
use crate::keys::{Key, PG_KEY_COLUMNS};
use crate::store::decode;
use crate::{Change, Error, Purged, Result};

/// Converts a seq bound to PostgreSQL's BIGINT.
pub(crate) fn big(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

impl PgStore {
    pub(crate) fn get_in(&self, c: &mut impl GenericClient, id: &str) -> Q<Option<Memory>> {
        let row = c.query_opt(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = $1"), &[&id])?;
        Ok(match row {
            Some(r) => Some(decode(raw_row(&r)?, self.path())?),
            None => None,
        })
    }

    pub(crate) fn seqs(&self, sql: &str, args: &[&(dyn postgres::types::ToSql + Sync)]) -> Result<Vec<u64>> {
        self.read(|c| {
            let st = self.prepared(c, sql)?;
            let rows = c.query(&st, args)?;
            rows.iter().map(|r| Ok(r.try_get::<_, i64>(0)? as u64)).collect()
        })
    }

    /// Runs a query whose columns are [`crate::keys::PG_KEY_COLUMNS`].
    fn keys(&self, sql: &str, args: &[&(dyn postgres::types::ToSql + Sync)]) -> Result<Vec<Key>> {
        self.read(|c| {
            let st = self.prepared(c, sql)?;
            let rows = c.query(&st, args)?;
            rows.iter()
                .map(|r| {
                    let seq: i64 = r.try_get(0)?;
                    let corrupt = |e: amber_core::InvalidInput| Error::Corrupt {
                        path: self.path().to_path_buf(),
                        detail: format!("seq {seq}: {e}"),
                    };
                    let scope = r.try_get::<_, String>(1)?.parse().map_err(corrupt)?;
                    let kind = r.try_get::<_, String>(4)?.parse().map_err(corrupt)?;
                    let marks = amber_core::filing::Marks::from_fields(
                        r.try_get::<_, Option<String>>(5)?.as_deref(),
                        r.try_get(6)?,
                        r.try_get(7)?,
                        r.try_get(8)?,
                        r.try_get::<_, Option<String>>(9)?.as_deref(),
                    );
                    Ok(Key::new(seq as u64, scope, r.try_get(2)?, r.try_get(3)?, kind, marks))
                })
                .collect()
        })
    }

    pub(crate) fn query_memories(
        &self,
        sql: &str,
        args: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Memory>> {
        self.read(|c| {
            let st = self.prepared(c, sql)?;
            memories(self.path(), &c.query(&st, args)?)
        })
    }

    pub(crate) fn number(&self, sql: &str, args: &[&(dyn postgres::types::ToSql + Sync)]) -> Result<u64> {
        self.read(|c| {
            let st = self.prepared(c, sql)?;
            Ok(c.query_one(&st, args)?.try_get::<_, i64>(0)? as u64)
        })
    }
}

/// Notes in the change log that the memory `seq` (filed in `scope`) was forgotten or
/// moved, or that its session context changed (the memory before it was purged); the
/// caller's transaction holds the seq lock, so changes commit in order.
pub(crate) fn log_change(tx: &mut postgres::Transaction<'_>, seq: u64, scope: &str) -> super::Q<()> {
    tx.execute(
        "WITH c AS (UPDATE amber_seq SET changes = changes + 1 RETURNING changes)
         INSERT INTO amber_changes (change, seq, scope) SELECT c.changes, $1, $2 FROM c",
        &[&big(seq), &scope],
    )?;
    super::listen::notify(tx)
}

impl Memories for PgStore {
    fn insert_batch(&mut self, ms: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>> {
        for m in ms {
            m.validate()?;
        }
        let cols = MEMORY_COLUMNS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", ");
        self.write(|c| {
            let mut tx = c.transaction()?;
            seq_lock(&mut tx)?;
            // Per memory, one statement drops a forgotten row with this id, takes the
            // next seq (every filing takes one, a duplicate too, as SQLite's
            // AUTOINCREMENT does: the same writes give the same seqs on both stores)
            // and finds the live row already there; a second files it when new.
            let claim = tx.prepare(&format!(
                "WITH gone AS (DELETE FROM memories WHERE id = $1 AND forgotten_at IS NOT NULL),
                      s AS (UPDATE amber_seq SET seq = seq + 1 RETURNING seq)
                 SELECT s.seq, {cols} FROM s LEFT JOIN memories m ON m.id = $1 AND m.forgotten_at IS NULL"
            ))?;
            let file = tx.prepare(&format!(
                "INSERT INTO memories (seq, id, scope, content, kind, source, author, session_id, created_at, event_time, metadata, recipient, reply_to, supersedes)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
                 RETURNING {MEMORY_COLUMNS}"
            ))?;
            let mut out = Vec::with_capacity(ms.len());
            for m in ms {
                let id = m.id();
                let row = tx.query_one(&claim, &[&id.as_str()])?;
                let seq: i64 = row.try_get(0)?;
                if row.try_get::<_, Option<i64>>(1)?.is_some() {
                    // A raw capture a person files again with a durable type is promoted.
                    if m.kind != MemoryType::Event && crate::store::promotes(m) {
                        let promoted = tx.query_opt(
                            &format!(
                                "UPDATE memories SET kind = $2,
                                        metadata = jsonb_set(metadata::jsonb, '{{trust}}', '\"person\"')::text
                                 WHERE id = $1 AND kind = '{}' AND forgotten_at IS NULL
                                 RETURNING {MEMORY_COLUMNS}",
                                MemoryType::Event.as_str()
                            ),
                            &[&id.as_str(), &m.kind.as_str()],
                        )?;
                        if let Some(r) = promoted {
                            out.push((decode(raw_row_at(&r, 0)?, self.path())?, false));
                            continue;
                        }
                    }
                    out.push((decode(raw_row_at(&row, 1)?, self.path())?, false));
                    continue;
                }
                let supersedes =
                    (!m.supersedes.is_empty()).then(|| serde_json::json!(m.supersedes).to_string());
                let row = tx.query_one(
                    &file,
                    &[
                        &seq,
                        &id.as_str(),
                        &m.scope.as_str(),
                        &m.content,
                        &m.kind.as_str(),
                        &m.source,
                        &m.author,
                        &m.session_id,
                        &now,
                        &m.event_time,
                        &m.metadata.to_string(),
                        &m.to,
                        &m.reply_to.as_ref().map(|r| r.as_str()),
                        &supersedes,
                    ],
                )?;
                out.push((decode(raw_row(&row)?, self.path())?, true));
            }
            if out.iter().any(|(_, created)| *created) {
                super::listen::notify(&mut tx)?;
            }
            tx.commit()?;
            Ok(out)
        })
    }

    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            seq_lock(&mut tx)?;
            let changed = tx.execute(
                "UPDATE memories SET forgotten_at = $2 WHERE id = $1 AND forgotten_at IS NULL",
                &[&id.as_str(), &now],
            )?;
            let m = self.get_in(&mut tx, id.as_str())?;
            if let (1, Some(m)) = (changed, &m) {
                log_change(&mut tx, m.seq, m.scope.as_str())?;
            }
            tx.commit()?;
            Ok(m.map(|m| (m, changed == 1)))
        })
    }

    fn set_trust(
        &mut self,
        id: &MemoryId,
        trust: amber_core::origin::Trust,
        by: amber_core::origin::SetBy,
        now: Millis,
    ) -> Result<Option<(Memory, bool)>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let Some(mut m) = self.get_in(&mut tx, id.as_str())? else { return Ok(None) };
            let changed = amber_core::origin::set_trust(&mut m.metadata, trust, by, now);
            if changed {
                tx.execute(
                    "UPDATE memories SET metadata = $2 WHERE id = $1",
                    &[&id.as_str(), &m.metadata.to_string()],
                )?;
            }
            tx.commit()?;
            Ok(Some((m, changed)))
        })
    }

    fn purge(&mut self, id: &MemoryId) -> Result<Purged> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            seq_lock(&mut tx)?;
            // Its links first, while a role under row-level security still sees them
            // through the memory.
            tx.execute(
                "DELETE FROM links WHERE (from_id = $1 OR to_id = $1)
                   AND EXISTS (SELECT 1 FROM memories WHERE id = $1 AND forgotten_at IS NOT NULL)",
                &[&id.as_str()],
            )?;
            let deleted = tx.query_opt(
                "DELETE FROM memories WHERE id = $1 AND forgotten_at IS NOT NULL RETURNING seq, scope, session_id",
                &[&id.as_str()],
            )?;
            let out = if let Some(row) = deleted {
                // The live memory after it in its session may still carry its text in its
                // session context on a node that was down when it was forgotten: logged,
                // so every node embeds that context again.
                let (seq, scope, session): (i64, String, Option<String>) =
                    (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
                if let Some(session) = session {
                    let next = tx.query_opt(
                        "SELECT seq FROM memories WHERE scope = $1 AND session_id = $2 AND seq > $3
                           AND forgotten_at IS NULL ORDER BY seq LIMIT 1",
                        &[&scope, &session, &seq],
                    )?;
                    if let Some(next) = next {
                        log_change(&mut tx, next.try_get::<_, i64>(0)? as u64, &scope)?;
                    }
                }
                Purged::Deleted
            } else if tx.query_opt("SELECT 1 FROM memories WHERE id = $1", &[&id.as_str()])?.is_some() {
                Purged::NotForgotten
            } else {
                Purged::NotFound
            };
            tx.commit()?;
            Ok(out)
        })
    }

    /// The changes other nodes must follow, after change `after`, oldest first.
    fn changes_after(&self, after: u64, limit: usize) -> Result<Vec<Change>> {
        let rows: Vec<(i64, i64, String)> = self.read(|c| {
            let st = self.prepared(
                c,
                "SELECT change, seq, scope FROM amber_changes WHERE change > $1 ORDER BY change LIMIT $2",
            )?;
            let rows = c.query(&st, &[&big(after), &(limit.min(i64::MAX as usize) as i64)])?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))).collect()
        })?;
        rows.into_iter()
            .map(|(change, seq, scope)| {
                Ok(Change {
                    change: change as u64,
                    seq: seq as u64,
                    scope: scope.parse().map_err(|e| Error::Corrupt {
                        path: self.path().to_path_buf(),
                        detail: format!("amber_changes.scope {scope:?}: {e}"),
                    })?,
                })
            })
            .collect()
    }

    /// The newest change number given.
    fn max_change(&self) -> Result<u64> {
        self.number("SELECT changes FROM amber_seq", &[])
    }

    fn forgotten_seqs(&self) -> Result<Vec<u64>> {
        self.seqs("SELECT seq FROM memories WHERE forgotten_at IS NOT NULL ORDER BY seq", &[])
    }

    fn forgotten_session_keys(&self) -> Result<Vec<Key>> {
        let sql = format!(
            "SELECT {PG_KEY_COLUMNS} FROM memories
             WHERE forgotten_at IS NOT NULL AND session_id IS NOT NULL ORDER BY seq"
        );
        self.keys(&sql, &[])
    }

    fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = $1");
        self.read(|c| {
            let st = self.prepared(c, &sql)?;
            let row = c.query_opt(&st, &[&id.as_str()])?;
            Ok(match row {
                Some(r) => Some(decode(raw_row(&r)?, self.path())?),
                None => None,
            })
        })
    }

    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
        let wanted: Vec<i64> = seqs.iter().map(|s| big(*s)).collect();
        let found = self.query_memories(
            &format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE seq = ANY($1) AND forgotten_at IS NULL"),
            &[&wanted],
        )?;
        let mut found: HashMap<u64, Memory> = found.into_iter().map(|m| (m.seq, m)).collect();
        Ok(seqs.iter().filter_map(|s| found.remove(s)).collect())
    }

    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>> {
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE seq > $1 AND seq <= $2 AND forgotten_at IS NULL ORDER BY seq LIMIT $3"
            ),
            &[&big(after), &big(through), &(limit as i64)],
        )
    }

    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>> {
        let sql = format!(
            "SELECT {PG_KEY_COLUMNS} FROM memories
             WHERE seq > $1 AND forgotten_at IS NULL ORDER BY seq LIMIT $2"
        );
        self.keys(&sql, &[&big(after), &(limit as i64)])
    }

    fn count(&self) -> Result<u64> {
        self.number("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL", &[])
    }

    fn count_raw_captures(&self) -> Result<u64> {
        self.number(
            "SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL AND kind = 'event'
               AND (session_id IS NOT NULL OR (metadata::jsonb ->> 'captured') = 'true')",
            &[],
        )
    }

    fn count_forgotten(&self) -> Result<u64> {
        self.number("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NOT NULL", &[])
    }

    fn count_through(&self, seq: u64) -> Result<u64> {
        self.number("SELECT COUNT(*) FROM memories WHERE seq <= $1 AND forgotten_at IS NULL", &[&big(seq)])
    }

    fn max_seq(&self) -> Result<u64> {
        self.number("SELECT seq FROM amber_seq", &[])
    }

    fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT scope, COUNT(*) FROM memories WHERE forgotten_at IS NULL GROUP BY scope ORDER BY scope COLLATE \"C\"",
                &[],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get::<_, i64>(1)? as u64))).collect()
        })
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|c| Ok(c.query_opt("SELECT value FROM meta WHERE key = $1", &[&key])?.map(|r| r.get(0))))
    }

    /// Sets a metadata value. Under row-level security (schema 6) a role adds a new key
    /// but changes an existing one only as the owner: for another role the update
    /// changes nothing (and is no error).
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let added = tx.execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                &[&key, &value],
            )?;
            if added == 0 {
                tx.execute("UPDATE meta SET value = $2 WHERE key = $1", &[&key, &value])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// PostgreSQL checks its own pages; this checks what Amber relies on: the schema
    /// version, and that the seq counter is at or above every memory's seq.
    fn integrity_check(&self) -> Result<bool> {
        self.read(|c| {
            let row = c.query_one(
                "SELECT (SELECT version FROM amber_schema) = $1
                    AND (SELECT seq FROM amber_seq) >= COALESCE((SELECT MAX(seq) FROM memories), 0)",
                &[&super::schema::PG_SCHEMA_VERSION],
            )?;
            Ok(row.try_get::<_, Option<bool>>(0)?.unwrap_or(false))
        })
    }
}
