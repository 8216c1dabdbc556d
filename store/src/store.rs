//! The SQLite store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use amber_core::{Memory, MemoryId, MemoryType, Millis, NewMemory, Scope};
use rusqlite::{Connection, OptionalExtension, params};

use crate::Memories;
use crate::keys::{Key, SQLITE_KEY_COLUMNS};
use crate::schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::{Error, Result};

/// An embedding vector.
pub type Vector = Vec<f32>;

/// How long a writer waits for a lock held by another connection before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Rows fetched per statement when looking up many seqs at once (SQLite's default
/// limit on bound parameters is far above this).
const LOOKUP_BATCH: usize = 500;

/// A change another node must follow in its derived indexes: the memory `seq`, filed in
/// `scope`, was forgotten (or purged after) or moved to another scope, or its session
/// context changed (the memory before it in its session was purged). Only a store
/// several nodes share (the team's PostgreSQL) keeps this log.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Its number, in commit order.
    pub change: u64,
    /// The memory's seq.
    pub seq: u64,
    /// Its scope before the change.
    pub scope: Scope,
}

/// The SQLite store: memories verbatim, the embedding cache, and metadata.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

pub(crate) const MEMORY_COLUMNS: &str = "seq, id, scope, content, kind, source, author, session_id, created_at, event_time, metadata, forgotten_at, recipient, reply_to, supersedes, weight, used_at, archived_at, superseded_by";

/// What [`Store::purge`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purged {
    /// The forgotten memory's row is gone.
    Deleted,
    /// The memory exists but is not forgotten: nothing was deleted.
    NotForgotten,
    /// No memory has this id.
    NotFound,
}

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode with full fsync on
    /// commit, and migrates it to the current schema.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path).map_err(|source| Error::Sqlite { path: path.into(), source })?;
        Self::init(conn, path.to_path_buf())
    }

    /// An in-memory store, for tests and throwaway use.
    pub fn open_in_memory() -> Result<Store> {
        let path = PathBuf::from(":memory:");
        let conn =
            Connection::open_in_memory().map_err(|source| Error::Sqlite { path: path.clone(), source })?;
        Self::init(conn, path)
    }

    /// Opens another connection to an existing store at `path` for reading only
    /// (`query_only`), as a concurrent reader next to the connection that writes (WAL
    /// lets readers and the writer proceed together). The store must already be at this
    /// binary's schema version: open it with [`Store::open`] first.
    pub fn open_reader(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let sql = |source| Error::Sqlite { path: path.into(), source };
        let flags =
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        conn.pragma_update(None, "query_only", "ON").map_err(sql)?;
        // Plans that do not depend on bound values. Otherwise SQLite (3.54 here) marks
        // most cached statements (any `LIMIT ?`, any `col = ?` the planner weighs as a
        // filter) to be re-prepared when rebound, and rusqlite clears the bindings of
        // every statement it caches, so each cached read was parsed again on each use:
        // up to a third of a graph traversal's time.
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(sql)?;
        let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
        if found != SCHEMA_VERSION {
            return Err(Error::Corrupt {
                path: path.into(),
                detail: format!("a reader found schema version {found}, expected {SCHEMA_VERSION}"),
            });
        }
        Ok(Store { conn, path: path.to_path_buf() })
    }

    fn init(conn: Connection, path: PathBuf) -> Result<Store> {
        let mut store = Store { conn, path };
        let path = store.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        store.conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Two connections write a store (the engine's writer and its embedding cache's): a
        // transaction takes the write lock as it begins, so one that read before writing is
        // never refused (SQLITE_BUSY) for the other's commit in between; it waits instead.
        store.conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        // WAL: readers never block the writer. synchronous=FULL: a commit that returned
        // is on disk, so an acknowledged write survives a crash or power loss.
        store.conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        store.conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
        store.conn.pragma_update(None, "foreign_keys", "ON").map_err(sql)?;
        store.migrate()?;
        Ok(store)
    }

    pub(crate) fn sql(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |source| Error::Sqlite { path: self.path.clone(), source }
    }

    fn migrate(&mut self) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let found: i64 = self.conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
        if found > SCHEMA_VERSION {
            return Err(Error::SchemaTooNew { path: self.path.clone(), found, known: SCHEMA_VERSION });
        }
        for (version, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            let tx = self.conn.transaction().map_err(sql)?;
            tx.execute_batch(migration).map_err(sql)?;
            tx.pragma_update(None, "user_version", version as i64 + 1).map_err(sql)?;
            tx.commit().map_err(sql)?;
            tracing::info!(path = %self.path.display(), to = version + 1, "migrated store schema");
        }
        Ok(())
    }

    /// The database path (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Files one memory. Returns the stored memory and whether it was new; filing the
    /// same content into the same scope again returns the existing one unchanged.
    /// The memory is validated first; the write is committed when this returns.
    pub fn insert(&mut self, memory: &NewMemory, now: Millis) -> Result<(Memory, bool)> {
        let mut out = self.insert_batch(std::slice::from_ref(memory), now)?;
        Ok(out.remove(0))
    }

    /// Runs a query whose columns are [`crate::keys::SQLITE_KEY_COLUMNS`]. The text
    /// columns are read in place (no copy but the scope and session a key keeps), and a
    /// scope equal to the last row's is not parsed again: a start reads every live key.
    fn keys(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Key>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(self.sql())?;
        let mut rows = stmt.query(args).map_err(self.sql())?;
        let mut out: Vec<Key> = Vec::new();
        while let Some(r) = rows.next().map_err(self.sql())? {
            let text = |i: usize| r.get_ref(i).and_then(|v| Ok(v.as_str_or_null()?));
            let seq = r.get::<_, i64>(0).map_err(self.sql())?;
            let corrupt = |e: amber_core::InvalidInput| Error::Corrupt {
                path: self.path.clone(),
                detail: format!("seq {seq}: {e}"),
            };
            let scope_text = text(1).map_err(self.sql())?.unwrap_or_default();
            let scope = match out.last() {
                Some(k) if k.scope.as_str() == scope_text => k.scope.clone(),
                _ => scope_text.parse::<Scope>().map_err(corrupt)?,
            };
            let kind = text(4).map_err(self.sql())?.unwrap_or_default().parse().map_err(corrupt)?;
            let marks = amber_core::filing::Marks::from_fields(
                text(5).map_err(self.sql())?,
                r.get::<_, bool>(6).map_err(self.sql())?,
                r.get::<_, bool>(7).map_err(self.sql())?,
                r.get::<_, bool>(8).map_err(self.sql())?,
                text(9).map_err(self.sql())?,
            );
            let time = r.get::<_, i64>(2).map_err(self.sql())?;
            let session_id = text(3).map_err(self.sql())?.map(str::to_string);
            out.push(Key::new(seq as u64, scope, time, session_id, kind, marks));
        }
        Ok(out)
    }
}

