//! Learning: `advice_learn` (sort a scope's runs into situations, merge the same task
//! under two names, write or edit a note for each situation the rules allow, withhold
//! notes whose served runs score lower). It needs a model (`no_model` otherwise); a
//! failed call answers `model_failed`, with what was stored before it kept.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use amber_core::advice::{Note, Situation};
use amber_core::{Run, Scope, now_millis};
use amber_engine::Engine;
use amber_ipc::protocol::{AdviceLearnParams, AdviceLearnResult, ErrorObject, NoteWritten};
use amber_tiers::advice::curate::{check_edit, withhold};
use amber_tiers::advice::merge::find_merges;
use amber_tiers::advice::plan::{Rewarded, Rules, Skip, plan};
use amber_tiers::advice::sort::{BATCH, sort_tasks};
use amber_tiers::advice::write::write_note;
use amber_tiers::advice::{LearnConfig, Learner, ModelError};

use super::model_work::{learner, model_failed};
use crate::rpc::blocking;
use crate::rpc::engine_error;
use crate::state::Shared;

/// The most runs of a scope read for one pass.
pub(crate) const MAX_RUNS: usize = 100_000;

pub(crate) async fn learn(
    shared: &Arc<Shared>,
    p: AdviceLearnParams,
) -> Result<AdviceLearnResult, ErrorObject> {
    let learner = learner(shared, p.cache.unwrap_or(shared.config.learn.cache))?;
    let (engine, cfg) = (shared.engine.clone(), shared.config.learn.clone());
    let writer = crate::rpc::BlockingWriter::new(shared);
    let result = blocking(move || {
        Pass { engine: &engine, learner: &learner, writer: &writer, cfg: &cfg, scope: &p.scope }.run()
    })
    .await?;
    Ok(result)
}

/// A scope's runs, the reward that counts for each rewarded one, and how many of those
/// are the judge's.
type Counted = (Vec<Run>, HashMap<String, f32>, usize);

/// The reward that counts for learning: the recorder's own (or a person's), else the
/// judge's verdict unless `judged` is false. Returns the runs, the counted rewards, and
/// how many of those are the judge's.
fn rewards(engine: &Engine, scope: &Scope, judged_too: bool) -> Result<Counted, ErrorObject> {
    let runs: Vec<Run> = engine
        .runs(Some(scope), None, MAX_RUNS)
        .map_err(engine_error)?
        .into_iter()
        .filter(|r| r.scope == *scope)
        .collect();
    let judged: HashMap<String, i8> = match judged_too {
        true => engine
            .judgements(Some(scope), MAX_RUNS)
            .map_err(engine_error)?
            .into_iter()
            .filter_map(|j| Some((j.run_id, j.verdict?)))
            .collect(),
        false => HashMap::new(),
    };
    let counted: HashMap<String, f32> = runs
        .iter()
        .filter_map(|r| Some((r.id.clone(), r.reward.or_else(|| judged.get(&r.id).map(|v| f32::from(*v)))?)))
        .collect();
    let by_judge = runs.iter().filter(|r| r.reward.is_none() && counted.contains_key(&r.id)).count();
    Ok((runs, counted, by_judge))
}

pub(crate) struct Pass<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) learner: &'a Learner,
    /// Every write of the pass, through the writer.
    pub(crate) writer: &'a crate::rpc::BlockingWriter,
    pub(crate) cfg: &'a LearnConfig,
    pub(crate) scope: &'a Scope,
}

