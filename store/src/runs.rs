//! Runs and their rewards.

use amber_core::{Millis, NewRun, Run, RunReward, RunWrite, Scope};
use rusqlite::{OptionalExtension, params};

use crate::Runs;
use crate::{Error, Result, Store};

const RUN_COLUMNS: &str =
    "r.id, r.scope, r.agent, r.task, r.trace, r.used, r.outcome, r.advice, r.created_at,
     (SELECT reward FROM run_rewards w WHERE w.run_id = r.id ORDER BY w.n DESC LIMIT 1)";

type RawRun = (String, String, String, String, String, String, Option<String>, String, i64, Option<f64>);

fn raw_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRun> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
    ))
}

fn decode_run(raw: RawRun, path: &std::path::Path) -> Result<Run> {
    let (id, scope, agent, task, trace, used, outcome, advice, created_at, reward) = raw;
    let corrupt =
        |detail: String| Error::Corrupt { path: path.to_path_buf(), detail: format!("run {id}: {detail}") };
    Ok(Run {
        scope: scope.parse().map_err(|e| corrupt(format!("{e}")))?,
        used: serde_json::from_str(&used).map_err(|e| corrupt(format!("used: {e}")))?,
        advice: serde_json::from_str(&advice).map_err(|e| corrupt(format!("advice: {e}")))?,
        id,
        agent,
        task,
        trace,
        outcome,
        created_at,
        reward: reward.map(|r| r as f32),
    })
}

