//! Advice on PostgreSQL: situations, sorted runs, versioned notes, servings and
//! judgements (as `advice.rs` does on SQLite).

use amber_core::advice::{Judgement, Note, Situation};
use amber_core::{Millis, Scope};

use super::{PgStore, Q};
use crate::Advice;
use crate::{Error, Result};

const NOTE_COLUMNS: &str =
    "scope, situation, agent, version, text, runs, run_count, wrong_count, agents, created_at, withheld";

fn corrupt(path: &std::path::Path, detail: String) -> Error {
    Error::Corrupt { path: path.to_path_buf(), detail }
}

fn decode_note(r: &postgres::Row, path: &std::path::Path) -> Q<Note> {
    let agent: String = r.try_get(2)?;
    let scope: String = r.try_get(0)?;
    let situation: String = r.try_get(1)?;
    let runs: String = r.try_get(5)?;
    let bad = |what: String| corrupt(path, format!("advice note {scope} {situation}: {what}"));
    let n = |i: usize| -> Q<u32> { Ok(r.try_get::<_, i64>(i)? as u32) };
    Ok(Note {
        scope: scope.parse().map_err(|e| bad(format!("{e}")))?,
        runs: serde_json::from_str(&runs).map_err(|e| bad(format!("runs: {e}")))?,
        agent: (!agent.is_empty()).then_some(agent),
        version: n(3)?,
        text: r.try_get(4)?,
        run_count: n(6)?,
        wrong_count: n(7)?,
        agents: n(8)?,
        created_at: r.try_get(9)?,
        withheld: r.try_get(10)?,
        situation,
    })
}

