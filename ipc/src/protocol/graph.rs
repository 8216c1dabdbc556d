//! The knowledge graph's params and results: `kg_add`, `kg_invalidate`, `kg_query`,
//! `kg_timeline`, `kg_traverse`, `kg_stats`.

use amber_core::graph::{Entity, EntityRef, Fact, GraphStats, NewEntity, NewFact};
use amber_core::{Memory, MemoryId, Millis, Scope};
use serde::{Deserialize, Serialize};

/// Most entities plus facts in one `kg_add`.
pub const MAX_KG_BATCH: usize = 1000;

/// `kg_add` params: entities and facts for one scope's graph, one transaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgAddParams {
    /// The graph's scope (default `default`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Entities to add or give aliases and a type.
    #[serde(default)]
    pub entities: Vec<NewEntity>,
    /// Facts to add (their entities are created when new).
    #[serde(default)]
    pub facts: Vec<NewFact>,
}

/// `kg_add` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgAddResult {
    /// Every entity the call named, as stored now.
    pub entities: Vec<Entity>,
    /// The facts, in the order given, as stored (an identical fact already there comes
    /// back with its id and merged sources).
    pub facts: Vec<Fact>,
    /// Facts whose window a `supersede` ended.
    #[serde(default)]
    pub superseded: Vec<i64>,
}

/// `kg_invalidate` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgInvalidateParams {
    /// The fact's id.
    pub fact: i64,
    /// The fact's scope, when it is a team scope (fact ids are numbered per store: the
    /// team database numbers its own); default: the local store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<amber_core::Scope>,
    /// When it stopped holding (default now); the newest invalidation wins.
    #[serde(default)]
    pub at: Option<Millis>,
    /// Why, kept in the invalidation log.
    #[serde(default)]
    pub reason: Option<String>,
}

/// `kg_invalidate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgFactResult {
    /// The fact as it is now.
    pub fact: Fact,
}

/// `kg_query` and `kg_timeline` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgEntityParams {
    /// The graph's scope (default `default`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The entity's name or any alias (case and punctuation ignored).
    pub entity: String,
    /// `kg_query` only: the moment asked about (default now).
    #[serde(default)]
    pub as_of: Option<Millis>,
}

/// `kg_query` and `kg_timeline` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgFactsResult {
    /// The entity; null when the name is unknown (and `facts` empty).
    pub entity: Option<Entity>,
    /// `kg_query`: the moment asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<Millis>,
    /// `kg_query`: the facts valid then; `kg_timeline`: every fact, by start of
    /// validity.
    pub facts: Vec<Fact>,
}

/// `kg_traverse` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgTraverseParams {
    /// The graph's scope (default `default`).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The entity to start from (name or alias).
    pub start: String,
    /// Hops out (default 2, at most 4).
    #[serde(default)]
    pub max_hops: Option<usize>,
    /// Only facts valid at this moment (default now).
    #[serde(default)]
    pub as_of: Option<Millis>,
    /// Only these predicates (default all).
    #[serde(default)]
    pub predicates: Vec<String>,
    /// At most this many paths (default 100, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Memories that mention each entity reached, newest first (default 3, at most 20).
    #[serde(default)]
    pub memories_per_node: Option<usize>,
}

/// An entity a traversal reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgNode {
    /// The entity.
    pub entity: EntityRef,
    /// Its distance from the start.
    pub hops: usize,
    /// Ids of memories that mention it (in `memories`).
    pub mentioned_in: Vec<MemoryId>,
}

/// `kg_traverse` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgTraverseResult {
    /// The start entity; null when the name is unknown (and the rest empty).
    pub start: Option<Entity>,
    /// The moment the facts were valid at.
    pub as_of: Millis,
    /// The hops walked (after the cap).
    pub max_hops: usize,
    /// Shortest paths, one hop before two; each step has its fact and the fact's
    /// source memory ids.
    pub paths: Vec<amber_tiers::graph::Path>,
    /// The entities reached (the start first) with the memories that mention them.
    pub nodes: Vec<KgNode>,
    /// Every memory the paths and nodes refer to, verbatim, each once.
    pub memories: Vec<Memory>,
    /// True when the path limit cut the walk short.
    pub truncated: bool,
}

/// `kg_stats` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgStatsParams {
    /// One scope's graph (default: all of them).
    #[serde(default)]
    pub scope: Option<Scope>,
}

/// `kg_stats` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgStatsResult {
    /// The scope counted, null for all.
    pub scope: Option<Scope>,
    /// The counts.
    #[serde(flatten)]
    pub stats: GraphStats,
}

/// `kg_entities` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgEntitiesParams {
    /// One scope's graph (default: every scope's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// At most this many (1 to 500, default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One entity in [`KgEntitiesResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgEntityCount {
    /// The entity.
    pub entity: Entity,
    /// The facts valid now it takes part in, as subject or object.
    pub facts: u64,
}

/// `kg_entities` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgEntitiesResult {
    /// Most facts first, then in the order they were added.
    pub entities: Vec<KgEntityCount>,
}
