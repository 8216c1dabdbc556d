//! Standing: the outcome log, the weight derived from it, supersession edges, and the
//! archive. The weight column is a cache of `amber_core::standing::fold` over the log
//! (and of supersession): every change recomputes it in the same transaction.

use std::collections::HashSet;

use amber_core::standing::{ARCHIVE_BELOW, fold};
use amber_core::{Memory, MemoryId, MemoryType, Millis, Outcome, Report, ReportKind};
use rusqlite::{OptionalExtension, Transaction, params};

use crate::store::{MEMORY_COLUMNS, decode, raw_row};
use crate::{Error, Result, Store};
use crate::{Scopes, Standing};

/// Supersession chains are followed at most this deep.
const MAX_CHAIN: usize = 64;

/// A memory's standing as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StandingRow {
    /// The memory's seq.
    pub seq: u64,
    /// Its type.
    pub kind: MemoryType,
    /// Its weight, 0..1.
    pub weight: f32,
    /// The last time a session relied on it.
    pub used_at: Option<Millis>,
    /// When it was archived.
    pub archived_at: Option<Millis>,
    /// The invalidation that retired it.
    pub superseded_by: Option<MemoryId>,
    /// Successes that count.
    pub successes: u32,
    /// Failures that count.
    pub failures: u32,
    /// True when it is forgotten.
    pub forgotten: bool,
}

impl StandingRow {
    /// True when nothing has moved it from a new memory's standing.
    pub fn is_default(&self) -> bool {
        self.weight >= 1.0
            && self.used_at.is_none()
            && self.archived_at.is_none()
            && self.successes == 0
            && self.failures == 0
    }
}

/// Why a supersession was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// No memory has this id.
    NotFound(MemoryId),
    /// A lifefact is immune to supersession.
    Lifefact(MemoryId),
}

const STANDING_COLUMNS: &str =
    "seq, kind, weight, used_at, archived_at, superseded_by, successes, failures, forgotten_at";

fn standing_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawStanding> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?))
}

type RawStanding = (i64, String, f64, Option<i64>, Option<i64>, Option<String>, i64, i64, Option<i64>);

/// A memory's standing recomputed from its log and the invalidation that supersedes it
/// (seq and id), if any: weight 0 and archived while superseded, else the folded weight,
/// archived below [`ARCHIVE_BELOW`] when the failures allow it (see
/// [`amber_core::standing::Basis`]; keeping the first archive time). Both backends
/// store exactly this.
pub(crate) fn restanding(
    old: &StandingRow,
    reports: &[Report],
    by: Option<(u64, String)>,
    now: Millis,
    path: &std::path::Path,
) -> Result<StandingRow> {
    let folded = fold(old.kind, reports);
    let weight = if by.is_some() { 0.0 } else { folded.weight };
    let archived = by.is_some() || (weight < ARCHIVE_BELOW && folded.archivable);
    let seq = old.seq;
    Ok(StandingRow {
        seq,
        kind: old.kind,
        weight,
        used_at: folded.used_at,
        archived_at: if archived { old.archived_at.or(Some(now)) } else { None },
        superseded_by: by
            .map(|(_, id)| id.parse())
            .transpose()
            .map_err(|e| Error::Corrupt { path: path.to_path_buf(), detail: format!("seq {seq}: {e}") })?,
        successes: folded.successes,
        failures: folded.failures,
        forgotten: old.forgotten,
    })
}

fn decode_standing(raw: RawStanding, path: &std::path::Path) -> Result<StandingRow> {
    let (seq, kind, weight, used_at, archived_at, superseded_by, successes, failures, forgotten_at) = raw;
    let corrupt = |detail: String| Error::Corrupt { path: path.to_path_buf(), detail };
    Ok(StandingRow {
        seq: seq as u64,
        kind: kind.parse().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        weight: weight as f32,
        used_at,
        archived_at,
        superseded_by: superseded_by
            .map(|s| s.parse())
            .transpose()
            .map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        successes: successes as u32,
        failures: failures as u32,
        forgotten: forgotten_at.is_some(),
    })
}

fn reports_in(tx: &rusqlite::Connection, seq: u64) -> rusqlite::Result<Vec<Report>> {
    let mut stmt = tx.prepare_cached(
        "SELECT kind, result, session_id, agent, note, at, basis FROM outcomes WHERE seq = ?1 ORDER BY at, n",
    )?;
    let rows = stmt.query_map([seq as i64], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (kind, result, session_id, agent, note, at, basis) = row?;
        out.extend(report_of(&kind, result.as_deref(), session_id, agent, note, at, basis.as_deref()));
    }
    Ok(out)
}

/// A logged word from its columns; None for a kind or result this binary does not know
/// (a newer one wrote it): such words are skipped. Both backends read the log this way.
pub(crate) fn report_of(
    kind: &str,
    result: Option<&str>,
    session_id: Option<String>,
    agent: Option<String>,
    note: Option<String>,
    at: i64,
    basis: Option<&str>,
) -> Option<Report> {
    let kind = ReportKind::parse(kind)?;
    let result = match result {
        Some(r) => Some(r.parse::<Outcome>().ok()?),
        None => None,
    };
    let basis = match basis {
        Some(b) => Some(amber_core::Basis::parse(b)?),
        None => None,
    };
    Some(Report { kind, result, session_id, agent, note, at, basis })
}

