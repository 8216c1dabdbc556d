//! The knowledge graph's tables: entities and their names, facts with validity windows,
//! invalidations, and the memories that mention each entity.

use amber_core::graph::{
    Entity, EntityRef, Fact, FactObject, GraphStats, NewEntity, NewFact, normalize_name,
};
use amber_core::{MemoryId, Millis, Scope};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::Graph;
use crate::{Error, Result, Store};

pub(crate) mod add;
mod mentions;

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

/// The SQLite rows of [`add::add`], inside one transaction.
struct Rows<'a> {
    tx: &'a Transaction<'a>,
    path: &'a std::path::Path,
}

impl Rows<'_> {
    fn sql(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        sql_err(self.path)
    }
}

impl add::GraphRows for Rows<'_> {
    type Err = Error;

    fn entity_named(&mut self, scope: &Scope, norm: &str) -> Result<Option<i64>> {
        self.tx
            .prepare_cached("SELECT entity FROM kg_names WHERE scope = ?1 AND norm = ?2")
            .and_then(|mut st| st.query_row(params![scope.as_str(), norm], |r| r.get(0)).optional())
            .map_err(self.sql())
    }

    fn give_kind(&mut self, entity: i64, kind: &str) -> Result<()> {
        self.tx
            .execute("UPDATE kg_entities SET kind = ?2 WHERE id = ?1 AND kind IS NULL", params![entity, kind])
            .map(|_| ())
            .map_err(self.sql())
    }

    fn insert_entity(&mut self, scope: &Scope, name: &str, kind: Option<&str>, now: Millis) -> Result<i64> {
        self.tx
            .execute(
                "INSERT INTO kg_entities (scope, name, kind, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![scope.as_str(), name, kind, now],
            )
            .map_err(self.sql())?;
        Ok(self.tx.last_insert_rowid())
    }

    fn insert_name(&mut self, scope: &Scope, norm: &str, entity: i64, name: &str) -> Result<()> {
        self.tx
            .execute(
                "INSERT INTO kg_names (scope, norm, entity, name) VALUES (?1, ?2, ?3, ?4)",
                params![scope.as_str(), norm, entity, name],
            )
            .map(|_| ())
            .map_err(self.sql())
    }

    fn open_facts(&mut self, subject: i64, predicate: &str, at: Millis) -> Result<Vec<i64>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT id FROM kg_facts WHERE subject = ?1 AND predicate = ?2
                 AND (valid_from IS NULL OR valid_from < ?3) AND (valid_to IS NULL OR valid_to > ?3)
                 ORDER BY id",
            )
            .map_err(self.sql())?;
        stmt.query_map(params![subject, predicate, at], |r| r.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<_>>())
            .map_err(self.sql())
    }

    fn invalidate(&mut self, fact: i64, at: Millis, reason: Option<&str>, now: Millis) -> Result<()> {
        invalidate(self.tx, fact, at, reason, now).map_err(self.sql())
    }

    fn twin(&mut self, k: &add::FactKey<'_>) -> Result<Option<(i64, String)>> {
        // The unary `+` keeps SQLite off `kg_facts_time`: without statistics it otherwise
        // prefers that index for the two `IS` terms, which match nearly every fact (open
        // windows), making each add a scan and a load quadratic.
        self.tx
            .prepare_cached(
                "SELECT id, sources FROM kg_facts WHERE subject = ?1 AND predicate = ?2
                 AND object IS ?3 AND literal IS ?4 AND +valid_from IS ?5 AND +valid_to IS ?6",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![k.subject, k.predicate, k.object, k.literal, k.valid_from, k.valid_to],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .map_err(self.sql())
    }

    fn set_sources(&mut self, fact: i64, sources: &str) -> Result<()> {
        self.tx
            .execute("UPDATE kg_facts SET sources = ?2 WHERE id = ?1", params![fact, sources])
            .map(|_| ())
            .map_err(self.sql())
    }

    fn insert_fact(
        &mut self,
        k: &add::FactKey<'_>,
        now: Millis,
        confidence: f64,
        sources: &str,
    ) -> Result<i64> {
        self.tx
            .execute(
                "INSERT INTO kg_facts (subject, predicate, object, literal, valid_from, valid_to,
                 recorded_at, confidence, sources) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    k.subject,
                    k.predicate,
                    k.object,
                    k.literal,
                    k.valid_from,
                    k.valid_to,
                    now,
                    confidence,
                    sources
                ],
            )
            .map_err(self.sql())?;
        Ok(self.tx.last_insert_rowid())
    }

    fn entity(&mut self, id: i64) -> Result<Option<Entity>> {
        entity_by_id(self.tx, id)
    }

    fn fact(&mut self, id: i64) -> Result<Option<Fact>> {
        fact_by_id(self.tx, id).map_err(self.sql())
    }
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

impl Graph for Store {
    /// Adds entities and facts in one scope, in one transaction (all or nothing).
    /// Entities are found by any of their names (normalized), created when new. A fact
    /// identical to one already there (same subject, predicate, object and window) is
    /// not added again: its sources are merged. With `supersede`, facts with the same
    /// subject and predicate that hold when the new one starts end there.
    fn kg_add(
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
        let tx = self.conn.transaction().map_err(sql_err(&path))?;
        let out = add::add(&mut Rows { tx: &tx, path: &path }, scope, entities, facts, now)?;
        tx.commit().map_err(sql_err(&path))?;
        Ok(out)
    }

    /// Ends a fact's window at `at` (the newest invalidation wins) and logs it. None
    /// when there is no such fact.
    fn kg_invalidate(
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
    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
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
    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
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
    fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        fact_by_id(&self.conn, id).map_err(self.sql())
    }

    /// An entity by its number.
    fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        entity_by_id(&self.conn, id)
    }

    /// The entity a name or alias stands for in a scope (None when unknown).
    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
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
    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
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
    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
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
    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
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

    /// Counts over a scope's graph (every scope when None); `valid_now` at `now`.
    fn kg_entities(&self, scope: Option<&Scope>, now: Millis, limit: usize) -> Result<Vec<(Entity, u64)>> {
        let valid = "f.invalidated_at IS NULL AND (f.valid_from IS NULL OR f.valid_from <= ?2) \
                     AND (f.valid_to IS NULL OR f.valid_to > ?2)";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT e.id, (SELECT count(*) FROM kg_facts f WHERE f.subject = e.id AND {valid})
                     + (SELECT count(*) FROM kg_facts f WHERE f.object = e.id AND {valid}) AS n
                 FROM kg_entities e WHERE (?1 IS NULL OR e.scope = ?1) ORDER BY n DESC, e.id LIMIT ?3"
            ))
            .map_err(self.sql())?;
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = stmt
            .query_map(params![scope.map(Scope::as_str), now, limit], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(self.sql())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, n) in rows {
            if let Some(e) = entity_by_id(&self.conn, id)? {
                out.push((e, n.max(0) as u64));
            }
        }
        Ok(out)
    }

    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
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

#[cfg(test)]
mod tests;