/// A memory's row as read, before its fields are checked.
pub(crate) struct RawRow {
    pub(crate) seq: i64,
    pub(crate) id: String,
    pub(crate) scope: String,
    pub(crate) content: String,
    pub(crate) kind: String,
    pub(crate) source: Option<String>,
    pub(crate) author: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) created_at: i64,
    pub(crate) event_time: Option<i64>,
    pub(crate) metadata: String,
    pub(crate) forgotten_at: Option<i64>,
    pub(crate) recipient: Option<String>,
    pub(crate) reply_to: Option<String>,
    pub(crate) supersedes: Option<String>,
    pub(crate) weight: f64,
    pub(crate) used_at: Option<i64>,
    pub(crate) archived_at: Option<i64>,
    pub(crate) superseded_by: Option<String>,
}

pub(crate) fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        seq: r.get(0)?,
        id: r.get(1)?,
        scope: r.get(2)?,
        content: r.get(3)?,
        kind: r.get(4)?,
        source: r.get(5)?,
        author: r.get(6)?,
        session_id: r.get(7)?,
        created_at: r.get(8)?,
        event_time: r.get(9)?,
        metadata: r.get(10)?,
        forgotten_at: r.get(11)?,
        recipient: r.get(12)?,
        reply_to: r.get(13)?,
        supersedes: r.get(14)?,
        weight: r.get(15)?,
        used_at: r.get(16)?,
        archived_at: r.get(17)?,
        superseded_by: r.get(18)?,
    })
}

pub(crate) fn decode(row: RawRow, path: &Path) -> Result<Memory> {
    let seq = row.seq;
    let corrupt = |detail: String| Error::Corrupt { path: path.to_path_buf(), detail };
    let id = |s: String| s.parse::<MemoryId>().map_err(|e| corrupt(format!("seq {seq}: {e}")));
    let supersedes = match row.supersedes {
        Some(json) => serde_json::from_str::<Vec<MemoryId>>(&json)
            .map_err(|e| corrupt(format!("seq {seq}: supersedes: {e}")))?,
        None => Vec::new(),
    };
    Ok(Memory {
        id: id(row.id)?,
        seq: seq as u64,
        content: row.content,
        scope: row.scope.parse::<Scope>().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        kind: row.kind.parse().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        source: row.source,
        author: row.author,
        session_id: row.session_id,
        created_at: row.created_at,
        event_time: row.event_time,
        metadata: serde_json::from_str(&row.metadata)
            .map_err(|e| corrupt(format!("seq {seq}: metadata: {e}")))?,
        forgotten_at: row.forgotten_at,
        to: row.recipient,
        reply_to: row.reply_to.map(id).transpose()?,
        supersedes,
        weight: row.weight as f32,
        used_at: row.used_at,
        archived_at: row.archived_at,
        superseded_by: row.superseded_by.map(id).transpose()?,
    })
}

