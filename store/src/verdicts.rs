//! Words on served notes: the servings `get_advice` recorded (`advice_served`, written
//! by `Advice::mark_served`) and, per session and note, whether it was applied and
//! whether it helped, from the judge or the person (`note_verdicts`).

use amber_core::advice::{NoteVerdict, Serving, VerdictBy};
use amber_core::{Millis, Scope};
use rusqlite::params;

use crate::Verdicts;
use crate::{Error, Result, Store};

const VERDICT_COLUMNS: &str =
    "session_id, scope, situation, by, agent, version, voice, applied, helped, reason, model, at";

fn corrupt(path: &std::path::Path, detail: String) -> Error {
    Error::Corrupt { path: path.to_path_buf(), detail }
}

/// `scope = ?1 OR scope under it` (every scope when ?1 is NULL), with ?2 and ?3 the
/// bounds of [`crate::scopes::below`].
const WITHIN: &str = "(?1 IS NULL OR scope = ?1 OR (scope > ?2 AND scope < ?3))";

impl Verdicts for Store {
    /// The servings of notes in a scope and those under it (every scope when None) at
    /// or after `since`, oldest first.
    fn servings(&self, scope: Option<&Scope>, since: Millis) -> Result<Vec<Serving>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT session_id, scope, situation, agent, version, at FROM advice_served
                 WHERE {WITHIN} AND at >= ?4 ORDER BY at, session_id, situation"
            ))
            .map_err(self.sql())?;
        let (lo, hi) = scope.map(crate::scopes::below).unzip();
        let rows = stmt
            .query_map(params![scope.map(|s| s.as_str()), lo, hi, since], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, u32>(4)?,
                    r.get::<_, Millis>(5)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (session_id, scope, situation, agent, version, at) = row.map_err(self.sql())?;
            let scope = scope
                .parse()
                .map_err(|e| corrupt(&self.path, format!("a serving of {situation}: scope: {e}")))?;
            let agent = (!agent.is_empty()).then_some(agent);
            out.push(Serving { session_id, scope, situation, agent, version, at });
        }
        Ok(out)
    }

    /// Stores words on served notes: one per session, note and giver (a later word
    /// from the same giver replaces the earlier one).
    fn put_note_verdicts(&mut self, verdicts: &[NoteVerdict]) -> Result<()> {
        let path = self.path.clone();
        let err = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut stmt = tx
                .prepare_cached(&format!(
                    "INSERT OR REPLACE INTO note_verdicts ({VERDICT_COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                ))
                .map_err(err)?;
            for v in verdicts {
                stmt.execute(params![
                    v.session_id,
                    v.scope.as_str(),
                    v.situation,
                    v.by.as_str(),
                    v.agent.as_deref().unwrap_or(""),
                    v.version,
                    v.voice,
                    v.applied,
                    v.helped,
                    v.reason,
                    v.model,
                    v.at
                ])
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// The words on notes of a scope and those under it (every scope when None), oldest
    /// first.
    fn note_verdicts(&self, scope: Option<&Scope>) -> Result<Vec<NoteVerdict>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {VERDICT_COLUMNS} FROM note_verdicts WHERE {WITHIN} ORDER BY at, session_id, situation, by"
            ))
            .map_err(self.sql())?;
        let (lo, hi) = scope.map(crate::scopes::below).unzip();
        let rows = stmt
            .query_map(params![scope.map(|s| s.as_str()), lo, hi], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                    (
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, u32>(5)?,
                        r.get::<_, String>(6)?,
                    ),
                    (r.get::<_, Option<bool>>(7)?, r.get::<_, Option<bool>>(8)?),
                    (r.get::<_, String>(9)?, r.get::<_, Option<String>>(10)?, r.get::<_, Millis>(11)?),
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (
                (session_id, scope, situation),
                (by, agent, version, voice),
                (applied, helped),
                (reason, model, at),
            ) = row.map_err(self.sql())?;
            let bad =
                |what: String| corrupt(&self.path, format!("a word on {situation} in {session_id}: {what}"));
            let scope = scope.parse().map_err(|e| bad(format!("scope: {e}")))?;
            let by = VerdictBy::parse(&by).ok_or_else(|| bad(format!("given by {by:?}")))?;
            let agent = (!agent.is_empty()).then_some(agent);
            out.push(NoteVerdict {
                session_id,
                scope,
                situation,
                agent,
                version,
                voice,
                applied,
                helped,
                by,
                reason,
                model,
                at,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use amber_core::advice::Note;

    #[test]
    fn servings_and_words_are_kept_per_scope_and_a_later_word_from_the_same_giver_replaces() {
        let mut s = Store::open_in_memory().unwrap();
        let scope: Scope = "proj".parse().unwrap();
        let other: Scope = "projx".parse().unwrap();
        let note = |scope: &Scope| Note {
            scope: scope.clone(),
            situation: "build/a".into(),
            agent: None,
            version: 1,
            text: "## When\nx".into(),
            runs: Vec::new(),
            run_count: 1,
            wrong_count: 1,
            agents: 1,
            created_at: 1,
            withheld: None,
        };
        s.mark_served("s1", &note(&scope), 10).unwrap();
        s.mark_served("s2", &note(&"proj/sub".parse().unwrap()), 20).unwrap();
        s.mark_served("s3", &note(&other), 30).unwrap();
        let served: Vec<String> =
            s.servings(Some(&scope), 0).unwrap().into_iter().map(|v| v.session_id).collect();
        assert_eq!(served, ["s1", "s2"], "the scope and below, not a sibling sharing its prefix");
        assert_eq!(s.servings(None, 15).unwrap().len(), 2);
        let word = |by: VerdictBy, helped: Option<bool>, at: Millis| NoteVerdict {
            session_id: "s1".into(),
            scope: scope.clone(),
            situation: "build/a".into(),
            agent: None,
            version: 1,
            voice: "ada".into(),
            applied: Some(true),
            helped,
            by,
            reason: "r".into(),
            model: None,
            at,
        };
        s.put_note_verdicts(&[word(VerdictBy::Judge, Some(false), 40), word(VerdictBy::Person, None, 41)])
            .unwrap();
        s.put_note_verdicts(&[word(VerdictBy::Judge, Some(true), 50)]).unwrap();
        let words = s.note_verdicts(Some(&scope)).unwrap();
        assert_eq!(words.len(), 2, "{words:?}");
        assert_eq!((words[0].by, words[0].helped), (VerdictBy::Person, None));
        assert_eq!((words[1].by, words[1].helped, words[1].at), (VerdictBy::Judge, Some(true), 50));
        assert!(s.note_verdicts(Some(&other)).unwrap().is_empty());
    }
}
