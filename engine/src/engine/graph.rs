//! The knowledge graph through the engine: writes under the write connection, the
//! name matchers that link memories to the entities they mention, and graph expansion
//! for recall.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering::SeqCst;

use amber_core::graph::{Fact, NewEntity, NewFact};
use amber_core::{InvalidInput, Memory, MemoryId, Millis, Query, Scope, now_millis};
use amber_retrieval::{Bm25Filter, NameMatcher, cosine};
use amber_store::{KgAdded, MemoryStore};

use super::allowed::Allowed;
use super::{Engine, EngineWriter, read, write};
use crate::{Error, Result};

/// Memories looked at per new name when linking what was filed before it.
const LINK_CANDIDATES: usize = 2000;
/// Memories taken per neighbouring entity when expanding a recall.
const EXPAND_PER_ENTITY: usize = 20;
/// Neighbouring entities looked at when expanding a recall.
const EXPAND_MAX_ENTITIES: usize = 50;
/// A neighbour named in more than this share of the memories searched (and in more
/// than [`HUB_FLOOR`]) is a hub, like a stop word: it tells nothing about the
/// query and is not expanded (in a chat log, the other speaker is named everywhere).
const HUB_SHARE: f64 = 0.1;
/// Mentions below which an entity is never a hub (small stores).
const HUB_FLOOR: f64 = 5.0;

/// Every entity name, by scope: what the matchers are built from.
pub(super) fn load_names(store: &dyn MemoryStore) -> Result<HashMap<Scope, NameMatcher>> {
    let mut out: HashMap<Scope, NameMatcher> = HashMap::new();
    for (entity, scope, norm) in store.kg_names()? {
        out.entry(scope).or_default().add(&norm, entity);
    }
    Ok(out)
}

impl Engine {
    /// Links freshly filed memories to the entities of their scope that they name.
    /// Called with the write connection held, right after the memories' commit; a
    /// failure here is logged, never lost data (mentions are derived).
    pub(super) fn link_new_memories(&self, store: &mut dyn MemoryStore, memories: &[&Memory]) {
        let pairs: Vec<(i64, MemoryId)> = {
            let names = read(&self.names);
            if names.is_empty() {
                return;
            }
            memories
                .iter()
                .filter_map(|m| names.get(&m.scope).map(|n| (m, n)))
                .flat_map(|(m, n)| n.find(&m.content).into_iter().map(|e| (e, m.id.clone())))
                .collect()
        };
        if let Err(e) = store.kg_add_mentions(&pairs) {
            tracing::warn!(cause = %e, "could not link new memories to graph entities");
        }
    }

    /// Runs `f` on a read-only connection to the store (for graph reads).
    pub fn read_store<R>(&self, f: impl FnOnce(&dyn MemoryStore) -> amber_store::Result<R>) -> Result<R> {
        self.read(f)
    }

    /// The entities a text names, in the scopes a query covers.
    pub fn entities_named(&self, text: &str, scope: Option<&Scope>) -> Vec<i64> {
        let names = read(&self.names);
        let mut out = Vec::new();
        for (s, m) in names.iter() {
            if scope.is_none_or(|q| s.is_within(q)) {
                out.extend(m.find(text));
            }
        }
        out
    }

