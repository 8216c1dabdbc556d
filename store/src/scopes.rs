//! Scopes: the project roots they stand for, moving memories between scopes, and ids
//! looked up by prefix.

use amber_core::filing::Filing;
use amber_core::{Memory, MemoryId, Millis, Scope};
use rusqlite::{OptionalExtension, params};

use crate::Scopes;
use crate::listing::{self, Dialect, ListFilter};
use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Error, Result, Store};

/// One memory a [`Store::move_scope`] or [`Store::move_memory`] re-filed.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// Its id before the move.
    pub old_id: MemoryId,
    /// Its scope before the move.
    pub old_scope: Scope,
    /// The memory now (same seq, content and times; new scope and id). When the same
    /// content was already filed in the target scope, that memory, and the moved row is
    /// forgotten (`merged`).
    pub memory: Memory,
    /// True when the content was already in the target scope: the moved row was
    /// forgotten and its links, mentions and fact sources now point at the one there.
    pub merged: bool,
    /// The seq of the row that was moved (differs from `memory.seq` when merged).
    pub seq: u64,
}

/// What [`crate::Scopes::move_memory`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum MoveOne {
    /// It was re-filed (or merged into the same content already there).
    Moved(Box<Moved>),
    /// No memory has this id.
    NotFound,
    /// The memory is forgotten: it stays where it was.
    Forgotten,
    /// The memory is already in that scope.
    AlreadyThere,
}

/// What [`Store::lookup_prefix`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum PrefixMatch {
    /// Exactly one memory has an id starting with the prefix.
    One(MemoryId),
    /// None does.
    None,
    /// Several do (the first few, sorted).
    Many(Vec<MemoryId>),
}

/// The scope `scope` has when the subtree `from` is moved to `to`.
pub fn moved_scope(scope: &Scope, from: &Scope, to: &Scope) -> Option<Scope> {
    if !scope.is_within(from) {
        return None;
    }
    let rest = &scope.as_str()[from.as_str().len()..];
    format!("{}{rest}", to.as_str()).parse().ok()
}

/// The bounds of the scopes strictly below `scope` in the store's order: every `s` with
/// `lo < s < hi` starts with `scope/` (`0` sorts right after `/`).
pub(crate) fn below(scope: &Scope) -> (String, String) {
    (format!("{}/", scope.as_str()), format!("{}0", scope.as_str()))
}