/// True when filing `m` over an existing raw capture promotes it: a person's filing
/// (the daemon stamps `trust`; see `amber_core::origin`).
pub(crate) fn promotes(m: &NewMemory) -> bool {
    amber_core::origin::trust_of(&m.metadata) == amber_core::origin::Trust::Person
}

impl Memories for Store {
    /// Files many memories in one transaction (all or nothing). Duplicates inside the
    /// batch collapse to the first. A person (metadata `trust: person`, which the daemon
    /// stamps) filing the content of a live raw capture (type `event`) again with a
    /// durable type promotes it: it takes that type and the person's trust (`created`
    /// false).
    ///
    /// Content identical to a *forgotten* memory (same scope, same content, so the same
    /// id) is filed anew: the forgotten row is replaced by this write, with a new `seq`
    /// and `created_at` and this write's fields, and it counts as created. So remembering
    /// something again after forgetting it is the same as remembering it after a purge.
    ///
    /// Each memory is validated ([`NewMemory::validate`]) before anything is written.
    fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>> {
        for m in memories {
            m.validate()?;
        }
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut out = Vec::with_capacity(memories.len());
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO memories (id, scope, content, kind, source, author, session_id, created_at, event_time, metadata, recipient, reply_to, supersedes)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                     ON CONFLICT(id) DO NOTHING",
                )
                .map_err(sql)?;
            let mut select = tx
                .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
                .map_err(sql)?;
            let mut drop_forgotten = tx
                .prepare_cached("DELETE FROM memories WHERE id = ?1 AND forgotten_at IS NOT NULL")
                .map_err(sql)?;
            // A raw capture a person files again with a durable type is promoted: it takes
            // the type, and the person's trust.
            let mut promote = tx
                .prepare_cached(&format!(
                    "UPDATE memories SET kind = ?2, metadata = json_set(metadata, '$.trust', 'person')
                     WHERE id = ?1 AND kind = '{}' AND forgotten_at IS NULL",
                    MemoryType::Event.as_str()
                ))
                .map_err(sql)?;
            for m in memories {
                let id = m.id();
                drop_forgotten.execute([id.as_str()]).map_err(sql)?;
                let changed = insert
                    .execute(params![
                        id.as_str(),
                        m.scope.as_str(),
                        m.content,
                        m.kind.as_str(),
                        m.source,
                        m.author,
                        m.session_id,
                        now,
                        m.event_time,
                        m.metadata.to_string(),
                        m.to,
                        m.reply_to.as_ref().map(|r| r.as_str()),
                        (!m.supersedes.is_empty()).then(|| serde_json::json!(m.supersedes).to_string()),
                    ])
                    .map_err(sql)?;
                if changed == 0 && m.kind != MemoryType::Event && promotes(m) {
                    promote.execute(params![id.as_str(), m.kind.as_str()]).map_err(sql)?;
                }
                let row = select.query_row([id.as_str()], raw_row).map_err(sql)?;
                out.push((decode(row, &path)?, changed == 1));
            }
        }
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Marks the memory with this id forgotten at `now` (one transaction). Returns the
    /// memory with `forgotten_at` set and whether this call forgot it (false when it was
    /// already forgotten: its `forgotten_at` is kept). None when no memory has this id.
    fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let changed = tx
            .execute(
                "UPDATE memories SET forgotten_at = ?2 WHERE id = ?1 AND forgotten_at IS NULL",
                params![id.as_str(), now],
            )
            .map_err(sql)?;
        let row = tx
            .query_row(
                &format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"),
                [id.as_str()],
                raw_row,
            )
            .optional()
            .map_err(sql)?;
        tx.commit().map_err(sql)?;
        row.map(|r| Ok((decode(r, &path)?, changed == 1))).transpose()
    }

    fn set_trust(
        &mut self,
        id: &MemoryId,
        trust: amber_core::origin::Trust,
        by: amber_core::origin::SetBy,
        now: Millis,
    ) -> Result<Option<(Memory, bool)>> {
        crate::trust::set_trust(self, id, trust, by, now)
    }

    /// Deletes a forgotten memory's row for good; a memory that is not forgotten is left
    /// alone. The embedding cache is the engine's to clear (`forget_vectors`).
    fn purge(&mut self, id: &MemoryId) -> Result<Purged> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let deleted = tx
            .execute("DELETE FROM memories WHERE id = ?1 AND forgotten_at IS NOT NULL", [id.as_str()])
            .map_err(sql)?;
        let out = if deleted == 1 {
            tx.execute("DELETE FROM links WHERE from_id = ?1 OR to_id = ?1", [id.as_str()]).map_err(sql)?;
            Purged::Deleted
        } else {
            let exists = tx
                .query_row("SELECT 1 FROM memories WHERE id = ?1", [id.as_str()], |_| Ok(()))
                .optional()
                .map_err(sql)?
                .is_some();
            if exists { Purged::NotForgotten } else { Purged::NotFound }
        };
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// The seqs of the forgotten memories, ascending.
    fn forgotten_seqs(&self) -> Result<Vec<u64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq FROM memories WHERE forgotten_at IS NOT NULL ORDER BY seq")
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
        rows.map(|r| r.map(|s| s as u64).map_err(self.sql())).collect()
    }

    /// The forgotten memories that were filed in a session, by seq.
    fn forgotten_session_keys(&self) -> Result<Vec<Key>> {
        let sql = format!(
            "SELECT {SQLITE_KEY_COLUMNS} FROM memories
             WHERE forgotten_at IS NOT NULL AND session_id IS NOT NULL ORDER BY seq"
        );
        self.keys(&sql, [])
    }

    /// The memory with this id, forgotten or not.
    fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        let row = self
            .conn
            .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.as_str()], raw_row).optional())
            .map_err(self.sql())?;
        row.map(|r| decode(r, &self.path)).transpose()
    }

    /// The live memories with these seqs, in the order asked; unknown and forgotten seqs
    /// are skipped.
    fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
        let mut found: HashMap<u64, Memory> = HashMap::with_capacity(seqs.len());
        for batch in seqs.chunks(LOOKUP_BATCH) {
            let marks = vec!["?"; batch.len()].join(",");
            let mut stmt = self
                .conn
                .prepare(&format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories WHERE seq IN ({marks}) AND forgotten_at IS NULL"
                ))
                .map_err(self.sql())?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(batch.iter().map(|s| *s as i64)), raw_row)
                .map_err(self.sql())?;
            for row in rows {
                let m = decode(row.map_err(self.sql())?, &self.path)?;
                found.insert(m.seq, m);
            }
        }
        Ok(seqs.iter().filter_map(|s| found.remove(s)).collect())
    }

    /// Up to `limit` live (not forgotten) memories with `after < seq <= through`, in seq
    /// order.
    fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE seq > ?1 AND seq <= ?2 AND forgotten_at IS NULL ORDER BY seq LIMIT ?3"
            ))
            .map_err(self.sql())?;
        let rows = stmt
            .query_map(params![after as i64, through.min(i64::MAX as u64) as i64, limit as i64], raw_row)
            .map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// The [`Key`]s of up to `limit` live memories with seq greater than `after`, in seq
    /// order. Cheaper than [`Store::scan`] when the content is not needed.
    fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>> {
        let sql = format!(
            "SELECT {SQLITE_KEY_COLUMNS} FROM memories
             WHERE seq > ?1 AND forgotten_at IS NULL ORDER BY seq LIMIT ?2"
        );
        self.keys(&sql, params![after as i64, limit as i64])
    }

    /// The number of live (not forgotten) memories.
    fn count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of live raw captures: memories of type `event` filed in a session or
    /// by a capture (`captured` in the metadata).
    fn count_raw_captures(&self) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL AND kind = 'event'
                   AND (session_id IS NOT NULL OR json_extract(metadata, '$.captured') = 1)",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of forgotten (not yet purged) memories.
    fn count_forgotten(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NOT NULL", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of live memories with seq at or below `seq`: what an index that is
    /// complete through `seq` holds.
    fn count_through(&self, seq: u64) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM memories WHERE seq <= ?1 AND forgotten_at IS NULL",
                [seq.min(i64::MAX as u64) as i64],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The highest seq ever assigned (0 when none), counting forgotten and purged
    /// memories: seqs are never reused, so this never goes down.
    fn max_seq(&self) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT MAX(COALESCE((SELECT MAX(seq) FROM memories), 0),
                            COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0))",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The distinct scopes and how many live memories each holds.
    fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT scope, COUNT(*) FROM memories WHERE forgotten_at IS NULL GROUP BY scope ORDER BY scope",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))).map_err(self.sql())?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.sql())
    }

    /// A metadata value.
    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// Sets a metadata value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
            .map(|_| ())
            .map_err(self.sql())
    }

    /// Runs SQLite's integrity check; true when it reports `ok`.
    fn integrity_check(&self) -> Result<bool> {
        let r: String =
            self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(self.sql())?;
        Ok(r == "ok")
    }
}

#[cfg(test)]
mod tests;