    /// The graph ranking for a query: memories mentioning entities one hop from those
    /// the query names (facts valid at the query's now; hubs, named or reached, left
    /// out, see [`HUB_SHARE`]), ordered by their best chunk's
    /// cosine to the query when there is a query vector, else newest first. Only
    /// memories in `allowed` when given.
    pub(super) fn graph_ranking(
        &self,
        q: &Query,
        qv: Option<&[f32]>,
        allowed: Option<&Allowed>,
    ) -> Result<Vec<u64>> {
        let named = self.entities_named(&q.text, q.scope.as_ref());
        if named.is_empty() {
            return Ok(Vec::new());
        }
        let now = q.now.unwrap_or_else(now_millis);
        let searched = match allowed {
            Some(a) => a.len(),
            None => read(&self.docs).time.len(),
        };
        let hub = HUB_FLOOR.max(HUB_SHARE * searched as f64) as u64;
        let mentions = self.read(|s| {
            let mut next = Vec::new();
            // A hub the query names (the user, the other speaker) connects to
            // everything: nothing to expand from it either.
            for &e in &named {
                if s.kg_mention_count(e)? > hub {
                    continue;
                }
                for f in s.kg_facts_of(e, Some(now))? {
                    if let Some(o) = f.other_end(e)
                        && !named.contains(&o.id)
                        && !next.contains(&o.id)
                    {
                        next.push(o.id);
                    }
                }
            }
            let mut kept = Vec::new();
            for e in next {
                if kept.len() < EXPAND_MAX_ENTITIES && s.kg_mention_count(e)? <= hub {
                    kept.push(e);
                }
            }
            let next = kept;
            s.kg_mention_seqs(&next, EXPAND_PER_ENTITY)
        })?;
        let mut seqs: Vec<u64> = Vec::new();
        for (_, seq) in mentions {
            if allowed.is_none_or(|a| a.contains(seq)) && !seqs.contains(&seq) {
                seqs.push(seq);
            }
        }
        match qv {
            Some(qv) => {
                let mut scored: Vec<(u64, f32)> = seqs
                    .into_iter()
                    .map(|seq| {
                        let best =
                            self.chunk_vectors(seq).iter().map(|v| cosine(qv, v)).fold(f32::MIN, f32::max);
                        (seq, best)
                    })
                    .collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                Ok(scored.into_iter().map(|x| x.0).collect())
            }
            None => {
                seqs.sort_unstable_by(|a, b| b.cmp(a));
                Ok(seqs)
            }
        }
    }
}

impl EngineWriter<'_> {
    /// Adds entities and facts to a scope's graph (one transaction; see
    /// [`Store::kg_add`]), then links every memory of the scope that mentions a new
    /// name: found through the BM25 index (every word of the name) and checked against
    /// the content, plus the memories not yet indexed.
    pub fn kg_add(&mut self, scope: &Scope, entities: &[NewEntity], facts: &[NewFact]) -> Result<KgAdded> {
        let (e, store) = self.parts();
        let added = store.kg_add(scope, entities, facts, now_millis())?;
        if added.new_names.is_empty() {
            return Ok(added);
        }
        let mut fresh = NameMatcher::new();
        {
            let mut names = write(&e.names);
            for (entity, scope, norm) in &added.new_names {
                names.entry(scope.clone()).or_default().add(norm, *entity);
                fresh.add(norm, *entity);
            }
        }
        let filter = Bm25Filter { scopes: &[scope], since: None, until: None };
        let mut seqs = HashSet::new();
        for (_, _, norm) in &added.new_names {
            seqs.extend(e.bm25.search_all_words(norm, &filter, LINK_CANDIDATES)?.into_iter().map(|x| x.0));
        }
        let seqs: Vec<u64> = seqs.into_iter().collect();
        let mut candidates = store.get_by_seqs(&seqs)?;
        // Committed but not yet in BM25: looked at directly (a commit holds the write
        // connection, so nothing can fall between the two).
        let mark = e.bm25_mark.load(SeqCst);
        candidates.extend(store.scan(mark, e.committed_through(), LINK_CANDIDATES)?);
        let pairs: Vec<(i64, MemoryId)> = candidates
            .iter()
            .filter(|m| &m.scope == scope && !m.is_forgotten())
            .flat_map(|m| fresh.find(&m.content).into_iter().map(|e| (e, m.id.clone())))
            .collect();
        store.kg_add_mentions(&pairs)?;
        Ok(added)
    }

    /// Ends a fact's window at `at` (default now; the newest invalidation wins). None
    /// when there is no such fact; an error when `at` is before the fact starts.
    pub fn kg_invalidate(
        &mut self,
        id: i64,
        at: Option<Millis>,
        reason: Option<&str>,
    ) -> Result<Option<Fact>> {
        let now = now_millis();
        let at = at.unwrap_or(now);
        let store = self.store();
        let Some(f) = store.kg_fact(id)? else { return Ok(None) };
        if let Some(from) = f.valid_from
            && at < from
        {
            return Err(Error::Invalid(InvalidInput::BadGraph {
                reason: format!("fact {id} starts at {from}: it cannot end before that (at = {at})"),
            }));
        }
        Ok(store.kg_invalidate(id, at, reason, now)?)
    }
}
