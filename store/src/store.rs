//! The SQLite store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use amber_core::{Memory, MemoryId, MemoryType, Millis, NewMemory, Scope};
use rusqlite::{Connection, OptionalExtension, params};

use crate::schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::{Error, Result};

/// An embedding vector.
pub type Vector = Vec<f32>;

/// How long a writer waits for a lock held by another connection before giving up.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Rows fetched per statement when looking up many seqs at once (SQLite's default
/// limit on bound parameters is far above this).
const LOOKUP_BATCH: usize = 500;

/// What the engine's filters need of a live memory, without its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// Its position in filing order.
    pub seq: u64,
    /// Where it lives.
    pub scope: Scope,
    /// The event time, else the filing time.
    pub time: Millis,
    /// The session it was filed in, if any.
    pub session_id: Option<String>,
    /// Its type.
    pub kind: MemoryType,
}

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
    pub fn insert_batch(&mut self, memories: &[NewMemory], now: Millis) -> Result<Vec<(Memory, bool)>> {
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
    pub fn forget(&mut self, id: &MemoryId, now: Millis) -> Result<Option<(Memory, bool)>> {
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

    /// Deletes a forgotten memory's row for good; a memory that is not forgotten is left
    /// alone. The embedding cache is kept (it holds vectors keyed by chunk hash, no text).
    pub fn purge(&mut self, id: &MemoryId) -> Result<Purged> {
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
    pub fn forgotten_seqs(&self) -> Result<Vec<u64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq FROM memories WHERE forgotten_at IS NOT NULL ORDER BY seq")
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
        rows.map(|r| r.map(|s| s as u64).map_err(self.sql())).collect()
    }

    /// The forgotten memories that were filed in a session, by seq.
    pub fn forgotten_session_keys(&self) -> Result<Vec<Key>> {
        self.keys(
            "SELECT seq, scope, COALESCE(event_time, created_at), session_id, kind FROM memories
             WHERE forgotten_at IS NOT NULL AND session_id IS NOT NULL ORDER BY seq",
            [],
        )
    }

    /// The memory with this id, forgotten or not.
    pub fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        let row = self
            .conn
            .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.as_str()], raw_row).optional())
            .map_err(self.sql())?;
        row.map(|r| decode(r, &self.path)).transpose()
    }

    /// The live memories with these seqs, in the order asked; unknown and forgotten seqs
    /// are skipped.
    pub fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
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
    pub fn scan(&self, after: u64, through: u64, limit: usize) -> Result<Vec<Memory>> {
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
    pub fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<Key>> {
        self.keys(
            "SELECT seq, scope, COALESCE(event_time, created_at), session_id, kind FROM memories
             WHERE seq > ?1 AND forgotten_at IS NULL ORDER BY seq LIMIT ?2",
            params![after as i64, limit as i64],
        )
    }

    /// Runs a query whose columns are seq, scope, time, session id and type.
    fn keys(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Key>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(self.sql())?;
        let rows = stmt
            .query_map(args, |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(self.sql())?;
        rows.map(|r| {
            let (seq, scope, time, session_id, kind) = r.map_err(self.sql())?;
            let corrupt = |e: amber_core::InvalidInput| Error::Corrupt {
                path: self.path.clone(),
                detail: format!("seq {seq}: {e}"),
            };
            let scope = scope.parse().map_err(corrupt)?;
            let kind = kind.parse().map_err(corrupt)?;
            Ok(Key { seq: seq as u64, scope, time, session_id, kind })
        })
        .collect()
    }

    /// The number of live (not forgotten) memories.
    pub fn count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of live raw captures: memories of type `event` filed in a session or
    /// by a capture (`captured` in the metadata).
    pub fn count_raw_captures(&self) -> Result<u64> {
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
    pub fn count_forgotten(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories WHERE forgotten_at IS NOT NULL", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of live memories with seq at or below `seq`: what an index that is
    /// complete through `seq` holds.
    pub fn count_through(&self, seq: u64) -> Result<u64> {
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
    pub fn max_seq(&self) -> Result<u64> {
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
    pub fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT scope, COUNT(*) FROM memories WHERE forgotten_at IS NULL GROUP BY scope ORDER BY scope",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))).map_err(self.sql())?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.sql())
    }

    /// Cached vectors for these chunk hashes under `model`; missing ones are absent.
    pub fn cached_vectors(&self, model: &str, hashes: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vector>> {
        let mut out = HashMap::with_capacity(hashes.len());
        let mut stmt = self
            .conn
            .prepare_cached("SELECT vector FROM embeddings WHERE model = ?1 AND chunk_hash = ?2")
            .map_err(self.sql())?;
        for h in hashes {
            if out.contains_key(h) {
                continue;
            }
            let blob: Option<Vec<u8>> =
                stmt.query_row(params![model, &h[..]], |r| r.get(0)).optional().map_err(self.sql())?;
            if let Some(blob) = blob {
                out.insert(*h, bytes_to_vector(&blob, &self.path)?);
            }
        }
        Ok(out)
    }

    /// Caches vectors for chunk hashes under `model` (one transaction); a hash already
    /// cached keeps its vector, as on the team store.
    pub fn put_vectors(&mut self, model: &str, vectors: &[([u8; 32], &[f32])]) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO embeddings (model, chunk_hash, vector) VALUES (?1, ?2, ?3)",
                )
                .map_err(sql)?;
            for (h, v) in vectors {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![model, &h[..], bytes]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The number of cached vectors under `model`.
    pub fn cached_vector_count(&self, model: &str) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM embeddings WHERE model = ?1", [model], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// Sets a metadata value.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
            .map(|_| ())
            .map_err(self.sql())
    }

    /// Runs SQLite's integrity check; true when it reports `ok`.
    pub fn integrity_check(&self) -> Result<bool> {
        let r: String =
            self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(self.sql())?;
        Ok(r == "ok")
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

pub(crate) fn bytes_to_vector(blob: &[u8], path: &Path) -> Result<Vector> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::Corrupt {
            path: path.into(),
            detail: format!("vector blob of {} bytes", blob.len()),
        });
    }
    Ok(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// True when filing `m` over an existing raw capture promotes it: a person's filing
/// (the daemon stamps `trust`; see `amber_core::origin`).
pub(crate) fn promotes(m: &NewMemory) -> bool {
    amber_core::origin::trust_of(&m.metadata) == amber_core::origin::Trust::Person
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::MemoryType;

    #[test]
    fn idempotent_insert_stores_once() {
        let mut s = Store::open_in_memory().unwrap();
        let m = NewMemory::new("the build uses usearch").of_type(MemoryType::Discovery);
        let (a, new_a) = s.insert(&m, 10).unwrap();
        let (b, new_b) = s.insert(&m, 20).unwrap();
        assert!(new_a);
        assert!(!new_b);
        assert_eq!(a, b);
        assert_eq!(b.created_at, 10, "the second write leaves the first untouched");
        assert_eq!(s.count().unwrap(), 1);
        // the same content in another scope is another memory
        let (c, new_c) = s.insert(&m.clone().in_scope("other".parse().unwrap()), 30).unwrap();
        assert!(new_c);
        assert_ne!(c.id, a.id);
        assert_eq!(s.count().unwrap(), 2);
    }

    #[test]
    fn batch_collapses_duplicates_and_keeps_order() {
        let mut s = Store::open_in_memory().unwrap();
        let batch = vec![NewMemory::new("a"), NewMemory::new("b"), NewMemory::new("a")];
        let out = s.insert_batch(&batch, 1).unwrap();
        assert_eq!(out.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![true, true, false]);
        assert_eq!(out[0].0.id, out[2].0.id);
        assert_eq!(s.count().unwrap(), 2);
        let seqs: Vec<u64> = vec![out[1].0.seq, 999, out[0].0.seq];
        let got = s.get_by_seqs(&seqs).unwrap();
        assert_eq!(got.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), vec!["b", "a"]);
    }

    #[test]
    fn vectors_round_trip_bit_exact() {
        let mut s = Store::open_in_memory().unwrap();
        let v = vec![0.1f32, -2.5, f32::MIN_POSITIVE, 1e30];
        s.put_vectors("m", &[([7u8; 32], &v)]).unwrap();
        let got = s.cached_vectors("m", &[[7u8; 32], [8u8; 32]]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[&[7u8; 32]], v);
        assert!(s.cached_vectors("other-model", &[[7u8; 32]]).unwrap().is_empty());
    }

    #[test]
    fn newer_schema_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("amber.db");
        Store::open(&path).unwrap();
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        }
        let err = Store::open(&path).err().expect("must refuse");
        assert!(matches!(err, Error::SchemaTooNew { found, .. } if found == SCHEMA_VERSION + 1), "{err}");
        let c = Connection::open(&path).unwrap();
        let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, SCHEMA_VERSION + 1);
    }

    #[test]
    fn forget_hides_from_scans_and_purge_deletes_only_forgotten() {
        let mut s = Store::open_in_memory().unwrap();
        let mut in_session = NewMemory::new("c");
        in_session.session_id = Some("s1".into());
        let out = s.insert_batch(&[NewMemory::new("a"), NewMemory::new("b"), in_session], 1).unwrap();
        let (a, b, c) = (out[0].0.clone(), out[1].0.clone(), out[2].0.clone());
        assert_eq!(s.purge(&b.id).unwrap(), Purged::NotForgotten);
        let (gone, fresh) = s.forget(&b.id, 50).unwrap().unwrap();
        assert!(fresh);
        assert_eq!(gone.forgotten_at, Some(50));
        // idempotent: the first time is kept
        let (again, fresh) = s.forget(&b.id, 60).unwrap().unwrap();
        assert!(!fresh);
        assert_eq!(again.forgotten_at, Some(50));
        assert!(s.forget(&NewMemory::new("never").id(), 1).unwrap().is_none());

        assert_eq!(s.get(&b.id).unwrap().unwrap().forgotten_at, Some(50), "get returns it");
        let live: Vec<u64> = s.scan(0, u64::MAX, 10).unwrap().iter().map(|m| m.seq).collect();
        assert_eq!(live, vec![a.seq, c.seq]);
        assert_eq!(s.scan(0, a.seq, 10).unwrap().len(), 1, "through bounds the scan");
        let keys = s.scan_keys(0, 10).unwrap();
        let seqs: Vec<u64> = keys.iter().map(|k| k.seq).collect();
        assert_eq!(seqs, vec![a.seq, c.seq], "forgotten memories have no key");
        assert_eq!(keys[0].session_id, None);
        assert_eq!(keys[1].session_id.as_deref(), Some("s1"), "the engine's neighbour ranking reads it");
        assert_eq!(keys[1].time, 1);
        assert_eq!(s.scan_keys(a.seq, 10).unwrap().len(), 1, "after bounds the scan");
        assert_eq!(s.get_by_seqs(&[a.seq, b.seq, c.seq]).unwrap().len(), 2);
        assert_eq!((s.count().unwrap(), s.count_forgotten().unwrap()), (2, 1));
        assert_eq!(s.count_through(b.seq).unwrap(), 1);
        assert_eq!(s.forgotten_seqs().unwrap(), vec![b.seq]);
        assert_eq!(s.scope_counts().unwrap(), vec![(Scope::default().as_str().to_string(), 2)]);

        let (gone, _) = s.forget(&c.id, 70).unwrap().unwrap();
        assert_eq!(s.purge(&c.id).unwrap(), Purged::Deleted);
        assert_eq!(s.purge(&c.id).unwrap(), Purged::NotFound);
        assert!(s.get(&c.id).unwrap().is_none());
        assert_eq!(s.max_seq().unwrap(), gone.seq, "the highest seq ever assigned survives a purge");
        let (d, _) = s.insert(&NewMemory::new("d"), 80).unwrap();
        assert!(d.seq > gone.seq, "seqs are never reused");
    }

    #[test]
    fn remembering_forgotten_content_files_it_anew() {
        let mut s = Store::open_in_memory().unwrap();
        let (a, _) = s.insert(&NewMemory::new("a"), 1).unwrap();
        s.insert(&NewMemory::new("b"), 2).unwrap();
        s.forget(&a.id, 3).unwrap();
        let out = s
            .insert_batch(&[NewMemory::new("a").of_type(MemoryType::Event), NewMemory::new("a")], 4)
            .unwrap();
        assert_eq!(out.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![true, false]);
        let back = &out[0].0;
        assert_eq!(back.id, a.id);
        assert!(back.seq > a.seq, "a new seq, so the indexes see a new memory");
        assert_eq!((back.created_at, back.forgotten_at, back.kind), (4, None, MemoryType::Event));
        assert_eq!(out[1].0, *back);
        assert_eq!((s.count().unwrap(), s.count_forgotten().unwrap()), (2, 0));
    }

    #[test]
    fn a_version_1_store_is_migrated_keeping_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("amber.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
            c.execute(
                "INSERT INTO memories (id, scope, content, kind, created_at, metadata)
                 VALUES (?1, 'default', 'from v1', 'fact', 7, '{}')",
                [NewMemory::new("from v1").id().as_str()],
            )
            .unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        let v: i64 = s.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let m = s.get(&NewMemory::new("from v1").id()).unwrap().unwrap();
        assert_eq!((m.content.as_str(), m.created_at, m.forgotten_at), ("from v1", 7, None));
        assert_eq!(s.count().unwrap(), 1);
        assert!(s.forget(&m.id, 9).unwrap().unwrap().1);
        assert!(s.integrity_check().unwrap());
    }

    #[test]
    fn a_reader_sees_commits_and_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("amber.db");
        let mut w = Store::open(&path).unwrap();
        let r = Store::open_reader(&path).unwrap();
        let (a, _) = w.insert(&NewMemory::new("seen"), 1).unwrap();
        assert_eq!(r.get(&a.id).unwrap().unwrap().content, "seen");
        let err = r.conn.execute("DELETE FROM memories", []).unwrap_err();
        assert!(err.to_string().contains("readonly") || err.to_string().contains("read"), "{err}");
        assert!(Store::open_reader(&dir.path().join("absent.db")).is_err());
    }

    #[test]
    fn reopen_keeps_data_and_passes_integrity_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("amber.db");
        let id = {
            let mut s = Store::open(&path).unwrap();
            s.insert(&NewMemory::new("kept"), 5).unwrap().0.id
        };
        let s = Store::open(&path).unwrap();
        assert_eq!(s.get(&id).unwrap().unwrap().content, "kept");
        assert!(s.integrity_check().unwrap());
    }
}