/// The newest live, standing invalidation that supersedes `seq`, if any (a lifefact has
/// none). An invalidation stands while no standing invalidation supersedes it: newest
/// wins down a chain.
fn superseder(tx: &rusqlite::Connection, seq: u64, depth: usize) -> rusqlite::Result<Option<(u64, String)>> {
    if depth > MAX_CHAIN {
        return Ok(None);
    }
    let kind: Option<String> =
        tx.query_row("SELECT kind FROM memories WHERE seq = ?1", [seq as i64], |r| r.get(0)).optional()?;
    if kind.as_deref() == Some("lifefact") {
        return Ok(None);
    }
    let by: Vec<(i64, String)> = {
        let mut stmt = tx.prepare_cached(
            "SELECT s.by_seq, m.id FROM supersessions s JOIN memories m ON m.seq = s.by_seq
             WHERE s.target = ?1 AND m.forgotten_at IS NULL ORDER BY s.by_seq DESC",
        )?;
        stmt.query_map([seq as i64], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    for (b, id) in by {
        if superseder(tx, b as u64, depth + 1)?.is_none() {
            return Ok(Some((b as u64, id)));
        }
    }
    Ok(None)
}

/// Recomputes one memory's standing from its log and its supersessions, stores it, and
/// returns it; then the same for what it supersedes, should it be an invalidation
/// (whether it stands may have changed). `seen` stops a second visit.
pub(crate) fn refresh(
    tx: &Transaction<'_>,
    seq: u64,
    now: Millis,
    seen: &mut HashSet<u64>,
    out: &mut Vec<StandingRow>,
    path: &std::path::Path,
) -> Result<()> {
    if !seen.insert(seq) {
        return Ok(());
    }
    let sql = |source| Error::Sqlite { path: path.to_path_buf(), source };
    let Some(old) = tx
        .query_row(
            &format!("SELECT {STANDING_COLUMNS} FROM memories WHERE seq = ?1"),
            [seq as i64],
            standing_row,
        )
        .optional()
        .map_err(sql)?
    else {
        return Ok(());
    };
    let old = decode_standing(old, path)?;
    let reports = reports_in(tx, seq).map_err(sql)?;
    let by = superseder(tx, seq, 0).map_err(sql)?;
    let new = restanding(&old, &reports, by, now, path)?;
    tx.execute(
        "UPDATE memories SET weight = ?2, used_at = ?3, archived_at = ?4, superseded_by = ?5,
             successes = ?6, failures = ?7 WHERE seq = ?1",
        params![
            seq as i64,
            new.weight as f64,
            new.used_at,
            new.archived_at,
            new.superseded_by.as_ref().map(|id| id.as_str()),
            new.successes,
            new.failures
        ],
    )
    .map_err(sql)?;
    out.push(new);
    let targets: Vec<i64> = {
        let mut stmt =
            tx.prepare_cached("SELECT target FROM supersessions WHERE by_seq = ?1").map_err(sql)?;
        stmt.query_map([seq as i64], |r| r.get(0))
            .map_err(sql)?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql)?
    };
    for t in targets {
        refresh(tx, t as u64, now, seen, out, path)?;
    }
    Ok(())
}

impl Standing for Store {
    /// Logs a word on a live memory and recomputes its standing (one transaction).
    /// Returns the standings that changed, the memory's first; None when no live memory
    /// has this id.
    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let seq: Option<i64> = tx
            .query_row(
                "SELECT seq FROM memories WHERE id = ?1 AND forgotten_at IS NULL",
                [id.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        let Some(seq) = seq else { return Ok(None) };
        tx.execute(
            "INSERT INTO outcomes (seq, kind, result, session_id, agent, note, at, basis) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                seq,
                report.kind.as_str(),
                report.result.map(|r| r.as_str()),
                report.session_id,
                report.agent,
                report.note,
                report.at,
                report.basis.map(|b| b.as_str())
            ],
        )
        .map_err(sql)?;
        let mut out = Vec::new();
        refresh(&tx, seq as u64, now, &mut HashSet::new(), &mut out, &path)?;
        tx.commit().map_err(sql)?;
        Ok(Some(out))
    }

    /// Every word logged on a memory, oldest first.
    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        let seq: Option<i64> = self
            .conn
            .query_row("SELECT seq FROM memories WHERE id = ?1", [id.as_str()], |r| r.get(0))
            .optional()
            .map_err(self.sql())?;
        match seq {
            Some(seq) => reports_in(&self.conn, seq as u64).map_err(self.sql()),
            None => Ok(Vec::new()),
        }
    }

    /// The words logged in a session: (memory id, report), oldest first.
    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT m.id, o.seq FROM outcomes o JOIN memories m ON m.seq = o.seq WHERE o.session_id = ?1",
            )
            .map_err(self.sql())?;
        let seqs: Vec<(String, i64)> = stmt
            .query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.sql())?
            .collect::<rusqlite::Result<_>>()
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for (id, seq) in seqs {
            let id: MemoryId =
                id.parse().map_err(|e| Error::Corrupt { path: self.path.clone(), detail: format!("{e}") })?;
            for r in reports_in(&self.conn, seq as u64).map_err(self.sql())? {
                if r.session_id.as_deref() == Some(session_id) {
                    out.push((id.clone(), r));
                }
            }
        }
        out.sort_by_key(|(_, r)| r.at);
        Ok(out)
    }

    /// The standings of live memories that differ from a new memory's (for the engine's
    /// in-memory view).
    fn standings(&self) -> Result<Vec<StandingRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {STANDING_COLUMNS} FROM memories
                 WHERE (weight < 1.0 OR used_at IS NOT NULL OR archived_at IS NOT NULL) AND forgotten_at IS NULL"
            ))
            .map_err(self.sql())?;
        let rows = stmt.query_map([], standing_row).map_err(self.sql())?;
        rows.map(|r| decode_standing(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// Checks what an invalidation may supersede: each id must name a memory (through
    /// a move too) that is not a lifefact. Returns the seqs, or why not.
    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let id = match self.moved_to(id)? {
                Some(new) => new,
                None => id.clone(),
            };
            let row: Option<(i64, String)> = self
                .conn
                .query_row("SELECT seq, kind FROM memories WHERE id = ?1", [id.as_str()], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(self.sql())?;
            match row {
                None => return Ok(Err(Refusal::NotFound(id))),
                Some((_, kind)) if kind == "lifefact" => return Ok(Err(Refusal::Lifefact(id))),
                Some((seq, _)) => out.push(seq as u64),
            }
        }
        Ok(Ok(out))
    }

    /// Records the supersessions of these invalidations (from their `supersedes`, which
    /// the insert stored) and recomputes the standing of what they retire, in one
    /// transaction. Idempotent: the engine calls it after a commit and, for any left
    /// undone by a crash, at open. Returns the standings that changed.
    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut targets = Vec::new();
        for &seq in seqs {
            let row: Option<(Option<String>, Option<i64>)> = tx
                .query_row(
                    "SELECT supersedes, forgotten_at FROM memories WHERE seq = ?1",
                    [seq as i64],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql)?;
            let Some((Some(json), None)) = row else { continue };
            let ids: Vec<MemoryId> = serde_json::from_str(&json).map_err(|e| Error::Corrupt {
                path: path.clone(),
                detail: format!("seq {seq}: supersedes: {e}"),
            })?;
            for id in ids {
                let moved: Option<String> = tx
                    .query_row("SELECT new_id FROM moved WHERE old_id = ?1", [id.as_str()], |r| r.get(0))
                    .optional()
                    .map_err(sql)?;
                let id = moved.unwrap_or_else(|| id.to_string());
                let target: Option<i64> = tx
                    .query_row("SELECT seq FROM memories WHERE id = ?1", [id.as_str()], |r| r.get(0))
                    .optional()
                    .map_err(sql)?;
                // Only what was filed before the invalidation: newest wins, no cycles.
                if let Some(t) = target.filter(|t| (*t as u64) < seq) {
                    tx.execute(
                        "INSERT OR IGNORE INTO supersessions (by_seq, target, at) VALUES (?1, ?2, ?3)",
                        params![seq as i64, t, now],
                    )
                    .map_err(sql)?;
                    targets.push(t as u64);
                }
            }
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for t in targets {
            refresh(&tx, t, now, &mut seen, &mut out, &path)?;
        }
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Invalidations whose supersessions are not recorded yet (a crash between the
    /// commit and [`Store::apply_supersessions`]).
    fn unapplied_supersessions(&self) -> Result<Vec<u64>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq FROM memories m WHERE supersedes IS NOT NULL AND forgotten_at IS NULL
                 AND NOT EXISTS (SELECT 1 FROM supersessions s WHERE s.by_seq = m.seq) ORDER BY seq",
            )
            .map_err(self.sql())?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(self.sql())?;
        rows.map(|r| r.map(|s| s as u64).map_err(self.sql())).collect()
    }

    /// Recomputes the standing of what a memory supersedes (after it was forgotten, so
    /// it no longer stands). Returns the standings that changed.
    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut out = Vec::new();
        refresh(&tx, seq, now, &mut HashSet::new(), &mut out, &path)?;
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Archived live memories, newest archived first, within a scope (or all).
    fn archived(&self, scope: Option<&amber_core::Scope>, limit: usize) -> Result<Vec<Memory>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE archived_at IS NOT NULL AND forgotten_at IS NULL
                 AND (?1 IS NULL OR scope = ?1 OR (scope > ?3 AND scope < ?4))
                 ORDER BY archived_at DESC, seq DESC LIMIT ?2"
            ))
            .map_err(self.sql())?;
        let (lo, hi) = scope.map(crate::scopes::below).unzip();
        let rows = stmt
            .query_map(params![scope.map(|s| s.as_str()), limit as i64, lo, hi], raw_row)
            .map_err(self.sql())?;
        rows.map(|r| decode(r.map_err(self.sql())?, &self.path)).collect()
    }
}
