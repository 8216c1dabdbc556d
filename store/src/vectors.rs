//! The embedding cache: vectors by model and chunk hash, so nothing is embedded twice
//! (a rebuilt index reads them back).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{OptionalExtension, params};

use crate::store::{Store, Vector};
use crate::{ChunkKey, VectorCache};
use crate::{Error, Result};

pub(crate) fn bytes_to_vector(blob: &[u8], path: &Path) -> Result<Vector> {
    if !blob.len().is_multiple_of(4) {
        return Err(Error::Corrupt {
            path: path.into(),
            detail: format!("vector blob of {} bytes", blob.len()),
        });
    }
    Ok(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

impl VectorCache for Store {
    /// Cached vectors for these chunks under `model`, in the order asked; missing ones
    /// are None. The local cache is one person's: it is keyed by the chunk's hash alone,
    /// whatever the scope (a text filed in two scopes is embedded once).
    fn cached_vectors(&self, model: &str, chunks: &[ChunkKey<'_>]) -> Result<Vec<Option<Vector>>> {
        let mut found: HashMap<[u8; 32], Option<Vector>> = HashMap::with_capacity(chunks.len());
        let mut stmt = self
            .conn
            .prepare_cached("SELECT vector FROM embeddings WHERE model = ?1 AND chunk_hash = ?2")
            .map_err(self.sql())?;
        for c in chunks {
            if found.contains_key(&c.hash) {
                continue;
            }
            let blob: Option<Vec<u8>> =
                stmt.query_row(params![model, &c.hash[..]], |r| r.get(0)).optional().map_err(self.sql())?;
            let vector = blob.map(|b| bytes_to_vector(&b, &self.path)).transpose()?;
            found.insert(c.hash, vector);
        }
        Ok(chunks.iter().map(|c| found.get(&c.hash).cloned().flatten()).collect())
    }

    /// Caches vectors for chunks under `model` (one transaction); a hash already cached
    /// keeps its vector, as on the team store.
    fn put_vectors(&mut self, model: &str, vectors: &[(ChunkKey<'_>, &[f32])]) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO embeddings (model, chunk_hash, vector) VALUES (?1, ?2, ?3)",
                )
                .map_err(sql)?;
            for (c, v) in vectors {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![model, &c.hash[..], bytes]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// Deletes the cached vectors of these chunk hashes, under every model.
    fn forget_vectors(&mut self, hashes: &[[u8; 32]]) -> Result<u64> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut gone = 0;
        {
            let mut stmt = tx.prepare_cached("DELETE FROM embeddings WHERE chunk_hash = ?1").map_err(sql)?;
            for h in hashes {
                gone += stmt.execute(params![&h[..]]).map_err(sql)? as u64;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(gone)
    }

    /// The number of cached vectors under `model`.
    fn cached_vector_count(&self, model: &str) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM embeddings WHERE model = ?1", [model], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }
}