impl Scopes for Store {
    /// Notes the project root a project scope stands for (the latest wins).
    fn note_scope_root(&mut self, scope: &Scope, root: &str, now: Millis) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO scope_roots (scope, root, seen_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(scope) DO UPDATE SET root = excluded.root, seen_at = excluded.seen_at
                 WHERE root <> excluded.root OR seen_at < excluded.seen_at - 3600000",
            )
            .and_then(|mut s| s.execute(params![scope.as_str(), root, now]))
            .map_err(self.sql())?;
        Ok(())
    }

    /// Every scope with a known root: (scope, root).
    fn scope_roots(&self) -> Result<Vec<(String, String)>> {
        let mut stmt =
            self.conn.prepare("SELECT scope, root FROM scope_roots ORDER BY scope").map_err(self.sql())?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(self.sql())?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.sql())
    }

    /// Live memories of a durable type (anything but `event`) filed at or after `since`
    /// in these scopes or below them.
    fn durable_since(&self, scopes: &[Scope], since: Millis) -> Result<u64> {
        let mut n = 0;
        for scope in scopes {
            let (lo, hi) = below(scope);
            n += self
                .conn
                .prepare_cached(
                    "SELECT COUNT(*) FROM memories WHERE forgotten_at IS NULL AND kind <> 'event'
                     AND created_at >= ?1 AND (scope = ?2 OR (scope > ?3 AND scope < ?4))",
                )
                .and_then(|mut s| s.query_row(params![since, scope.as_str(), lo, hi], |r| r.get::<_, i64>(0)))
                .map_err(self.sql())? as u64;
        }
        Ok(n)
    }

    /// Where a moved memory went: its id now, if `id` was moved by a scope move.
    fn moved_to(&self, id: &MemoryId) -> Result<Option<MemoryId>> {
        let got: Option<String> = self
            .conn
            .prepare_cached("SELECT new_id FROM moved WHERE old_id = ?1")
            .and_then(|mut s| s.query_row([id.as_str()], |r| r.get(0)).optional())
            .map_err(self.sql())?;
        Ok(got.and_then(|s| s.parse().ok()))
    }

    /// The memory whose id starts with `prefix` (lowercase hex, at least 4 digits).
    fn lookup_prefix(&self, prefix: &str) -> Result<PrefixMatch> {
        let upper = format!("{prefix}g"); // every hex id with this prefix sorts below it
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM memories WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 6")
            .map_err(self.sql())?;
        let rows = stmt.query_map([prefix, upper.as_str()], |r| r.get::<_, String>(0)).map_err(self.sql())?;
        let ids: Vec<MemoryId> = rows
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.sql())?
            .into_iter()
            .filter_map(|s| s.parse().ok())
            .collect();
        Ok(match ids.len() {
            0 => PrefixMatch::None,
            1 => PrefixMatch::One(ids.into_iter().next().unwrap_or_else(|| unreachable!())),
            _ => PrefixMatch::Many(ids),
        })
    }

    /// Re-files every live memory in `from` and the scopes below it into `to` (keeping
    /// the part below `from`), in one transaction, each by [`move_row`].
    fn move_scope(&mut self, from: &Scope, to: &Scope, now: Millis) -> Result<Vec<Moved>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut out = Vec::new();
        {
            let mut rows = Vec::new();
            {
                let mut stmt = tx
                    .prepare(&format!(
                        "SELECT {MEMORY_COLUMNS} FROM memories WHERE forgotten_at IS NULL
                         AND (scope = ?1 OR (scope > ?2 AND scope < ?3)) ORDER BY seq"
                    ))
                    .map_err(sql)?;
                let (lo, hi) = below(from);
                let found = stmt.query_map(params![from.as_str(), lo, hi], raw_row).map_err(sql)?;
                for r in found {
                    rows.push(decode(r.map_err(sql)?, &path)?);
                }
            }
            for m in rows {
                let Some(scope) = moved_scope(&m.scope, from, to) else { continue };
                out.push(move_row(&tx, &m, scope, now, &path)?);
            }
        }
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Re-files one memory into `to`, in one transaction, by [`move_row`] (what a scope
    /// move does to each of its memories).
    fn move_memory(&mut self, id: &MemoryId, to: &Scope, now: Millis) -> Result<MoveOne> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let found = tx
            .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.as_str()], raw_row).optional())
            .map_err(sql)?;
        let out = match found.map(|r| decode(r, &path)).transpose()? {
            None => MoveOne::NotFound,
            Some(m) if m.forgotten_at.is_some() => MoveOne::Forgotten,
            Some(m) if &m.scope == to => MoveOne::AlreadyThere,
            Some(m) => MoveOne::Moved(Box::new(move_row(&tx, &m, to.clone(), now, &path)?)),
        };
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// A page of one scope's memories (not those below it), newest filed first: those
    /// with a seq below `before`, at most `limit`; live and not archived unless
    /// `include_forgotten`.
    fn scope_page(
        &self,
        scope: &Scope,
        filter: &ListFilter,
        before: Option<u64>,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<Memory>> {
        let before = before.map_or(i64::MAX, |b| b.min(i64::MAX as u64) as i64);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ?1 AND seq < ?2{}
                 ORDER BY seq DESC LIMIT ?3 OFFSET ?4",
                listing::where_sql(Dialect::Sqlite, filter, true)
            ))
            .map_err(self.sql())?;
        let limit = limit.min(i64::MAX as usize) as i64;
        let offset = offset.min(i64::MAX as u64) as i64;
        let rows =
            stmt.query_map(params![scope.as_str(), before, limit, offset], raw_row).map_err(self.sql())?;
        let mut out = Vec::new();
        for r in rows {
            out.push(decode(r.map_err(self.sql())?, &self.path)?);
        }
        Ok(out)
    }

    fn scope_tally(&self, scope: &Scope, filter: &ListFilter) -> Result<Vec<(Filing, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {} AS filing, count(*) FROM memories WHERE scope = ?1{} GROUP BY filing",
                listing::filing_sql(Dialect::Sqlite),
                listing::where_sql(Dialect::Sqlite, filter, false)
            ))
            .map_err(self.sql())?;
        let rows =
            stmt.query_map(params![scope.as_str()], |r| Ok((r.get(0)?, r.get(1)?))).map_err(self.sql())?;
        Ok(listing::tally(rows.collect::<rusqlite::Result<_>>().map_err(self.sql())?))
    }
}

