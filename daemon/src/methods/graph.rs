//! Tier 3 over the socket: the `kg_*` methods. Writes go through the writer queue like
//! every other write; reads run on the blocking pool over one read connection.

use std::collections::HashSet;
use std::sync::Arc;

use amber_core::graph::Fact;
use amber_core::{Memory, MemoryId, Millis, Scope, now_millis};
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, KgAddParams, KgAddResult, KgEntitiesParams, KgEntitiesResult, KgEntityCount,
    KgEntityParams, KgFactResult, KgFactsResult, KgInvalidateParams, KgNode, KgStatsParams, KgStatsResult,
    KgTraverseParams, KgTraverseResult, MAX_KG_BATCH,
};
use amber_store::MemoryStore;
use amber_tiers::graph::{DEFAULT_HOPS, DEFAULT_PATHS, GraphRead, MAX_HOPS, TraverseOptions};

use crate::rpc::{invalid, read_on, write_on};
use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

/// Memories per reached entity when the caller gives no number, and the most allowed.
const DEFAULT_MEMORIES_PER_NODE: usize = 3;
const MAX_MEMORIES_PER_NODE: usize = 20;

pub(crate) async fn add(shared: &Arc<Shared>, p: KgAddParams) -> Result<KgAddResult, ErrorObject> {
    let n = p.entities.len() + p.facts.len();
    if n == 0 {
        return Err(invalid("kg_add needs at least one entity or fact"));
    }
    if n > MAX_KG_BATCH {
        return Err(invalid(format!("kg_add takes at most {MAX_KG_BATCH} entities and facts, got {n}")));
    }
    for (i, e) in p.entities.iter().enumerate() {
        e.validate().map_err(|e| invalid(format!("entities[{i}]: {e}")))?;
    }
    for (i, f) in p.facts.iter().enumerate() {
        f.validate().map_err(|e| invalid(format!("facts[{i}]: {e}")))?;
    }
    let scope = p.scope.unwrap_or_default();
    let side = shared.side_for(&scope)?;
    match write_on(shared, &side, WriteOp::KgAdd(scope, p.entities, p.facts)).await? {
        WriteDone::KgAdded(a) => {
            Ok(KgAddResult { entities: a.entities, facts: a.facts, superseded: a.superseded })
        }
        _ => Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)")),
    }
}

pub(crate) async fn invalidate(
    shared: &Arc<Shared>,
    p: KgInvalidateParams,
) -> Result<KgFactResult, ErrorObject> {
    let id = p.fact;
    let side = shared.side_of(p.scope.as_ref())?;
    match write_on(shared, &side, WriteOp::KgInvalidate { fact: p.fact, at: p.at, reason: p.reason }).await? {
        WriteDone::KgInvalidated(Some(fact)) => Ok(KgFactResult { fact: *fact }),
        _ => Err(ErrorObject::new(ErrorKind::FactNotFound, format!("no fact with id {id}"))),
    }
}

/// `kg_query` (valid at `as_of`, default now) or `kg_timeline` (every fact).
pub(crate) async fn query(
    shared: &Arc<Shared>,
    p: KgEntityParams,
    timeline: bool,
) -> Result<KgFactsResult, ErrorObject> {
    if timeline && p.as_of.is_some() {
        return Err(invalid("kg_timeline lists every fact: it takes no as_of (kg_query does)"));
    }
    let scope = p.scope.unwrap_or_default();
    let as_of = (!timeline).then(|| p.as_of.unwrap_or_else(now_millis));
    let side = shared.side_for(&scope)?;
    let r = read_on(shared, &side, move |e| {
        e.read_store(|s| {
            let Some(entity) = s.kg_resolve(&scope, &p.entity)? else {
                return Ok(KgFactsResult { entity: None, as_of, facts: Vec::new() });
            };
            let facts = s.kg_facts_of(entity.id, as_of)?;
            Ok(KgFactsResult { entity: Some(entity), as_of, facts })
        })
    })
    .await?;
    Ok(r)
}

/// The traversal's view of the store.
struct StoreGraph<'a>(&'a dyn MemoryStore);

impl GraphRead for StoreGraph<'_> {
    type Error = amber_store::Error;
    fn facts_page(
        &mut self,
        entity: i64,
        as_of: Millis,
        after: i64,
        limit: usize,
    ) -> amber_store::Result<(Vec<Fact>, bool)> {
        let page = self.0.kg_facts_page(entity, as_of, after, limit)?;
        Ok((page.facts, page.more))
    }
}

