//! Runs and their rewards on PostgreSQL (as `runs.rs` does on SQLite).

use amber_core::{Millis, NewRun, Run, RunReward, RunWrite, Scope};

use super::{PgStore, Q};
use crate::Runs;
use crate::{Error, Result};

const RUN_COLUMNS: &str =
    "r.id, r.scope, r.agent, r.task, r.trace, r.used, r.outcome, r.advice, r.created_at,
     (SELECT reward FROM run_rewards w WHERE w.run_id = r.id ORDER BY w.n DESC LIMIT 1)";

fn decode_run(r: &postgres::Row, path: &std::path::Path) -> Q<Run> {
    let id: String = r.try_get(0)?;
    let corrupt =
        |detail: String| Error::Corrupt { path: path.to_path_buf(), detail: format!("run {id}: {detail}") };
    let scope: String = r.try_get(1)?;
    let used: String = r.try_get(5)?;
    let advice: String = r.try_get(7)?;
    Ok(Run {
        scope: scope.parse().map_err(|e| corrupt(format!("{e}")))?,
        used: serde_json::from_str(&used).map_err(|e| corrupt(format!("used: {e}")))?,
        advice: serde_json::from_str(&advice).map_err(|e| corrupt(format!("advice: {e}")))?,
        agent: r.try_get(2)?,
        task: r.try_get(3)?,
        trace: r.try_get(4)?,
        outcome: r.try_get(6)?,
        created_at: r.try_get(8)?,
        reward: r.try_get::<_, Option<f64>>(9)?.map(|r| r as f32),
        id,
    })
}

impl Runs for PgStore {
    fn insert_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
        now: Millis,
    ) -> Result<Vec<RunWrite>> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let exists = tx.prepare("SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)")?;
            let insert = tx.prepare(
                "INSERT INTO runs (id, scope, agent, task, trace, used, outcome, advice, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
            )?;
            // A session's run, unless rewarded, is rewritten with what the session did since.
            let upsert = tx.prepare(
                "INSERT INTO runs (id, scope, agent, task, trace, used, outcome, advice, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (id) DO UPDATE SET task = excluded.task, trace = excluded.trace,
                   used = excluded.used, outcome = excluded.outcome, advice = excluded.advice,
                   created_at = excluded.created_at
                 WHERE NOT EXISTS (SELECT 1 FROM run_rewards w WHERE w.run_id = runs.id)",
            )?;
            let unjudge = tx.prepare("DELETE FROM run_judgements WHERE run_id = $1")?;
            let mut out = Vec::with_capacity(runs.len());
            for (id, r) in runs {
                let was: bool = tx.query_one(&exists, &[id])?.try_get(0)?;
                let n = tx.execute(
                    if r.session.is_some() { &upsert } else { &insert },
                    &[
                        id,
                        &scope.as_str(),
                        &agent,
                        &r.task,
                        &r.trace,
                        &serde_json::json!(r.used).to_string(),
                        &r.outcome,
                        &serde_json::json!(r.advice).to_string(),
                        &now,
                    ],
                )?;
                out.push(match (n == 1, was) {
                    (true, false) => RunWrite::New,
                    (true, true) => {
                        tx.execute(&unjudge, &[id])?;
                        RunWrite::Rewritten
                    }
                    (false, _) => RunWrite::Kept,
                });
            }
            tx.commit()?;
            Ok(out)
        })
    }

    fn run(&self, id: &str) -> Result<Option<Run>> {
        self.read(|c| {
            c.query_opt(&format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = $1"), &[&id])?
                .map(|r| decode_run(&r, self.path()))
                .transpose()
        })
    }

    fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        let scope = scope.map(|s| s.as_str());
        let below = scope.map(|s| format!("{s}/"));
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs r
                     WHERE ($1::TEXT IS NULL OR r.scope = $1 OR starts_with(r.scope, $4))
                       AND ($2::TEXT IS NULL OR r.agent = $2)
                     ORDER BY r.created_at DESC, r.id COLLATE \"C\" LIMIT $3"
                ),
                &[&scope, &agent, &(limit as i64), &below],
            )?;
            rows.iter().map(|r| decode_run(r, self.path())).collect()
        })
    }

    fn reward_runs(&mut self, rewards: &[(String, RunReward)]) -> Result<()> {
        self.write(|c| {
            let mut tx = c.transaction()?;
            let stmt = tx.prepare(
                "INSERT INTO run_rewards (run_id, reward, reason, agent, at) VALUES ($1, $2, $3, $4, $5)",
            )?;
            for (id, r) in rewards {
                tx.execute(&stmt, &[id, &f64::from(r.reward), &r.reason, &r.agent, &r.at])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        self.read(|c| {
            let rows = c.query(
                "SELECT reward, reason, agent, at FROM run_rewards WHERE run_id = $1 ORDER BY n",
                &[&id],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(RunReward {
                        reward: r.try_get::<_, f64>(0)? as f32,
                        reason: r.try_get(1)?,
                        agent: r.try_get(2)?,
                        at: r.try_get(3)?,
                    })
                })
                .collect()
        })
    }

    fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        self.read(|c| {
            let r = c.query_one(
                "SELECT (SELECT COUNT(*) FROM runs WHERE agent = $1 AND created_at >= $2),
                        (SELECT COUNT(*) FROM run_rewards WHERE agent = $1 AND at >= $2)",
                &[&agent, &since],
            )?;
            Ok((r.try_get::<_, i64>(0)? as u64, r.try_get::<_, i64>(1)? as u64))
        })
    }
}
