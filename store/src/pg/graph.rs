//! The knowledge graph on PostgreSQL: entities and names, facts with windows,
//! invalidations and mentions (as `graph.rs` does on SQLite). Graph writes take one
//! advisory lock, so two nodes naming the same new entity do not collide.

use amber_core::graph::{
    Entity, EntityRef, Fact, FactObject, GraphStats, NewEntity, NewFact, normalize_name,
};
use amber_core::{Memory, MemoryId, Millis, Scope};
use postgres::GenericClient;

use super::{MEMORY_COLUMNS, PgStore, Q, memories};
use crate::Graph;
use crate::Mentions;
use crate::graph::add;
use crate::{Error, FactPage, KgAdded, Result};

/// The advisory lock graph writes take.
const KG_LOCK: i64 = super::SEQ_LOCK + 2;

const FACT_COLUMNS: &str = "f.id, f.subject, s.name, f.predicate, f.object, o.name, f.literal, f.valid_from, \
     f.valid_to, f.recorded_at, f.invalidated_at, f.confidence, f.sources";
const FACT_FROM: &str =
    "kg_facts f JOIN kg_entities s ON s.id = f.subject LEFT JOIN kg_entities o ON o.id = f.object";

fn fact(r: &postgres::Row) -> Q<Fact> {
    let oid: Option<i64> = r.try_get(4)?;
    let oname: Option<String> = r.try_get(5)?;
    let literal: Option<String> = r.try_get(6)?;
    let object = match (oid, oname) {
        (Some(id), Some(name)) => FactObject::Entity(EntityRef { id, name }),
        _ => FactObject::Literal(literal.unwrap_or_default()),
    };
    let src: String = r.try_get(12)?;
    Ok(Fact {
        id: r.try_get(0)?,
        subject: EntityRef { id: r.try_get(1)?, name: r.try_get(2)? },
        predicate: r.try_get(3)?,
        object,
        valid_from: r.try_get(7)?,
        valid_to: r.try_get(8)?,
        recorded_at: r.try_get(9)?,
        invalidated_at: r.try_get(10)?,
        confidence: r.try_get::<_, f64>(11)? as f32,
        // Sources were validated on the way in; an unreadable list is shown as empty.
        sources: serde_json::from_str(&src).unwrap_or_default(),
    })
}

/// The PostgreSQL rows of the one graph-adding rule (`crate::graph::add`), inside one
/// transaction.
struct Rows<'a, C: GenericClient> {
    c: &'a mut C,
    path: &'a std::path::Path,
}

