//! Standing on PostgreSQL: the outcome log, the weight folded from it
//! (`amber_core::standing::fold`), supersession edges and the archive (as
//! `standing.rs` does on SQLite).

use std::collections::HashSet;
use std::path::Path;

use amber_core::{Memory, MemoryId, Millis, Report, Scope};
use postgres::GenericClient;

use super::{MEMORY_COLUMNS, PgStore, Q};
use crate::standing::{report_of, restanding};
use crate::{Error, Refusal, Result, StandingRow};
use crate::{Scopes, Standing};

/// Supersession chains are followed at most this deep (as on SQLite).
const MAX_CHAIN: usize = 64;

const STANDING_COLUMNS: &str =
    "seq, kind, weight, used_at, archived_at, superseded_by, successes, failures, forgotten_at";

fn decode_standing(r: &postgres::Row, path: &Path) -> Q<StandingRow> {
    let seq: i64 = r.try_get(0)?;
    let corrupt = |detail: String| Error::Corrupt { path: path.to_path_buf(), detail };
    let kind: String = r.try_get(1)?;
    let superseded_by: Option<String> = r.try_get(5)?;
    Ok(StandingRow {
        seq: seq as u64,
        kind: kind.parse().map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        weight: r.try_get::<_, f64>(2)? as f32,
        used_at: r.try_get(3)?,
        archived_at: r.try_get(4)?,
        superseded_by: superseded_by
            .map(|s| s.parse())
            .transpose()
            .map_err(|e| corrupt(format!("seq {seq}: {e}")))?,
        successes: r.try_get::<_, i64>(6)? as u32,
        failures: r.try_get::<_, i64>(7)? as u32,
        forgotten: r.try_get::<_, Option<i64>>(8)?.is_some(),
    })
}

fn reports_in(c: &mut impl GenericClient, seq: u64) -> Q<Vec<Report>> {
    let rows = c.query(
        "SELECT kind, result, session_id, agent, note, at, basis FROM outcomes WHERE seq = $1 ORDER BY at, n",
        &[&(seq as i64)],
    )?;
    let mut out = Vec::new();
    for r in rows {
        let (kind, result): (String, Option<String>) = (r.try_get(0)?, r.try_get(1)?);
        out.extend(report_of(
            &kind,
            result.as_deref(),
            r.try_get(2)?,
            r.try_get(3)?,
            r.try_get(4)?,
            r.try_get(5)?,
            r.try_get::<_, Option<String>>(6)?.as_deref(),
        ));
    }
    Ok(out)
}

/// The newest live, standing invalidation that supersedes `seq`, if any.
fn superseder(c: &mut impl GenericClient, seq: u64, depth: usize) -> Q<Option<(u64, String)>> {
    if depth > MAX_CHAIN {
        return Ok(None);
    }
    let kind: Option<String> =
        c.query_opt("SELECT kind FROM memories WHERE seq = $1", &[&(seq as i64)])?.map(|r| r.get(0));
    if kind.as_deref() == Some("lifefact") {
        return Ok(None);
    }
    let by = c.query(
        "SELECT s.by_seq, m.id FROM supersessions s JOIN memories m ON m.seq = s.by_seq
         WHERE s.target = $1 AND m.forgotten_at IS NULL ORDER BY s.by_seq DESC",
        &[&(seq as i64)],
    )?;
    for r in by {
        let b: i64 = r.try_get(0)?;
        if superseder(c, b as u64, depth + 1)?.is_none() {
            return Ok(Some((b as u64, r.try_get(1)?)));
        }
    }
    Ok(None)
}

/// Recomputes one memory's standing, stores it, and then what it supersedes.
fn refresh(
    c: &mut impl GenericClient,
    seq: u64,
    now: Millis,
    seen: &mut HashSet<u64>,
    out: &mut Vec<StandingRow>,
    path: &Path,
) -> Q<()> {
    if !seen.insert(seq) {
        return Ok(());
    }
    let Some(old) =
        c.query_opt(&format!("SELECT {STANDING_COLUMNS} FROM memories WHERE seq = $1"), &[&(seq as i64)])?
    else {
        return Ok(());
    };
    let old = decode_standing(&old, path)?;
    let reports = reports_in(c, seq)?;
    let by = superseder(c, seq, 0)?;
    let new = restanding(&old, &reports, by, now, path)?;
    c.execute(
        "UPDATE memories SET weight = $2, used_at = $3, archived_at = $4, superseded_by = $5,
             successes = $6, failures = $7 WHERE seq = $1",
        &[
            &(seq as i64),
            &(new.weight as f64),
            &new.used_at,
            &new.archived_at,
            &new.superseded_by.as_ref().map(|id| id.as_str()),
            &i64::from(new.successes),
            &i64::from(new.failures),
        ],
    )?;
    out.push(new);
    let targets: Vec<i64> = c
        .query("SELECT target FROM supersessions WHERE by_seq = $1", &[&(seq as i64)])?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()?;
    for t in targets {
        refresh(c, t as u64, now, seen, out, path)?;
    }
    Ok(())
}

