//! The judge of runs and sessions: `judge_runs` (the model judges unrewarded runs and
//! ended sessions older than `judge_delay_s`, each once), `judgements` (each one, with
//! the recorder's own reward when it came; no model), and the timer that does it,
//! and learns a scope again once `relearn_after` more of its runs are rewarded (not with
//! `judge_only`), every
//! `[learn] interval_s` while a model is configured.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use amber_core::advice::Judgement;
use amber_core::{Run, Scope, now_millis};
use amber_engine::Engine;
use amber_ipc::protocol::{
    ErrorObject, JudgeRunsParams, JudgeRunsResult, JudgementShown, JudgementsParams, JudgementsResult,
};
use amber_tiers::advice::judge::judge_run;
use amber_tiers::advice::{Learner, ModelError};
use amber_tiers::session::Session;

use super::learn::{MAX_RUNS, Pass};
use super::model_work::{learner, model_failed};
use super::note_words::DayCap;
use crate::rpc::blocking;
use crate::rpc::{engine_error, invalid, read};
use crate::state::Shared;

pub(crate) async fn judge(shared: &Arc<Shared>, p: JudgeRunsParams) -> Result<JudgeRunsResult, ErrorObject> {
    let learner = learner(shared, shared.config.learn.cache)?;
    let limit = p.limit.unwrap_or(50);
    if limit == 0 || limit > 1000 {
        return Err(invalid(format!("limit must be 1 to 1000, got {limit}")));
    }
    let engine = shared.engine.clone();
    let delay_ms = shared.config.learn.judge_delay_s as i64 * 1000;
    let per_day = shared.config.learn.judged_per_day;
    let writer = crate::rpc::BlockingWriter::new(shared);
    let result =
        blocking(move || judge_pass(&engine, &learner, &writer, Some(&p.scope), delay_ms, per_day, limit))
            .await?;
    Ok(result)
}

/// The runs and ended sessions due for judging: nobody rewarded them, they are at least
/// `delay_ms` old, and they were not judged before.
pub(crate) fn due(
    engine: &Engine,
    scope: Option<&Scope>,
    delay_ms: i64,
    per_day: u32,
    limit: usize,
) -> Result<Vec<Run>, ErrorObject> {
    let judged: HashSet<String> =
        engine.judgements(scope, MAX_RUNS).map_err(engine_error)?.into_iter().map(|j| j.run_id).collect();
    let cutoff = now_millis() - delay_ms;
    let mut out: Vec<Run> = engine
        .runs(scope, None, MAX_RUNS)
        .map_err(engine_error)?
        .into_iter()
        .filter(|r| r.reward.is_none() && r.created_at <= cutoff && !judged.contains(&r.id))
        .take(limit)
        .collect();
    let mut cap = DayCap::new(per_day);
    for s in super::note_words::ended(engine, scope, cutoff)? {
        if out.len() >= limit {
            break;
        }
        let at = s.ended_at.unwrap_or(s.started_at);
        if judged.contains(&format!("session:{}", s.id)) {
            cap.count(&s.agent, at);
            continue;
        }
        // Both arms of the holdout are judged alike (lift compares them); a session
        // recorded as a run is judged through its run.
        let unrewarded = s.reward.is_none() && s.outcome.is_none() && s.run.runs.is_empty();
        if unrewarded && cap.take(&s.agent, at) {
            out.push(super::note_words::session_as_run(engine, &s)?);
        }
    }
    Ok(out)
}

