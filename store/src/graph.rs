//! The knowledge graph's tables: entities and their names, facts with validity windows,
//! invalidations, and the memories that mention each entity.

use amber_core::graph::{
    Entity, EntityRef, Fact, FactObject, GraphStats, NewEntity, NewFact, normalize_name, normalize_predicate,
};
use amber_core::{InvalidInput, Memory, MemoryId, Millis, Scope};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Error, Result, Store};

/// What [`Store::kg_add`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KgAdded {
    /// The entities named (as given or by the facts), as stored after the call.
    pub entities: Vec<Entity>,
    /// The facts, as stored (an identical fact already there is returned, its sources
    /// merged).
    pub facts: Vec<Fact>,
    /// Facts whose window this call ended (`supersede`).
    pub superseded: Vec<i64>,
    /// Names that are new in their scope: (entity, scope, normalized name).
    pub new_names: Vec<(i64, Scope, String)>,
}

/// One page of an entity's facts (see [`Store::kg_facts_page`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FactPage {
    /// The facts, in id order.
    pub facts: Vec<Fact>,
    /// True when there may be more after the last one.
    pub more: bool,
}

const FACT_COLUMNS: &str = "f.id, f.subject, s.name, f.predicate, f.object, o.name, f.literal, f.valid_from, \
     f.valid_to, f.recorded_at, f.invalidated_at, f.confidence, f.sources";
const FACT_FROM: &str =
    "kg_facts f JOIN kg_entities s ON s.id = f.subject LEFT JOIN kg_entities o ON o.id = f.object";

type RawFact = (
    i64,
    i64,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<Millis>,
    Option<Millis>,
    Millis,
    Option<Millis>,
    f64,
    String,
);

fn raw_fact(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawFact> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
        r.get(12)?,
    ))
}

fn fact(raw: RawFact) -> Fact {
    let (
        id,
        sid,
        sname,
        predicate,
        oid,
        oname,
        literal,
        valid_from,
        valid_to,
        recorded_at,
        invalidated_at,
        c,
        src,
    ) = raw;
    let object = match (oid, oname) {
        (Some(id), Some(name)) => FactObject::Entity(EntityRef { id, name }),
        _ => FactObject::Literal(literal.unwrap_or_default()),
    };
    // Sources were validated on the way in; an unreadable list is shown as empty.
    let sources = serde_json::from_str(&src).unwrap_or_default();
    Fact {
        id,
        subject: EntityRef { id: sid, name: sname },
        predicate,
        object,
        valid_from,
        valid_to,
        recorded_at,
        invalidated_at,
        confidence: c as f32,
        sources,
    }
}

fn sql_err(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |source| Error::Sqlite { path: path.to_path_buf(), source }
}

/// The entity a name or alias stands for in a scope.
fn lookup(tx: &Transaction<'_>, scope: &Scope, norm: &str) -> rusqlite::Result<Option<i64>> {
    tx.prepare_cached("SELECT entity FROM kg_names WHERE scope = ?1 AND norm = ?2")?
        .query_row(params![scope.as_str(), norm], |r| r.get(0))
        .optional()
}

/// Finds or creates the entity `name` stands for, then gives it `aliases` and, when it
/// has none yet, `kind`.
fn upsert_entity(
    tx: &Transaction<'_>,
    scope: &Scope,
    e: &NewEntity,
    now: Millis,
    new_names: &mut Vec<(i64, Scope, String)>,
) -> Result<i64> {
    let path = tx.path().map(std::path::PathBuf::from).unwrap_or_default();
    let sql = sql_err(&path);
    let norm = normalize_name(&e.name);
    let id = match lookup(tx, scope, &norm).map_err(&sql)? {
        Some(id) => {
            if let Some(kind) = &e.kind {
                tx.execute(
                    "UPDATE kg_entities SET kind = ?2 WHERE id = ?1 AND kind IS NULL",
                    params![id, kind],
                )
                .map_err(&sql)?;
            }
            id
        }
        None => {
            tx.execute(
                "INSERT INTO kg_entities (scope, name, kind, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![scope.as_str(), e.name.trim(), e.kind, now],
            )
            .map_err(&sql)?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO kg_names (scope, norm, entity, name) VALUES (?1, ?2, ?3, ?4)",
                params![scope.as_str(), norm, id, e.name.trim()],
            )
            .map_err(&sql)?;
            new_names.push((id, scope.clone(), norm));
            id
        }
    };
    for alias in &e.aliases {
        let norm = normalize_name(alias);
        match lookup(tx, scope, &norm).map_err(&sql)? {
            Some(other) if other == id => {}
            Some(other) => {
                return Err(Error::Invalid(InvalidInput::BadGraph {
                    reason: format!(
                        "alias {alias:?} already names another entity (id {other}) in this scope"
                    ),
                }));
            }
            None => {
                tx.execute(
                    "INSERT INTO kg_names (scope, norm, entity, name) VALUES (?1, ?2, ?3, ?4)",
                    params![scope.as_str(), norm, id, alias.trim()],
                )
                .map_err(&sql)?;
                new_names.push((id, scope.clone(), norm));
            }
        }
    }
    Ok(id)
}

