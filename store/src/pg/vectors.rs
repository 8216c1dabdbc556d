//! The team's embedding cache on PostgreSQL (schema 7): vectors by model, scope and chunk
//! key, under the scopes' grants.
//!
//! - **Per scope, under its grants.** A row carries the scope of the memory its chunk is
//!   from. A role reads the rows of scopes it may read and inserts rows only in scopes it
//!   may write (row-level security, the same test as the memories'); no role updates or
//!   deletes one. The same text filed in two scopes is cached twice.
//! - **Keyed, so no guessing oracle.** The chunk key is HMAC-SHA256 under the team's
//!   secret (`amber_cache_secret`, 32 random bytes made when the schema was, read by every
//!   role with a grant and written by none) of the scope, a NUL and the SHA-256 of the
//!   chunk's text. Rows alone (a dump, a copy of the table) confirm no guess about a text
//!   without the secret, and equal texts in two scopes have unrelated keys. A role with
//!   the secret but no grant on a scope can neither read that scope's rows nor insert one
//!   there: the insert policy is checked before the primary key, so a clash with a row it
//!   cannot see is refused as any insert there is, telling it nothing.
//! - A role that cannot read the secret (no grant at all, or the table's `SELECT` not
//!   granted after an upgrade) works without the cache: it embeds what it needs and
//!   caches nothing.

use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use postgres::Client;
use postgres::error::SqlState;
use sha2::Sha256;

use super::{PgStore, Q};
use crate::vectors::bytes_to_vector;
use crate::{ChunkKey, Result, Vector, VectorCache};

/// How long a connection that could not read the secret works without the cache before
/// it asks again.
const ASK_AGAIN: Duration = Duration::from_secs(60);

/// The key of a chunk in the team cache: HMAC-SHA256 under the team's secret of the
/// scope, a NUL and the SHA-256 of the chunk's text.
pub(crate) fn chunk_key(secret: &[u8; 32], chunk: &ChunkKey<'_>) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(chunk.scope.as_str().as_bytes());
    mac.update(&[0]);
    mac.update(&chunk.hash);
    mac.finalize().into_bytes().into()
}

impl PgStore {
    /// The team's cache secret, read once per connection; None when this role may not
    /// read it (then the cache is not used, and it is asked again a minute later: the
    /// owner may have run the GRANTs since).
    fn cache_secret(&self, c: &mut Client) -> Q<Option<[u8; 32]>> {
        match *self.cache_secret.borrow() {
            Some((Some(secret), _)) => return Ok(Some(secret)),
            Some((None, at)) if at.elapsed() < ASK_AGAIN => return Ok(None),
            _ => {}
        }
        let secret = match c.query_opt("SELECT secret FROM amber_cache_secret", &[]) {
            Ok(Some(row)) => {
                let bytes: Vec<u8> = row.try_get(0)?;
                <[u8; 32]>::try_from(bytes.as_slice()).ok()
            }
            Ok(None) => {
                tracing::debug!(location = %self.location, "this role has no grant: the team embedding cache is not used");
                None
            }
            Err(e) if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => {
                tracing::warn!(
                    location = %self.location,
                    "this role may not read amber_cache_secret (run the setup GRANTs again after an upgrade): \
                     the team embedding cache is not used, every vector is embedded here"
                );
                None
            }
            Err(e) => return Err(e.into()),
        };
        *self.cache_secret.borrow_mut() = Some((secret, Instant::now()));
        Ok(secret)
    }
}