impl Pass<'_> {
    pub(crate) fn run(&self) -> Result<AdviceLearnResult, ErrorObject> {
        let mut out = AdviceLearnResult { scope: self.scope.clone(), ..Default::default() };
        let (runs, counted, judged) = rewards(self.engine, self.scope, self.cfg.judged)?;
        out.judged = judged;
        out.rewarded = counted.len() - judged;
        self.sort(&runs, &mut out)?;
        if out.new_situations > 0 {
            self.merge(&mut out)?;
        }
        let situations = self.engine.situations(self.scope).map_err(engine_error)?;
        let sorted: HashMap<String, String> =
            self.engine.sorted_runs(self.scope).map_err(engine_error)?.into_iter().collect();
        let rewarded: Vec<(String, Rewarded)> = runs
            .iter()
            .filter_map(|r| {
                let reward = *counted.get(&r.id)?;
                Some((sorted.get(&r.id)?.clone(), Rewarded { run: r.clone(), reward }))
            })
            .collect();
        self.write(&situations, &rewarded, &mut out)?;
        self.curate(&rewarded, &mut out)?;
        // Situations are linked to the skills compiled from documents, when there are any.
        if let Some(linked) = super::compile::relink(self.engine, self.learner, self.writer, self.scope)? {
            out.calls += 1;
            out.linked = linked;
        }
        Ok(out)
    }

    /// Step 1: the runs not yet sorted, by distinct task, [`BATCH`] tasks a call.
    fn sort(&self, runs: &[Run], out: &mut AdviceLearnResult) -> Result<(), ErrorObject> {
        let done: HashMap<String, String> =
            self.engine.sorted_runs(self.scope).map_err(engine_error)?.into_iter().collect();
        let mut by_task: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for r in runs.iter().filter(|r| !done.contains_key(&r.id)) {
            by_task.entry(r.task.as_str()).or_default().push(r.id.as_str());
        }
        let tasks: Vec<(&str, Vec<&str>)> = by_task.into_iter().collect();
        for batch in tasks.chunks(BATCH) {
            let known = self.engine.situations(self.scope).map_err(engine_error)?;
            let texts: Vec<&str> = batch.iter().map(|(t, _)| *t).collect();
            out.calls += 1;
            let sorted = sort_tasks(self.learner, &known, &texts).map_err(model_failed)?;
            let now = now_millis();
            let new: Vec<Situation> = sorted
                .new
                .iter()
                .map(|(key, category, line)| Situation {
                    scope: self.scope.clone(),
                    key: key.clone(),
                    category: category.clone(),
                    line: line.clone(),
                    aliases: Vec::new(),
                    created_at: now,
                })
                .collect();
            let made = new.len();
            self.writer.write(move |e| e.put_situations(&new))?;
            let placed: Vec<(String, String)> = sorted
                .placed
                .iter()
                .flat_map(|(i, key)| batch[*i].1.iter().map(move |id| (id.to_string(), key.clone())))
                .collect();
            let (scope, placed_n) = (self.scope.clone(), placed.len());
            self.writer.write(move |e| e.sort_runs(&scope, &placed))?;
            out.new_situations += made;
            out.sorted += placed_n;
            out.unsorted += batch.len() - sorted.placed.len();
        }
        Ok(())
    }

    /// Situations that are the same task under two names are merged, the old key kept
    /// as an alias (asked only when this pass made new situations).
    fn merge(&self, out: &mut AdviceLearnResult) -> Result<(), ErrorObject> {
        let situations = self.engine.situations(self.scope).map_err(engine_error)?;
        if situations.len() < 2 {
            return Ok(());
        }
        out.calls += 1;
        for (from, into) in find_merges(self.learner, &situations).map_err(model_failed)? {
            let (scope, f, i) = (self.scope.clone(), from.clone(), into.clone());
            self.writer.write(move |e| e.merge_situation(&scope, &f, &i))?;
            out.merged.push((from, into));
        }
        Ok(())
    }

    /// Step 2: a note for each series the rules allow; an existing note is edited.
    fn write(
        &self,
        situations: &[Situation],
        rewarded: &[(String, Rewarded)],
        out: &mut AdviceLearnResult,
    ) -> Result<(), ErrorObject> {
        let notes = self.engine.notes(self.scope, None, false).map_err(engine_error)?;
        let rules = Rules {
            min_wrong: self.cfg.min_wrong,
            team_min_agents: self.cfg.team_min_agents,
            personal_min_runs: self.cfg.personal_min_runs,
            team: self.scope.as_str() == "team" || self.scope.as_str().starts_with("team/"),
        };
        let (jobs, skipped) = plan(rewarded, &notes, rules);
        out.skipped = skipped;
        // The procedures (skills compiled from documents) each situation links.
        let links = super::compile::links(self.engine, self.scope).map_err(engine_error)?;
        let skills = super::compile::skills(self.engine, self.scope).map_err(engine_error)?;
        let procedures = |key: &str| -> Vec<(String, String)> {
            let names = links.get(key).map(Vec::as_slice).unwrap_or_default();
            skills
                .iter()
                .filter(|(_, k)| names.contains(&k.name))
                .map(|(_, k)| (k.name.clone(), k.text()))
                .collect()
        };
        for job in jobs {
            let Some(situation) = situations.iter().find(|s| s.key == job.situation) else { continue };
            let current = notes.iter().find(|n| n.situation == job.situation && n.agent == job.agent);
            let failed =
                |reason: String| Skip { situation: job.situation.clone(), agent: job.agent.clone(), reason };
            out.calls += 1;
            let linked = procedures(&job.situation);
            let text = match write_note(
                self.learner,
                situation,
                &job.runs,
                current.map(|n| n.text.as_str()),
                &linked,
            ) {
                Ok(t) => t,
                Err(ModelError::Malformed(reason)) => {
                    out.failed.push(failed(reason));
                    continue;
                }
                Err(e) => return Err(model_failed(e)),
            };
            if let Some(n) = current
                && let Err(reason) = check_edit(&n.text, &text)
            {
                out.failed.push(failed(format!("edit of version {} refused: {reason}", n.version)));
                continue;
            }
            let note = Note {
                scope: self.scope.clone(),
                situation: job.situation.clone(),
                agent: job.agent.clone(),
                version: 0,
                text,
                runs: job.runs.iter().map(|r| r.run.id.clone()).collect(),
                run_count: job.run_count,
                wrong_count: job.wrong_count,
                agents: job.agents,
                created_at: now_millis(),
                withheld: None,
            };
            let version = self.writer.write(move |e| e.put_note(&note))?;
            out.written.push(NoteWritten {
                situation: job.situation,
                agent: job.agent,
                version,
                runs: job.runs.len(),
                agents: job.agents,
            });
        }
        Ok(())
    }

    /// Withholds each note whose served runs (those that followed the situation's
    /// advice) score lower than the situation's other runs; gives back one that no
    /// longer does.
    fn curate(
        &self,
        rewarded: &[(String, Rewarded)],
        out: &mut AdviceLearnResult,
    ) -> Result<(), ErrorObject> {
        for note in self.engine.notes(self.scope, None, false).map_err(engine_error)? {
            let (mut served, mut others) = (Vec::new(), Vec::new());
            for (_, r) in rewarded.iter().filter(|(s, r)| {
                *s == note.situation && note.agent.as_ref().is_none_or(|a| *a == r.run.agent)
            }) {
                let side = if r.run.advice.contains(&note.situation) { &mut served } else { &mut others };
                side.push(f64::from(r.reward));
            }
            let verdict = withhold(&served, &others);
            if verdict != note.withheld {
                let (n, v) = (note.clone(), verdict.clone());
                self.writer.write(move |e| e.set_withheld(&n, v.as_deref()))?;
                out.withheld.push(Skip {
                    situation: note.situation.clone(),
                    agent: note.agent.clone(),
                    reason: verdict.unwrap_or_else(|| "served again: its runs no longer score lower".into()),
                });
            }
        }
        Ok(())
    }
}