/// Judges up to `limit` due runs and sessions of `scope` (and below; every scope when
/// None), then the notes served in up to `limit` ended sessions (`note_words`). A malformed reply is noted and tried again next time; a failed call stops
/// the pass (`model_failed`) with what was judged before it kept.
pub(crate) fn judge_pass(
    engine: &Engine,
    learner: &Learner,
    writer: &crate::rpc::BlockingWriter,
    scope: Option<&Scope>,
    delay_ms: i64,
    per_day: u32,
    limit: usize,
) -> Result<JudgeRunsResult, ErrorObject> {
    let mut out = JudgeRunsResult::default();
    for run in due(engine, scope, delay_ms, per_day, limit)? {
        match judge_run(learner, &run) {
            Ok((verdict, reason)) => {
                let j =
                    Judgement { run_id: run.id, verdict, reason, model: learner.name(), at: now_millis() };
                let one = j.clone();
                writer.write(move |e| e.put_judgements(std::slice::from_ref(&one)))?;
                out.judged.push(j);
            }
            Err(ModelError::Malformed(reason)) => out.failed.push((run.id, reason)),
            Err(e) => return Err(model_failed(e)),
        }
    }
    (out.notes, out.notes_failed) =
        super::note_words::judge_pass(engine, learner, writer, scope, delay_ms, per_day, limit)?;
    Ok(out)
}

/// The recorder's own reward of a judged run or session, when one came.
pub(crate) fn own_reward(engine: &Engine, id: &str) -> amber_engine::Result<Option<f32>> {
    match id.strip_prefix("session:") {
        Some(sid) => Ok(engine
            .get_session(sid)?
            .and_then(|row| serde_json::from_str::<Session>(&row.record).ok())
            .and_then(|s| s.reward)),
        None => Ok(engine.run(id)?.and_then(|r| r.reward)),
    }
}

/// Every `[learn] interval_s` while a model is configured: judges what is due, then
/// learns each scope again whose rewarded runs grew by `[learn] relearn_after` since the
/// timer last learned it (counted from 0 at start). The daemon's cache setting applies.
pub(crate) async fn timer(shared: Arc<Shared>) {
    let cfg = shared.config.learn.clone();
    let Ok(learner) = learner(&shared, cfg.cache) else { return };
    if cfg.interval_s == 0 {
        return;
    }
    let mut learned: HashMap<Scope, usize> = HashMap::new();
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(cfg.interval_s)) => {}
            _ = crate::state::shutdown_asked(&mut shutdown) => return,
        }
        let (engine, l, c) = (shared.engine.clone(), learner.clone(), cfg.clone());
        let writer = crate::rpc::BlockingWriter::new(&shared);
        let seen = learned.clone();
        let pass = blocking(move || {
            let judged =
                judge_pass(&engine, &l, &writer, None, c.judge_delay_s as i64 * 1000, c.judged_per_day, 100)?;
            let mut counts: HashMap<Scope, usize> = HashMap::new();
            for r in engine.runs(None, None, MAX_RUNS).map_err(engine_error)? {
                *counts.entry(r.scope).or_default() += usize::from(r.reward.is_some());
            }
            let mut relearned = Vec::new();
            for (scope, n) in counts {
                // The judge alone learns nothing.
                if !c.judge_only && n >= seen.get(&scope).copied().unwrap_or(0) + c.relearn_after as usize {
                    Pass { engine: &engine, learner: &l, writer: &writer, cfg: &c, scope: &scope }.run()?;
                    relearned.push((scope, n));
                }
            }
            Ok((judged.judged.len(), relearned))
        })
        .await;
        match pass {
            Ok((judged, relearned)) => {
                tracing::info!(judged, learned = relearned.len(), "advice timer pass");
                learned.extend(relearned);
            }
            Err(e) => tracing::warn!(error = %e.message, "advice timer pass failed"),
        }
    }
}

pub(crate) async fn judgements(
    shared: &Arc<Shared>,
    p: JudgementsParams,
) -> Result<JudgementsResult, ErrorObject> {
    let limit = p.limit.unwrap_or(50);
    if limit == 0 || limit > 1000 {
        return Err(invalid(format!("limit must be 1 to 1000, got {limit}")));
    }
    let judgements = read(shared, move |e| {
        let js = e.judgements(Some(&p.scope), limit)?;
        js.into_iter()
            .map(|j| Ok(JudgementShown { reward: own_reward(e, &j.run_id)?, judgement: j }))
            .collect::<amber_engine::Result<Vec<_>>>()
    })
    .await?;
    Ok(JudgementsResult { judgements })
}
