//! Chunk vectors in a usearch HNSW index.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::{Error, Result};

/// Chunks of its own text one memory may have in the vector index (the low 16 bits of
/// a key, the last value kept for [`CONTEXT_CHUNK`]).
pub const MAX_CHUNKS_PER_MEMORY: usize = (1 << 16) - 1;
/// The chunk slot of a memory's session-context vector (its text read with the memory
/// before it), apart from its own chunks `0..n`.
pub const CONTEXT_CHUNK: usize = 0xffff;
/// HNSW graph degree.
const CONNECTIVITY: usize = 16;
/// Candidate list size while building.
const EXPANSION_ADD: usize = 128;
/// Candidate list size while searching, up to 256k vectors; beyond, one more per 2,000
/// vectors, up to [`EXPANSION_SEARCH_MAX`] ([`expansion_for`]).
const EXPANSION_SEARCH: usize = 128;
/// The most candidates a search keeps: at a million vectors, 512 found 0.971 of the
/// exact top 10 among the first 100 where 128 found 0.885, for about 2 ms more a search
/// (docs/PERFORMANCE.md, "A million memories").
const EXPANSION_SEARCH_MAX: usize = 512;
/// How vectors are stored: 8-bit integers, one byte a dimension (usearch scales a unit
/// vector by 127 and truncates). At a million 384-dimensional vectors that is 384 MB
/// less than f16 (docs/PERFORMANCE.md, "A million memories").
const QUANTIZATION: ScalarKind = ScalarKind::I8;
/// Threads at most that add one batch of vectors ([`VectorIndex::add_many`]); fewer
/// than [`SEARCH_THREADS`], whose contexts inserts share.
const ADD_THREADS: usize = 4;
/// Vectors below which a batch is added on the caller's thread.
const PARALLEL_ADD_MIN: usize = 64;
/// Searches that may run at once. usearch keeps one context per concurrent search and
/// fails a search that finds none free, so more callers than this wait for a turn.
const SEARCH_THREADS: usize = 8;

/// The vector-index key of chunk `chunk` of memory `seq`.
pub fn chunk_key(seq: u64, chunk: usize) -> u64 {
    (seq << 16) | (chunk as u64 & 0xffff)
}

/// The (seq, chunk) of a vector-index key.
pub fn split_key(key: u64) -> (u64, usize) {
    (key >> 16, (key & 0xffff) as usize)
}

/// A cosine HNSW index of chunk vectors, stored as 8-bit integers ([`QUANTIZATION`]).
///
/// Searches and lookups take `&self` and may run from several threads at once; changes
/// take `&mut self`, so a caller sharing the index puts it behind a read-write lock.
pub struct VectorIndex {
    index: Index,
    dim: usize,
    path: PathBuf,
    searches: Permits,
    /// The memories (seqs) whose vectors were added or removed since
    /// [`VectorIndex::start_journal`], while it is on.
    journal: Option<HashSet<u64>>,
}

/// A counting semaphore for the search contexts.
struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Permits {
    fn new(n: usize) -> Permits {
        Permits { free: Mutex::new(n), freed: Condvar::new() }
    }

    fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            while *free == 0 {
                free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
            }
            *free -= 1;
        }
        struct Release<'a>(&'a Permits);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        f()
    }
}

/// The search depth for an index of `len` vectors.
fn expansion_for(len: usize) -> usize {
    (len / 2_000).clamp(EXPANSION_SEARCH, EXPANSION_SEARCH_MAX)
}

