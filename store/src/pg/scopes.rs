//! Scope roots, scope and memory moves, a scope's pages and id prefixes on PostgreSQL (as `scopes.rs` does on
//! SQLite). "Below a scope" is `starts_with(scope, 'a/b/')`, which does not depend on
//! the database's collation.

use amber_core::filing::Filing;
use amber_core::{Memory, MemoryId, Millis, Scope};

use super::{MEMORY_COLUMNS, PgStore, Q, memories, seq_lock};
use crate::Scopes;
use crate::listing::{self, Dialect, ListFilter};
use crate::{MoveOne, Moved, PrefixMatch, Result, moved_scope};

impl Scopes for PgStore {
    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()> {
        self.write(|c| {
            c.execute(
                "INSERT INTO scope_roots AS s (scope, root, seen_at) VALUES ($1, $2, $3)
                 ON CONFLICT (scope) DO UPDATE SET root = excluded.root, seen_at = excluded.seen_at
                 WHERE s.root <> excluded.root OR s.seen_at < excluded.seen_at - 3600000",
                &[&scope.as_str(), &root, &now],
            )?;
            Ok(())
        })
    }

    fn scope_roots(&self) -> Result<Vec<(String, String)>> {
        self.read(|c| {
            let rows = c.query("SELECT scope, root FROM scope_roots ORDER BY scope COLLATE \"C\"", &[])?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64> {
        let mut n = 0;
        for scope in scopes {
            n += self.number(
                "SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL AND kind <> 'event'
                 AND created_at >= $1 AND (scope = $2 OR starts_with(scope, $3))",
                &[&since, &scope.as_str(), &format!("{}/", scope.as_str())],
            )?;
        }
        Ok(n)
    }

    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        self.read(|c| {
            let got: Option<String> =
                c.query_opt("SELECT new_id FROM moved WHERE old_id = $1", &[&id.as_str()])?.map(|r| r.get(0));
            Ok(got.and_then(|s| s.parse().ok()))
        })
    }

    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        self.read(|c| {
            let rows = c.query(
                "SELECT id FROM memories WHERE starts_with(id, $1) ORDER BY id COLLATE \"C\" LIMIT 6",
                &[&prefix],
            )?;
            let ids: Vec<MemoryId> =
                rows.iter().filter_map(|r| r.try_get::<_, String>(0).ok()?.parse().ok()).collect();
            Ok(match ids.len() {
                0 => PrefixMatch::None,
                1 => PrefixMatch::One(ids.into_iter().next().unwrap_or_else(|| unreachable!())),
                _ => PrefixMatch::Many(ids),
            })
        })
    }

    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            seq_lock(&mut tx)?;
            let rows = tx.query(
                &format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories WHERE forgotten_at IS NULL
                     AND (scope = $1 OR starts_with(scope, $2)) ORDER BY seq"
                ),
                &[&from.as_str(), &format!("{}/", from.as_str())],
            )?;
            let rows = memories(self.path(), &rows)?;
            let mut out = Vec::new();
            for m in rows {
                let Some(scope) = moved_scope(&m.scope, from, to) else { continue };
                out.push(self.move_row(&mut tx, &m, scope, now)?);
            }
            tx.commit()?;
            Ok(out)
        })
    }

    fn move_memory(&mut self, id: &MemoryId, to: &Scope, now: Millis) -> Result<MoveOne> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            seq_lock(&mut tx)?;
            let out = match self.get_in(&mut tx, id.as_str())? {
                None => MoveOne::NotFound,
                Some(m) if m.forgotten_at.is_some() => MoveOne::Forgotten,
                Some(m) if &m.scope == to => MoveOne::AlreadyThere,
                Some(m) => MoveOne::Moved(Box::new(self.move_row(&mut tx, &m, to.clone(), now)?)),
            };
            tx.commit()?;
            Ok(out)
        })
    }

    fn scope_page(
        &self,
        scope: &Scope,
        filter: &ListFilter,
        before: Option<u64>,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<Memory>> {
        let before = before.map_or(i64::MAX, |b| b.min(i64::MAX as u64) as i64);
        let (limit, offset) = (limit.min(i64::MAX as usize) as i64, offset.min(i64::MAX as u64) as i64);
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM {} WHERE scope = $1 AND seq < $2{}
                 ORDER BY seq DESC LIMIT $3 OFFSET $4",
                Dialect::Postgres.from(),
                listing::where_sql(Dialect::Postgres, filter, true)
            ),
            &[&scope.as_str(), &before, &limit, &offset],
        )
    }

    fn scope_tally(&self, scope: &Scope, filter: &ListFilter) -> Result<Vec<(Filing, u64)>> {
        let sql = format!(
            "SELECT {} AS filing, count(*) FROM {} WHERE scope = $1{} GROUP BY filing",
            listing::filing_sql(Dialect::Postgres),
            Dialect::Postgres.from(),
            listing::where_sql(Dialect::Postgres, filter, false)
        );
        let rows = self.read(|c| {
            let st = self.prepared(c, &sql)?;
            let mut out = Vec::new();
            for r in c.query(&st, &[&scope.as_str()])? {
                out.push((r.try_get::<_, String>(0)?, r.try_get::<_, i64>(1)?));
            }
            Ok(out)
        })?;
        Ok(listing::tally(rows))
    }
}

