//! Words on served notes on PostgreSQL (as `verdicts.rs` does on SQLite).

use amber_core::advice::{NoteVerdict, Serving, VerdictBy};
use amber_core::{Millis, Scope};

use super::{PgStore, Q};
use crate::Verdicts;
use crate::{Error, Result};

const VERDICT_COLUMNS: &str =
    "session_id, scope, situation, by, agent, version, voice, applied, helped, reason, model, at";

/// `scope = $1 OR scope under it` (every scope when $1 is NULL), $2 the scope and `/`.
const WITHIN: &str = "($1::TEXT IS NULL OR scope = $1 OR starts_with(scope, $2))";

fn corrupt(path: &std::path::Path, detail: String) -> Error {
    Error::Corrupt { path: path.to_path_buf(), detail }
}

impl Verdicts for PgStore {
    fn servings(&self, scope: Option<&Scope>, since: Millis) -> Result<Vec<Serving>> {
        let below = scope.map(|s| format!("{}/", s.as_str()));
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT session_id, scope, situation, agent, version, at FROM advice_served
                     WHERE {WITHIN} AND at >= $3 ORDER BY at, session_id COLLATE \"C\", situation COLLATE \"C\""
                ),
                &[&scope.map(|s| s.as_str()), &below, &since],
            )?;
            rows.iter()
                .map(|r| {
                    let situation: String = r.try_get(2)?;
                    let scope: String = r.try_get(1)?;
                    let agent: String = r.try_get(3)?;
                    Ok(Serving {
                        session_id: r.try_get(0)?,
                        scope: scope.parse().map_err(|e| {
                            corrupt(self.path(), format!("a serving of {situation}: scope: {e}"))
                        })?,
                        situation,
                        agent: (!agent.is_empty()).then_some(agent),
                        version: r.try_get::<_, i64>(4)? as u32,
                        at: r.try_get(5)?,
                    })
                })
                .collect::<Q<Vec<_>>>()
        })
    }

    fn put_note_verdicts(&mut self, verdicts: &[NoteVerdict]) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            for v in verdicts {
                tx.execute(
                    &format!(
                        "INSERT INTO note_verdicts ({VERDICT_COLUMNS})
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                         ON CONFLICT (session_id, scope, situation, by) DO UPDATE SET
                           agent = excluded.agent, version = excluded.version, voice = excluded.voice,
                           applied = excluded.applied, helped = excluded.helped,
                           reason = excluded.reason, model = excluded.model, at = excluded.at"
                    ),
                    &[
                        &v.session_id,
                        &v.scope.as_str(),
                        &v.situation,
                        &v.by.as_str(),
                        &v.agent.as_deref().unwrap_or(""),
                        &i64::from(v.version),
                        &v.voice,
                        &v.applied,
                        &v.helped,
                        &v.reason,
                        &v.model,
                        &v.at,
                    ],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn note_verdicts(&self, scope: Option<&Scope>) -> Result<Vec<NoteVerdict>> {
        let below = scope.map(|s| format!("{}/", s.as_str()));
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {VERDICT_COLUMNS} FROM note_verdicts WHERE {WITHIN}
                     ORDER BY at, session_id COLLATE \"C\", situation COLLATE \"C\", by"
                ),
                &[&scope.map(|s| s.as_str()), &below],
            )?;
            rows.iter()
                .map(|r| {
                    let session_id: String = r.try_get(0)?;
                    let situation: String = r.try_get(2)?;
                    let bad = |what: String| {
                        corrupt(self.path(), format!("a word on {situation} in {session_id}: {what}"))
                    };
                    let scope: String = r.try_get(1)?;
                    let by: String = r.try_get(3)?;
                    let agent: String = r.try_get(4)?;
                    Ok(NoteVerdict {
                        scope: scope.parse().map_err(|e| bad(format!("scope: {e}")))?,
                        by: VerdictBy::parse(&by).ok_or_else(|| bad(format!("given by {by:?}")))?,
                        agent: (!agent.is_empty()).then_some(agent),
                        version: r.try_get::<_, i64>(5)? as u32,
                        voice: r.try_get(6)?,
                        applied: r.try_get(7)?,
                        helped: r.try_get(8)?,
                        reason: r.try_get(9)?,
                        model: r.try_get(10)?,
                        at: r.try_get(11)?,
                        session_id,
                        situation,
                    })
                })
                .collect::<Q<Vec<_>>>()
        })
    }
}