impl<C: GenericClient> add::GraphRows for Rows<'_, C> {
    type Err = super::Fail;

    fn entity_named(&mut self, scope: &Scope, norm: &str) -> Q<Option<i64>> {
        Ok(self
            .c
            .query_opt(
                "SELECT entity FROM kg_names WHERE scope = $1 AND norm = $2",
                &[&scope.as_str(), &norm],
            )?
            .map(|r| r.get(0)))
    }

    fn give_kind(&mut self, entity: i64, kind: &str) -> Q<()> {
        self.c
            .execute("UPDATE kg_entities SET kind = $2 WHERE id = $1 AND kind IS NULL", &[&entity, &kind])?;
        Ok(())
    }

    fn insert_entity(&mut self, scope: &Scope, name: &str, kind: Option<&str>, now: Millis) -> Q<i64> {
        Ok(self
            .c
            .query_one(
                "INSERT INTO kg_entities (scope, name, kind, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
                &[&scope.as_str(), &name, &kind, &now],
            )?
            .try_get(0)?)
    }

    fn insert_name(&mut self, scope: &Scope, norm: &str, entity: i64, name: &str) -> Q<()> {
        self.c.execute(
            "INSERT INTO kg_names (scope, norm, entity, name) VALUES ($1, $2, $3, $4)",
            &[&scope.as_str(), &norm, &entity, &name],
        )?;
        Ok(())
    }

    fn open_facts(&mut self, subject: i64, predicate: &str, at: Millis) -> Q<Vec<i64>> {
        Ok(self
            .c
            .query(
                "SELECT id FROM kg_facts WHERE subject = $1 AND predicate = $2
                 AND (valid_from IS NULL OR valid_from < $3) AND (valid_to IS NULL OR valid_to > $3)
                 ORDER BY id",
                &[&subject, &predicate, &at],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?)
    }

    fn invalidate(&mut self, fact: i64, at: Millis, reason: Option<&str>, now: Millis) -> Q<()> {
        invalidate(self.c, fact, at, reason, now)
    }

    fn twin(&mut self, k: &add::FactKey<'_>) -> Q<Option<(i64, String)>> {
        let row = self.c.query_opt(
            "SELECT id, sources FROM kg_facts WHERE subject = $1 AND predicate = $2
             AND object IS NOT DISTINCT FROM $3 AND literal IS NOT DISTINCT FROM $4
             AND valid_from IS NOT DISTINCT FROM $5 AND valid_to IS NOT DISTINCT FROM $6
             ORDER BY id LIMIT 1",
            &[&k.subject, &k.predicate, &k.object, &k.literal, &k.valid_from, &k.valid_to],
        )?;
        Ok(match row {
            Some(r) => Some((r.try_get(0)?, r.try_get(1)?)),
            None => None,
        })
    }

    fn set_sources(&mut self, fact: i64, sources: &str) -> Q<()> {
        self.c.execute("UPDATE kg_facts SET sources = $2 WHERE id = $1", &[&fact, &sources])?;
        Ok(())
    }

    fn insert_fact(&mut self, k: &add::FactKey<'_>, now: Millis, confidence: f64, sources: &str) -> Q<i64> {
        Ok(self
            .c
            .query_one(
                "INSERT INTO kg_facts (subject, predicate, object, literal, valid_from, valid_to,
                 recorded_at, confidence, sources) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 RETURNING id",
                &[
                    &k.subject,
                    &k.predicate,
                    &k.object,
                    &k.literal,
                    &k.valid_from,
                    &k.valid_to,
                    &now,
                    &confidence,
                    &sources,
                ],
            )?
            .try_get(0)?)
    }

    fn entity(&mut self, id: i64) -> Q<Option<Entity>> {
        entity_by_id(self.c, id, self.path)
    }

    fn fact(&mut self, id: i64) -> Q<Option<Fact>> {
        fact_by_id(self.c, id)
    }
}

fn fact_by_id(c: &mut impl GenericClient, id: i64) -> Q<Option<Fact>> {
    c.query_opt(&format!("SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.id = $1"), &[&id])?
        .map(|r| fact(&r))
        .transpose()
}

fn entity_by_id(c: &mut impl GenericClient, id: i64, path: &std::path::Path) -> Q<Option<Entity>> {
    let Some(row) =
        c.query_opt("SELECT scope, name, kind, created_at FROM kg_entities WHERE id = $1", &[&id])?
    else {
        return Ok(None);
    };
    let (scope, name): (String, String) = (row.try_get(0)?, row.try_get(1)?);
    let mut aliases = Vec::new();
    for r in c.query("SELECT name FROM kg_names WHERE entity = $1 ORDER BY name COLLATE \"C\"", &[&id])? {
        let n: String = r.try_get(0)?;
        if n != name {
            aliases.push(n);
        }
    }
    let scope = scope
        .parse()
        .map_err(|_| Error::Corrupt { path: path.to_path_buf(), detail: format!("entity {id} scope") })?;
    Ok(Some(Entity { id, scope, name, kind: row.try_get(2)?, aliases, created_at: row.try_get(3)? }))
}

fn invalidate(c: &mut impl GenericClient, id: i64, at: Millis, reason: Option<&str>, now: Millis) -> Q<()> {
    c.execute("UPDATE kg_facts SET valid_to = $2, invalidated_at = $3 WHERE id = $1", &[&id, &at, &now])?;
    c.execute(
        "INSERT INTO kg_invalidations (fact, at, recorded_at, reason) VALUES ($1, $2, $3, $4)",
        &[&id, &at, &now, &reason],
    )?;
    Ok(())
}