impl Runs for Store {
    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<RunWrite>> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut out = Vec::with_capacity(runs.len());
        {
            let mut exists =
                tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)").map_err(sql)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO runs (id, scope, agent, task, trace, used, outcome, advice, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(sql)?;
            // A session's run, unless rewarded, is rewritten with what the session did since.
            let mut upsert = tx
                .prepare_cached(
                    "INSERT INTO runs (id, scope, agent, task, trace, used, outcome, advice, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                     ON CONFLICT(id) DO UPDATE SET task = excluded.task, trace = excluded.trace,
                       used = excluded.used, outcome = excluded.outcome, advice = excluded.advice,
                       created_at = excluded.created_at
                     WHERE NOT EXISTS (SELECT 1 FROM run_rewards w WHERE w.run_id = runs.id)",
                )
                .map_err(sql)?;
            let mut unjudge =
                tx.prepare_cached("DELETE FROM run_judgements WHERE run_id = ?1").map_err(sql)?;
            for (id, r) in runs {
                let was: bool = exists.query_row([id], |row| row.get(0)).map_err(sql)?;
                let stmt = if r.session.is_some() { &mut upsert } else { &mut insert };
                let n = stmt
                    .execute(params![
                        id,
                        scope.as_str(),
                        agent,
                        r.task,
                        r.trace,
                        serde_json::json!(r.used).to_string(),
                        r.outcome,
                        serde_json::json!(r.advice).to_string(),
                        now
                    ])
                    .map_err(sql)?;
                out.push(match (n == 1, was) {
                    (true, false) => RunWrite::New,
                    (true, true) => {
                        unjudge.execute([id]).map_err(sql)?;
                        RunWrite::Rewritten
                    }
                    (false, _) => RunWrite::Kept,
                });
            }
        }
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// A run by id.
    fn run(&self, id: &str) -> Result<Option<Run>> {
        let raw = self
            .conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"))
            .and_then(|mut s| s.query_row([id], raw_run).optional())
            .map_err(self.sql())?;
        raw.map(|r| decode_run(r, &self.path)).transpose()
    }

    /// The newest runs, within a scope (and those under it) and of an agent when given.
    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs r
                 WHERE (?1 IS NULL OR r.scope = ?1 OR (r.scope > ?4 AND r.scope < ?5))
                   AND (?2 IS NULL OR r.agent = ?2)
                 ORDER BY r.created_at DESC, r.id LIMIT ?3"
            ))
            .map_err(self.sql())?;
        let (lo, hi) = scope.map(crate::scopes::below).unzip();
        let rows = stmt
            .query_map(params![scope.map(|s| s.as_str()), agent, limit as i64, lo, hi], raw_run)
            .map_err(self.sql())?;
        rows.map(|r| decode_run(r.map_err(self.sql())?, &self.path)).collect()
    }

    /// Rewards runs in one transaction: each (run id, reward). Returns the runs as they
    /// stand after.
    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO run_rewards (run_id, reward, reason, agent, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql)?;
            for (id, r) in rewards {
                stmt.execute(params![id, f64::from(r.reward), r.reason, r.agent, r.at]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// Every reward of a run, oldest first.
    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT reward, reason, agent, at FROM run_rewards WHERE run_id = ?1 ORDER BY n")
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(RunReward {
                    reward: r.get::<_, f64>(0)? as f32,
                    reason: r.get(1)?,
                    agent: r.get(2)?,
                    at: r.get(3)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    /// How many runs and rewards an agent recorded since a time (the daily limits).
    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        let runs: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM runs WHERE agent = ?1 AND created_at >= ?2",
                params![agent, since],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        let rewards: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM run_rewards WHERE agent = ?1 AND at >= ?2",
                params![agent, since],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        Ok((runs as u64, rewards as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn runs_and_archived_memories_are_listed_by_scope_with_the_scopes_below_it() {
        let mut s = Store::open_in_memory().unwrap();
        let run = |task: &str| NewRun {
            task: task.into(),
            trace: String::new(),
            used: Vec::new(),
            outcome: None,
            advice: Vec::new(),
            reward: None,
            session: None,
            reason: None,
            part: 0,
        };
        for (scope, task) in [("proj", "a"), ("proj/sub", "b"), ("projx", "c")] {
            let scope: Scope = scope.parse().unwrap();
            s.insert_runs(&scope, "agent", &[(run(task).id(&scope, "agent"), run(task))], 1).unwrap();
        }
        let proj: Scope = "proj".parse().unwrap();
        let mut tasks: Vec<String> =
            s.runs(Some(&proj), None, 10).unwrap().into_iter().map(|r| r.task).collect();
        tasks.sort();
        assert_eq!(tasks, ["a", "b"], "proj and proj/sub, not projx");
        assert_eq!(s.runs(None, None, 10).unwrap().len(), 3);

        let report = amber_core::Report {
            kind: amber_core::ReportKind::Unused,
            result: None,
            session_id: None,
            agent: None,
            note: None,
            at: 1,
            basis: None,
        };
        for scope in ["proj/sub", "projx"] {
            let m = s.insert(&amber_core::NewMemory::new("x").in_scope(scope.parse().unwrap()), 1).unwrap().0;
            for _ in 0..50 {
                s.report(&m.id, &report, 2).unwrap();
            }
        }
        let archived: Vec<String> =
            s.archived(Some(&proj), 10).unwrap().into_iter().map(|m| m.scope.to_string()).collect();
        assert_eq!(archived, ["proj/sub"]);
        assert_eq!(s.archived(None, 10).unwrap().len(), 2);
    }

    #[test]
    fn a_sessions_run_is_rewritten_until_it_is_rewarded_and_other_runs_never() {
        let mut s = Store::open_in_memory().unwrap();
        let scope: Scope = "proj".parse().unwrap();
        let run = |trace: &str, session: Option<&str>| NewRun {
            task: "deploy".into(),
            trace: trace.into(),
            used: Vec::new(),
            outcome: None,
            advice: Vec::new(),
            reward: None,
            session: session.map(str::to_string),
            reason: None,
            part: 0,
        };
        let put = |s: &mut Store, r: NewRun, now: Millis| {
            let id = r.id(&scope, "cc");
            (id.clone(), s.insert_runs(&scope, "cc", &[(id, r)], now).unwrap()[0])
        };
        let (id, w) = put(&mut s, run("Bash: make", Some("k-a")), 1);
        assert_eq!(w, RunWrite::New);
        assert_eq!(
            put(&mut s, run("Bash: make\nBash: test", Some("k-a")), 5),
            (id.clone(), RunWrite::Rewritten)
        );
        let (content, w) = put(&mut s, run("Bash: make", None), 6);
        assert_eq!(w, RunWrite::New);
        assert_eq!(put(&mut s, run("Bash: make", None), 7), (content.clone(), RunWrite::Kept));
        let got = s.run(&id).unwrap().unwrap();
        assert_eq!(
            (got.trace.as_str(), got.created_at),
            ("Bash: make\nBash: test", 5),
            "the time of its last recording"
        );
        assert_eq!(s.run(&content).unwrap().unwrap().created_at, 6);

        // A judgement of the run is dropped when it is rewritten (it is judged again).
        let judgement = |run_id: &str| amber_core::advice::Judgement {
            run_id: run_id.to_string(),
            verdict: Some(1),
            reason: "fine".into(),
            model: "m".into(),
            at: 8,
        };
        s.put_judgements(&[judgement(&id)]).unwrap();
        assert_eq!(
            put(&mut s, run("Bash: make\nBash: test\nBash: ship", Some("k-a")), 9).1,
            RunWrite::Rewritten
        );
        assert!(s.judgements(None, 10).unwrap().iter().all(|j| j.run_id != id));

        // Rewarded: it stays as the person rewarded it.
        let reward = RunReward { reward: 1.0, reason: None, agent: "person".into(), at: 10 };
        s.reward_runs(&[(id.clone(), reward)]).unwrap();
        assert_eq!(
            put(&mut s, run("Bash: make\nBash: test\nBash: ship\nBash: more", Some("k-a")), 11).1,
            RunWrite::Kept
        );
        let got = s.run(&id).unwrap().unwrap();
        assert_eq!((got.trace.lines().count(), got.created_at, got.reward), (3, 9, Some(1.0)));
    }
}