impl VectorCache for PgStore {
    fn cached_vectors(&self, model: &str, chunks: &[ChunkKey<'_>]) -> Result<Vec<Option<Vector>>> {
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|c| {
            let mut out = vec![None; chunks.len()];
            let Some(secret) = self.cache_secret(c)? else { return Ok(out) };
            let scopes: Vec<&str> = chunks.iter().map(|k| k.scope.as_str()).collect();
            let keys: Vec<Vec<u8>> = chunks.iter().map(|k| chunk_key(&secret, k).to_vec()).collect();
            let st = self.prepared(
                c,
                "SELECT k.i, e.vector
                   FROM unnest($2::TEXT[], $3::BYTEA[]) WITH ORDINALITY AS k(scope, chunk_key, i)
                   JOIN embeddings e ON e.model = $1 AND e.scope = k.scope AND e.chunk_key = k.chunk_key",
            )?;
            for r in c.query(&st, &[&model, &scopes, &keys])? {
                let i: i64 = r.try_get(0)?;
                let v: Vec<u8> = r.try_get(1)?;
                // A row that is no vector (a role's write) is left out: the chunk is
                // embedded again here, and indexing goes on.
                match bytes_to_vector(&v, self.path()) {
                    Ok(vector) => out[i as usize - 1] = Some(vector),
                    Err(e) => {
                        tracing::warn!(cause = %e, "a cached team vector is unreadable: embedded again")
                    }
                }
            }
            Ok(out)
        })
    }

    fn put_vectors(&mut self, model: &str, vectors: &[(ChunkKey<'_>, &[f32])]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.write(|c| {
            let Some(secret) = self.cache_secret(c)? else { return Ok(()) };
            let scopes: Vec<&str> = vectors.iter().map(|(k, _)| k.scope.as_str()).collect();
            let keys: Vec<Vec<u8>> = vectors.iter().map(|(k, _)| chunk_key(&secret, k).to_vec()).collect();
            let blobs: Vec<Vec<u8>> =
                vectors.iter().map(|(_, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect()).collect();
            // Only where this role may write (the owner, not under row-level security,
            // anywhere): the insert policy would refuse the rest, and the whole statement
            // with them.
            let st = self.prepared(
                c,
                "INSERT INTO embeddings (model, scope, chunk_key, vector)
                 SELECT $1, v.scope, v.chunk_key, v.vector
                   FROM unnest($2::TEXT[], $3::BYTEA[], $4::BYTEA[]) AS v(scope, chunk_key, vector)
                  WHERE NOT row_security_active('embeddings')
                     OR EXISTS (SELECT 1 FROM amber_grants g WHERE g.role = current_user AND g.can_write
                                AND (starts_with(v.scope, g.prefix) OR v.scope = rtrim(g.prefix, '/')))
                 ON CONFLICT (model, scope, chunk_key) DO NOTHING",
            )?;
            c.execute(&st, &[&model, &scopes, &keys, &blobs])?;
            Ok(())
        })
    }

    fn cached_vector_count(&self, model: &str) -> Result<u64> {
        self.number("SELECT COUNT(*) FROM embeddings WHERE model = $1", &[&model])
    }

    /// The team cache is insert-only for every role (schema 6): nothing is deleted here;
    /// an operator clears it (docs/SECURITY.md).
    fn forget_vectors(&mut self, _hashes: &[[u8; 32]]) -> Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amber_core::Scope;

    /// The key is HMAC-SHA256 as RFC 2104 defines it (checked against RFC 4231's test
    /// case 2 through the same type), and it depends on the secret, the scope and the
    /// text's hash.
    #[test]
    fn the_chunk_key_is_an_hmac_of_scope_and_hash_under_the_secret() {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let (a, b): (Scope, Scope) = ("team/a".parse().unwrap(), "team/b".parse().unwrap());
        let key = |secret: [u8; 32], scope, byte| chunk_key(&secret, &ChunkKey { scope, hash: [byte; 32] });
        let base = key([1; 32], &a, 7);
        assert_eq!(base, key([1; 32], &a, 7), "stable");
        assert_ne!(base, key([2; 32], &a, 7), "another team's secret");
        assert_ne!(base, key([1; 32], &b, 7), "another scope");
        assert_ne!(base, key([1; 32], &a, 8), "another text");
        assert_ne!(base, [7; 32]);
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&[1; 32]).unwrap();
        mac.update(b"team/a\0");
        mac.update(&[7; 32]);
        assert_eq!(base, <[u8; 32]>::from(mac.finalize().into_bytes()));
    }
}
