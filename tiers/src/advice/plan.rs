//! Which notes to write, from which runs. A situation gets a shared note once it has
//! `min_wrong` wrong runs (reward below 0); a note is written from up to [`MAX_RUNS`]
//! of its runs, the newest wrong ones and the newest right ones, at least
//! [`MIN_RIGHT`] right ones when there are. A note is rewritten only after
//! [`REWRITE_RUNS`] new rewarded runs or [`REWRITE_WRONG`] new wrong ones. In a team
//! scope (under `team/`) a shared note needs runs from `team_min_agents` distinct
//! agents. An agent with `personal_min_runs` rewarded runs of its own in a situation
//! (and `min_wrong` wrong ones among them) gets a personal note from those runs.

use std::collections::{BTreeMap, BTreeSet};

use amber_core::Run;
use amber_core::advice::Note;

/// The most runs a note is written from.
pub const MAX_RUNS: usize = 40;
/// The fewest right runs a note is written from, when the situation has them.
pub const MIN_RIGHT: usize = 10;
/// New rewarded runs since the last version that make a rewrite.
pub const REWRITE_RUNS: u32 = 5;
/// New wrong runs since the last version that make a rewrite.
pub const REWRITE_WRONG: u32 = 2;

/// A run with the reward that counts for learning (its recorder's, else the judge's).
#[derive(Debug, Clone, PartialEq)]
pub struct Rewarded {
    /// The run.
    pub run: Run,
    /// Its reward, -1..1.
    pub reward: f32,
}

/// The rules' numbers (from the `[learn]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Wrong runs before a situation gets a note.
    pub min_wrong: usize,
    /// Distinct agents a team note needs (at least 2).
    pub team_min_agents: usize,
    /// An agent's own rewarded runs before it gets a personal note.
    pub personal_min_runs: usize,
    /// The scope is a team scope.
    pub team: bool,
}

/// A note to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The situation.
    pub situation: String,
    /// The agent of a personal note; None for the shared one.
    pub agent: Option<String>,
    /// The runs to write it from, newest first.
    pub runs: Vec<Rewarded>,
    /// The series' rewarded runs now.
    pub run_count: u32,
    /// Of those, the wrong ones.
    pub wrong_count: u32,
    /// Distinct agents among `runs`.
    pub agents: u32,
}

/// A note not written, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skip {
    /// The situation.
    pub situation: String,
    /// The agent of a personal note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Why.
    pub reason: String,
}

/// Up to [`MAX_RUNS`] of `runs`: the newest wrong and the newest right, at least
/// [`MIN_RIGHT`] right when there are, the rest of the room to wrong ones, then to more
/// right ones. Neutral runs (reward 0) are not used. Newest first.
pub fn select(runs: &[Rewarded]) -> Vec<Rewarded> {
    let mut sorted: Vec<&Rewarded> = runs.iter().collect();
    sorted.sort_by(|a, b| b.run.created_at.cmp(&a.run.created_at).then_with(|| a.run.id.cmp(&b.run.id)));
    let wrong: Vec<&Rewarded> = sorted.iter().copied().filter(|r| r.reward < 0.0).collect();
    let right: Vec<&Rewarded> = sorted.iter().copied().filter(|r| r.reward > 0.0).collect();
    let right_first = right.len().min(MIN_RIGHT);
    let n_wrong = wrong.len().min(MAX_RUNS - right_first);
    let n_right = right.len().min(MAX_RUNS - n_wrong);
    let mut out: Vec<Rewarded> =
        wrong[..n_wrong].iter().chain(&right[..n_right]).map(|r| (*r).clone()).collect();
    out.sort_by(|a, b| b.run.created_at.cmp(&a.run.created_at).then_with(|| a.run.id.cmp(&b.run.id)));
    out
}

fn agents(runs: &[Rewarded]) -> u32 {
    runs.iter().map(|r| r.run.agent.as_str()).collect::<BTreeSet<_>>().len() as u32
}

/// The notes to write for a scope's sorted, rewarded runs (situation, run), given the
/// newest version of each series already written.
pub fn plan(runs: &[(String, Rewarded)], notes: &[Note], rules: Rules) -> (Vec<Job>, Vec<Skip>) {
    let mut by_situation: BTreeMap<&str, Vec<Rewarded>> = BTreeMap::new();
    for (s, r) in runs {
        by_situation.entry(s.as_str()).or_default().push(r.clone());
    }
    let (mut jobs, mut skips) = (Vec::new(), Vec::new());
    for (situation, all) in by_situation {
        let mut per_agent: BTreeMap<&str, Vec<Rewarded>> = BTreeMap::new();
        for r in &all {
            per_agent.entry(r.run.agent.as_str()).or_default().push(r.clone());
        }
        let mut series = vec![(None, all.clone())];
        for (agent, own) in per_agent {
            if own.len() >= rules.personal_min_runs {
                series.push((Some(agent.to_string()), own));
            }
        }
        for (agent, rs) in series {
            let skip =
                |reason: String| Skip { situation: situation.to_string(), agent: agent.clone(), reason };
            let wrong = rs.iter().filter(|r| r.reward < 0.0).count();
            if wrong < rules.min_wrong {
                skips.push(skip(format!("{wrong} wrong runs; a note needs {}", rules.min_wrong)));
                continue;
            }
            let chosen = select(&rs);
            let n_agents = agents(&chosen);
            let need = rules.team_min_agents.max(2) as u32;
            if agent.is_none() && rules.team && n_agents < need {
                skips.push(skip(format!(
                    "runs from {n_agents} agents; a team note needs runs from at least {need}"
                )));
                continue;
            }
            let (run_count, wrong_count) = (rs.len() as u32, wrong as u32);
            let last = notes.iter().find(|n| n.situation == situation && n.agent == agent);
            if let Some(n) = last
                && run_count < n.run_count + REWRITE_RUNS
                && wrong_count < n.wrong_count + REWRITE_WRONG
            {
                skips.push(skip(format!(
                    "version {} is current: {} new runs and {} new wrong ones since (a rewrite needs \
                     {REWRITE_RUNS} or {REWRITE_WRONG})",
                    n.version,
                    run_count.saturating_sub(n.run_count),
                    wrong_count.saturating_sub(n.wrong_count)
                )));
                continue;
            }
            jobs.push(Job {
                situation: situation.to_string(),
                agent,
                runs: chosen,
                run_count,
                wrong_count,
                agents: n_agents,
            });
        }
    }
    (jobs, skips)
}