impl Graph for PgStore {
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
        self.write(|c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&KG_LOCK])?;
            let out = add::add(&mut Rows { c: &mut tx, path: self.path() }, scope, entities, facts, now)?;
            tx.commit()?;
            Ok(out)
        })
    }

    fn kg_invalidate(
        &mut self,
        id: i64,
        at: Millis,
        reason: Option<&str>,
        now: Millis,
    ) -> Result<Option<Fact>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&KG_LOCK])?;
            if fact_by_id(&mut tx, id)?.is_none() {
                return Ok(None);
            }
            invalidate(&mut tx, id, at, reason, now)?;
            let f = fact_by_id(&mut tx, id)?;
            tx.commit()?;
            Ok(f)
        })
    }

    fn kg_invalidations(&self, fact: i64) -> Result<Vec<(Millis, Option<String>)>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT at, reason FROM kg_invalidations WHERE fact = $1 ORDER BY recorded_at, n",
                &[&fact],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    fn kg_facts_sourced_by(&self, memory: &MemoryId) -> Result<Vec<Fact>> {
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {FACT_COLUMNS} FROM {FACT_FROM}
                     WHERE f.invalidated_at IS NULL AND strpos(f.sources, $1) > 0 ORDER BY f.id"
                ),
                &[&memory.as_str()],
            )?;
            let mut out = Vec::new();
            for r in rows {
                let f = fact(&r)?;
                if f.sources.contains(memory) {
                    out.push(f);
                }
            }
            Ok(out)
        })
    }

    fn kg_fact(&self, id: i64) -> Result<Option<Fact>> {
        self.read(|c| fact_by_id(c, id))
    }

    fn kg_entity(&self, id: i64) -> Result<Option<Entity>> {
        self.read(|c| entity_by_id(c, id, self.path()))
    }

    fn kg_resolve(&self, scope: &Scope, name: &str) -> Result<Option<Entity>> {
        let norm = normalize_name(name);
        self.read(|c| {
            let id = c
                .query_opt(
                    "SELECT entity FROM kg_names WHERE scope = $1 AND norm = $2",
                    &[&scope.as_str(), &norm],
                )?
                .map(|r| r.get::<_, i64>(0));
            match id {
                Some(id) => entity_by_id(c, id, self.path()),
                None => Ok(None),
            }
        })
    }

    fn kg_facts_of(&self, entity: i64, as_of: Option<Millis>) -> Result<Vec<Fact>> {
        let window = "($2::BIGINT IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= $2) \
                      AND (f.valid_to IS NULL OR f.valid_to > $2)))";
        let mut out = self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.subject = $1 AND {window}
                     UNION ALL
                     SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.object = $1 AND f.subject != $1 AND {window}"
                ),
                &[&entity, &as_of],
            )?;
            rows.iter().map(fact).collect::<Q<Vec<_>>>()
        })?;
        out.sort_by_key(|f| (f.valid_from.unwrap_or(Millis::MIN), f.recorded_at, f.id));
        Ok(out)
    }

    fn kg_facts_page(&self, entity: i64, as_of: Millis, after: i64, limit: usize) -> Result<FactPage> {
        let window =
            "(f.valid_from IS NULL OR f.valid_from <= $2) AND (f.valid_to IS NULL OR f.valid_to > $2)";
        let side = |cond: &str| {
            format!(
                "SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE {cond} AND f.id > $3 AND {window} ORDER BY f.id LIMIT $4"
            )
        };
        let (a, b) = self.read(|c| {
            let args: [&(dyn postgres::types::ToSql + Sync); 4] = [&entity, &as_of, &after, &(limit as i64)];
            let a = c.query(&side("f.subject = $1"), &args)?.iter().map(fact).collect::<Q<Vec<_>>>()?;
            let b = c
                .query(&side("f.object = $1 AND f.subject != $1"), &args)?
                .iter()
                .map(fact)
                .collect::<Q<Vec<_>>>()?;
            Ok((a, b))
        })?;
        let more = a.len() == limit || b.len() == limit;
        let mut facts: Vec<Fact> = a.into_iter().chain(b).collect();
        facts.sort_by_key(|f| f.id);
        facts.truncate(limit);
        Ok(FactPage { facts, more })
    }

    fn kg_names(&self) -> Result<Vec<(i64, Scope, String)>> {
        self.read(|c| {
            let rows =
                c.query("SELECT entity, scope, norm FROM kg_names ORDER BY entity, scope COLLATE \"C\", norm COLLATE \"C\"", &[])?;
            let mut out = Vec::new();
            for r in rows {
                let scope: String = r.try_get(1)?;
                if let Ok(scope) = scope.parse() {
                    out.push((r.try_get(0)?, scope, r.try_get(2)?));
                }
            }
            Ok(out)
        })
    }

    fn kg_entities(&self, scope: Option<&Scope>, now: Millis, limit: usize) -> Result<Vec<(Entity, u64)>> {
        let valid = "f.invalidated_at IS NULL AND (f.valid_from IS NULL OR f.valid_from <= $2) \
                     AND (f.valid_to IS NULL OR f.valid_to > $2)";
        let sql = format!(
            "SELECT e.id, (SELECT count(*) FROM kg_facts f WHERE f.subject = e.id AND {valid})
                 + (SELECT count(*) FROM kg_facts f WHERE f.object = e.id AND {valid}) AS n
             FROM kg_entities e WHERE ($1::TEXT IS NULL OR e.scope = $1) ORDER BY n DESC, e.id LIMIT $3"
        );
        let (s, limit) = (scope.map(Scope::as_str), limit.min(i64::MAX as usize) as i64);
        self.read(|c| {
            let st = self.prepared(c, &sql)?;
            let mut out = Vec::new();
            for r in c.query(&st, &[&s, &now, &limit])? {
                let (id, n) = (r.try_get::<_, i64>(0)?, r.try_get::<_, i64>(1)?);
                if let Some(e) = entity_by_id(c, id, self.path())? {
                    out.push((e, n.max(0) as u64));
                }
            }
            Ok(out)
        })
    }

    fn kg_stats(&self, scope: Option<&Scope>, now: Millis) -> Result<GraphStats> {
        let s = scope.map(Scope::as_str);
        let in_scope = "($1::TEXT IS NULL OR e.scope = $1) AND $2::BIGINT IS NOT NULL";
        let facts = format!("FROM kg_facts f JOIN kg_entities e ON e.id = f.subject WHERE {in_scope}");
        let one = |q: String| self.number(&q, &[&s, &now]);
        Ok(GraphStats {
            entities: one(format!("SELECT count(*) FROM kg_entities e WHERE {in_scope}"))?,
            aliases: one(format!(
                "SELECT count(*) FROM kg_names n JOIN kg_entities e ON e.id = n.entity WHERE {in_scope} AND n.name != e.name"
            ))?,
            facts: one(format!("SELECT count(*) {facts}"))?,
            invalidated: one(format!("SELECT count(*) {facts} AND f.invalidated_at IS NOT NULL"))?,
            valid_now: one(format!(
                "SELECT count(*) {facts} AND (f.valid_from IS NULL OR f.valid_from <= $2) AND (f.valid_to IS NULL OR f.valid_to > $2)"
            ))?,
            mentions: one(format!(
                "SELECT count(*) FROM kg_mentions k JOIN kg_entities e ON e.id = k.entity WHERE {in_scope}"
            ))?,
            predicates: one(format!("SELECT count(DISTINCT f.predicate) {facts}"))?,
        })
    }
}

