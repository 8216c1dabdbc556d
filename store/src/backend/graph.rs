//! The knowledge graph. Part of the storage boundary ([`crate::MemoryStore`]):
//! each trait is implemented once per backend, in the file that owns its tables.

use amber_core::graph::{Entity, Fact, GraphStats, NewEntity, NewFact};
use amber_core::{Memory, MemoryId, Millis, Scope};

use crate::{FactPage, KgAdded, Result};

/// The knowledge graph: entities, names and facts with validity windows.
pub trait Graph {
    /// Adds entities and facts to a scope's graph in one transaction.
    fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded>;
    /// Ends a fact's window.
    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>>;
    /// A fact by id.
    fn kg_fact(&self, id: i64) -> Result<Option<Fact>>;
    /// The facts not invalidated yet that a memory is a source of.
    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>>;
    /// A fact's invalidations: (when its window ended, why).
    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>>;
    /// An entity by id.
    fn kg_entity(&self, id: i64) -> Result<Option<Entity>>;
    /// The entity a name or alias names in a scope.
    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>>;
    /// An entity's facts (valid at `as_of` when given).
    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>>;
    /// A page of an entity's facts valid at `as_of`, after a fact id.
    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage>;
    /// Every name and alias: (entity, scope, normalized name).
    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>>;
    /// Counts of one scope's graph, or all.
    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats>;
    /// One scope's entities (every scope's when None), each with the facts valid at
    /// `now` it takes part in (as subject or object), most first, then by id; at most
    /// `limit`.
    fn kg_entities(&self, scope: Option<&Scope>, now: Millis, limit: usize) -> Result<Vec<(Entity, u64)>>;
}

/// Which memories mention which graph entities.
pub trait Mentions {
    /// Links entities to memories that mention them.
    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize>;
    /// The newest memories mentioning an entity.
    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>>;
    /// How many memories mention an entity.
    fn kg_mention_count(&self, entity: i64) -> Result<u64>;
    /// Seqs of the newest memories mentioning each entity.
    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>>;
}