impl Advice for PgStore {
    fn put_situations(&mut self, situations: &[Situation]) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            for s in situations {
                tx.execute(
                    "INSERT INTO advice_situations (scope, key, category, line, aliases, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (scope, key) DO UPDATE SET
                       category = excluded.category, line = excluded.line, aliases = excluded.aliases",
                    &[
                        &s.scope.as_str(),
                        &s.key,
                        &s.category,
                        &s.line,
                        &serde_json::json!(s.aliases).to_string(),
                        &s.created_at,
                    ],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn situations(&self, scope: &Scope) -> Result<Vec<Situation>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT key, category, line, aliases, created_at FROM advice_situations
                 WHERE scope = $1 ORDER BY key COLLATE \"C\"",
                &[&scope.as_str()],
            )?;
            let mut out = Vec::new();
            for r in rows {
                let key: String = r.try_get(0)?;
                let aliases: String = r.try_get(3)?;
                let aliases = serde_json::from_str(&aliases)
                    .map_err(|e| corrupt(self.path(), format!("situation {key}: aliases: {e}")))?;
                out.push(Situation {
                    scope: scope.clone(),
                    category: r.try_get(1)?,
                    line: r.try_get(2)?,
                    created_at: r.try_get(4)?,
                    key,
                    aliases,
                });
            }
            Ok(out)
        })
    }

    fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let mut aliases = |key: &str| -> Q<Option<Vec<String>>> {
                let raw = tx.query_opt(
                    "SELECT aliases FROM advice_situations WHERE scope = $1 AND key = $2",
                    &[&scope.as_str(), &key],
                )?;
                match raw {
                    Some(r) => {
                        let a: String = r.try_get(0)?;
                        Ok(Some(
                            serde_json::from_str(&a)
                                .map_err(|e| corrupt(self.path(), format!("aliases of {key}: {e}")))?,
                        ))
                    }
                    None => Ok(None),
                }
            };
            let (Some(old), Some(mut kept)) = (aliases(from)?, aliases(into)?) else {
                return Err(corrupt(
                    self.path(),
                    format!("merge of {from} into {into}: a situation is missing"),
                )
                .into());
            };
            for a in std::iter::once(from.to_string()).chain(old) {
                if !kept.contains(&a) && a != into {
                    kept.push(a);
                }
            }
            tx.execute(
                "UPDATE advice_situations SET aliases = $3 WHERE scope = $1 AND key = $2",
                &[&scope.as_str(), &into, &serde_json::json!(kept).to_string()],
            )?;
            tx.execute(
                "UPDATE advice_sorted SET situation = $3 WHERE scope = $1 AND situation = $2",
                &[&scope.as_str(), &from, &into],
            )?;
            tx.execute(
                "DELETE FROM advice_situations WHERE scope = $1 AND key = $2",
                &[&scope.as_str(), &from],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            for (run, situation) in sorted {
                tx.execute(
                    "INSERT INTO advice_sorted (run_id, scope, situation) VALUES ($1, $2, $3)
                     ON CONFLICT (run_id) DO UPDATE SET scope = excluded.scope, situation = excluded.situation",
                    &[run, &scope.as_str(), situation],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT run_id, situation FROM advice_sorted WHERE scope = $1 ORDER BY run_id COLLATE \"C\"",
                &[&scope.as_str()],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    fn put_note(&mut self, note: &Note) -> Result<u32> {
        let agent = note.agent.as_deref().unwrap_or("");
        self.write(|c| {
            let mut tx = c.transaction()?;
            // Two nodes writing the same series: the second waits for the first.
            tx.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1::TEXT || chr(1) || $2::TEXT || chr(1) || $3::TEXT, 0))",
                &[&note.scope.as_str(), &note.situation, &agent],
            )?;
            let last: i64 = tx
                .query_one(
                    "SELECT COALESCE(MAX(version), 0) FROM advice_notes WHERE scope = $1 AND situation = $2 AND agent = $3",
                    &[&note.scope.as_str(), &note.situation, &agent],
                )?
                .try_get(0)?;
            tx.execute(
                &format!(
                    "INSERT INTO advice_notes ({NOTE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
                ),
                &[
                    &note.scope.as_str(),
                    &note.situation,
                    &agent,
                    &(last + 1),
                    &note.text,
                    &serde_json::json!(note.runs).to_string(),
                    &i64::from(note.run_count),
                    &i64::from(note.wrong_count),
                    &i64::from(note.agents),
                    &note.created_at,
                    &note.withheld,
                ],
            )?;
            tx.commit()?;
            Ok(last as u32 + 1)
        })
    }

    fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>> {
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {NOTE_COLUMNS} FROM advice_notes n
                     WHERE scope = $1 AND ($2::TEXT IS NULL OR situation = $2)
                       AND ($3 OR version = (SELECT MAX(version) FROM advice_notes m
                            WHERE m.scope = n.scope AND m.situation = n.situation AND m.agent = n.agent))
                     ORDER BY situation COLLATE \"C\", agent COLLATE \"C\", version"
                ),
                &[&scope.as_str(), &situation, &history],
            )?;
            rows.iter().map(|r| decode_note(r, self.path())).collect()
        })
    }

    fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()> {
        self.write(|c| {
            c.execute(
                "UPDATE advice_notes SET withheld = $5
                 WHERE scope = $1 AND situation = $2 AND agent = $3 AND version = $4",
                &[
                    &note.scope.as_str(),
                    &note.situation,
                    &note.agent.as_deref().unwrap_or(""),
                    &i64::from(note.version),
                    &withheld,
                ],
            )?;
            Ok(())
        })
    }

    fn mark_served(&mut self, session_id: &str, note: &Note, at: Millis) -> Result<Option<(u32, Millis)>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let inserted = tx.execute(
                "INSERT INTO advice_served (session_id, scope, situation, agent, version, at)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                &[
                    &session_id,
                    &note.scope.as_str(),
                    &note.situation,
                    &note.agent.as_deref().unwrap_or(""),
                    &i64::from(note.version),
                    &at,
                ],
            )?;
            let before = if inserted == 1 {
                None
            } else {
                let r = tx.query_one(
                    "SELECT version, at FROM advice_served WHERE session_id = $1 AND scope = $2 AND situation = $3",
                    &[&session_id, &note.scope.as_str(), &note.situation],
                )?;
                Some((r.try_get::<_, i64>(0)? as u32, r.try_get(1)?))
            };
            tx.commit()?;
            Ok(before)
        })
    }

    fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            for j in judgements {
                tx.execute(
                    "INSERT INTO run_judgements (run_id, verdict, reason, model, at) VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (run_id) DO UPDATE SET verdict = excluded.verdict, reason = excluded.reason,
                       model = excluded.model, at = excluded.at",
                    &[&j.run_id, &j.verdict.map(i16::from), &j.reason, &j.model, &j.at],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>> {
        let below = scope.map(|s| format!("{}/", s.as_str()));
        self.read(|c| {
            let rows = c.query(
                "SELECT j.run_id, j.verdict, j.reason, j.model, j.at FROM run_judgements j
                 LEFT JOIN runs r ON r.id = j.run_id
                 LEFT JOIN sessions s ON j.run_id = 'session:' || s.id
                 WHERE $1::TEXT IS NULL OR COALESCE(r.scope, s.scope) = $1
                    OR starts_with(COALESCE(r.scope, s.scope), $2)
                 ORDER BY j.at DESC, j.run_id COLLATE \"C\" LIMIT $3",
                &[&scope.map(|s| s.as_str()), &below, &(limit as i64)],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(Judgement {
                        run_id: r.try_get(0)?,
                        verdict: r.try_get::<_, Option<i16>>(1)?.map(|v| v as i8),
                        reason: r.try_get(2)?,
                        model: r.try_get(3)?,
                        at: r.try_get(4)?,
                    })
                })
                .collect()
        })
    }
}