/// Re-files the live memory `m` into `scope`, in the caller's transaction: the one step
/// both moves take per memory. Content, type, source, author, session, times and
/// metadata stay as they were, and so does the `seq` (so the embeddings need no work);
/// the id is derived anew from the new scope. Links, knowledge-graph mentions and fact
/// sources are re-pointed to the new id, and the old id is recorded in `moved` (so `get`
/// of it can say where it went). Session records are history: they keep the ids they
/// were served under. Answers (`reply_to`), supersessions, holds and the guard's log
/// follow the new id; the outcome log and supersession edges are keyed by `seq`, which
/// does not change (a merged copy keeps its own log). When the same content is already
/// live in `scope`, the moved row is forgotten and everything pointing at it points at
/// the memory already there.
fn move_row(
    tx: &rusqlite::Transaction<'_>,
    m: &Memory,
    scope: Scope,
    now: Millis,
    path: &std::path::Path,
) -> Result<Moved> {
    let sql = |source| Error::Sqlite { path: path.to_path_buf(), source };
    let new_id = MemoryId::derive(&scope, &m.content);
    let there = tx
        .prepare_cached(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"))
        .and_then(|mut s| s.query_row([new_id.as_str()], raw_row).optional())
        .map_err(sql)?;
    let there = there.map(|r| decode(r, path)).transpose()?;
    let (memory, merged) = match there {
        Some(t) if t.forgotten_at.is_none() => {
            tx.execute("UPDATE memories SET forgotten_at = ?2 WHERE seq = ?1", params![m.seq as i64, now])
                .map_err(sql)?;
            (t, true)
        }
        forgotten => {
            if forgotten.is_some() {
                tx.execute("DELETE FROM memories WHERE id = ?1", [new_id.as_str()]).map_err(sql)?;
            }
            tx.execute(
                "UPDATE memories SET scope = ?2, id = ?3 WHERE seq = ?1",
                params![m.seq as i64, scope.as_str(), new_id.as_str()],
            )
            .map_err(sql)?;
            let mut moved = m.clone();
            moved.scope = scope;
            moved.id = new_id.clone();
            (moved, false)
        }
    };
    let (old, new) = (m.id.as_str(), memory.id.as_str());
    for stmt in [
        "UPDATE OR IGNORE links SET from_id = ?2 WHERE from_id = ?1",
        "UPDATE OR IGNORE links SET to_id = ?2 WHERE to_id = ?1",
        "DELETE FROM links WHERE from_id = ?1 OR to_id = ?1 OR from_id = to_id",
        "UPDATE OR IGNORE kg_mentions SET memory = ?2 WHERE memory = ?1",
        "DELETE FROM kg_mentions WHERE memory = ?1",
        "UPDATE kg_facts SET sources = replace(sources, '\"' || ?1 || '\"', '\"' || ?2 || '\"')
         WHERE instr(sources, ?1) > 0",
        "UPDATE moved SET new_id = ?2 WHERE new_id = ?1",
        // Addressing and standing name memories by id too.
        "UPDATE memories SET reply_to = ?2 WHERE reply_to = ?1",
        "UPDATE memories SET superseded_by = ?2 WHERE superseded_by = ?1",
        "UPDATE memories SET supersedes = replace(supersedes, '\"' || ?1 || '\"', '\"' || ?2 || '\"')
         WHERE instr(supersedes, ?1) > 0",
        "UPDATE OR IGNORE thread_holds SET thread = ?2 WHERE thread = ?1",
        "UPDATE guard_log SET trigger = ?2 WHERE trigger = ?1",
    ] {
        if stmt.contains("?2") {
            tx.execute(stmt, params![old, new]).map_err(sql)?;
        } else {
            tx.execute(stmt, params![old]).map_err(sql)?;
        }
    }
    tx.execute(
        "INSERT INTO moved (old_id, new_id, moved_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(old_id) DO UPDATE SET new_id = excluded.new_id, moved_at = excluded.moved_at",
        params![old, new, now],
    )
    .map_err(sql)?;
    Ok(Moved { old_id: m.id.clone(), old_scope: m.scope.clone(), seq: m.seq, memory, merged })
}

#[cfg(test)]
mod tests {
    use amber_core::NewMemory;

    use super::*;
    use crate::prelude::*;

    fn scope(s: &str) -> Scope {
        s.parse().unwrap()
    }

    #[test]
    fn moved_scopes_keep_the_part_below() {
        assert_eq!(
            moved_scope(&scope("default"), &scope("default"), &scope("project/a-1")),
            Some(scope("project/a-1"))
        );
        assert_eq!(moved_scope(&scope("a/b/c"), &scope("a/b"), &scope("x")), Some(scope("x/c")));
        assert_eq!(moved_scope(&scope("ab"), &scope("a"), &scope("x")), None);
    }

    #[test]
    fn a_move_refiles_verbatim_repoints_links_and_merges_copies() {
        let mut s = Store::open_in_memory().unwrap();
        let from = scope("default");
        let to = scope("project/app-12345678");
        let a = s.insert(&NewMemory::new("alpha fact").in_scope(from.clone()), 1).unwrap().0;
        let b = s.insert(&NewMemory::new("beta fact").in_scope(scope("default/sub")), 2).unwrap().0;
        let there =
            s.insert(&NewMemory::new("beta fact").in_scope(scope("project/app-12345678/sub")), 3).unwrap().0;
        let other = s.insert(&NewMemory::new("alpha fact").in_scope(scope("defaultish")), 4).unwrap().0;
        let link = amber_core::Link {
            from: a.id.clone(),
            to: b.id.clone(),
            kind: amber_core::LinkKind::Related,
            similarity: 0.5,
            created_at: 5,
        };
        s.add_links(&[link]).unwrap();
        let moved = s.move_scope(&from, &to, 10).unwrap();
        assert_eq!(moved.len(), 2, "default and default/sub, not defaultish");
        let ma = &moved[0];
        assert!(!ma.merged);
        assert_eq!((ma.memory.seq, ma.memory.scope.as_str()), (a.seq, "project/app-12345678"));
        assert_eq!(ma.memory.id, MemoryId::derive(&to, "alpha fact"));
        let now_a = s.get(&ma.memory.id).unwrap().unwrap();
        assert_eq!((now_a.content.as_str(), now_a.created_at, now_a.seq), ("alpha fact", 1, a.seq));
        assert!(s.get(&a.id).unwrap().is_none(), "the old id is gone");
        assert_eq!(s.moved_to(&a.id).unwrap(), Some(now_a.id.clone()));
        // The copy already in the target: the moved row is forgotten, links follow.
        let mb = &moved[1];
        assert!(mb.merged);
        assert_eq!(mb.memory.id, there.id);
        assert!(s.get(&b.id).unwrap().unwrap().forgotten_at.is_some());
        let links = s.links_of(&now_a.id).unwrap();
        assert_eq!(links.len(), 1);
        assert_eq!((links[0].from.clone(), links[0].to.clone()), (now_a.id.clone(), there.id.clone()));
        assert!(s.links_of(&a.id).unwrap().is_empty());
        assert_eq!(s.get(&other.id).unwrap().unwrap().scope.as_str(), "defaultish");
        // Nothing left to move; moving back restores the first ids.
        assert!(s.move_scope(&from, &to, 11).unwrap().is_empty());
        let back = s.move_scope(&to, &from, 12).unwrap();
        assert!(back.iter().any(|m| m.memory.id == a.id));
    }

    #[test]
    fn a_move_keeps_threads_supersessions_and_the_outcome_log() {
        let mut s = Store::open_in_memory().unwrap();
        let (from, to) = (scope("default"), scope("project/app-12345678"));
        let q = s.insert(&NewMemory::new("why is it slow?").in_scope(from.clone()), 1).unwrap().0;
        let mut answer = NewMemory::new("the cache is cold").in_scope(from.clone());
        answer.reply_to = Some(q.id.clone());
        answer.author = Some("a".into());
        let a = s.insert(&answer, 2).unwrap().0;
        let mut inv = NewMemory::new("no: the disk is full").in_scope(from.clone());
        inv.kind = amber_core::MemoryType::Invalidation;
        inv.supersedes = vec![a.id.clone()];
        let inv = s.insert(&inv, 3).unwrap().0;
        s.apply_supersessions(&[inv.seq], 4).unwrap();
        let report = amber_core::Report {
            kind: amber_core::ReportKind::Outcome,
            result: Some(amber_core::Outcome::Failure),
            session_id: None,
            agent: None,
            note: None,
            at: 5,
            basis: None,
        };
        s.report(&q.id, &report, 5).unwrap();
        s.hold(&q.id, "hop_limit", 6).unwrap();
        s.move_scope(&from, &to, 10).unwrap();
        let new = |m: &Memory| MemoryId::derive(&to, &m.content);
        let thread = s.thread(&new(&a)).unwrap();
        assert_eq!(thread.iter().map(|m| m.id.clone()).collect::<Vec<_>>(), vec![new(&q), new(&a)]);
        let moved_a = s.get(&new(&a)).unwrap().unwrap();
        assert_eq!(moved_a.superseded_by, Some(new(&inv)));
        assert_eq!(s.get(&new(&inv)).unwrap().unwrap().supersedes, vec![new(&a)]);
        assert_eq!(s.reports(&new(&q)).unwrap().len(), 1, "the log is keyed by seq");
        assert!((s.get(&new(&q)).unwrap().unwrap().weight - 0.8).abs() < 1e-6);
        assert!(s.hold_of(&new(&q)).unwrap().is_some(), "the hold follows the root");
        // And the supersession still holds after the move: retracting works by new ids.
        let mut retract = NewMemory::new("retract that").in_scope(to.clone());
        retract.kind = amber_core::MemoryType::Invalidation;
        retract.supersedes = vec![new(&inv)];
        let r = s.insert(&retract, 11).unwrap().0;
        s.apply_supersessions(&[r.seq], 12).unwrap();
        assert!(s.get(&new(&a)).unwrap().unwrap().superseded_by.is_none());
    }

    #[test]
    fn one_memory_moves_as_a_scope_move_moves_each() {
        let mut s = Store::open_in_memory().unwrap();
        let (from, to) = (scope("default"), scope("project/app-12345678"));
        let a = s.insert(&NewMemory::new("alpha fact").in_scope(from.clone()), 1).unwrap().0;
        let b = s.insert(&NewMemory::new("beta fact").in_scope(from.clone()), 2).unwrap().0;
        let link = amber_core::Link {
            from: a.id.clone(),
            to: b.id.clone(),
            kind: amber_core::LinkKind::Related,
            similarity: 0.5,
            created_at: 3,
        };
        s.add_links(&[link]).unwrap();
        let MoveOne::Moved(m) = s.move_memory(&a.id, &to, 10).unwrap() else { panic!("not moved") };
        assert_eq!(
            (m.memory.seq, m.memory.id.clone(), m.merged),
            (a.seq, MemoryId::derive(&to, "alpha fact"), false)
        );
        assert_eq!(s.moved_to(&a.id).unwrap(), Some(m.memory.id.clone()));
        assert_eq!(s.get(&b.id).unwrap().unwrap().scope, from, "only the one memory moves");
        assert_eq!(s.links_of(&b.id).unwrap()[0].from, m.memory.id, "its links follow");
        assert_eq!(s.move_memory(&m.memory.id, &to, 11).unwrap(), MoveOne::AlreadyThere);
        assert_eq!(s.move_memory(&a.id, &to, 11).unwrap(), MoveOne::NotFound);
        s.forget(&b.id, 12).unwrap();
        assert_eq!(s.move_memory(&b.id, &to, 13).unwrap(), MoveOne::Forgotten);
        // The same content already in the target: merged, the moved row forgotten.
        let c = s.insert(&NewMemory::new("alpha fact").in_scope(from.clone()), 14).unwrap().0;
        let MoveOne::Moved(mc) = s.move_memory(&c.id, &to, 15).unwrap() else { panic!("not moved") };
        assert!(mc.merged && mc.memory.id == m.memory.id);
        assert!(s.get(&c.id).unwrap().unwrap().forgotten_at.is_some());
    }

    #[test]
    fn a_scope_is_paged_newest_first_live_unless_asked() {
        let mut s = Store::open_in_memory().unwrap();
        let sc = scope("a/b");
        let mut seqs = Vec::new();
        for i in 0..7 {
            seqs.push(s.insert(&NewMemory::new(format!("m{i}")).in_scope(sc.clone()), i).unwrap().0.seq);
        }
        s.insert(&NewMemory::new("below").in_scope(scope("a/b/c")), 8).unwrap();
        let gone = s.insert(&NewMemory::new("gone").in_scope(sc.clone()), 9).unwrap().0;
        s.forget(&gone.id, 10).unwrap();
        let page = |before, offset, n, all| -> Vec<u64> {
            let f = ListFilter { include_forgotten: all, ..ListFilter::default() };
            s.scope_page(&sc, &f, before, offset, n).unwrap().iter().map(|m| m.seq).collect()
        };
        seqs.reverse();
        assert_eq!(page(None, 0, 4, false), seqs[..4]);
        assert_eq!(page(Some(seqs[3]), 0, 4, false), seqs[4..]);
        assert_eq!(page(None, 4, 4, false), seqs[4..], "an offset skips as a cursor does");
        assert_eq!(page(None, 0, 1, true), vec![gone.seq], "forgotten only when asked");
    }

    #[test]
    fn ids_are_found_by_prefix() {
        let mut s = Store::open_in_memory().unwrap();
        let m = s.insert(&NewMemory::new("one"), 1).unwrap().0;
        assert_eq!(s.lookup_prefix(&m.id.as_str()[..8]).unwrap(), PrefixMatch::One(m.id.clone()));
        assert_eq!(s.lookup_prefix(m.id.as_str()).unwrap(), PrefixMatch::One(m.id.clone()));
        let other = if m.id.as_str().starts_with('f') { "0000" } else { "ffff" };
        assert_eq!(s.lookup_prefix(other).unwrap(), PrefixMatch::None);
        for i in 0..40 {
            s.insert(&NewMemory::new(format!("memory {i}")), 2).unwrap();
        }
        match s.lookup_prefix(&m.id.as_str()[..1]).unwrap() {
            PrefixMatch::Many(v) => {
                assert!(v.len() > 1 && v.iter().all(|i| i.as_str().starts_with(&m.id.as_str()[..1])))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scope_roots_are_noted_once_and_updated() {
        let mut s = Store::open_in_memory().unwrap();
        let p = scope("project/app-12345678");
        s.note_scope_root(&p, "/home/u/app", 1).unwrap();
        s.note_scope_root(&p, "/home/u/app", 2).unwrap();
        assert_eq!(s.scope_roots().unwrap(), vec![(p.to_string(), "/home/u/app".to_string())]);
    }
}