fn fact_by_id(conn: &rusqlite::Connection, id: i64) -> rusqlite::Result<Option<Fact>> {
    conn.prepare_cached(&format!("SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.id = ?1"))?
        .query_row([id], raw_fact)
        .optional()
        .map(|r| r.map(fact))
}

fn entity_by_id(conn: &rusqlite::Connection, id: i64) -> Result<Option<Entity>> {
    let path = conn.path().map(std::path::PathBuf::from).unwrap_or_default();
    let sql = sql_err(&path);
    let row = conn
        .prepare_cached("SELECT scope, name, kind, created_at FROM kg_entities WHERE id = ?1")
        .map_err(&sql)?
        .query_row([id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?, r.get(3)?))
        })
        .optional()
        .map_err(&sql)?;
    let Some((scope, name, kind, created_at)) = row else { return Ok(None) };
    let mut aliases = Vec::new();
    let mut stmt =
        conn.prepare_cached("SELECT name FROM kg_names WHERE entity = ?1 ORDER BY name").map_err(&sql)?;
    for n in stmt.query_map([id], |r| r.get::<_, String>(0)).map_err(&sql)? {
        let n = n.map_err(&sql)?;
        if n != name {
            aliases.push(n);
        }
    }
    let scope = scope
        .parse()
        .map_err(|_| Error::Corrupt { path: path.clone(), detail: format!("entity {id} scope") })?;
    Ok(Some(Entity { id, scope, name, kind, aliases, created_at }))
}

