//! Runs: `run_record` (one run or a batch, every run checked before any is written,
//! task, trace and outcome redacted like captures), `run_reward` (by the recording agent or a person; a reward
//! moves the weights of the memories the run used), `runs` and `run_show`. Per-agent
//! daily limits answer `rate_limited`.

use std::sync::Arc;

use amber_core::origin::Trust;
use amber_core::{NewRun, RunReward, RunWrite, Scope, now_millis};
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, MAX_RUN_BATCH, MAX_RUN_BATCH_BYTES, RewardEntry, RunRecordParams,
    RunRecordResult, RunRecorded, RunRewardParams, RunRewardResult, RunShowParams, RunShowResult, RunsParams,
    RunsResult,
};

use crate::peer::Peer;
use crate::rpc::{agent_name, invalid, read_on};
use crate::state::Shared;
use crate::team::Side;

const DAY_MS: i64 = 86_400_000;

/// Refuses when `more` would take the agent past a daily limit.
async fn within_limit(
    shared: &Arc<Shared>,
    side: &Side,
    agent: &str,
    runs: u64,
    rewards: u64,
) -> Result<(), ErrorObject> {
    let a = agent.to_string();
    let (r, w) = read_on(shared, side, move |e| e.agent_activity(&a, now_millis() - DAY_MS)).await?;
    let cfg = shared.config.runs;
    if runs > 0 && r + runs > cfg.max_runs_per_day {
        return Err(ErrorObject::new(
            ErrorKind::RateLimited,
            format!(
                "{agent} recorded {r} runs in the last 24 hours; {runs} more would pass max_runs_per_day ({})",
                cfg.max_runs_per_day
            ),
        ));
    }
    if rewards > 0 && w + rewards > cfg.max_rewards_per_day {
        return Err(ErrorObject::new(
            ErrorKind::RateLimited,
            format!(
                "{agent} gave {w} rewards in the last 24 hours; {rewards} more would pass max_rewards_per_day ({})",
                cfg.max_rewards_per_day
            ),
        ));
    }
    Ok(())
}

pub(crate) async fn record(shared: &Arc<Shared>, p: RunRecordParams) -> Result<RunRecordResult, ErrorObject> {
    let agent = agent_name(&p.agent)?;
    let scope = p.scope.clone().unwrap_or_default();
    let (runs, batch) = match (p.runs, p.task) {
        (Some(_), Some(_)) => return Err(invalid("give one run (task, ...) or a batch (runs), not both")),
        (Some(runs), None) => (runs, true),
        (None, Some(task)) => (
            vec![NewRun {
                task,
                trace: p.trace.unwrap_or_default(),
                used: p.used,
                outcome: p.outcome,
                advice: p.advice,
                reward: None,
                session: None,
                reason: None,
                part: 0,
            }],
            false,
        ),
        (None, None) => return Err(invalid("run_record needs a task (one run) or runs (a batch)")),
    };
    if runs.is_empty() || runs.len() > MAX_RUN_BATCH {
        return Err(invalid(format!("a batch takes 1 to {MAX_RUN_BATCH} runs, got {}", runs.len())));
    }
    let bytes: usize = runs.iter().map(|r| r.task.len() + r.trace.len()).sum();
    if bytes > MAX_RUN_BATCH_BYTES {
        return Err(invalid(format!("the batch holds {bytes} bytes of text, over {MAX_RUN_BATCH_BYTES}")));
    }
    // Every run is checked before any is written.
    for (i, r) in runs.iter().enumerate() {
        r.validate().map_err(|e| invalid(if batch { format!("runs[{i}]: {e}") } else { e.to_string() }))?;
    }
    let inline: Vec<Option<(f64, Option<String>)>> =
        runs.iter().map(|r| r.reward.map(|w| (w, r.reason.clone()))).collect();
    let (ids, writes) = store(shared, &scope, &agent, runs).await?;
    let created: Vec<bool> = writes.iter().map(|w| *w == RunWrite::New).collect();
    // A batch's inline rewards, for the runs this call recorded (a run loaded again is not
    // rewarded again), through `run_reward`'s own checks and limit.
    let rewards: Vec<RewardEntry> = ids
        .iter()
        .zip(&created)
        .zip(inline)
        .filter_map(|((id, new), r)| r.filter(|_| *new).map(|reward| (id, reward)))
        .map(|(id, (reward, reason))| RewardEntry { run_id: id.clone(), reward, reason })
        .collect();
    let rewarded = rewards.len();
    if rewarded > 0 {
        let p = RunRewardParams {
            agent: agent.clone(),
            run_id: None,
            reward: None,
            reason: None,
            rewards: Some(rewards),
        };
        Box::pin(reward(shared, Peer::UNKNOWN, p)).await?;
    }
    let results = ids.into_iter().zip(created).map(|(id, created)| RunRecorded { id, created }).collect();
    Ok(RunRecordResult { scope, results, rewarded })
}

