//! Recall: the query's filters, the BM25, exact-identifier, vector, graph and time
//! rankings, their fusion, the session prior, session neighbours, the demotion of
//! duplicates, and the per-signal evidence of each hit.

use std::collections::{HashMap, HashSet};

use amber_core::{Evidence, Expand, Hit, Memory, Query, SearchMode, now_millis};
use amber_retrieval::fusion::reciprocal_rank_fusion;
use amber_retrieval::{Bm25Filter, CONTEXT_CHUNK, chunk_key, split_key, time_window};

use super::allowed::Allowed;
use super::{Engine, read};
use crate::Result;

/// Up to this many memories pass a filter, the vector search scans their chunks exactly
/// instead of walking the HNSW graph (exact and fast at this size).
const EXACT_SCAN_MAX_MEMORIES: usize = 5_000;
/// Chunks fetched from the HNSW graph per memory wanted, so that enough distinct
/// memories survive aggregation.
const HNSW_CHUNKS_PER_MEMORY: usize = 4;

impl Engine {
    /// The best `q.k` memories for a query, with per-signal evidence. Never returns a
    /// forgotten memory; finds what was indexed when it ran (see
    /// [`Engine::indexed_through`]).
    pub fn recall(&self, q: &Query) -> Result<Vec<Hit>> {
        q.validate()?;
        // Before BM25: by the time the query is embedded, indexing has left its instance.
        self.note_read();
        let want = self.opts.candidates.max(q.k * 3);
        let allowed = self.allowed(q);
        if allowed.as_ref().is_some_and(|a| a.is_empty()) {
            return Ok(Vec::new());
        }
        let scopes = q.scopes();
        let filter = Bm25Filter { scopes: &scopes, since: q.since, until: q.until };
        let (bm25, exact) = if q.mode != SearchMode::Vector {
            (self.bm25.search(&q.text, &filter, want)?, self.bm25.search_identifiers(&q.text, &filter, want)?)
        } else {
            (Vec::new(), Vec::new())
        };
        // The embeddings endpoint away: the other rankings answer alone (`vectors_away`
        // says so), unless vectors alone were asked for.
        let models = self.models();
        let qv = match q.mode {
            SearchMode::Bm25 => None,
            mode => match self.embed_query_with(&models, &q.text) {
                Ok(v) => Some(v),
                Err(e) if e.is_model_away() && mode != SearchMode::Vector => None,
                Err(e) => return Err(e),
            },
        };
        let mut vector: Vec<(u64, f32, usize)> = match &qv {
            Some(qv) => self.vector_ranking(qv, allowed.as_ref(), want)?,
            None => Vec::new(),
        };
        // A migration switched the model while this query was embedded: its vector is
        // of the other model, so its ranking is dropped (the switch swaps model and
        // index under the index's lock, so a ranking after this check is consistent).
        if !std::sync::Arc::ptr_eq(&models, &self.models()) {
            vector.clear();
        }
        let graph_candidates: Vec<u64> = if q.expand == Expand::Graph {
            self.graph_ranking(q, qv.as_deref(), allowed.as_ref())?
        } else {
            Vec::new()
        };
        let bm25_keys: Vec<u64> = bm25.iter().map(|x| x.0).collect();
        let vector_keys: Vec<u64> = vector.iter().map(|x| x.0).collect();
        let exact_keys: Vec<u64> = exact.iter().map(|x| x.0).collect();
        let mut lists = vec![
            (&bm25_keys[..], self.opts.bm25_weight),
            (&vector_keys[..], self.opts.vector_weight),
            (&exact_keys[..], self.opts.exact_weight),
        ];
        let mut fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
        // Graph expansion, like the time ranking: the candidates connected to what the
        // query names, in fused order, then those the other signals missed (by cosine),
        // form one more ranking.
        let graph_keys: Vec<u64> = if graph_candidates.is_empty() {
            Vec::new()
        } else {
            let connected: HashSet<u64> = graph_candidates.iter().copied().collect();
            let mut keys: Vec<u64> = fused.iter().map(|f| f.key).filter(|k| connected.contains(k)).collect();
            let listed: HashSet<u64> = keys.iter().copied().collect();
            keys.extend(graph_candidates.iter().copied().filter(|k| !listed.contains(k)));
            keys.truncate(want);
            keys
        };
        let graph_list = (!graph_keys.is_empty()).then(|| {
            lists.push((&graph_keys[..], self.opts.graph_weight));
            fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
            lists.len() - 1
        });
        // A time the query names, when it sets no explicit filter: the candidates inside
        // that window, in fused order, are one more ranking.
        let window = (q.since.is_none() && q.until.is_none() && self.opts.time_weight > 0.0)
            .then(|| time_window(&q.text, q.now.unwrap_or_else(now_millis)))
            .flatten();
        let time_keys: Vec<u64> = match &window {
            Some(w) => {
                let docs = read(&self.docs);
                fused
                    .iter()
                    .map(|f| f.key)
                    .filter(|seq| docs.time.get(seq).is_some_and(|t| (w.from..=w.to).contains(t)))
                    .collect()
            }
            None => Vec::new(),
        };
        let time_list = (!time_keys.is_empty()).then(|| {
            tracing::debug!(expression = %window.as_ref().map(|w| w.expression.as_str()).unwrap_or(""), "time window");
            lists.push((&time_keys[..], self.opts.time_weight));
            fused = reciprocal_rank_fusion(&lists, self.opts.rrf_k);
            lists.len() - 1
        });
        let session = self.session_bonus(&mut fused, want);
        let bonus = self.neighbour_bonus(&mut fused, allowed.as_ref(), want, lists.len());
        {
            let demoted = read(&self.demoted);
            if !demoted.is_empty() && fused.iter().any(|f| demoted.contains(&f.key)) {
                for f in fused.iter_mut().filter(|f| demoted.contains(&f.key)) {
                    f.score *= self.opts.duplicate_factor;
                }
                fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
            }
        }
        let standing = self.apply_standing(&mut fused, q);
        // The relevance floor: with vectors to judge by, a candidate whose best chunk is
        // no closer to the query than unrelated text is, that holds none of its
        // identifiers and that the graph did not bring in (connected to an entity the
        // query names), is no good match.
        if q.floor && qv.is_some() {
            let floor = self.calibration()?.floor();
            let cosine: HashMap<u64, f32> = vector.iter().map(|v| (v.0, v.1)).collect();
            let kept: HashSet<u64> = exact_keys.iter().chain(graph_keys.iter()).copied().collect();
            fused.retain(|f| kept.contains(&f.key) || cosine.get(&f.key).is_some_and(|c| *c >= floor));
        }
        let top: Vec<_> = fused.into_iter().take(q.k).collect();
        let seqs: Vec<u64> = top.iter().map(|f| f.key).collect();
        // Forgotten memories are dropped here too, should an index still hold one.
        let mut memories: HashMap<u64, Memory> =
            self.read(|s| s.get_by_seqs(&seqs))?.into_iter().map(|m| (m.seq, m)).collect();
        let mut hits = Vec::with_capacity(top.len());
        for f in top {
            let Some(memory) = memories.remove(&f.key) else { continue };
            let b = f.ranks[0].map(|r| bm25[r - 1]);
            let v = f.ranks[1].map(|r| vector[r - 1]);
            hits.push(Hit {
                memory,
                evidence: Evidence {
                    bm25_rank: f.ranks[0],
                    bm25_score: b.map(|x| x.1),
                    vector_rank: f.ranks[1],
                    exact_rank: f.ranks[2],
                    neighbour_bonus: bonus.get(&f.key).copied(),
                    session_bonus: session.get(&f.key).copied(),
                    graph_rank: graph_list.and_then(|i| f.ranks[i]),
                    time_rank: time_list.and_then(|i| f.ranks[i]),
                    best_chunk_cosine: v.map(|x| x.1),
                    // The context vector exists for one-chunk memories only: it is
                    // reported as the chunk after their one chunk.
                    best_chunk: v.map(|x| if x.2 == CONTEXT_CHUNK { 1 } else { x.2 }),
                    fused: f.score,
                    standing: standing.get(&f.key).map(|a| a.evidence()).unwrap_or_default(),
                },
                place: None,
            });
        }
        Ok(hits)
    }

