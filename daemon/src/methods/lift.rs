//! `lift`: whether serving helps, from rewarded sessions served memory against those of
//! the holdout arm (the arm is drawn in `session_start`; the test is
//! `amber_tiers::lift`).

use amber_ipc::protocol::LiftResult;
use std::collections::HashMap;
use std::sync::Arc;

use amber_ipc::protocol::ErrorObject;
use amber_tiers::session::Session;

use crate::rpc::{invalid, read};
use crate::state::Shared;

/// `lift`: rewarded sessions served memory against those of the holdout arm. A session's
/// reward is the one its client gave at its end, else the latest reward of a run it was
/// recorded as (a person's, `amber runs reward`) given after the run was last recorded
/// and after the session began, else, unless `judged` is false, the judge's verdict on
/// its run or on it, given after the session began: a reward of an earlier session's run
/// that this one happened to name never counts for it.
pub(crate) async fn lift(
    shared: &Arc<Shared>,
    p: amber_ipc::protocol::LiftParams,
) -> Result<LiftResult, ErrorObject> {
    let n = p.sessions.unwrap_or(10_000);
    if n == 0 || n > 100_000 {
        return Err(invalid(format!("sessions must be 1 to 100000, got {n}")));
    }
    let judged_too = p.judged.unwrap_or(shared.config.learn.judged);
    let (read_n, rewards) = read(shared, move |e| {
        let verdicts: HashMap<String, (i8, amber_core::Millis)> = match judged_too {
            true => e
                .judgements(None, super::learn::MAX_RUNS)?
                .into_iter()
                .filter_map(|j| Some((j.run_id, (j.verdict?, j.at))))
                .collect(),
            false => HashMap::new(),
        };
        let mut read_n = 0;
        let mut out = Vec::new();
        for row in e.recent_sessions(n)? {
            let Ok(s) = serde_json::from_str::<Session>(&row.record) else { continue };
            if p.scope.as_ref().is_some_and(|sc| !s.scope.is_within(sc))
                || p.since.is_some_and(|t| s.started_at < t)
            {
                continue;
            }
            read_n += 1;
            if s.ended_at.is_none() {
                continue;
            }
            let mut by_run = None;
            for id in s.run.runs.iter().rev() {
                let Some(run) = e.run(id)?.filter(|r| r.reward.is_some()) else { continue };
                let after = run.created_at.max(s.started_at);
                if let Some(w) = e.run_rewards(id)?.into_iter().rev().find(|w| w.at >= after) {
                    by_run = Some(w.reward);
                    break;
                }
            }
            let verdict = || {
                s.run
                    .runs
                    .iter()
                    .rev()
                    .chain(std::iter::once(&format!("session:{}", s.id)))
                    .find_map(|id| verdicts.get(id).filter(|(_, at)| *at >= s.started_at))
                    .map(|(v, _)| f32::from(*v))
            };
            let reward = match (s.reward, by_run) {
                (Some(r), _) => Some((r, Given::Client)),
                (None, Some(r)) => Some((r, Given::Run)),
                (None, None) => verdict().map(|r| (r, Given::Judge)),
            };
            if let Some((r, given)) = reward {
                out.push((s.withheld, f64::from(r), given));
            }
        }
        Ok((read_n, out))
    })
    .await?;
    let arm =
        |held: bool| rewards.iter().filter(|(w, _, _)| *w == held).map(|(_, r, _)| *r).collect::<Vec<_>>();
    let count = |g: Given| rewards.iter().filter(|(_, _, x)| *x == g).count();
    Ok(amber_ipc::protocol::LiftResult {
        sessions: read_n,
        rewarded: rewards.len(),
        by_run: count(Given::Run),
        judged: count(Given::Judge),
        lift: amber_tiers::lift::lift(&arm(false), &arm(true)),
    })
}

/// Who gave a session the reward `lift` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    /// Its client, at its end.
    Client,
    /// A reward of its run.
    Run,
    /// The judge.
    Judge,
}
