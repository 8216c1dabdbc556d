//! What curation and sessions need from the engine: whole-memory similarity, links, and
//! session records.

use std::collections::HashSet;

use amber_core::{Link, Memory, MemoryId, Query, Scope};
use amber_retrieval::{MAX_CHUNKS_PER_MEMORY, chunk_key, cosine};
use amber_store::SessionRow;

use super::{Engine, EngineWriter, read, write};
use crate::Result;

/// Candidates gathered per chunk of the memory before exact scoring.
const CANDIDATES_PER_CHUNK: usize = 20;

/// Mean over `a`'s chunks of the best cosine to any chunk of `b`: how much of `a` is
/// said in `b`.
fn coverage(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let total: f32 = a.iter().map(|x| b.iter().map(|y| cosine(x, y)).fold(f32::MIN, f32::max)).sum();
    total / a.len() as f32
}

impl Engine {
    /// The vectors of an indexed memory's own chunks, not its session-context vector
    /// (empty when it is not in the vector index).
    pub(super) fn chunk_vectors(&self, seq: u64) -> Vec<Vec<f32>> {
        let vectors = read(&self.vectors);
        (0..MAX_CHUNKS_PER_MEMORY).map_while(|i| vectors.get(chunk_key(seq, i))).collect()
    }

    /// The live memories most similar to memory `id` as a whole, best first, with their
    /// similarity: the smaller of the two coverages (each side's chunks matched to their
    /// best counterpart on the other side, averaged), so two memories score near 1 only
    /// when each says what the other says. For one-chunk memories it is their cosine.
    ///
    /// Looks within `within` when given (its sub-scopes included). Empty when the memory
    /// is unknown, forgotten or not yet indexed.
    pub fn similar(&self, id: &MemoryId, within: Option<&Scope>, k: usize) -> Result<Vec<(Memory, f32)>> {
        let Some(me) = self.get(id)? else { return Ok(Vec::new()) };
        if me.is_forgotten() {
            return Ok(Vec::new());
        }
        let mine = self.chunk_vectors(me.seq);
        if mine.is_empty() {
            return Ok(Vec::new());
        }
        let allowed = within.and_then(|s| self.allowed(&Query::new("similar").in_scope(s.clone())));
        let mut candidates = HashSet::new();
        for v in &mine {
            for (seq, _, _) in self.vector_ranking(v, allowed.as_ref(), CANDIDATES_PER_CHUNK.max(k))? {
                if seq != me.seq {
                    candidates.insert(seq);
                }
            }
        }
        let mut scored: Vec<(u64, f32)> = candidates
            .into_iter()
            .map(|seq| {
                let theirs = self.chunk_vectors(seq);
                (seq, coverage(&mine, &theirs).min(coverage(&theirs, &mine)))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        let seqs: Vec<u64> = scored.iter().map(|x| x.0).collect();
        let memories = self.read(|s| s.get_by_seqs(&seqs))?;
        Ok(memories
            .into_iter()
            .filter_map(|m| scored.iter().find(|x| x.0 == m.seq).map(|x| (m, x.1.clamp(-1.0, 1.0))))
            .collect())
    }

    /// Every link from or to a memory.
    pub fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        self.read(|s| s.links_of(id))
    }

    /// True when curation marked this memory as a duplicate of an older one.
    pub fn is_demoted(&self, seq: u64) -> bool {
        read(&self.demoted).contains(&seq)
    }

    /// The live memories filed by a session, in filing order.
    pub fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        self.read(|s| s.session_memories(session_id))
    }

    /// A stored session record.
    pub fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        self.read(|s| s.get_session(id))
    }

    /// The most recent session records, newest first.
    pub fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        self.read(|s| s.recent_sessions(limit))
    }
}

impl EngineWriter<'_> {
    /// Stores links (one transaction; repeats are kept once) and returns how many were
    /// new. A duplicate link ranks its `from` memory down in recall from now on.
    pub fn add_links(&mut self, links: &[Link]) -> Result<usize> {
        let store = self.store();
        let added = store.add_links(links)?;
        let mut seqs = Vec::new();
        for l in links.iter().filter(|l| l.kind.is_duplicate()) {
            if let Some(m) = store.get(&l.from)? {
                seqs.push(m.seq);
            }
        }
        write(&self.demoted).extend(seqs);
        Ok(added)
    }

    /// Writes a session record (committed when this returns).
    pub fn put_session(&mut self, row: &SessionRow) -> Result<()> {
        Ok(self.store().put_session(row)?)
    }
}