    /// The standing's and filing's prior on every candidate (see
    /// [`Engine::standing_prior`]), and archived memories dropped unless the query asks
    /// for them. Re-sorts `fused` and returns what was applied to each candidate.
    fn apply_standing(
        &self,
        fused: &mut Vec<amber_retrieval::fusion::Fused<u64>>,
        q: &Query,
    ) -> HashMap<u64, super::standing::Applied> {
        let map = read(&self.standing);
        let now = q.now.unwrap_or_else(now_millis);
        let docs = read(&self.docs);
        let mut out = HashMap::with_capacity(fused.len());
        fused.retain_mut(|f| {
            let a = self.standing_prior(f.key, &docs, now, &map);
            if a.archived && !q.archived {
                return false;
            }
            f.score *= a.prior;
            out.insert(f.key, a);
            true
        });
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        out
    }

    /// Ranks memories by their best chunk's cosine to `qv`: (seq, cosine, chunk), best first.
    pub(super) fn vector_ranking(
        &self,
        qv: &[f32],
        allowed: Option<&Allowed>,
        want: usize,
    ) -> Result<Vec<(u64, f32, usize)>> {
        let vectors = read(&self.vectors);
        if vectors.dim() != qv.len() {
            // A query embedded by the model a migration just replaced.
            return Ok(Vec::new());
        }
        let mut best: HashMap<u64, (f32, usize)> = HashMap::new();
        let mut note = |seq: u64, chunk: usize, cos: f32| {
            let e = best.entry(seq).or_insert((f32::MIN, 0));
            if cos > e.0 {
                *e = (cos, chunk);
            }
        };
        match allowed {
            Some(seqs) if seqs.len() <= EXACT_SCAN_MAX_MEMORIES => {
                for seq in seqs.iter() {
                    for i in 0..amber_retrieval::MAX_CHUNKS_PER_MEMORY {
                        let Some(v) = vectors.get(chunk_key(seq, i)) else { break };
                        note(seq, i, amber_retrieval::cosine(qv, &v));
                    }
                    if let Some(v) = vectors.get(chunk_key(seq, CONTEXT_CHUNK)) {
                        note(seq, CONTEXT_CHUNK, amber_retrieval::cosine(qv, &v));
                    }
                }
            }
            _ => {
                let in_set = |key: u64| allowed.is_none_or(|a| a.contains(split_key(key).0));
                let filter: Option<&dyn Fn(u64) -> bool> = allowed.is_some().then_some(&in_set);
                for (key, cos) in vectors.search(qv, want * HNSW_CHUNKS_PER_MEMORY, filter)? {
                    let (seq, i) = split_key(key);
                    note(seq, i, cos);
                }
            }
        }
        let mut ranked: Vec<(u64, f32, usize)> = best.into_iter().map(|(s, (c, i))| (s, c, i)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(want);
        Ok(ranked)
    }

    /// Session prior: each candidate filed in a session gains `session_weight` times the
    /// best fused score among the top `want` candidates of its session (scope and
    /// session id), so of two equal matches the one in the conversation that matches the
    /// query best ranks first. Re-sorts `fused` and returns each memory's bonus.
    fn session_bonus(
        &self,
        fused: &mut [amber_retrieval::fusion::Fused<u64>],
        want: usize,
    ) -> HashMap<u64, f32> {
        if self.opts.session_weight <= 0.0 {
            return HashMap::new();
        }
        let docs = read(&self.docs);
        let mut best: HashMap<u32, f32> = HashMap::new();
        for f in fused.iter().take(want) {
            if let Some(&session) = docs.session_of.get(&f.key) {
                // `fused` is sorted: the first seen is the session's best.
                best.entry(session).or_insert(f.score);
            }
        }
        let mut bonus = HashMap::new();
        for f in fused.iter_mut() {
            if let Some(b) = docs.session_of.get(&f.key).and_then(|s| best.get(s)) {
                let b = self.opts.session_weight * b;
                f.score += b;
                bonus.insert(f.key, b);
            }
        }
        if !bonus.is_empty() {
            fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        }
        bonus
    }

    /// Session neighbours: a memory filed just before or just after one of the top `want`
    /// candidates, in the same session (and passing the query's filters), gains
    /// `neighbour_weight` times that candidate's fused score (the best such candidate's),
    /// and joins the candidates if it was not one. An answer is often the turn after the
    /// question that names its topic, or the one before the reply that does. Re-sorts
    /// `fused` and returns the bonus of each memory that gained one.
    fn neighbour_bonus(
        &self,
        fused: &mut Vec<amber_retrieval::fusion::Fused<u64>>,
        allowed: Option<&Allowed>,
        want: usize,
        n_lists: usize,
    ) -> HashMap<u64, f32> {
        let mut bonus: HashMap<u64, f32> = HashMap::new();
        if self.opts.neighbour_weight <= 0.0 {
            return bonus;
        }
        {
            let docs = read(&self.docs);
            for f in fused.iter().take(want) {
                for n in docs.neighbours(f.key).into_iter().flatten() {
                    if allowed.is_none_or(|a| a.contains(n)) {
                        let b = bonus.entry(n).or_insert(0.0);
                        *b = b.max(self.opts.neighbour_weight * f.score);
                    }
                }
            }
        }
        if bonus.is_empty() {
            return bonus;
        }
        let mut seen = HashSet::with_capacity(fused.len());
        for f in fused.iter_mut() {
            seen.insert(f.key);
            if let Some(b) = bonus.get(&f.key) {
                f.score += b;
            }
        }
        let mut added: Vec<_> = bonus
            .iter()
            .filter(|(k, _)| !seen.contains(k))
            .map(|(&key, &score)| amber_retrieval::fusion::Fused { key, score, ranks: vec![None; n_lists] })
            .collect();
        fused.append(&mut added);
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        bonus
    }
}