impl Mentions for PgStore {
    fn kg_add_mentions(&mut self, pairs: &[(i64, MemoryId)]) -> Result<usize> {
        if pairs.is_empty() {
            return Ok(0);
        }
        let entities: Vec<i64> = pairs.iter().map(|(e, _)| *e).collect();
        let memories: Vec<&str> = pairs.iter().map(|(_, m)| m.as_str()).collect();
        self.write(|c| {
            Ok(c.execute(
                "INSERT INTO kg_mentions (entity, memory) SELECT * FROM unnest($1::BIGINT[], $2::TEXT[])
                 ON CONFLICT DO NOTHING",
                &[&entities, &memories],
            )? as usize)
        })
    }

    fn kg_mentions(&self, entity: i64, limit: usize) -> Result<Vec<Memory>> {
        let cols = MEMORY_COLUMNS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", ");
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {cols} FROM kg_mentions k JOIN memories m ON m.id = k.memory
                     WHERE k.entity = $1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT $2"
                ),
                &[&entity, &(limit as i64)],
            )?;
            memories(self.path(), &rows)
        })
    }

    fn kg_mention_count(&self, entity: i64) -> Result<u64> {
        self.number(
            "SELECT count(*) FROM kg_mentions k JOIN memories m ON m.id = k.memory
             WHERE k.entity = $1 AND m.forgotten_at IS NULL",
            &[&entity],
        )
    }

    fn kg_mention_seqs(&self, entities: &[i64], per_entity: usize) -> Result<Vec<(i64, u64)>> {
        self.read(|c| {
            let stmt = c.prepare(
                "SELECT m.seq FROM kg_mentions k JOIN memories m ON m.id = k.memory
                 WHERE k.entity = $1 AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT $2",
            )?;
            let mut out = Vec::new();
            for &e in entities {
                for r in c.query(&stmt, &[&e, &(per_entity as i64)])? {
                    out.push((e, r.try_get::<_, i64>(0)? as u64));
                }
            }
            Ok(out)
        })
    }
}