/// Stores checked runs of `agent` in `scope` (the team database keeps a team scope's),
/// within the agent's daily limit, redacted like captures: their ids, and what was done
/// with each (a session's unrewarded run is rewritten).
pub(crate) async fn store(
    shared: &Arc<Shared>,
    scope: &Scope,
    agent: &str,
    runs: Vec<NewRun>,
) -> Result<(Vec<String>, Vec<RunWrite>), ErrorObject> {
    let side = shared.side_for(scope)?;
    within_limit(shared, &side, agent, runs.len() as u64, 0).await?;
    let prepared: Vec<(String, NewRun)> = runs
        .into_iter()
        .map(|mut r| {
            // The id is of the run as given, so the same runs give the same ids anywhere.
            let id = r.id(scope, agent);
            r.trace = amber_tiers::redact::redact(&r.trace).0;
            r.task = amber_tiers::redact::redact(&r.task).0;
            r.outcome = r.outcome.map(|o| amber_tiers::redact::redact(&o).0);
            (id, r)
        })
        .collect();
    let ids: Vec<String> = prepared.iter().map(|(id, _)| id.clone()).collect();
    let (s, a) = (scope.clone(), agent.to_string());
    let writes = crate::rpc::write_with_on(shared, &side, move |e| e.record_runs(&s, &a, &prepared)).await?;
    Ok((ids, writes))
}

/// `run_reward`: by the agent that recorded the run, or by a person (the `amber` command
/// outside any agent: `amber runs reward`), who may reward any run, a Claude Code
/// session's for one.
pub(crate) async fn reward(
    shared: &Arc<Shared>,
    peer: Peer,
    p: RunRewardParams,
) -> Result<RunRewardResult, ErrorObject> {
    let agent = agent_name(&p.agent)?;
    let (entries, batch) = match (p.rewards, p.run_id) {
        (Some(_), Some(_)) => {
            return Err(invalid("give one reward (run_id, reward) or a batch (rewards), not both"));
        }
        (Some(r), None) => (r, true),
        (None, Some(run_id)) => {
            let reward = p.reward.ok_or_else(|| invalid("run_reward needs a reward in -1..1"))?;
            (vec![RewardEntry { run_id, reward, reason: p.reason }], false)
        }
        (None, None) => return Err(invalid("run_reward needs a run_id and reward, or rewards (a batch)")),
    };
    if entries.is_empty() || entries.len() > MAX_RUN_BATCH {
        return Err(invalid(format!("a batch takes 1 to {MAX_RUN_BATCH} rewards, got {}", entries.len())));
    }
    let at = |i: usize, msg: String| if batch { format!("rewards[{i}]: {msg}") } else { msg };
    // Every reward is checked before any is stored.
    let mut checked = Vec::with_capacity(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        if !(-1.0..=1.0).contains(&e.reward) {
            return Err(invalid(at(i, format!("reward must be in -1..1, got {}", e.reward))));
        }
        let (side, run) = find_run(shared, &e.run_id).await?.ok_or_else(|| {
            ErrorObject::new(ErrorKind::NotFound, at(i, format!("no run with id {}", e.run_id)))
        })?;
        if run.agent != agent && peer.writer_trust() != Trust::Person {
            return Err(ErrorObject::new(
                ErrorKind::NotPermitted,
                at(
                    i,
                    format!(
                        "run {} was recorded by {}: only it, or a person with `amber runs reward`, may reward it",
                        run.id, run.agent
                    ),
                ),
            ));
        }
        let reason =
            e.reason.map(|r| amber_tiers::redact::redact(&r.chars().take(2_000).collect::<String>()).0);
        checked.push((
            side,
            run,
            RunReward { reward: e.reward as f32, reason, agent: agent.clone(), at: now_millis() },
        ));
    }
    let n = checked.len();
    // Per side (local, team): the limit, then the rewards in one transaction.
    let mut moved = 0;
    while let Some((side, _, _)) = checked.first() {
        let side = side.clone();
        let (here, rest): (Vec<_>, Vec<_>) =
            checked.into_iter().partition(|(s, _, _)| Arc::ptr_eq(&s.engine, &side.engine));
        checked = rest;
        let here: Vec<_> = here.into_iter().map(|(_, run, r)| (run, r)).collect();
        within_limit(shared, &side, &agent, 0, here.len() as u64).await?;
        moved += crate::rpc::write_with_on(shared, &side, move |e| e.reward_runs(&here)).await?;
    }
    Ok(RunRewardResult { rewarded: n, weights_moved: moved })
}

/// A run and the side that keeps it: the local store first, then the team database.
async fn find_run(shared: &Arc<Shared>, id: &str) -> Result<Option<(Side, amber_core::Run)>, ErrorObject> {
    for side in shared.id_sides().0 {
        let key = id.to_string();
        if let Some(run) = read_on(shared, &side, move |e| e.run(&key)).await? {
            return Ok(Some((side, run)));
        }
    }
    Ok(None)
}

pub(crate) async fn list(shared: &Arc<Shared>, p: RunsParams) -> Result<RunsResult, ErrorObject> {
    let limit = p.limit.unwrap_or(50);
    if limit == 0 || limit > 1000 {
        return Err(invalid(format!("limit must be 1 to 1000, got {limit}")));
    }
    let scope: Option<Scope> = p.scope;
    // A team scope's runs are in the team database; no scope lists this machine's.
    let side = shared.side_of(scope.as_ref())?;
    let runs = read_on(shared, &side, move |e| e.runs(scope.as_ref(), p.agent.as_deref(), limit)).await?;
    Ok(RunsResult { runs })
}

pub(crate) async fn show(shared: &Arc<Shared>, p: RunShowParams) -> Result<RunShowResult, ErrorObject> {
    let id = p.id.trim().to_string();
    let (side, run) = find_run(shared, &id)
        .await?
        .ok_or_else(|| ErrorObject::new(ErrorKind::NotFound, format!("no run with id {id}")))?;
    let key = id.clone();
    let rewards = read_on(shared, &side, move |e| e.run_rewards(&key)).await?;
    Ok(RunShowResult { run, rewards })
}
