//! Advice: situations, which situation each run was sorted under, versioned notes,
//! which note a session was served, and the model's judgements of unrewarded runs.

use amber_core::advice::{Judgement, Note, Situation};
use amber_core::{Millis, Scope};
use rusqlite::{OptionalExtension, params};

use crate::Advice;
use crate::{Error, Result, Store};

const NOTE_COLUMNS: &str =
    "scope, situation, agent, version, text, runs, run_count, wrong_count, agents, created_at, withheld";

fn corrupt(path: &std::path::Path, detail: String) -> Error {
    Error::Corrupt { path: path.to_path_buf(), detail }
}

/// A note from a row of [`NOTE_COLUMNS`]; its scope and runs still to be checked (a
/// bad one is corrupt, named with the note).
fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Note, String, String)> {
    let agent: String = r.get(2)?;
    let note = Note {
        scope: Scope::default(),
        situation: r.get(1)?,
        agent: (!agent.is_empty()).then_some(agent),
        version: r.get(3)?,
        text: r.get(4)?,
        runs: Vec::new(),
        run_count: r.get(6)?,
        wrong_count: r.get(7)?,
        agents: r.get(8)?,
        created_at: r.get(9)?,
        withheld: r.get(10)?,
    };
    Ok((note, r.get(0)?, r.get(5)?))
}

fn decode_note((mut note, scope, runs): (Note, String, String), path: &std::path::Path) -> Result<Note> {
    let bad = |what: String| corrupt(path, format!("advice note {scope} {}: {what}", note.situation));
    note.scope = scope.parse().map_err(|e| bad(format!("{e}")))?;
    note.runs = serde_json::from_str(&runs).map_err(|e| bad(format!("runs: {e}")))?;
    Ok(note)
}