impl Store {
    /// Adds entities and facts in one scope, in one transaction (all or nothing).
    /// Entities are found by any of their names (normalized), created when new. A fact
    /// identical to one already there (same subject, predicate, object and window) is
    /// not added again: its sources are merged. With `supersede`, facts with the same
    /// subject and predicate that hold when the new one starts end there.
    pub fn kg_add(
        &mut self,
        scope: &Scope,
        entities: &[NewEntity],
        facts: &[NewFact],
        now: Millis,
    ) -> Result<KgAdded> {
        for e in entities {
            e.validate()?;
        }
        for f in facts {
            f.validate()?;
        }
        let path = self.path.clone();
        let sql = sql_err(&path);
        let tx = self.conn.transaction().map_err(&sql)?;
        let mut out = KgAdded::default();
        let mut touched = Vec::new();
        for e in entities {
            touched.push(upsert_entity(&tx, scope, e, now, &mut out.new_names)?);
        }
        let mut fact_ids = Vec::new();
        for f in facts {
            let named = |name: &str| NewEntity { name: name.into(), ..NewEntity::default() };
            let subject = upsert_entity(&tx, scope, &named(&f.subject), now, &mut out.new_names)?;
            touched.push(subject);
            let object = match &f.object {
                Some(o) => {
                    let id = upsert_entity(&tx, scope, &named(o), now, &mut out.new_names)?;
                    touched.push(id);
                    Some(id)
                }
                None => None,
            };
            let literal = f.literal.as_deref().map(str::trim);
            let predicate = normalize_predicate(&f.predicate);
            if f.supersede {
                let at = f.valid_from.unwrap_or(now);
                let mut stmt = tx
                    .prepare_cached(
                        "SELECT id FROM kg_facts WHERE subject = ?1 AND predicate = ?2
                         AND (valid_from IS NULL OR valid_from < ?3) AND (valid_to IS NULL OR valid_to > ?3)",
                    )
                    .map_err(&sql)?;
                let ids: Vec<i64> = stmt
                    .query_map(params![subject, predicate, at], |r| r.get(0))
                    .map_err(&sql)?
                    .collect::<rusqlite::Result<_>>()
                    .map_err(&sql)?;
                for id in ids {
                    invalidate(&tx, id, at, Some("superseded"), now).map_err(&sql)?;
                    out.superseded.push(id);
                }
            }
            // The unary `+` keeps SQLite off `kg_facts_time`: without statistics it
            // otherwise prefers that index for the two `IS` terms, which match nearly
            // every fact (open windows), making each add a scan and a load quadratic.
            let existing: Option<(i64, String)> = tx
                .prepare_cached(
                    "SELECT id, sources FROM kg_facts WHERE subject = ?1 AND predicate = ?2
                     AND object IS ?3 AND literal IS ?4 AND +valid_from IS ?5 AND +valid_to IS ?6",
                )
                .map_err(&sql)?
                .query_row(params![subject, predicate, object, literal, f.valid_from, f.valid_to], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(&sql)?;
            let id = match existing {
                Some((id, sources)) => {
                    let mut have: Vec<MemoryId> = serde_json::from_str(&sources).unwrap_or_default();
                    let before = have.len();
                    for s in &f.sources {
                        if !have.contains(s) {
                            have.push(s.clone());
                        }
                    }
                    if have.len() != before {
                        tx.execute(
                            "UPDATE kg_facts SET sources = ?2 WHERE id = ?1",
                            params![id, serde_json::to_string(&have).unwrap_or_else(|_| "[]".into())],
                        )
                        .map_err(&sql)?;
                    }
                    id
                }
                None => {
                    let mut sources: Vec<&MemoryId> = Vec::new();
                    for s in &f.sources {
                        if !sources.contains(&s) {
                            sources.push(s);
                        }
                    }
                    tx.execute(
                        "INSERT INTO kg_facts (subject, predicate, object, literal, valid_from, valid_to,
                         recorded_at, confidence, sources) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        params![
                            subject,
                            predicate,
                            object,
                            literal,
                            f.valid_from,
                            f.valid_to,
                            now,
                            f64::from(f.confidence.unwrap_or(1.0)),
                            serde_json::to_string(&sources).unwrap_or_else(|_| "[]".into())
                        ],
                    )
                    .map_err(&sql)?;
                    tx.last_insert_rowid()
                }
            };
            fact_ids.push(id);
        }
        let mut seen = std::collections::HashSet::new();
        for id in touched {
            if seen.insert(id)
                && let Some(e) = entity_by_id(&tx, id)?
            {
                out.entities.push(e);
            }
        }
        for id in fact_ids {
            if let Some(f) = fact_by_id(&tx, id).map_err(&sql)? {
                out.facts.push(f);
            }
        }
        tx.commit().map_err(&sql)?;
        Ok(out)
    }

    /// Ends a fact's window at `at` (the newest invalidation wins) and logs it. None
    /// when there is no such fact.
    pub fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>> {
        let path = self.path.clone();
        let sql = sql_err(&path);
        let tx = self.conn.transaction().map_err(&sql)?;
        if fact_by_id(&tx, id).map_err(&sql)?.is_none() {
            return Ok(None);
        }
        invalidate(&tx, id, at, reason, now).map_err(&sql)?;
        let f = fact_by_id(&tx, id).map_err(&sql)?;
        tx.commit().map_err(&sql)?;
        Ok(f)
    }

