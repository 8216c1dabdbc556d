//! Indexing: bringing BM25 and the vector index up to what the store holds. Fills BM25,
//! catches the vectors up, chunks and embeds memories (vectors from the embedding cache
//! where it has them), and builds and refreshes the session-context vectors.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering::SeqCst;
use std::time::Instant;

use amber_core::{Memory, Scope};
use amber_retrieval::{Bm25Doc, CONTEXT_CHUNK, chunk_key};
use amber_store::ChunkKey;
use sha2::{Digest, Sha256};

use super::health::INDEXING;
use super::models::Models;
use super::{Engine, SCAN_BATCH, lock, read, write};
use crate::Result;

/// The most chunks of one memory that get a vector: its first 256 (about 64k tokens,
/// 250 KB of prose). BM25 indexes all of a memory; a longer one is found by its words
/// anywhere and by meaning in its opening. One megabyte of text would otherwise be
/// about 1,800 chunks, a minute of the indexer's time on two cores (measured with
/// `amber-eval fairness`, docs/RELIABILITY.md), while every memory filed after it waits.
pub(crate) const EMBEDDED_CHUNKS_PER_MEMORY: usize = 256;

/// Texts embedded per embedding-cache write while indexing. The model runs one text at a
/// time (see `amber_retrieval::VECTOR_ID`) and its lock is taken per text, so a recall
/// that shares the model waits at most for one text.
const EMBED_BATCH: usize = 16;

/// Memories embedded per slice of an indexing pass, between which the pass lets go of
/// the indexing lock and indexes first what someone waits for: a few seconds of
/// embedding for long texts on two cores, under a second for short ones.
const VECTOR_SLICE: usize = 64;

