//! Curation links and session records on PostgreSQL (as `sessions.rs` does on SQLite).

use amber_core::{Link, LinkKind, Memory, MemoryId};

use super::{MEMORY_COLUMNS, PgStore, Q};
use crate::Sessions;
use crate::{Result, SessionRow};

fn session_row(r: &postgres::Row) -> Q<SessionRow> {
    Ok(SessionRow {
        id: r.try_get(0)?,
        agent: r.try_get(1)?,
        scope: r.try_get(2)?,
        started_at: r.try_get(3)?,
        ended_at: r.try_get(4)?,
        record: r.try_get(5)?,
    })
}

impl Sessions for PgStore {
    fn add_links(&mut self, links: &[Link]) -> Result<usize> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let stmt = tx.prepare(
                "INSERT INTO links (from_id, to_id, kind, similarity, created_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT DO NOTHING",
            )?;
            let mut added = 0;
            for l in links {
                added += tx.execute(
                    &stmt,
                    &[
                        &l.from.as_str(),
                        &l.to.as_str(),
                        &l.kind.as_str(),
                        &f64::from(l.similarity),
                        &l.created_at,
                    ],
                )? as usize;
            }
            tx.commit()?;
            Ok(added)
        })
    }

    fn links_of(&self, id: &MemoryId) -> Result<Vec<Link>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT from_id, to_id, kind, similarity, created_at FROM links
                 WHERE from_id = $1 OR to_id = $1 ORDER BY created_at, from_id COLLATE \"C\", to_id COLLATE \"C\"",
                &[&id.as_str()],
            )?;
            let mut out = Vec::new();
            for r in rows {
                let (from, to, kind): (String, String, String) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
                let Some(kind) = LinkKind::parse(&kind) else { continue };
                let (Ok(from), Ok(to)) = (from.parse(), to.parse()) else { continue };
                let similarity = r.try_get::<_, f64>(3)? as f32;
                out.push(Link { from, to, kind, similarity, created_at: r.try_get(4)? });
            }
            Ok(out)
        })
    }

    fn duplicate_seqs(&self) -> Result<Vec<u64>> {
        self.seqs(
            "SELECT DISTINCT m.seq FROM links l JOIN memories m ON m.id = l.from_id
             WHERE l.kind IN ('near_duplicate', 'exact_duplicate') AND m.forgotten_at IS NULL
             ORDER BY m.seq",
            &[],
        )
    }

    fn session_memories(&self, session_id: &str) -> Result<Vec<Memory>> {
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE session_id = $1 AND forgotten_at IS NULL ORDER BY seq"
            ),
            &[&session_id],
        )
    }

    fn put_session(&mut self, s: &SessionRow) -> Result<()> {
        self.write(|c| {
            c.execute(
                "INSERT INTO sessions (id, agent, scope, started_at, ended_at, record)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, scope = excluded.scope,
                   started_at = excluded.started_at, ended_at = excluded.ended_at, record = excluded.record",
                &[&s.id, &s.agent, &s.scope, &s.started_at, &s.ended_at, &s.record],
            )?;
            Ok(())
        })
    }

    fn get_session(&self, id: &str) -> Result<Option<SessionRow>> {
        self.read(|c| {
            c.query_opt(
                "SELECT id, agent, scope, started_at, ended_at, record FROM sessions WHERE id = $1",
                &[&id],
            )?
            .map(|r| session_row(&r))
            .transpose()
        })
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT id, agent, scope, started_at, ended_at, record FROM sessions
                 ORDER BY started_at DESC, id COLLATE \"C\" LIMIT $1",
                &[&(limit as i64)],
            )?;
            rows.iter().map(session_row).collect()
        })
    }
}