impl Standing for PgStore {
    fn report(&mut self, id: &MemoryId, report: &Report, now: Millis) -> Result<Option<Vec<StandingRow>>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let seq: Option<i64> = tx
                .query_opt("SELECT seq FROM memories WHERE id = $1 AND forgotten_at IS NULL", &[&id.as_str()])?
                .map(|r| r.get(0));
            let Some(seq) = seq else { return Ok(None) };
            tx.execute(
                "INSERT INTO outcomes (seq, kind, result, session_id, agent, note, at, basis) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &seq,
                    &report.kind.as_str(),
                    &report.result.map(|r| r.as_str()),
                    &report.session_id,
                    &report.agent,
                    &report.note,
                    &report.at,
                    &report.basis.map(|b| b.as_str()),
                ],
            )?;
            let mut out = Vec::new();
            refresh(&mut tx, seq as u64, now, &mut HashSet::new(), &mut out, self.path())?;
            tx.commit()?;
            Ok(Some(out))
        })
    }

    fn reports(&self, id: &MemoryId) -> Result<Vec<Report>> {
        self.read(|c| {
            let seq: Option<i64> =
                c.query_opt("SELECT seq FROM memories WHERE id = $1", &[&id.as_str()])?.map(|r| r.get(0));
            match seq {
                Some(seq) => reports_in(c, seq as u64),
                None => Ok(Vec::new()),
            }
        })
    }

    fn session_reports(&self, session_id: &str) -> Result<Vec<(MemoryId, Report)>> {
        self.read(|c| {
            let seqs = c.query(
                "SELECT DISTINCT m.id, o.seq FROM outcomes o JOIN memories m ON m.seq = o.seq WHERE o.session_id = $1",
                &[&session_id],
            )?;
            let mut out = Vec::new();
            for r in seqs {
                let id: String = r.try_get(0)?;
                let seq: i64 = r.try_get(1)?;
                let id: MemoryId =
                    id.parse().map_err(|e| Error::Corrupt { path: self.path().to_path_buf(), detail: format!("{e}") })?;
                for r in reports_in(c, seq as u64)? {
                    if r.session_id.as_deref() == Some(session_id) {
                        out.push((id.clone(), r));
                    }
                }
            }
            out.sort_by_key(|(_, r)| r.at);
            Ok(out)
        })
    }

    fn standings(&self) -> Result<Vec<StandingRow>> {
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {STANDING_COLUMNS} FROM memories
                     WHERE (weight < 1.0 OR used_at IS NOT NULL OR archived_at IS NOT NULL) AND forgotten_at IS NULL
                     ORDER BY seq"
                ),
                &[],
            )?;
            rows.iter().map(|r| decode_standing(r, self.path())).collect()
        })
    }

    fn supersession_targets(&self, ids: &[MemoryId]) -> Result<std::result::Result<Vec<u64>, Refusal>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let id = match self.moved_to(id)? {
                Some(new) => new,
                None => id.clone(),
            };
            let row = self.read(|c| {
                Ok(c.query_opt("SELECT seq, kind FROM memories WHERE id = $1", &[&id.as_str()])?
                    .map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1))))
            })?;
            match row {
                None => return Ok(Err(Refusal::NotFound(id))),
                Some((_, kind)) if kind == "lifefact" => return Ok(Err(Refusal::Lifefact(id))),
                Some((seq, _)) => out.push(seq as u64),
            }
        }
        Ok(Ok(out))
    }

    fn apply_supersessions(&mut self, seqs: &[u64], now: Millis) -> Result<Vec<StandingRow>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let mut targets = Vec::new();
            for &seq in seqs {
                let row = tx.query_opt("SELECT supersedes, forgotten_at FROM memories WHERE seq = $1", &[&(seq as i64)])?;
                let Some(row) = row else { continue };
                let (Some(json), None) = (row.try_get::<_, Option<String>>(0)?, row.try_get::<_, Option<i64>>(1)?) else {
                    continue;
                };
                let ids: Vec<MemoryId> = serde_json::from_str(&json).map_err(|e| Error::Corrupt {
                    path: self.path().to_path_buf(),
                    detail: format!("seq {seq}: supersedes: {e}"),
                })?;
                for id in ids {
                    let moved: Option<String> =
                        tx.query_opt("SELECT new_id FROM moved WHERE old_id = $1", &[&id.as_str()])?.map(|r| r.get(0));
                    let id = moved.unwrap_or_else(|| id.to_string());
                    let target: Option<i64> =
                        tx.query_opt("SELECT seq FROM memories WHERE id = $1", &[&id.as_str()])?.map(|r| r.get(0));
                    // Only what was filed before the invalidation: newest wins, no cycles.
                    if let Some(t) = target.filter(|t| (*t as u64) < seq) {
                        tx.execute(
                            "INSERT INTO supersessions (by_seq, target, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                            &[&(seq as i64), &t, &now],
                        )?;
                        targets.push(t as u64);
                    }
                }
            }
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            for t in targets {
                refresh(&mut tx, t, now, &mut seen, &mut out, self.path())?;
            }
            tx.commit()?;
            Ok(out)
        })
    }

    fn unapplied_supersessions(&self) -> Result<Vec<u64>> {
        self.seqs(
            "SELECT seq FROM memories m WHERE supersedes IS NOT NULL AND forgotten_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM supersessions s WHERE s.by_seq = m.seq) ORDER BY seq",
            &[],
        )
    }

    fn refresh_targets(&mut self, seq: u64, now: Millis) -> Result<Vec<StandingRow>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let mut out = Vec::new();
            refresh(&mut tx, seq, now, &mut HashSet::new(), &mut out, self.path())?;
            tx.commit()?;
            Ok(out)
        })
    }

    fn archived(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Memory>> {
        let below = scope.map(|s| format!("{}/", s.as_str()));
        self.query_memories(
            &format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE archived_at IS NOT NULL AND forgotten_at IS NULL
                 AND ($1::TEXT IS NULL OR scope = $1 OR starts_with(scope, $3))
                 ORDER BY archived_at DESC, seq DESC LIMIT $2"
            ),
            &[&scope.map(|s| s.as_str()), &(limit as i64), &below],
        )
    }
}