    /// A fact's invalidations, oldest first: (the time its window ended, the reason).
    pub fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT at, reason FROM kg_invalidations WHERE fact = ?1 ORDER BY recorded_at, rowid",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([fact], |r| Ok((r.get(0)?, r.get(1)?))).map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    /// The facts not invalidated yet that name this memory among their sources.
    pub fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT id FROM kg_facts WHERE invalidated_at IS NULL AND instr(sources, ?1) > 0 ORDER BY id",
                )
                .map_err(self.sql())?;
            stmt.query_map([memory.as_str()], |r| r.get(0))
                .map_err(self.sql())?
                .collect::<rusqlite::Result<_>>()
                .map_err(self.sql())?
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(f) = fact_by_id(&self.conn, id).map_err(self.sql())?
                && f.sources.contains(memory)
            {
                out.push(f);
            }
        }
        Ok(out)
    }

    /// A fact by its number.
    pub fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        fact_by_id(&self.conn, id).map_err(self.sql())
    }

    /// An entity by its number.
    pub fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        entity_by_id(&self.conn, id)
    }

    /// The entity a name or alias stands for in a scope (None when unknown).
    pub fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
        let norm = normalize_name(name);
        let id: Option<i64> = self
            .conn
            .prepare_cached("SELECT entity FROM kg_names WHERE scope = ?1 AND norm = ?2")
            .map_err(self.sql())?
            .query_row(params![scope.as_str(), norm], |r| r.get(0))
            .optional()
            .map_err(self.sql())?;
        match id {
            Some(id) => self.kg_entity(id),
            None => Ok(None),
        }
    }

    /// The facts an entity takes part in (as subject or object), valid at `as_of` when
    /// given; ordered by start of validity (open starts first), then filing.
    pub fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
        let window = "(?2 IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= ?2) \
                      AND (f.valid_to IS NULL OR f.valid_to > ?2)))";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.subject = ?1 AND {window}
                 UNION ALL
                 SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.object = ?1 AND f.subject != ?1 AND {window}"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![entity, as_of], raw_fact).map_err(self.sql())?;
        let mut out = rows.map(|r| r.map(fact).map_err(self.sql())).collect::<Result<Vec<_>>>()?;
        out.sort_by_key(|f| (f.valid_from.unwrap_or(Millis::MIN), f.recorded_at, f.id));
        Ok(out)
    }

    /// A page of the facts an entity takes part in (as subject or object) that hold at
    /// `as_of`: those with an id above `after`, in id order, at most `limit`. `more` is
    /// true when there may be further pages. Reads about `limit` rows whatever the
    /// entity's degree.
    pub fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
        let window =
            "(f.valid_from IS NULL OR f.valid_from <= ?2) AND (f.valid_to IS NULL OR f.valid_to > ?2)";
        let side = |index: &str, cond: &str| {
            format!(
                "SELECT {FACT_COLUMNS} FROM kg_facts f INDEXED BY {index} JOIN kg_entities s ON s.id = f.subject \
                 LEFT JOIN kg_entities o ON o.id = f.object \
                 WHERE {cond} AND f.id > ?3 AND {window} ORDER BY f.id LIMIT ?4"
            )
        };
        let read = |sql: String| -> Result<Vec<Fact>> {
            let mut stmt = self.conn.prepare_cached(&sql).map_err(self.sql())?;
            let rows =
                stmt.query_map(params![entity, as_of, after, limit as i64], raw_fact).map_err(self.sql())?;
            rows.map(|r| r.map(fact).map_err(self.sql())).collect()
        };
        let a = read(side("kg_facts_by_subject", "f.subject = ?1"))?;
        let b = read(side("kg_facts_by_object", "f.object = ?1 AND f.subject != ?1"))?;
        let more = a.len() == limit || b.len() == limit;
        let mut facts: Vec<Fact> = a.into_iter().chain(b).collect();
        facts.sort_by_key(|f| f.id);
        facts.truncate(limit);
        Ok(FactPage { facts, more })
    }

    /// Every name of every entity: (entity, scope, normalized name).
    pub fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
        let mut stmt =
            self.conn.prepare_cached("SELECT entity, scope, norm FROM kg_names").map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for r in rows {
            let (id, scope, norm) = r.map_err(self.sql())?;
            if let Ok(scope) = scope.parse() {
                out.push((id, scope, norm));
            }
        }
        Ok(out)
    }

    /// Records that memories mention entities; returns how many links were new.
    pub fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        if pairs.is_empty() {
            return Ok(0);
        }
        let path = self.path.clone();
        let sql = sql_err(&path);
        let tx = self.conn.transaction().map_err(&sql)?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR IGNORE INTO kg_mentions (entity, memory) VALUES (?1, ?2)")
                .map_err(&sql)?;
            for (e, m) in pairs {
                added += stmt.execute(params![e, m.as_str()]).map_err(&sql)?;
            }
        }
        tx.commit().map_err(&sql)?;
        Ok(added)
    }

    /// The live memories that mention an entity, newest first, at most `limit`.
    pub fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        let cols = MEMORY_COLUMNS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", ");
        // The limit is written into the SQL (one cached statement per value), so the plan
        // never depends on a bound value (see `Store::open_reader` for why that matters).
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {cols} FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT {limit}"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map(params![entity], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// How many live memories mention each entity.
    pub fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        self.conn
            .prepare_cached(
                "SELECT count(*) FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL",
            )
            .map_err(self.sql())?
            .query_row([entity], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.sql())
    }

    /// The seqs of live memories that mention any of these entities, newest first per
    /// entity, at most `per_entity` each: (entity, seq).
    pub fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT m.seq FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = ?1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT ?2",
            )
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for &e in entities {
            let rows =
                stmt.query_map(params![e, per_entity as i64], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
            for r in rows {
                out.push((e, r.map_err(self.sql())? as u64));
            }
        }
        Ok(out)
    }

    /// Counts over a scope's graph (every scope when None); `valid_now` at `now`.
    pub fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
        let s = scope.map(Scope::as_str);
        let one = |q: &str| -> Result<u64> {
            self.conn
                .query_row(q, params![s, now], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(self.sql())
        };
        let in_scope = "(?1 IS NULL OR e.scope = ?1) AND ?2 IS NOT NULL";
        let facts = format!("FROM kg_facts f JOIN kg_entities e ON e.id = f.subject WHERE {in_scope}");
        Ok(GraphStats {
            entities: one(&format!("SELECT count(*) FROM kg_entities e WHERE {in_scope}"))?,
            aliases: one(&format!(
                "SELECT count(*) FROM kg_names n JOIN kg_entities e ON e.id = n.entity WHERE {in_scope} AND n.name != e.name"
            ))?,
            facts: one(&format!("SELECT count(*) {facts}"))?,
            invalidated: one(&format!("SELECT count(*) {facts} AND f.invalidated_at IS NOT NULL"))?,
            valid_now: one(&format!(
                "SELECT count(*) {facts} AND (f.valid_from IS NULL OR f.valid_from <= ?2) AND (f.valid_to IS NULL OR f.valid_to > ?2)"
            ))?,
            mentions: one(&format!(
                "SELECT count(*) FROM kg_mentions k JOIN kg_entities e ON e.id = k.entity WHERE {in_scope}"
            ))?,
            predicates: one(&format!("SELECT count(DISTINCT f.predicate) {facts}"))?,
        })
    }
}

