//! Curation links and session records.

use amber_core::{Link, LinkKind, Memory, MemoryId, Millis};
use rusqlite::{OptionalExtension, params};

use crate::Sessions;
use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Result, Store};

/// A session as stored: its keys plus the record (JSON, owned by the tiers).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// The session id.
    pub id: String,
    /// The agent that started it.
    pub agent: String,
    /// The project scope it worked in.
    pub scope: String,
    /// When it started.
    pub started_at: Millis,
    /// When it ended, if it has.
    pub ended_at: Option<Millis>,
    /// Everything else, as JSON.
    pub record: String,
}

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        agent: r.get(1)?,
        scope: r.get(2)?,
        started_at: r.get(3)?,
        ended_at: r.get(4)?,
        record: r.get(5)?,
    })
}

impl Sessions for Store {
    /// Adds links (one transaction); a link already there (same from, to and kind) is
    /// left as it was. Returns how many were new.
    fn add_links(&mut self, links: &[Link]) -> Result<usize> {
        let path = self.path.clone();
        let sql = |source| crate::Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut added = 0;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO links (from_id, to_id, kind, similarity, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql)?;
            for l in links {
                added += stmt
                    .execute(params![
                        l.from.as_str(),
                        l.to.as_str(),
                        l.kind.as_str(),
                        l.similarity,
                        l.created_at
                    ])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(added)
    }

    /// Every link from or to this memory, oldest first.
    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT from_id, to_id, kind, similarity, created_at FROM links
                 WHERE from_id = ?1 OR to_id = ?1 ORDER BY created_at, from_id, to_id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.as_str()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get(3)?,
                    r.get(4)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (from, to, kind, similarity, created_at) = row.map_err(self.sql())?;
            // A kind this binary does not know (written by a newer one) is skipped.
            let Some(kind) = LinkKind::parse(&kind) else { continue };
            let (Ok(from), Ok(to)) = (from.parse(), to.parse()) else { continue };
            out.push(Link { from, to, kind, similarity, created_at });
        }
        Ok(out)
    }

    /// The seqs of live memories that are the newer side of a duplicate link. The links
    /// drive the join (`CROSS JOIN` keeps SQLite from scanning every memory to probe the
    /// links: a tenth of a cold start at 100k memories and no links).
    fn duplicate_seqs(&self) -> Result<Vec<u64>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT m.seq FROM links l CROSS JOIN memories m ON m.id = l.from_id
                 WHERE l.kind IN ('near_duplicate', 'exact_duplicate') AND m.forgotten_at IS NULL
                 ORDER BY m.seq",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
        rows.map(|r| r.map(|s| s as u64).map_err(self.sql())).collect()
    }

    /// The live memories filed with this session id, in filing order.
    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE session_id = ?1 AND forgotten_at IS NULL ORDER BY seq"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map([session_id], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// Writes a session row (insert or replace), committed when this returns.
    fn put_session(&mut self, s: &SessionRow) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO sessions (id, agent, scope, started_at, ended_at, record)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(id) DO UPDATE SET agent = excluded.agent, scope = excluded.scope,
                   started_at = excluded.started_at, ended_at = excluded.ended_at, record = excluded.record",
                params![s.id, s.agent, s.scope, s.started_at, s.ended_at, s.record],
            )
            .map(|_| ())
            .map_err(self.sql())
    }

    /// A stored session.
    fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        self.conn
            .prepare_cached(
                "SELECT id, agent, scope, started_at, ended_at, record FROM sessions WHERE id = ?1",
            )
            .and_then(|mut s| s.query_row([id], session_row).optional())
            .map_err(self.sql())
    }

    /// The most recent sessions, newest first.
    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, agent, scope, started_at, ended_at, record FROM sessions
                 ORDER BY started_at DESC, id LIMIT ?1",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([limit as i64], session_row).map_err(self.sql())?;
        rows.map(|r| r.map_err(self.sql())).collect()
    }
}

#[cfg(test)]
mod tests {
    use amber_core::NewMemory;

    use super::*;
    use crate::prelude::*;

    fn link(from: &MemoryId, to: &MemoryId, kind: LinkKind) -> Link {
        Link { from: from.clone(), to: to.clone(), kind, similarity: 0.97, created_at: 5 }
    }

    #[test]
    fn links_are_kept_once_and_found_from_both_ends_and_purge_removes_them() {
        let mut s = Store::open_in_memory().unwrap();
        let (a, _) = s.insert(&NewMemory::new("the first note"), 1).unwrap();
        let (b, _) = s.insert(&NewMemory::new("the first note, again"), 2).unwrap();
        let (c, _) = s.insert(&NewMemory::new("something else"), 3).unwrap();
        let links = [link(&b.id, &a.id, LinkKind::NearDuplicate), link(&c.id, &a.id, LinkKind::Related)];
        assert_eq!(s.add_links(&links).unwrap(), 2);
        assert_eq!(s.add_links(&links[..1]).unwrap(), 0, "a repeated link is not added twice");
        assert_eq!(s.links_of(&a.id).unwrap().len(), 2);
        assert_eq!(s.links_of(&b.id).unwrap(), vec![links[0].clone()]);
        assert_eq!(s.duplicate_seqs().unwrap(), vec![b.seq], "only the newer side of a duplicate");
        s.forget(&b.id, 9).unwrap();
        assert!(s.duplicate_seqs().unwrap().is_empty(), "a forgotten duplicate is not listed");
        assert_eq!(s.links_of(&a.id).unwrap().len(), 2, "forgetting keeps the links");
        s.purge(&b.id).unwrap();
        assert_eq!(s.links_of(&a.id).unwrap(), vec![links[1].clone()], "purging removes its links");
    }

    #[test]
    fn sessions_round_trip_and_list_newest_first() {
        let mut s = Store::open_in_memory().unwrap();
        let mut row = SessionRow {
            id: "s-1".into(),
            agent: "test".into(),
            scope: "project/x".into(),
            started_at: 10,
            ended_at: None,
            record: "{}".into(),
        };
        s.put_session(&row).unwrap();
        row.ended_at = Some(20);
        row.record = r#"{"served":[]}"#.into();
        s.put_session(&row).unwrap();
        s.put_session(&SessionRow { id: "s-2".into(), started_at: 30, ..row.clone() }).unwrap();
        assert_eq!(s.get_session("s-1").unwrap(), Some(row));
        assert_eq!(s.get_session("nope").unwrap(), None);
        let ids: Vec<String> = s.recent_sessions(10).unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["s-2", "s-1"]);
    }

    #[test]
    fn session_memories_are_listed_in_filing_order_without_forgotten_ones() {
        let mut s = Store::open_in_memory().unwrap();
        let with = |text: &str, sid: &str| {
            let mut m = NewMemory::new(text);
            m.session_id = Some(sid.into());
            m
        };
        let (a, _) = s.insert(&with("one", "s-1"), 1).unwrap();
        s.insert(&with("two", "s-2"), 2).unwrap();
        let (c, _) = s.insert(&with("three", "s-1"), 3).unwrap();
        let (d, _) = s.insert(&with("four", "s-1"), 4).unwrap();
        s.forget(&c.id, 5).unwrap();
        let ids: Vec<MemoryId> = s.session_memories("s-1").unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(ids, vec![a.id, d.id]);
    }
}
