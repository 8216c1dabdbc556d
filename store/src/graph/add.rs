//! Adding to the knowledge graph, written once for both backends. A backend gives the
//! row operations inside its own transaction ([`GraphRows`], its SQL dialect); the rules
//! live here: an entity found by any of its names or created, its aliases claimed (an
//! alias naming another entity is refused), a fact merged with its twin (same subject,
//! predicate, object or literal and window: the sources are joined), supersession ending
//! the open windows of the subject's predicate.

use amber_core::graph::{Entity, Fact, NewEntity, NewFact, normalize_name, normalize_predicate};
use amber_core::{InvalidInput, MemoryId, Millis, Scope};

use crate::{Error, KgAdded};

/// A fact's identity: what makes two facts the same one.
pub(crate) struct FactKey<'a> {
    pub(crate) subject: i64,
    pub(crate) predicate: &'a str,
    pub(crate) object: Option<i64>,
    pub(crate) literal: Option<&'a str>,
    pub(crate) valid_from: Option<Millis>,
    pub(crate) valid_to: Option<Millis>,
}

/// The row operations [`add`] needs, inside one transaction of a backend.
pub(crate) trait GraphRows {
    /// The backend's error (a store [`Error`] converts into it).
    type Err: From<Error>;
    /// The entity a normalized name names in a scope.
    fn entity_named(&mut self, scope: &Scope, norm: &str) -> Result<Option<i64>, Self::Err>;
    /// Gives an entity a kind when it has none.
    fn give_kind(&mut self, entity: i64, kind: &str) -> Result<(), Self::Err>;
    /// A new entity; its id.
    fn insert_entity(
        &mut self,
        scope: &Scope,
        name: &str,
        kind: Option<&str>,
        now: Millis,
    ) -> Result<i64, Self::Err>;
    /// A name (or alias) of an entity.
    fn insert_name(&mut self, scope: &Scope, norm: &str, entity: i64, name: &str) -> Result<(), Self::Err>;
    /// The facts of a subject's predicate whose windows are open at `at`, by id.
    fn open_facts(&mut self, subject: i64, predicate: &str, at: Millis) -> Result<Vec<i64>, Self::Err>;
    /// Ends a fact's window at `at` and logs why.
    fn invalidate(
        &mut self,
        fact: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<(), Self::Err>;
    /// The fact with this identity, with its sources (a JSON list), if there is one.
    fn twin(&mut self, key: &FactKey<'_>) -> Result<Option<(i64, String)>, Self::Err>;
    /// Replaces a fact's sources (a JSON list).
    fn set_sources(&mut self, fact: i64, sources: &str) -> Result<(), Self::Err>;
    /// A new fact; its id.
    fn insert_fact(
        &mut self,
        key: &FactKey<'_>,
        now: Millis,
        confidence: f64,
        sources: &str,
    ) -> Result<i64, Self::Err>;
    /// An entity by id.
    fn entity(&mut self, id: i64) -> Result<Option<Entity>, Self::Err>;
    /// A fact by id.
    fn fact(&mut self, id: i64) -> Result<Option<Fact>, Self::Err>;
}

/// Adds entities and facts to a scope's graph through a backend's rows (the caller has
/// validated them, opened the transaction, and commits it).
pub(crate) fn add<R: GraphRows>(
    rows: &mut R,
    scope: &Scope,
    entities: &[NewEntity],
    facts: &[NewFact],
    now: Millis,
) -> Result<KgAdded, R::Err> {
    let mut out = KgAdded::default();
    let mut touched = Vec::new();
    for e in entities {
        touched.push(upsert_entity(rows, scope, e, now, &mut out.new_names)?);
    }
    let mut fact_ids = Vec::new();
    for f in facts {
        let named = |name: &str| NewEntity { name: name.into(), ..NewEntity::default() };
        let subject = upsert_entity(rows, scope, &named(&f.subject), now, &mut out.new_names)?;
        touched.push(subject);
        let object = match &f.object {
            Some(o) => {
                let id = upsert_entity(rows, scope, &named(o), now, &mut out.new_names)?;
                touched.push(id);
                Some(id)
            }
            None => None,
        };
        let predicate = normalize_predicate(&f.predicate);
        if f.supersede {
            let at = f.valid_from.unwrap_or(now);
            for id in rows.open_facts(subject, &predicate, at)? {
                rows.invalidate(id, at, Some("superseded"), now)?;
                out.superseded.push(id);
            }
        }
        let key = FactKey {
            subject,
            predicate: &predicate,
            object,
            literal: f.literal.as_deref().map(str::trim),
            valid_from: f.valid_from,
            valid_to: f.valid_to,
        };
        let id = match rows.twin(&key)? {
            Some((id, sources)) => {
                let mut have: Vec<MemoryId> = serde_json::from_str(&sources).unwrap_or_default();
                let before = have.len();
                for s in &f.sources {
                    if !have.contains(s) {
                        have.push(s.clone());
                    }
                }
                if have.len() != before {
                    rows.set_sources(id, &json_list(&have))?;
                }
                id
            }
            None => {
                let mut sources: Vec<MemoryId> = Vec::new();
                for s in &f.sources {
                    if !sources.contains(s) {
                        sources.push(s.clone());
                    }
                }
                let confidence = f64::from(f.confidence.unwrap_or(1.0));
                rows.insert_fact(&key, now, confidence, &json_list(&sources))?
            }
        };
        fact_ids.push(id);
    }
    let mut seen = std::collections::HashSet::new();
    for id in touched {
        if seen.insert(id)
            && let Some(e) = rows.entity(id)?
        {
            out.entities.push(e);
        }
    }
    for id in fact_ids {
        if let Some(f) = rows.fact(id)? {
            out.facts.push(f);
        }
    }
    Ok(out)
}

fn json_list(ids: &[MemoryId]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())
}

/// Finds or creates the entity `e.name` stands for, then gives it `e.aliases` and, when
/// it has none yet, `e.kind`.
fn upsert_entity<R: GraphRows>(
    rows: &mut R,
    scope: &Scope,
    e: &NewEntity,
    now: Millis,
    new_names: &mut Vec<(i64, Scope, String)>,
) -> Result<i64, R::Err> {
    let norm = normalize_name(&e.name);
    let id = match rows.entity_named(scope, &norm)? {
        Some(id) => {
            if let Some(kind) = &e.kind {
                rows.give_kind(id, kind)?;
            }
            id
        }
        None => {
            let id = rows.insert_entity(scope, e.name.trim(), e.kind.as_deref(), now)?;
            rows.insert_name(scope, &norm, id, e.name.trim())?;
            new_names.push((id, scope.clone(), norm));
            id
        }
    };
    for alias in &e.aliases {
        let norm = normalize_name(alias);
        match rows.entity_named(scope, &norm)? {
            Some(other) if other == id => {}
            Some(other) => {
                return Err(Error::Invalid(InvalidInput::BadGraph {
                    reason: format!(
                        "alias {alias:?} already names another entity (id {other}) in this scope"
                    ),
                })
                .into());
            }
            None => {
                rows.insert_name(scope, &norm, id, alias.trim())?;
                new_names.push((id, scope.clone(), norm));
            }
        }
    }
    Ok(id)
}