impl PgStore {
    /// Re-files the live memory `m` into `scope` in the caller's transaction (which holds
    /// the seq lock): the one step both moves take per memory, as on SQLite
    /// (`scopes.rs`, `move_row`), and the change logged for the other nodes.
    fn move_row(
        &self,
        tx: &mut postgres::Transaction<'_>,
        m: &Memory,
        scope: Scope,
        now: Millis,
    ) -> Q<Moved> {
        let new_id = MemoryId::derive(&scope, &m.content);
        let there = self.get_in(tx, new_id.as_str())?;
        let merged = there.as_ref().is_some_and(|t| t.forgotten_at.is_none());
        let memory = match there.clone() {
            Some(t) if merged => t,
            _ => {
                let mut moved = m.clone();
                moved.scope = scope.clone();
                moved.id = new_id.clone();
                moved
            }
        };
        if merged {
            tx.execute("UPDATE memories SET forgotten_at = $2 WHERE seq = $1", &[&(m.seq as i64), &now])?;
        } else {
            if there.is_some() {
                tx.execute("DELETE FROM memories WHERE id = $1", &[&new_id.as_str()])?;
            }
            tx.execute(
                "UPDATE memories SET scope = $2, id = $3 WHERE seq = $1",
                &[&(m.seq as i64), &scope.as_str(), &new_id.as_str()],
            )?;
        }
        // Where it went, before the references follow: under row-level security
        // a role sees a reference to the old id through this row (its scope is
        // where the memory went).
        tx.execute(
            "INSERT INTO moved (old_id, new_id, moved_at, scope) VALUES ($1, $2, $3, $4)
             ON CONFLICT (old_id) DO UPDATE
             SET new_id = excluded.new_id, moved_at = excluded.moved_at, scope = excluded.scope",
            &[&m.id.as_str(), &memory.id.as_str(), &now, &memory.scope.as_str()],
        )?;
        tx.execute(
            "UPDATE moved SET new_id = $2, scope = $3 WHERE new_id = $1",
            &[&m.id.as_str(), &memory.id.as_str(), &memory.scope.as_str()],
        )?;
        let (old, new) = (m.id.as_str(), memory.id.as_str());
        // SQLite's `UPDATE OR IGNORE` (a row that would collide keeps its old
        // value) is a `NOT EXISTS` here.
        for stmt in [
            "UPDATE links a SET from_id = $2 WHERE from_id = $1 AND NOT EXISTS
               (SELECT 1 FROM links b WHERE b.from_id = $2 AND b.to_id = a.to_id AND b.kind = a.kind)",
            "UPDATE links a SET to_id = $2 WHERE to_id = $1 AND NOT EXISTS
               (SELECT 1 FROM links b WHERE b.to_id = $2 AND b.from_id = a.from_id AND b.kind = a.kind)",
            "DELETE FROM links WHERE from_id = $1 OR to_id = $1 OR from_id = to_id",
            "UPDATE kg_mentions a SET memory = $2 WHERE memory = $1 AND NOT EXISTS
               (SELECT 1 FROM kg_mentions b WHERE b.memory = $2 AND b.entity = a.entity)",
            "DELETE FROM kg_mentions WHERE memory = $1",
            "UPDATE kg_facts SET sources = replace(sources, '\"' || $1::TEXT || '\"', '\"' || $2::TEXT || '\"')
             WHERE strpos(sources, $1) > 0",
            "UPDATE memories SET reply_to = $2 WHERE reply_to = $1",
            "UPDATE memories SET superseded_by = $2 WHERE superseded_by = $1",
            "UPDATE memories SET supersedes = replace(supersedes, '\"' || $1::TEXT || '\"', '\"' || $2::TEXT || '\"')
             WHERE strpos(supersedes, $1) > 0",
            "UPDATE thread_holds SET thread = $2 WHERE thread = $1
               AND NOT EXISTS (SELECT 1 FROM thread_holds WHERE thread = $2)",
            "UPDATE guard_log SET trigger = $2 WHERE trigger = $1",
        ] {
            if stmt.contains("$2") {
                tx.execute(stmt, &[&old, &new])?;
            } else {
                tx.execute(stmt, &[&old])?;
            }
        }
        super::memories::log_change(tx, m.seq, m.scope.as_str())?;
        Ok(Moved { old_id: m.id.clone(), old_scope: m.scope.clone(), seq: m.seq, memory, merged })
    }
}