/// How often a pass brings BM25 up to what was committed since it began (a commit of
/// the BM25 index each time).
const WORDS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Engine {
    /// Indexes (BM25, then vectors) every memory committed but not yet indexed, by
    /// anyone, and returns the seq indexed through. The vector index file is written by
    /// [`Engine::flush`].
    ///
    /// It goes a slice at a time ([`VECTOR_SLICE`] memories), letting the indexing lock
    /// go in between (a forget or a move does not wait for a whole backlog), and at each
    /// slice first brings BM25 up to what is committed by then (what was just filed is
    /// found by its words at once) and indexes what someone waits for
    /// ([`Engine::index_first`], [`Engine::unindexed`]).
    ///
    /// A failure is noted (`status` lists `indexing` as degraded, with its cause, until a
    /// call succeeds) and leaves the indexes as of their last commit: nothing committed
    /// to the store is lost, it is indexed by a later call.
    pub fn index_pending(&self) -> Result<u64> {
        let through = self.committed_through();
        let bytes = self.committed_bytes.load(SeqCst);
        let mut words_at: Option<Instant> = None;
        loop {
            let _indexing = lock(&self.indexing);
            if self.bm25_mark.load(SeqCst) < through
                || self.bm25_rebuild.load(SeqCst)
                || words_at.is_none_or(|t| t.elapsed() >= WORDS_EVERY)
            {
                words_at = Some(Instant::now());
                if let Err(e) = self.catch_up_words() {
                    return self.noted(INDEXING, Err(e));
                }
            }
            let slice = self.index_waited().and_then(|_| self.vectors_slice(through));
            match slice {
                // What is left is indexed by the next pass (or the next start).
                Ok(_) if self.stopping.load(SeqCst) => return Ok(self.indexed_through()),
                Ok(_) if self.indexed_through() < through => continue,
                Ok(_) => {
                    self.indexed_bytes.fetch_max(bytes, SeqCst);
                    return self.noted(INDEXING, Ok(self.indexed_through()));
                }
                Err(e) => return self.noted(INDEXING, Err(e)),
            }
        }
    }

    /// Makes an [`Engine::index_pending`] under way return after its current slice, and
    /// every later one after one slice: the daemon is stopping, and what is not indexed
    /// is indexed at the next start.
    pub fn stop_indexing(&self) {
        self.stopping.store(true, SeqCst);
    }

    /// Brings BM25 up to what is committed now (rebuilding it when it must be). The
    /// caller holds the indexing lock.
    fn catch_up_words(&self) -> Result<()> {
        let now = self.committed_through();
        if self.bm25_rebuild.load(SeqCst) {
            self.rebuild_bm25(now)?;
        } else {
            let mark = self.bm25_mark.load(SeqCst);
            if mark < now {
                self.fill_bm25(mark, now)?;
            }
        }
        Ok(())
    }

    /// Adds (or replaces) vectors under one short write lock of the vector index, which
    /// then needs saving.
    pub(super) fn add_vectors(&self, vectors: &[(u64, Vec<f32>)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        write(&self.vectors).add_many(vectors)?;
        self.vectors_unsaved.store(true, SeqCst);
        Ok(())
    }

    /// Adds (or replaces) a memory in BM25; visible after the next BM25 commit.
    pub(super) fn add_words(&self, m: &Memory) -> Result<()> {
        let doc = Bm25Doc { seq: m.seq, scope: &m.scope, time: m.time(), content: &m.content };
        Ok(self.bm25.add(&doc)?)
    }

    /// Adds the live memories in `(after, through]` to BM25 and commits with watermark
    /// `through`; on failure nothing since the last commit is kept. The caller holds the
    /// indexing lock (or is opening).
    pub(super) fn fill_bm25(&self, after: u64, through: u64) -> Result<usize> {
        let out = self.try_fill_bm25(after, through);
        if out.is_err()
            && let Err(e) = self.bm25.rollback()
        {
            tracing::warn!(cause = %e, "could not roll back the bm25 index");
        }
        out
    }

    fn try_fill_bm25(&self, after: u64, through: u64) -> Result<usize> {
        let started = Instant::now();
        let mut cursor = after;
        let mut n = 0usize;
        loop {
            let batch = self.read(|s| s.scan(cursor, through, SCAN_BATCH))?;
            let Some(last) = batch.last() else { break };
            cursor = last.seq;
            for m in &batch {
                self.add_words(m)?;
            }
            n += batch.len();
        }
        self.bm25.commit(through)?;
        self.bm25_mark.store(through, SeqCst);
        tracing::debug!(memories = n, secs = started.elapsed().as_secs_f64(), "bm25 index caught up");
        Ok(n)
    }

    /// Embeds the live memories in `(vector watermark, through]` slice by slice (see
    /// [`Engine::vectors_slice`]). The caller holds the indexing lock (or is opening).
    pub(super) fn catch_up_vectors(&self, through: u64) -> Result<usize> {
        let mut n = 0usize;
        while self.vector_mark.load(SeqCst) < through {
            n += self.vectors_slice(through)?;
        }
        Ok(n)
    }

    /// Embeds the next [`VECTOR_SLICE`] live memories after the vector watermark (up to
    /// `through`; those indexed ahead of it are in already), adds their vectors under a short write lock and moves the watermark
    /// past them (to `through` when no live memory is left before it). Returns how many
    /// it embedded. The caller holds the indexing lock (or is opening).
    fn vectors_slice(&self, through: u64) -> Result<usize> {
        let cursor = self.vector_mark.load(SeqCst);
        if cursor >= through {
            return Ok(0);
        }
        let batch = self.read(|s| s.scan(cursor, through, VECTOR_SLICE))?;
        let todo: Vec<Memory> = batch.iter().filter(|m| !self.indexed_ahead(m.seq)).cloned().collect();
        self.add_vectors(&self.embed_memories(&todo)?)?;
        let mark = match batch.last() {
            Some(last) if batch.len() == VECTOR_SLICE => last.seq,
            _ => through,
        };
        if self.vector_mark.swap(mark, SeqCst) != mark {
            self.vectors_unsaved.store(true, SeqCst);
        }
        Ok(batch.len())
    }

    /// Re-embeds live memories whose session context changed (the memory before them
    /// was forgotten): their vectors are replaced by those of their current context
    /// (from the cache or the model). Only those already in the vector index; later ones
    /// get their context when they are indexed. The caller holds the indexing lock (or
    /// is opening).
    pub(super) fn refresh_vector_context(&self, seqs: &[u64]) -> Result<()> {
        let mark = self.vector_mark.load(SeqCst);
        let seqs: Vec<u64> = seqs.iter().copied().filter(|s| *s <= mark || self.indexed_ahead(*s)).collect();
        if !self.opts.session_context || seqs.is_empty() {
            return Ok(());
        }
        let memories = self.read(|s| s.get_by_seqs(&seqs))?;
        let vectors = self.embed_memories(&memories)?;
        let mut index = write(&self.vectors);
        for m in &memories {
            index.remove_memory(m.seq)?;
        }
        for (key, v) in &vectors {
            index.add(*key, v)?;
        }
        self.vectors_unsaved.store(true, SeqCst);
        Ok(())
    }

    /// The live memories that follow a forgotten one in its session: their session
    /// context may still hold its text if a forget was interrupted.
    pub(super) fn successors_of_forgotten(&self) -> Result<Vec<u64>> {
        if !self.opts.session_context {
            return Ok(Vec::new());
        }
        let forgotten = self.read(|s| s.forgotten_session_keys())?;
        let docs = read(&self.docs);
        let mut out: Vec<u64> = forgotten
            .iter()
            .filter_map(|k| docs.next_in_session(&k.scope, k.session_id.as_deref()?, k.seq))
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The session context of each of `memories` that has one: the end of the live
    /// memory filed just before it in its session (its last chunk, at most one model
    /// window). Empty when session context is off.
    fn contexts(&self, m: &Models, memories: &[Memory]) -> Result<HashMap<u64, String>> {
        if !self.opts.session_context {
            return Ok(HashMap::new());
        }
        let before: Vec<(u64, u64)> = {
            let docs = read(&self.docs);
            memories.iter().filter_map(|m| docs.neighbours(m.seq)[0].map(|p| (m.seq, p))).collect()
        };
        if before.is_empty() {
            return Ok(HashMap::new());
        }
        let batch: HashMap<u64, &Memory> = memories.iter().map(|m| (m.seq, m)).collect();
        let missing: Vec<u64> = before.iter().map(|x| x.1).filter(|p| !batch.contains_key(p)).collect();
        let fetched: HashMap<u64, Memory> = if missing.is_empty() {
            HashMap::new()
        } else {
            self.read(|s| s.get_by_seqs(&missing))?.into_iter().map(|m| (m.seq, m)).collect()
        };
        let mut out = HashMap::with_capacity(before.len());
        for (seq, p) in before {
            let Some(prev) = batch.get(&p).copied().or_else(|| fetched.get(&p)) else { continue };
            out.insert(seq, self.context_from(m, &prev.content));
        }
        Ok(out)
    }

    /// The session context a memory filed after `previous` gets: the end of `previous`
    /// (its last chunk).
    pub(super) fn context_from(&self, m: &Models, previous: &str) -> String {
        let tail = lock(&m.index).chunk(previous).last().map_or(0, |span| span.start);
        previous[tail..].to_string()
    }

    /// The hashes of every text the vector cache may hold that carries `m`'s words (a
    /// forgotten memory, about to be purged): its chunks under the model in force, its
    /// session-context text, and the session-context text of the memory filed after it
    /// in its session (which ends with `m`'s last chunk).
    pub(super) fn hashes_carrying(&self, m: &Memory) -> Result<Vec<[u8; 32]>> {
        let models = self.models();
        let (mut before, mut after) = (None, None);
        if let (true, Some(session)) = (self.opts.session_context, &m.session_id) {
            let live = self.read(|s| s.session_memories(session))?;
            before = live.iter().filter(|x| x.seq < m.seq).max_by_key(|x| x.seq).cloned();
            after = live.iter().filter(|x| x.seq > m.seq).min_by_key(|x| x.seq).cloned();
        }
        let own_context = before.map(|p| self.context_from(&models, &p.content));
        let tail = self.context_from(&models, &m.content);
        let mut texts =
            vec![Text { seq: m.seq, scope: &m.scope, content: &m.content, context: own_context.as_deref() }];
        if let Some(next) = &after {
            texts.push(Text {
                seq: next.seq,
                scope: &next.scope,
                content: &next.content,
                context: Some(&tail),
            });
        }
        let hashes = self
            .chunks_of(&models, &texts)
            .into_iter()
            .filter(|c| c.seq == m.seq || c.index == CONTEXT_CHUNK)
            .map(|c| c.hash)
            .collect();
        Ok(hashes)
    }

    /// Chunks the memories and gets each chunk's vector, from the cache or the model
    /// (misses only, cached afterwards), with the session context vector of those that
    /// have one: (vector-index key, vector).
    pub(super) fn embed_memories(&self, memories: &[Memory]) -> Result<Vec<(u64, Vec<f32>)>> {
        self.embed_memories_with(&self.models(), memories)
    }

    /// [`Engine::embed_memories`] with the given model (a migration's new one).
    pub(super) fn embed_memories_with(
        &self,
        m: &Models,
        memories: &[Memory],
    ) -> Result<Vec<(u64, Vec<f32>)>> {
        let contexts = self.contexts(m, memories)?;
        let texts: Vec<Text<'_>> = memories
            .iter()
            .map(|m| Text {
                seq: m.seq,
                scope: &m.scope,
                content: &m.content,
                context: contexts.get(&m.seq).map(String::as_str),
            })
            .collect();
        let chunks = self.chunks_of(m, &texts);
        let vectors = self.vectors_of(m, &chunks)?;
        Ok(chunks.iter().zip(vectors).map(|(c, v)| (chunk_key(c.seq, c.index), v)).collect())
    }

    /// The chunks the vector index holds for these texts: each chunk of the content, the
    /// first [`EMBEDDED_CHUNKS_PER_MEMORY`] of a longer one, and for a content of one chunk with a session
    /// context a second text, the content followed by the context (the model truncates
    /// the context, never the memory).
    pub(super) fn chunks_of<'a>(&self, m: &Models, texts: &[Text<'a>]) -> Vec<Chunk<'a>> {
        let spans: Vec<Vec<std::ops::Range<usize>>> = {
            let embedder = lock(&m.index);
            texts.iter().map(|t| embedder.chunk(t.content)).collect()
        };
        let mut chunks = Vec::new();
        for (t, spans) in texts.iter().zip(spans) {
            let single = spans.len() == 1;
            for (i, span) in spans.into_iter().take(EMBEDDED_CHUNKS_PER_MEMORY).enumerate() {
                let text = &t.content[span];
                chunks.push(Chunk {
                    seq: t.seq,
                    scope: t.scope,
                    index: i,
                    hash: chunk_hash(text),
                    text: Cow::Borrowed(text),
                });
            }
            if let (true, Some(context)) = (single, t.context) {
                let text = format!("{}\n{context}", t.content);
                chunks.push(Chunk {
                    seq: t.seq,
                    scope: t.scope,
                    index: CONTEXT_CHUNK,
                    hash: chunk_hash(&text),
                    text: Cow::Owned(text),
                });
            }
        }
        chunks
    }

    /// The vector of each chunk, in order, from the cache (by its scope and hash) or the
    /// model (a cached vector unfit for the model counts as a miss: [`usable_vector`]):
    /// misses are embedded (each text once) and cached.
    pub(super) fn vectors_of(&self, m: &Models, chunks: &[Chunk<'_>]) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<ChunkKey<'_>> =
            chunks.iter().map(|c| ChunkKey { scope: c.scope, hash: c.hash }).collect();
        let mut found = self.cache_read(|s| s.cached_vectors(&m.id, &keys))?;
        // One answer per chunk (a backend's contract); any shortfall counts as misses.
        found.resize(chunks.len(), None);
        // A cached vector is used only when it is one this model could have given: its
        // dimensions, every value finite, a norm above zero. Any other (a row a team
        // role seeded, a damaged one) is embedded here again, never trusted.
        let mut unfit = 0;
        for v in &mut found {
            if v.as_ref().is_some_and(|v| !usable_vector(v, m.dim)) {
                *v = None;
                unfit += 1;
            }
        }
        if unfit > 0 {
            tracing::warn!(skipped = unfit, model = %m.id, "cached vectors unfit for the model: embedded again");
        }
        // The misses: each text once (by hash), with every key it is cached under.
        let mut texts: Vec<(&str, [u8; 32])> = Vec::new();
        let mut missing: HashSet<ChunkKey<'_>> = HashSet::new();
        let mut seen = HashSet::new();
        for (c, (k, v)) in chunks.iter().zip(keys.iter().zip(&found)) {
            if v.is_none() && missing.insert(*k) && seen.insert(c.hash) {
                texts.push((&c.text, c.hash));
            }
        }
        lock(&self.stats).chunks_from_cache += (chunks.len() - missing.len()) as u64;
        let mut embedded: HashMap<[u8; 32], Vec<f32>> = HashMap::with_capacity(texts.len());
        for group in texts.chunks(EMBED_BATCH) {
            let t0 = Instant::now();
            let batch: Vec<&str> = group.iter().map(|(t, _)| *t).collect();
            let vecs = self.embed_texts(m, &batch)?;
            if vecs.len() != group.len() {
                return Err(amber_retrieval::Error::Model(format!(
                    "the model returned {} vectors for {} texts",
                    vecs.len(),
                    group.len()
                ))
                .into());
            }
            {
                let mut stats = lock(&self.stats);
                stats.embed_seconds += t0.elapsed().as_secs_f64();
                stats.chunks_embedded += group.len() as u64;
            }
            let hashes: HashSet<[u8; 32]> = group.iter().map(|(_, h)| *h).collect();
            for ((_, h), v) in group.iter().zip(vecs) {
                embedded.insert(*h, v);
            }
            let rows: Vec<(ChunkKey<'_>, &[f32])> = missing
                .iter()
                .filter(|k| hashes.contains(&k.hash))
                .map(|k| (*k, embedded[&k.hash].as_slice()))
                .collect();
            // The cache is a saving, not the truth: while the writer's commits keep the
            // store's write lock past the busy timeout (a burst of them back to back),
            // these vectors go to the index uncached (embedded again if ever rebuilt)
            // rather than failing the pass.
            match self.cache_write(|s| s.put_vectors(&m.id, &rows)) {
                Err(crate::Error::Store(e)) if e.is_busy() => {
                    lock(&self.stats).cache_writes_skipped += 1;
                    tracing::debug!(cause = %e, chunks = rows.len(), "vectors not cached: the store was busy");
                }
                other => other?,
            }
        }
        Ok(chunks.iter().zip(found).map(|(c, v)| v.unwrap_or_else(|| embedded[&c.hash].clone())).collect())
    }
}

/// A memory's text to embed: its seq (a placeholder before it is committed), content
/// and session context.
pub(super) struct Text<'a> {
    pub(super) seq: u64,
    /// The scope it is (to be) filed in: the team cache keeps vectors per scope.
    pub(super) scope: &'a Scope,
    pub(super) content: &'a str,
    pub(super) context: Option<&'a str>,
}

/// One text the vector index holds a vector of.
pub(super) struct Chunk<'a> {
    seq: u64,
    scope: &'a Scope,
    /// The chunk's index in its memory, or `CONTEXT_CHUNK`.
    index: usize,
    text: Cow<'a, str>,
    hash: [u8; 32],
}

fn chunk_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// True for a vector this model could have given: `dim` values, all finite, not all zero.
pub(super) fn usable_vector(v: &[f32], dim: usize) -> bool {
    v.len() == dim && v.iter().all(|x| x.is_finite()) && v.iter().any(|x| *x != 0.0)
}
