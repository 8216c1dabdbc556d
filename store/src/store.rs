//! The SQLite store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use amber_core::{Memory, MemoryId, Millis, NewMemory, Scope};
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

/// The SQLite store: memories verbatim, the embedding cache, and metadata.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const MEMORY_COLUMNS: &str =
    "seq, id, scope, content, kind, source, author, session_id, created_at, event_time, metadata";

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

    fn sql(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
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
    /// batch collapse to the first.
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
                    "INSERT INTO memories (id, scope, content, kind, source, author, session_id, created_at, event_time, metadata)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                     ON CONFLICT(id) DO NOTHING",
                )
                .map_err(sql)?;
            let mut select = tx
                .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
                .map_err(sql)?;
            for m in memories {
                let id = m.id();
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
                    ])
                    .map_err(sql)?;
                let row = select.query_row([id.as_str()], raw_row).map_err(sql)?;
                out.push((decode(row, &path)?, changed == 1));
            }
        }
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// The memory with this id.
    pub fn get(&self, id: &MemoryId) -> Result<Option<Memory>> {
        let row = self
            .conn
            .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.as_str()], raw_row).optional())
            .map_err(self.sql())?;
        row.map(|r| decode(r, &self.path)).transpose()
    }

    /// The memories with these seqs, in the order asked; unknown seqs are skipped.
    pub fn get_by_seqs(&self, seqs: &[u64]) -> Result<Vec<Memory>> {
        let mut found: HashMap<u64, Memory> = HashMap::with_capacity(seqs.len());
        for batch in seqs.chunks(LOOKUP_BATCH) {
            let marks = vec!["?"; batch.len()].join(",");
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE seq IN ({marks})"))
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

    /// Up to `limit` memories with seq greater than `after`, in seq order.
    pub fn scan(&self, after: u64, limit: usize) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE seq > ?1 ORDER BY seq LIMIT ?2"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![after as i64, limit as i64], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// Up to `limit` (seq, scope, time) triples with seq greater than `after`, in seq
    /// order, where time is the event time, else the filing time. Cheaper than
    /// [`Store::scan`] when the content is not needed.
    pub fn scan_keys(&self, after: u64, limit: usize) -> Result<Vec<(u64, Scope, Millis)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, scope, COALESCE(event_time, created_at) FROM memories WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map(params![after as i64, limit as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
            })
            .map_err(self.sql())?;
        rows.map(|r| {
            let (seq, scope, time) = r.map_err(self.sql())?;
            let scope = scope
                .parse()
                .map_err(|e| Error::Corrupt { path: self.path.clone(), detail: format!("seq {seq}: {e}") })?;
            Ok((seq as u64, scope, time))
        })
        .collect()
    }

    /// The number of memories.
    pub fn count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The number of memories with seq at or below `seq`.
    pub fn count_through(&self, seq: u64) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM memories WHERE seq <= ?1", [seq as i64], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The highest seq in use (0 when empty).
    pub fn max_seq(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM memories", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The distinct scopes and how many memories each holds.
    pub fn scope_counts(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT scope, COUNT(*) FROM memories GROUP BY scope ORDER BY scope")
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

    /// Caches vectors for chunk hashes under `model` (one transaction).
    pub fn put_vectors(&mut self, model: &str, vectors: &[([u8; 32], &[f32])]) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings (model, chunk_hash, vector) VALUES (?1, ?2, ?3)",
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

type RawRow = (
    i64,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
    String,
);

fn raw_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
    ))
}

fn decode(row: RawRow, path: &Path) -> Result<Memory> {
    let (seq, id, scope, content, kind, source, author, session_id, created_at, event_time, metadata) = row;
    let corrupt = |detail: String| Error::Corrupt { path: path.to_path_buf(), detail };
    Ok(Memory {
        id: id.parse().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        seq: seq as u64,
        content,
        scope: scope.parse::<Scope>().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        kind: kind.parse().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        source,
        author,
        session_id,
        created_at,
        event_time,
        metadata: serde_json::from_str(&metadata)
            .map_err(|e| corrupt(format!("seq {seq}: metadata: {e}")))?,
    })
}

fn bytes_to_vector(blob: &[u8], path: &Path) -> Result<Vector> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::Corrupt {
            path: path.into(),
            detail: format!("vector blob of {} bytes", blob.len()),
        });
    }
    Ok(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
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