impl Store {
    /// Runs `sql` once per item in one transaction (all or nothing).
    fn each_in_tx<T>(
        &mut self,
        sql: &str,
        items: &[T],
        run: impl Fn(&mut rusqlite::CachedStatement<'_>, &T) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let path = self.path.clone();
        let err = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut stmt = tx.prepare_cached(sql).map_err(err)?;
            for item in items {
                run(&mut stmt, item).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }
}

impl Advice for Store {
    /// Adds situations, or updates the category, line and aliases of those already
    /// there (their first time stays).
    fn put_situations(&mut self, situations: &[Situation]) -> Result<()> {
        self.each_in_tx(
            "INSERT INTO advice_situations (scope, key, category, line, aliases, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (scope, key) DO UPDATE SET
               category = excluded.category, line = excluded.line, aliases = excluded.aliases",
            situations,
            |stmt, s| {
                let aliases = serde_json::json!(s.aliases).to_string();
                stmt.execute(params![s.scope.as_str(), s.key, s.category, s.line, aliases, s.created_at])
            },
        )
    }

    /// A scope's situations, by key.
    fn situations(&self, scope: &Scope) -> Result<Vec<Situation>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT key, category, line, aliases, created_at FROM advice_situations
                 WHERE scope = ?1 ORDER BY key",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([scope.as_str()], |r| {
                Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?, r.get(4)?))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (key, category, line, aliases, created_at) = row.map_err(self.sql())?;
            let aliases = serde_json::from_str(&aliases)
                .map_err(|e| corrupt(&self.path, format!("situation {key}: aliases: {e}")))?;
            out.push(Situation { scope: scope.clone(), key, category, line, aliases, created_at });
        }
        Ok(out)
    }

    /// Merges situation `from` into `into` in one transaction: its runs move, its key
    /// and aliases become aliases of `into`, its row goes. Its notes stay (history).
    fn merge_situation(&mut self, scope: &Scope, from: &str, into: &str) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let aliases = |key: &str| -> Result<Option<Vec<String>>> {
            let raw: Option<String> = tx
                .query_row(
                    "SELECT aliases FROM advice_situations WHERE scope = ?1 AND key = ?2",
                    params![scope.as_str(), key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            raw.map(|a| {
                serde_json::from_str(&a).map_err(|e| corrupt(&path, format!("aliases of {key}: {e}")))
            })
            .transpose()
        };
        let (Some(old), Some(mut kept)) = (aliases(from)?, aliases(into)?) else {
            return Err(corrupt(&path, format!("merge of {from} into {into}: a situation is missing")));
        };
        for a in std::iter::once(from.to_string()).chain(old) {
            if !kept.contains(&a) && a != into {
                kept.push(a);
            }
        }
        tx.execute(
            "UPDATE advice_situations SET aliases = ?3 WHERE scope = ?1 AND key = ?2",
            params![scope.as_str(), into, serde_json::json!(kept).to_string()],
        )
        .map_err(sql)?;
        tx.execute(
            "UPDATE advice_sorted SET situation = ?3 WHERE scope = ?1 AND situation = ?2",
            params![scope.as_str(), from, into],
        )
        .map_err(sql)?;
        tx.execute(
            "DELETE FROM advice_situations WHERE scope = ?1 AND key = ?2",
            params![scope.as_str(), from],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Records which situation each run (id) was sorted under.
    fn sort_runs(&mut self, scope: &Scope, sorted: &[(String, String)]) -> Result<()> {
        self.each_in_tx(
            "INSERT OR REPLACE INTO advice_sorted (run_id, scope, situation) VALUES (?1, ?2, ?3)",
            sorted,
            |stmt, (run, situation)| stmt.execute(params![run, scope.as_str(), situation]),
        )
    }

    /// (run id, situation) of every run sorted in a scope.
    fn sorted_runs(&self, scope: &Scope) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT run_id, situation FROM advice_sorted WHERE scope = ?1 ORDER BY run_id")
            .map_err(self.sql())?;
        let rows = stmt.query_map([scope.as_str()], |r| Ok((r.get(0)?, r.get(1)?))).map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    /// Stores a note as the next version of its series (its `version` is ignored);
    /// returns the version given.
    fn put_note(&mut self, note: &Note) -> Result<u32> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let agent = note.agent.as_deref().unwrap_or("");
        let last: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM advice_notes
                 WHERE scope = ?1 AND situation = ?2 AND agent = ?3",
                params![note.scope.as_str(), note.situation, agent],
                |r| r.get(0),
            )
            .map_err(sql)?;
        tx.execute(
            &format!("INSERT INTO advice_notes ({NOTE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
            params![
                note.scope.as_str(),
                note.situation,
                agent,
                last + 1,
                note.text,
                serde_json::json!(note.runs).to_string(),
                note.run_count,
                note.wrong_count,
                note.agents,
                note.created_at,
                note.withheld
            ],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(last as u32 + 1)
    }

    /// A scope's notes: the newest version of each series, or every version when
    /// `history`; of one situation when given. Ordered by situation, agent, version.
    fn notes(&self, scope: &Scope, situation: Option<&str>, history: bool) -> Result<Vec<Note>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {NOTE_COLUMNS} FROM advice_notes n
                 WHERE scope = ?1 AND (?2 IS NULL OR situation = ?2)
                   AND (?3 OR version = (SELECT MAX(version) FROM advice_notes m
                        WHERE m.scope = n.scope AND m.situation = n.situation AND m.agent = n.agent))
                 ORDER BY situation, agent, version"
            ))
            .map_err(self.sql())?;
        let rows =
            stmt.query_map(params![scope.as_str(), situation, history], note_row).map_err(self.sql())?;
        rows.map(|r| decode_note(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// Sets (or clears) why a note version is withheld.
    fn set_withheld(&mut self, note: &Note, withheld: Option<&str>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE advice_notes SET withheld = ?5
                 WHERE scope = ?1 AND situation = ?2 AND agent = ?3 AND version = ?4",
                params![
                    note.scope.as_str(),
                    note.situation,
                    note.agent.as_deref().unwrap_or(""),
                    note.version,
                    withheld
                ],
            )
            .map_err(self.sql())?;
        Ok(())
    }

    /// Records that a session was served a note; when it had been served this
    /// situation's note before, nothing changes and that serving's (version, time) is
    /// returned.
    fn mark_served(&mut self, session_id: &str, note: &Note, at: Millis) -> Result<Option<(u32, Millis)>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let before: Option<(i64, i64)> = tx
            .query_row(
                "SELECT version, at FROM advice_served WHERE session_id = ?1 AND scope = ?2 AND situation = ?3",
                params![session_id, note.scope.as_str(), note.situation],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql)?;
        if before.is_none() {
            tx.execute(
                "INSERT INTO advice_served (session_id, scope, situation, agent, version, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    session_id,
                    note.scope.as_str(),
                    note.situation,
                    note.agent.as_deref().unwrap_or(""),
                    note.version,
                    at
                ],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(before.map(|(v, at)| (v as u32, at)))
    }

    /// Stores judgements (a run judged again gets the new one).
    fn put_judgements(&mut self, judgements: &[Judgement]) -> Result<()> {
        self.each_in_tx(
            "INSERT OR REPLACE INTO run_judgements (run_id, verdict, reason, model, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            judgements,
            |stmt, j| stmt.execute(params![j.run_id, j.verdict, j.reason, j.model, j.at]),
        )
    }

    /// The judgements of runs and sessions (`session:<id>`) in a scope and those under
    /// it (every scope when None), newest first.
    fn judgements(&self, scope: Option<&Scope>, limit: usize) -> Result<Vec<Judgement>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT j.run_id, j.verdict, j.reason, j.model, j.at FROM run_judgements j
                 LEFT JOIN runs r ON r.id = j.run_id
                 LEFT JOIN sessions s ON j.run_id = 'session:' || s.id
                 WHERE ?1 IS NULL OR COALESCE(r.scope, s.scope) = ?1
                    OR (COALESCE(r.scope, s.scope) > ?2 AND COALESCE(r.scope, s.scope) < ?3)
                 ORDER BY j.at DESC, j.run_id LIMIT ?4",
            )
            .map_err(self.sql())?;
        let (lo, hi) = scope.map(crate::scopes::below).unzip();
        let rows = stmt
            .query_map(params![scope.map(|s| s.as_str()), lo, hi, limit as i64], |r| {
                Ok(Judgement {
                    run_id: r.get(0)?,
                    verdict: r.get(1)?,
                    reason: r.get(2)?,
                    model: r.get(3)?,
                    at: r.get(4)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    fn note(scope: &Scope, situation: &str, agent: Option<&str>) -> Note {
        Note {
            scope: scope.clone(),
            situation: situation.into(),
            agent: agent.map(str::to_string),
            version: 0,
            text: "## When\nx".into(),
            runs: vec!["r1".into()],
            run_count: 3,
            wrong_count: 2,
            agents: 1,
            created_at: 5,
            withheld: None,
        }
    }

    #[test]
    fn notes_are_versioned_per_series_and_served_once_per_session() {
        let mut s = Store::open_in_memory().unwrap();
        let scope: Scope = "proj".parse().unwrap();
        assert_eq!(s.put_note(&note(&scope, "build/a", None)).unwrap(), 1);
        assert_eq!(s.put_note(&note(&scope, "build/a", None)).unwrap(), 2);
        assert_eq!(s.put_note(&note(&scope, "build/a", Some("ada"))).unwrap(), 1, "a personal series");
        let newest = s.notes(&scope, None, false).unwrap();
        let series: Vec<(Option<&str>, u32)> =
            newest.iter().map(|n| (n.agent.as_deref(), n.version)).collect();
        assert_eq!(series, [(None, 2), (Some("ada"), 1)]);
        assert_eq!(s.notes(&scope, Some("build/a"), true).unwrap().len(), 3);
        let n = &newest[0];
        assert_eq!(s.mark_served("sess", n, 10).unwrap(), None);
        assert_eq!(s.mark_served("sess", n, 20).unwrap(), Some((2, 10)), "the first serving is kept");
        assert_eq!(s.mark_served("other", n, 20).unwrap(), None);
        s.set_withheld(n, Some("scores lower")).unwrap();
        assert_eq!(
            s.notes(&scope, Some("build/a"), false).unwrap()[0].withheld.as_deref(),
            Some("scores lower")
        );
    }

    #[test]
    fn a_merged_situation_becomes_an_alias_and_its_runs_move() {
        let mut s = Store::open_in_memory().unwrap();
        let scope: Scope = "proj".parse().unwrap();
        let sit = |key: &str| Situation {
            scope: scope.clone(),
            key: key.into(),
            category: "build".into(),
            line: key.into(),
            aliases: Vec::new(),
            created_at: 1,
        };
        s.put_situations(&[sit("build/a"), sit("build/b")]).unwrap();
        s.sort_runs(&scope, &[("r1".into(), "build/a".into()), ("r2".into(), "build/b".into())]).unwrap();
        s.merge_situation(&scope, "build/b", "build/a").unwrap();
        let left = s.situations(&scope).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].aliases, ["build/b"]);
        let sorted = s.sorted_runs(&scope).unwrap();
        assert!(sorted.iter().all(|(_, k)| k == "build/a"), "{sorted:?}");
        assert!(s.merge_situation(&scope, "build/b", "build/a").is_err(), "b is gone");
    }
}
