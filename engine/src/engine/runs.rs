//! Runs and rewards through the engine. A reward flows into the weights of the memories
//! the run says it used, with a session manifest's arithmetic: a positive reward is a
//! used-with-success line (+0.15), a negative one used-with-failure (−0.10), zero
//! neutral; logged as `run` words under the session key `run:<id>`, so a later reward
//! of the same run replaces the earlier one's effect.

use amber_core::{Millis, NewRun, Outcome, Report, ReportKind, Run, RunReward, RunWrite, Scope, now_millis};

use super::{Engine, EngineWriter};
use crate::Result;

impl Engine {
    /// A run by id, with its latest reward.
    pub fn run(&self, id: &str) -> Result<Option<Run>> {
        self.read(|s| s.run(id))
    }

    /// The newest runs.
    pub fn runs(&self, scope: Option<&Scope>, agent: Option<&str>, limit: usize) -> Result<Vec<Run>> {
        self.read(|s| s.runs(scope, agent, limit))
    }

    /// A run's rewards, oldest first.
    pub fn run_rewards(&self, id: &str) -> Result<Vec<RunReward>> {
        self.read(|s| s.run_rewards(id))
    }

    /// Runs and rewards an agent recorded since a time.
    pub fn agent_activity(&self, agent: &str, since: Millis) -> Result<(u64, u64)> {
        self.read(|s| s.agent_activity(agent, since))
    }
}

impl EngineWriter<'_> {
    /// Records runs (ids given, traces already redacted) in one transaction; per run,
    /// what was done (a session's unrewarded run is rewritten: `Runs::insert_runs`).
    pub fn record_runs(
        &mut self,
        scope: &Scope,
        agent: &str,
        runs: &[(String, NewRun)],
    ) -> Result<Vec<RunWrite>> {
        Ok(self.store().insert_runs(scope, agent, runs, now_millis())?)
    }

    /// Stores rewards (each for a run already checked to exist and to be the rewarding
    /// agent's) in one transaction, then moves the weights of the memories each run used.
    /// Returns how many memory weights moved.
    pub fn reward_runs(&mut self, rewards: &[(Run, RunReward)]) -> Result<usize> {
        let rows: Vec<(String, RunReward)> = rewards.iter().map(|(r, w)| (r.id.clone(), w.clone())).collect();
        self.store().reward_runs(&rows)?;
        let mut moved = 0;
        for (run, w) in rewards {
            let result = if w.reward > 0.0 {
                Outcome::Success
            } else if w.reward < 0.0 {
                Outcome::Failure
            } else {
                Outcome::Neutral
            };
            for id in &run.used {
                let report = Report {
                    kind: ReportKind::Run,
                    result: Some(result),
                    session_id: Some(format!("run:{}", run.id)),
                    agent: Some(w.agent.clone()),
                    note: w.reason.clone(),
                    at: w.at,
                    // A run says which memories it used; nothing served them: its
                    // failures move the weight but never archive on their own.
                    basis: Some(amber_core::Basis::Unserved),
                };
                if self.report(id, report)?.is_some() {
                    moved += 1;
                }
            }
        }
        Ok(moved)
    }
}