pub(crate) async fn traverse(
    shared: &Arc<Shared>,
    p: KgTraverseParams,
) -> Result<KgTraverseResult, ErrorObject> {
    let scope: Scope = p.scope.unwrap_or_default();
    let as_of = p.as_of.unwrap_or_else(now_millis);
    let max_hops = p.max_hops.unwrap_or(DEFAULT_HOPS).min(MAX_HOPS);
    let per_node = p.memories_per_node.unwrap_or(DEFAULT_MEMORIES_PER_NODE).min(MAX_MEMORIES_PER_NODE);
    let opts = TraverseOptions {
        max_hops,
        as_of,
        predicates: p.predicates.iter().map(|x| amber_core::graph::normalize_predicate(x)).collect(),
        limit: p.limit.unwrap_or(DEFAULT_PATHS),
    };
    let side = shared.side_for(&scope)?;
    let r = read_on(shared, &side, move |e| {
        e.read_store(|s| {
            let empty = KgTraverseResult {
                start: None,
                as_of,
                max_hops,
                paths: Vec::new(),
                nodes: Vec::new(),
                memories: Vec::new(),
                truncated: false,
            };
            let Some(start) = s.kg_resolve(&scope, &p.start)? else { return Ok(empty) };
            let from = amber_core::graph::EntityRef { id: start.id, name: start.name.clone() };
            let t = amber_tiers::graph::traverse(&mut StoreGraph(s), &from, &opts)?;
            let mut memories: Vec<Memory> = Vec::new();
            let mut have: HashSet<MemoryId> = HashSet::new();
            let mut nodes = Vec::with_capacity(t.reached.len());
            for (entity, hops) in t.reached {
                let mentions = if per_node > 0 { s.kg_mentions(entity.id, per_node)? } else { Vec::new() };
                let mentioned_in = mentions.iter().map(|m| m.id.clone()).collect();
                for m in mentions {
                    if have.insert(m.id.clone()) {
                        memories.push(m);
                    }
                }
                nodes.push(KgNode { entity, hops, mentioned_in });
            }
            for step in t.paths.iter().flat_map(|p| &p.steps) {
                for id in &step.fact.sources {
                    if !have.contains(id)
                        && let Some(m) = s.get(id)?
                    {
                        have.insert(id.clone());
                        memories.push(m);
                    }
                }
            }
            Ok(KgTraverseResult {
                start: Some(start),
                paths: t.paths,
                nodes,
                memories,
                truncated: t.truncated,
                ..empty
            })
        })
    })
    .await?;
    Ok(r)
}

pub(crate) async fn stats(shared: &Arc<Shared>, p: KgStatsParams) -> Result<KgStatsResult, ErrorObject> {
    let scope = p.scope;
    let side = shared.side_of(scope.as_ref())?;
    let r = read_on(shared, &side, move |e| {
        let stats = e.read_store(|s| s.kg_stats(scope.as_ref(), now_millis()))?;
        Ok(KgStatsResult { scope, stats })
    })
    .await?;
    Ok(r)
}

/// Entities in a `kg_entities` answer when the params give no `limit`, and the most.
const DEFAULT_ENTITIES: usize = 50;
const MAX_ENTITIES: usize = 500;

/// `kg_entities`: a graph's entities, most facts valid now first (one scope's, or every
/// local scope's: the team's graph is asked by naming a team scope).
pub(crate) async fn entities(
    shared: &Arc<Shared>,
    p: KgEntitiesParams,
) -> Result<KgEntitiesResult, ErrorObject> {
    let limit = p.limit.unwrap_or(DEFAULT_ENTITIES);
    if limit == 0 || limit > MAX_ENTITIES {
        return Err(invalid(format!("limit must be 1 to {MAX_ENTITIES}, got {limit}")));
    }
    let scope = p.scope;
    let side = shared.side_of(scope.as_ref())?;
    let entities =
        read_on(shared, &side, move |e| e.read_store(|s| s.kg_entities(scope.as_ref(), now_millis(), limit)))
            .await?;
    let entities = entities.into_iter().map(|(entity, facts)| KgEntityCount { entity, facts }).collect();
    Ok(KgEntitiesResult { entities })
}
