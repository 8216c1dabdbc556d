//! Addressing: each agent's inbox (memories addressed to it or to `all`, served at most
//! once per agent), threads (memories that answer one another by `reply_to`), held
//! threads, and the loop guard's log.

use amber_core::{Memory, MemoryId, Millis, Scope};
use rusqlite::{OptionalExtension, params};

use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Addressing, Memories};
use crate::{Error, Result, Store};

/// The longest thread followed (replies of replies).
pub(crate) const MAX_THREAD: usize = 1_000;

/// The root of the thread a memory belongs to, followed up `reply_to` (a missing parent,
/// a cycle or [`MAX_THREAD`] steps end the walk), by the store's `get`; None when no
/// memory has this id. Both backends walk it this way.
pub(crate) fn thread_root(
    id: &MemoryId,
    mut get: impl FnMut(&MemoryId) -> Result<Option<Memory>>,
) -> Result<Option<Memory>> {
    let Some(mut root) = get(id)? else { return Ok(None) };
    let mut seen = vec![root.id.clone()];
    while let Some(parent) = root.reply_to.clone() {
        if seen.contains(&parent) || seen.len() > MAX_THREAD {
            break;
        }
        match get(&parent)? {
            Some(p) => {
                seen.push(p.id.clone());
                root = p;
            }
            None => break,
        }
    }
    Ok(Some(root))
}

/// A hold on a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    /// The thread's root memory.
    pub thread: MemoryId,
    /// Why it is held (the guard's rule).
    pub reason: String,
    /// When.
    pub at: Millis,
}

/// What the guard decided for one agent and one trigger, as logged.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardEntry {
    /// The agent.
    pub agent: String,
    /// The trigger memory.
    pub trigger: MemoryId,
    /// allow, skip or hold.
    pub decision: String,
    /// The rule that decided.
    pub rule: String,
    /// When.
    pub at: Millis,
}

pub(crate) fn within(scope: &Scope, scopes: &[Scope]) -> bool {
    scopes.is_empty() || scopes.iter().any(|s| scope.is_within(s))
}

impl Addressing for Store {
    /// Live, unarchived memories addressed to `agent` (or to `all`, by someone else)
    /// within these scopes that its inbox has not served yet, oldest first, at most
    /// `limit`.
    fn inbox(&self, agent: &str, scopes: &[Scope], limit: usize) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories m
                 WHERE recipient IN (?1, 'all') AND forgotten_at IS NULL AND archived_at IS NULL
                   AND (author IS NULL OR author <> ?1)
                   AND NOT EXISTS (SELECT 1 FROM inbox_served i WHERE i.agent = ?1 AND i.seq = m.seq)
                 ORDER BY seq"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map([agent], raw_row).map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let m = decode(row.map_err(self.sql())?, &self.path)?;
            if within(&m.scope, scopes) {
                out.push(m);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Notes that `agent`'s inbox served these memories (one transaction).
    fn mark_inbox_served(&mut self, agent: &str, seqs: &[u64], now: Millis) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR IGNORE INTO inbox_served (agent, seq, at) VALUES (?1, ?2, ?3)")
                .map_err(sql)?;
            for &seq in seqs {
                stmt.execute(params![agent, seq as i64, now]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The thread a memory belongs to: its root (followed up `reply_to`) first, then
    /// every memory that answers it or an answer of it, in filing order. Forgotten
    /// memories are left out (their answers stay). Empty when no memory has this id.
    fn thread(&self, id: &MemoryId) -> Result<Vec<Memory>> {
        let Some(root) = thread_root(id, |i| self.get(i))? else { return Ok(Vec::new()) };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "WITH RECURSIVE t(id, depth) AS (
                     SELECT ?1, 0
                     UNION SELECT m.id, t.depth + 1 FROM memories m JOIN t ON m.reply_to = t.id
                     WHERE t.depth < {MAX_THREAD}
                 )
                 SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN (SELECT id FROM t) AND forgotten_at IS NULL
                 ORDER BY seq"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map([root.id.as_str()], raw_row).map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// The hold on a thread, if any.
    fn hold_of(&self, thread: &MemoryId) -> Result<Option<Hold>> {
        let row: Option<(String, i64)> = self
            .conn
            .query_row("SELECT reason, at FROM thread_holds WHERE thread = ?1", [thread.as_str()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(self.sql())?;
        Ok(row.map(|(reason, at)| Hold { thread: thread.clone(), reason, at }))
    }

    /// Holds a thread (a hold already there is kept).
    fn hold(&mut self, thread: &MemoryId, reason: &str, now: Millis) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO thread_holds (thread, reason, at) VALUES (?1, ?2, ?3)",
                params![thread.as_str(), reason, now],
            )
            .map_err(self.sql())?;
        Ok(())
    }

    /// Lifts a thread's hold; true when there was one.
    fn release(&mut self, thread: &MemoryId) -> Result<bool> {
        let n = self
            .conn
            .execute("DELETE FROM thread_holds WHERE thread = ?1", [thread.as_str()])
            .map_err(self.sql())?;
        Ok(n > 0)
    }

    /// Logs a guard decision.
    fn log_guard(&mut self, e: &GuardEntry) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO guard_log (agent, trigger, decision, rule, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![e.agent, e.trigger.as_str(), e.decision, e.rule, e.at],
            )
            .map_err(self.sql())?;
        Ok(())
    }

    /// True when the guard already allowed `agent` to answer `trigger`.
    fn guard_allowed(&self, agent: &str, trigger: &MemoryId) -> Result<bool> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM guard_log WHERE agent = ?1 AND trigger = ?2 AND decision = 'allow' LIMIT 1",
                params![agent, trigger.as_str()],
                |_| Ok(()),
            )
            .optional()
            .map_err(self.sql())?
            .is_some())
    }
}
