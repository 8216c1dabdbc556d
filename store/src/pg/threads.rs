//! Inboxes, threads, holds and the guard's log on PostgreSQL (as `threads.rs` does on
//! SQLite).

use amber_core::{Memory, MemoryId, Millis, Scope};

use super::{MEMORY_COLUMNS, PgStore, memories};
use crate::threads::{MAX_THREAD, thread_root, within};
use crate::{Addressing, Memories};
use crate::{GuardEntry, Hold, Result};

impl Addressing for PgStore {
    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        let all = self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM memories m
                 WHERE recipient IN ($1, 'all') AND forgotten_at IS NULL AND archived_at IS NULL
                   AND (author IS NULL OR author <> $1)
                   AND NOT EXISTS (SELECT 1 FROM inbox_served i WHERE i.agent = $1 AND i.seq = m.seq)
                 ORDER BY seq"
            ),
            &[&agent],
        )?;
        Ok(all.into_iter().filter(|m| within(&m.scope, scopes)).take(limit).collect())
    }

    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()> {
        let seqs: Vec<i64> = seqs.iter().map(|s| super::memories::big(*s)).collect();
        self.write(|c| {
            c.execute(
                "INSERT INTO inbox_served (agent, seq, at) SELECT $1, s, $3 FROM unnest($2::BIGINT[]) s
                 ON CONFLICT DO NOTHING",
                &[&agent, &seqs, &now],
            )?;
            Ok(())
        })
    }

    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        let Some(root) = thread_root(id, |i| self.get(i))? else { return Ok(Vec::new()) };
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "WITH RECURSIVE t(id, depth) AS (
                         SELECT $1::TEXT, 0
                         UNION SELECT m.id, t.depth + 1 FROM memories m JOIN t ON m.reply_to = t.id
                         WHERE t.depth < {MAX_THREAD}
                     )
                     SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN (SELECT id FROM t) AND forgotten_at IS NULL
                     ORDER BY seq"
                ),
                &[&root.id.as_str()],
            )?;
            memories(self.path(), &rows)
        })
    }

    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        self.read(|c| {
            let row =
                c.query_opt("SELECT reason, at FROM thread_holds WHERE thread = $1", &[&thread.as_str()])?;
            Ok(match row {
                Some(r) => Some(Hold { thread: thread.clone(), reason: r.try_get(0)?, at: r.try_get(1)? }),
                None => None,
            })
        })
    }

    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()> {
        self.write(|c| {
            c.execute(
                "INSERT INTO thread_holds (thread, reason, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&thread.as_str(), &reason, &now],
            )?;
            Ok(())
        })
    }

    fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        self.write(|c| Ok(c.execute("DELETE FROM thread_holds WHERE thread = $1", &[&thread.as_str()])? > 0))
    }

    fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        self.write(|c| {
            c.execute(
                "INSERT INTO guard_log (agent, trigger, decision, rule, at) VALUES ($1, $2, $3, $4, $5)",
                &[&e.agent, &e.trigger.as_str(), &e.decision, &e.rule, &e.at],
            )?;
            Ok(())
        })
    }

    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        self.read(|c| {
            Ok(c.query_opt(
                "SELECT 1 FROM guard_log WHERE agent = $1 AND trigger = $2 AND decision = 'allow' LIMIT 1",
                &[&agent, &trigger.as_str()],
            )?
            .is_some())
        })
    }
}