fn options(dim: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        metric: MetricKind::Cos,
        quantization: QUANTIZATION,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

impl VectorIndex {
    /// An empty index of `dim` dimensions.
    pub fn new(dim: usize) -> Result<VectorIndex> {
        let err = |message: String| Error::Vector { path: PathBuf::new(), message };
        let index = Index::new(&options(dim)).map_err(|e| err(e.to_string()))?;
        index.reserve_capacity_and_threads(1024, SEARCH_THREADS).map_err(|e| err(e.to_string()))?;
        Ok(VectorIndex {
            index,
            dim,
            path: PathBuf::new(),
            searches: Permits::new(SEARCH_THREADS),
            journal: None,
        })
    }

    /// Loads an index saved by [`VectorIndex::save`]; an index of another dimension or
    /// kind, or a file that does not load, is an error (the caller rebuilds).
    pub fn load(path: &Path, dim: usize) -> Result<VectorIndex> {
        let err = |message: String| Error::Vector { path: path.to_path_buf(), message };
        let meta = Index::metadata(&path.to_string_lossy()).map_err(|e| err(e.to_string()))?;
        if meta.dimensions as usize != dim || meta.multi || meta.quantization != QUANTIZATION {
            return Err(err(format!(
                "index holds {}-dimensional {:?} vectors, expected {dim}-dimensional {QUANTIZATION:?}",
                meta.dimensions, meta.quantization
            )));
        }
        let index = Index::new(&options(dim)).map_err(|e| err(e.to_string()))?;
        index.load(&path.to_string_lossy()).map_err(|e| err(e.to_string()))?;
        index.change_expansion_search(expansion_for(index.size()));
        index
            .reserve_capacity_and_threads(index.capacity().max(index.size()), SEARCH_THREADS)
            .map_err(|e| err(e.to_string()))?;
        Ok(VectorIndex {
            index,
            dim,
            path: path.to_path_buf(),
            searches: Permits::new(SEARCH_THREADS),
            journal: None,
        })
    }

    /// Writes the index to `path` atomically (a temporary file, then a rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("tmp");
        self.index
            .save(&tmp.to_string_lossy())
            .map_err(|e| Error::Vector { path: tmp.clone(), message: e.to_string() })?;
        std::fs::rename(&tmp, path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        Ok(())
    }

    fn err(&self, e: impl ToString) -> Error {
        Error::Vector { path: self.path.clone(), message: e.to_string() }
    }

    /// Sets how many candidates a search keeps (usearch's `expansion_search`; by default
    /// 128, more past 256k vectors): a benchmark's knob, for every search of this index
    /// until the next add.
    pub fn set_expansion_search(&self, ef: usize) {
        self.index.change_expansion_search(ef);
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.index.size()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// From now on, notes every memory whose vectors are added or removed (or asked to
    /// be removed, had it any), until [`VectorIndex::take_journal`]: what an index built
    /// aside from the same store must redo before it replaces this one.
    pub fn start_journal(&mut self) {
        self.journal = Some(HashSet::new());
    }

    /// The memories noted since [`VectorIndex::start_journal`], ending the journal; None
    /// when none was started (or this index replaced the one that started it).
    pub fn take_journal(&mut self) -> Option<HashSet<u64>> {
        self.journal.take()
    }

    fn note(&mut self, key: u64) {
        if let Some(j) = &mut self.journal {
            j.insert(split_key(key).0);
        }
    }

    /// Adds (or replaces) the vector under `key`.
    pub fn add(&mut self, key: u64, vector: &[f32]) -> Result<()> {
        if vector.len() != self.dim {
            return Err(Error::Dimension { got: vector.len(), want: self.dim });
        }
        self.make_room(&[key])?;
        let added = self.index.add(key, vector).map_err(|e| self.err(e));
        self.retune();
        added
    }

    /// Adds (or replaces) many vectors (a key given twice keeps its last), on as many
    /// threads as the machine has cores, up to [`ADD_THREADS`]: usearch's graph takes
    /// concurrent inserts, and an insert is most of indexing's time in a large index
    /// (about 1.4 ms each at a million vectors on one core).
    pub fn add_many(&mut self, items: &[(u64, Vec<f32>)]) -> Result<()> {
        if let Some((_, v)) = items.iter().find(|(_, v)| v.len() != self.dim) {
            return Err(Error::Dimension { got: v.len(), want: self.dim });
        }
        let last: std::collections::HashMap<u64, usize> =
            items.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
        let items: Vec<&(u64, Vec<f32>)> =
            items.iter().enumerate().filter(|(i, (k, _))| last[k] == *i).map(|(_, x)| x).collect();
        self.make_room(&items.iter().map(|(k, _)| *k).collect::<Vec<u64>>())?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(ADD_THREADS);
        let add = |chunk: &[&(u64, Vec<f32>)]| -> std::result::Result<(), String> {
            chunk.iter().try_for_each(|(key, v)| self.index.add(*key, v).map_err(|e| e.to_string()))
        };
        let failed = if threads == 1 || items.len() < PARALLEL_ADD_MIN {
            add(&items).err()
        } else {
            std::thread::scope(|s| {
                let workers: Vec<_> = items
                    .chunks(items.len().div_ceil(threads))
                    .map(|chunk| s.spawn(move || add(chunk)))
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|_| Err("a thread adding vectors panicked".to_string())))
                    .find_map(|r| r.err())
            })
        };
        self.retune();
        failed.map_or(Ok(()), |e| Err(self.err(e)))
    }

    /// Before `keys` are added: notes them in the journal, removes their old vectors and
    /// grows the capacity to hold them all (usearch's graph cannot grow while inserting).
    fn make_room(&mut self, keys: &[u64]) -> Result<()> {
        for &key in keys {
            self.note(key);
            if self.index.contains(key) {
                self.index.remove(key).map_err(|e| self.err(e))?;
            }
        }
        let need = self.index.size() + keys.len();
        if need > self.index.capacity() {
            let want = need.max(self.index.capacity() * 2).max(1024);
            self.index.reserve_capacity_and_threads(want, SEARCH_THREADS).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Sets the search depth for the index's size, when the size moved it.
    fn retune(&mut self) {
        let ef = expansion_for(self.index.size());
        if ef != self.index.expansion_search() {
            self.index.change_expansion_search(ef);
        }
    }

    /// Removes the vector under `key`; false when there was none.
    pub fn remove(&mut self, key: u64) -> Result<bool> {
        self.note(key);
        if !self.index.contains(key) {
            return Ok(false);
        }
        self.index.remove(key).map(|n| n > 0).map_err(|e| self.err(e))
    }

    /// Removes every vector of memory `seq` (its own chunks, consecutive from chunk 0,
    /// and its [`CONTEXT_CHUNK`]); returns how many were removed.
    pub fn remove_memory(&mut self, seq: u64) -> Result<usize> {
        let mut n = 0;
        while n < MAX_CHUNKS_PER_MEMORY && self.remove(chunk_key(seq, n))? {
            n += 1;
        }
        if self.remove(chunk_key(seq, CONTEXT_CHUNK))? {
            n += 1;
        }
        Ok(n)
    }

    /// True when a vector is stored under `key`.
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// The vector stored under `key` (as stored: 8-bit precision, about 0.996 cosine to the
    /// vector added).
    pub fn get(&self, key: u64) -> Option<Vec<f32>> {
        let mut v = vec![0f32; self.dim];
        match self.index.get(key, &mut v) {
            Ok(n) if n > 0 => Some(v),
            _ => None,
        }
    }

    /// The `count` nearest keys to `query` as (key, cosine similarity), best first,
    /// among the keys `filter` accepts.
    pub fn search(
        &self,
        query: &[f32],
        count: usize,
        filter: Option<&dyn Fn(u64) -> bool>,
    ) -> Result<Vec<(u64, f32)>> {
        if query.len() != self.dim {
            return Err(Error::Dimension { got: query.len(), want: self.dim });
        }
        if self.is_empty() || count == 0 {
            return Ok(Vec::new());
        }
        let m = self
            .searches
            .run(|| match filter {
                Some(f) => self.index.filtered_search(query, count, f),
                None => self.index.search(query, count),
            })
            .map_err(|e| self.err(e))?;
        Ok(m.keys.into_iter().zip(m.distances).map(|(k, d)| (k, 1.0 - d)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        // a deterministic pseudo-random unit vector
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect();
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter_mut().for_each(|a| *a /= n);
        v
    }

    #[test]
    fn the_journal_notes_each_memory_touched_while_on() {
        let dim = 8;
        let mut ix = VectorIndex::new(dim).unwrap();
        ix.add(chunk_key(1, 0), &unit(1, dim)).unwrap();
        assert_eq!(ix.take_journal(), None, "off until started");
        ix.start_journal();
        ix.add(chunk_key(2, 0), &unit(2, dim)).unwrap();
        ix.add(chunk_key(2, 1), &unit(3, dim)).unwrap();
        ix.remove_memory(1).unwrap();
        // Asked to remove a memory it never held: noted all the same (an index built aside
        // may hold it).
        ix.remove_memory(9).unwrap();
        ix.add(chunk_key(4, CONTEXT_CHUNK), &unit(4, dim)).unwrap();
        let j = ix.take_journal().unwrap();
        assert_eq!(j, HashSet::from([1, 2, 4, 9]));
        ix.add(chunk_key(5, 0), &unit(5, dim)).unwrap();
        assert_eq!(ix.take_journal(), None, "ended by the take");
    }

    #[test]
    fn keys_round_trip() {
        assert_eq!(split_key(chunk_key(123456, 7)), (123456, 7));
        assert_eq!(split_key(chunk_key(1, MAX_CHUNKS_PER_MEMORY - 1)), (1, MAX_CHUNKS_PER_MEMORY - 1));
    }

    #[test]
    fn finds_itself_filters_and_survives_save_load() {
        let dim = 32;
        let mut ix = VectorIndex::new(dim).unwrap();
        for i in 0..500u64 {
            ix.add(chunk_key(i, 0), &unit(i, dim)).unwrap();
        }
        ix.add(chunk_key(3, 0), &unit(3, dim)).unwrap(); // replace keeps one copy
        assert_eq!(ix.len(), 500);
        let hit = ix.search(&unit(42, dim), 1, None).unwrap();
        assert_eq!(hit[0].0, chunk_key(42, 0));
        assert!(hit[0].1 > 0.99);
        let odd = |k: u64| split_key(k).0 % 2 == 1;
        let hits = ix.search(&unit(42, dim), 5, Some(&odd)).unwrap();
        assert!(!hits.is_empty() && hits.iter().all(|(k, _)| odd(*k)));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.usearch");
        ix.save(&path).unwrap();
        let back = VectorIndex::load(&path, dim).unwrap();
        assert_eq!(back.len(), 500);
        assert_eq!(back.search(&unit(7, dim), 1, None).unwrap()[0].0, chunk_key(7, 0));
        assert!(VectorIndex::load(&path, dim + 1).is_err());
        std::fs::write(&path, b"garbage").unwrap();
        assert!(VectorIndex::load(&path, dim).is_err());
    }

    #[test]
    fn removed_vectors_are_gone_and_stay_gone_after_save_load() {
        let dim = 16;
        let mut ix = VectorIndex::new(dim).unwrap();
        for seq in 1..=50u64 {
            for c in 0..3 {
                ix.add(chunk_key(seq, c), &unit(seq * 10 + c as u64, dim)).unwrap();
            }
        }
        ix.add(chunk_key(7, CONTEXT_CHUNK), &unit(7, dim)).unwrap();
        assert_eq!(ix.remove_memory(7).unwrap(), 4, "its chunks and its context vector");
        assert_eq!(ix.remove_memory(7).unwrap(), 0, "idempotent");
        assert!(!ix.remove(chunk_key(999, 0)).unwrap());
        assert_eq!(ix.len(), 147);
        assert!(ix.get(chunk_key(7, 1)).is_none());
        let hits = ix.search(&unit(70, dim), 10, None).unwrap();
        assert!(hits.iter().all(|(k, _)| split_key(*k).0 != 7), "{hits:?}");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.usearch");
        ix.save(&path).unwrap();
        let mut back = VectorIndex::load(&path, dim).unwrap();
        assert_eq!(back.len(), 147);
        assert!(!back.contains(chunk_key(7, 0)));
        back.add(chunk_key(7, 0), &unit(70, dim)).unwrap();
        assert_eq!(back.search(&unit(70, dim), 1, None).unwrap()[0].0, chunk_key(7, 0));
    }

    #[test]
    fn more_concurrent_searches_than_contexts_all_succeed() {
        let dim = 16;
        let mut ix = VectorIndex::new(dim).unwrap();
        for i in 0..300u64 {
            ix.add(chunk_key(i, 0), &unit(i, dim)).unwrap();
        }
        std::thread::scope(|t| {
            for th in 0..(SEARCH_THREADS as u64 * 3) {
                let ix = &ix;
                t.spawn(move || {
                    for i in 0..400u64 {
                        let seed = (th * 400 + i) % 300;
                        let hits = ix.search(&unit(seed, dim), 5, None).unwrap();
                        assert_eq!(hits[0].0, chunk_key(seed, 0));
                    }
                });
            }
        });
    }

    #[test]
    fn many_vectors_added_at_once_are_all_found_and_replace_their_keys() {
        let dim = 32;
        let mut ix = VectorIndex::new(dim).unwrap();
        let items: Vec<(u64, Vec<f32>)> = (0..600u64).map(|k| (chunk_key(k, 0), unit(k, dim))).collect();
        ix.add_many(&items).unwrap();
        assert_eq!(ix.len(), 600);
        for (key, v) in items.iter().step_by(7) {
            assert_eq!(ix.search(v, 1, None).unwrap()[0].0, *key);
        }
        // Added again (a key twice in one batch keeps its last vector): replaced, not doubled.
        let mut again: Vec<(u64, Vec<f32>)> =
            (0..100u64).map(|k| (chunk_key(k, 0), unit(k + 1000, dim))).collect();
        again.push((chunk_key(5, 0), unit(2000, dim)));
        ix.add_many(&again).unwrap();
        assert_eq!(ix.len(), 600);
        assert_eq!(ix.search(&unit(1003, dim), 1, None).unwrap()[0].0, chunk_key(3, 0));
        assert_eq!(ix.search(&unit(2000, dim), 1, None).unwrap()[0].0, chunk_key(5, 0));
        assert!(ix.add_many(&[(chunk_key(9, 0), vec![0.5; dim + 1])]).is_err());
    }

    #[test]
    fn searches_go_deeper_as_the_index_grows() {
        assert_eq!(expansion_for(0), EXPANSION_SEARCH);
        assert_eq!(expansion_for(256_000), EXPANSION_SEARCH);
        assert_eq!(expansion_for(600_000), 300);
        assert_eq!(expansion_for(1_000_000), 500);
        assert_eq!(expansion_for(50_000_000), EXPANSION_SEARCH_MAX);
    }
}