fn invalidate(
    tx: &Transaction<'_>,
    id: i64,
    at: Millis,
    reason: Option<&str>,
    now: Millis,
) -> rusqlite::Result<()> {
    tx.execute("UPDATE kg_facts SET valid_to = ?2, invalidated_at = ?3 WHERE id = ?1", params![id, at, now])?;
    tx.execute(
        "INSERT INTO kg_invalidations (fact, at, recorded_at, reason) VALUES (?1, ?2, ?3, ?4)",
        params![id, at, now, reason],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(s: &str, p: &str, o: &str) -> NewFact {
        NewFact { subject: s.into(), predicate: p.into(), object: Some(o.into()), ..NewFact::default() }
    }

    #[test]
    fn windows_invalidation_and_supersession() {
        let mut st = Store::open_in_memory().unwrap();
        let sc = Scope::default();
        let mut lives = fact("Ada", "lives in", "Paris");
        lives.valid_from = Some(100);
        let a = st.kg_add(&sc, &[], &[lives], 1).unwrap();
        assert_eq!(a.facts[0].predicate, "lives_in");
        assert_eq!(a.entities.len(), 2);
        let ada = st.kg_resolve(&sc, "ada").unwrap().unwrap().id;
        // before the window: nothing; inside: Paris
        assert!(st.kg_facts_of(ada, Some(50)).unwrap().is_empty());
        assert_eq!(st.kg_facts_of(ada, Some(150)).unwrap().len(), 1);
        // invalidate at 200, then a later invalidation at 300 wins
        st.kg_invalidate(a.facts[0].id, 200, None, 2).unwrap().unwrap();
        assert!(st.kg_facts_of(ada, Some(250)).unwrap().is_empty());
        let f = st.kg_invalidate(a.facts[0].id, 300, Some("fixed date"), 3).unwrap().unwrap();
        assert_eq!((f.valid_to, f.invalidated_at), (Some(300), Some(3)));
        assert_eq!(st.kg_facts_of(ada, Some(250)).unwrap().len(), 1);
        // a new city superseding from 300: Berlin after, Paris before
        let mut moved = fact("ada", "Lives In", "Berlin");
        moved.valid_from = Some(300);
        moved.supersede = true;
        st.kg_add(&sc, &[], &[moved], 4).unwrap();
        let at = |t| st.kg_facts_of(ada, Some(t)).unwrap();
        assert!(matches!(&at(299)[0].object, FactObject::Entity(e) if e.name == "Paris"));
        assert!(matches!(&at(301)[0].object, FactObject::Entity(e) if e.name == "Berlin"));
        assert_eq!(st.kg_facts_of(ada, None).unwrap().len(), 2, "facts are never deleted");
        assert_eq!(st.kg_invalidate(999, 1, None, 1).unwrap(), None);
        let stats = st.kg_stats(Some(&sc), 1000).unwrap();
        assert_eq!((stats.entities, stats.facts, stats.invalidated, stats.valid_now), (3, 2, 1, 1));
    }

    #[test]
    fn facts_come_a_page_at_a_time_from_both_ends() {
        let mut st = Store::open_in_memory().unwrap();
        let sc = Scope::default();
        // hub -> e0..e59 (odd ones only from 100 on), and e60..e79 -> hub
        let mut facts: Vec<NewFact> = (0..60)
            .map(|i| {
                let mut f = fact("hub", "knows", &format!("e{i}"));
                if i % 2 == 1 {
                    f.valid_from = Some(100);
                }
                f
            })
            .collect();
        facts.extend((60..80).map(|i| fact(&format!("e{i}"), "knows", "hub")));
        st.kg_add(&sc, &[], &facts, 1).unwrap();
        let hub = st.kg_resolve(&sc, "hub").unwrap().unwrap().id;
        let mut seen = Vec::new();
        let mut after = i64::MIN;
        loop {
            let page = st.kg_facts_page(hub, 50, after, 7).unwrap();
            assert!(page.facts.len() <= 7);
            assert!(page.facts.windows(2).all(|w| w[0].id < w[1].id));
            seen.extend(page.facts.iter().map(|f| f.id));
            after = page.facts.last().map_or(after, |f| f.id);
            if !page.more {
                break;
            }
        }
        // at 50 the 30 odd facts do not hold yet: 30 outgoing + 20 incoming
        assert_eq!(seen.len(), 50);
        let later = st.kg_facts_page(hub, 150, i64::MIN, 1000).unwrap();
        assert_eq!((later.facts.len(), later.more), (80, false));
    }

    #[test]
    fn aliases_resolve_and_conflicts_are_refused() {
        let mut st = Store::open_in_memory().unwrap();
        let sc = Scope::default();
        let e = NewEntity {
            name: "Robert Smith".into(),
            kind: Some("person".into()),
            aliases: vec!["Bob".into()],
        };
        st.kg_add(&sc, &[e], &[], 1).unwrap();
        let bob = st.kg_resolve(&sc, "BOB").unwrap().unwrap();
        assert_eq!((bob.name.as_str(), bob.aliases.clone()), ("Robert Smith", vec!["Bob".to_string()]));
        st.kg_add(&sc, &[NewEntity { name: "Alice".into(), ..Default::default() }], &[], 1).unwrap();
        let clash = NewEntity { name: "Alice".into(), aliases: vec!["bob".into()], ..Default::default() };
        assert!(matches!(st.kg_add(&sc, &[clash], &[], 1), Err(Error::Invalid(_))));
        // the failed call left nothing behind
        assert_eq!(st.kg_resolve(&sc, "alice").unwrap().unwrap().aliases, Vec::<String>::new());
        // another scope has its own graph
        let other: Scope = "elsewhere".parse().unwrap();
        assert_eq!(st.kg_resolve(&other, "bob").unwrap(), None);
    }

    #[test]
    fn the_same_fact_twice_merges_sources() {
        let mut st = Store::open_in_memory().unwrap();
        let sc = Scope::default();
        let id = |c: char| c.to_string().repeat(32).parse::<MemoryId>().unwrap();
        let mut f = fact("a", "knows", "b");
        f.sources = vec![id('a')];
        let one = st.kg_add(&sc, &[], &[f.clone()], 1).unwrap();
        f.sources = vec![id('a'), id('b')];
        let two = st.kg_add(&sc, &[], &[f], 2).unwrap();
        assert_eq!(one.facts[0].id, two.facts[0].id);
        assert_eq!(two.facts[0].sources, vec![id('a'), id('b')]);
    }
}
