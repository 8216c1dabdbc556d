//! Advice as served: `get_advice` (the model routes a task to one situation; its note
//! is served once per session), `advice_show` and `advice_list` (what was learned, no
//! model). Every method that needs a model answers `no_model`
//! when `[learn]` names none.

use std::sync::Arc;

use amber_core::Scope;
use amber_core::advice::Note;
use amber_ipc::protocol::{
    AdviceListParams, AdviceListResult, AdviceShowParams, AdviceShowResult, ErrorKind, ErrorObject,
    GetAdviceParams, GetAdviceResult, SituationListed,
};
use amber_tiers::advice::route::{MAX_LINES, route};
use amber_tiers::advice::{Learner, ModelError};
use serde_json::Value;

use crate::rpc::{agent_name, engine_error, invalid, read, to_value};
use crate::state::Shared;

/// The moments a `get_advice` may name.
const MOMENTS: [&str; 5] = ["start", "fork", "stuck", "done", "next"];

/// The configured learner, with the cache when `cache`; `no_model` when there is none.
pub(crate) fn learner(shared: &Shared, cache: bool) -> Result<Learner, ErrorObject> {
    let l = shared.learner.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::NoModel,
            "advice is learned by a model: none is configured ([learn] in the config)",
        )
    })?;
    Ok(l.with_cache(cache.then(|| shared.config.data_dir.join("model-cache"))))
}

/// A model failure on the wire.
pub(crate) fn model_failed(e: ModelError) -> ErrorObject {
    tracing::warn!(cause = %e, "a model call failed");
    ErrorObject::new(ErrorKind::ModelFailed, e.to_string())
}

/// Runs blocking work that may fail either way on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ErrorObject> + Send + 'static,
) -> Result<T, ErrorObject> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        tracing::error!(cause = %e, "an advice task failed");
        Err(ErrorObject::new(ErrorKind::Internal, "internal error (see the daemon log)"))
    })
}

/// The note of `situation` to serve `agent`: its personal one first, else the shared one.
fn note_for<'a>(notes: &'a [Note], situation: &str, agent: Option<&str>) -> Option<&'a Note> {
    let of = |a: Option<&str>| notes.iter().find(|n| n.situation == situation && n.agent.as_deref() == a);
    agent.and_then(|a| of(Some(a))).or_else(|| of(None))
}

pub(crate) async fn get(shared: &Arc<Shared>, p: GetAdviceParams) -> Result<Value, ErrorObject> {
    let learner = learner(shared, shared.config.learn.cache)?;
    let task = p.task.trim().to_string();
    if task.is_empty() || task.chars().count() > 2_000 {
        return Err(invalid("task must be 1 to 2,000 characters"));
    }
    if let Some(m) = &p.moment
        && !MOMENTS.contains(&m.as_str())
    {
        return Err(invalid(format!("moment must be one of {}, got {m:?}", MOMENTS.join(", "))));
    }
    let session = match &p.session_id {
        Some(id) => Some(
            crate::methods::records::find(shared, id).await?.ok_or_else(|| crate::live::not_found(id))?.0,
        ),
        None => None,
    };
    let scope = p.scope.or_else(|| session.as_ref().map(|s| s.scope.clone())).unwrap_or_default();
    let agent = match (&p.agent, &session) {
        (Some(a), _) => Some(agent_name(a)?),
        (None, Some(s)) => Some(s.agent.clone()),
        (None, None) => None,
    };
    let engine = shared.engine.clone();
    let (session_id, moment) = (p.session_id.clone(), p.moment.clone());
    let result = blocking(move || {
        let notes: Vec<Note> = engine
            .notes(&scope, None, false)
            .map_err(engine_error)?
            .into_iter()
            .filter(|n| n.withheld.is_none() && (n.agent.is_none() || n.agent == agent))
            .collect();
        let situations = engine.situations(&scope).map_err(engine_error)?;
        let mut lines: Vec<(String, String)> = situations
            .iter()
            .filter(|s| notes.iter().any(|n| n.situation == s.key))
            .map(|s| (s.key.clone(), s.line.clone()))
            .collect();
        let mut out = GetAdviceResult { scope: scope.clone(), moment, ..Default::default() };
        if lines.is_empty() {
            out.message = format!("no advice has been learned in {scope} yet");
            return Ok(out);
        }
        if lines.len() > MAX_LINES {
            let texts: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
            let keep = engine.shortlist(&task, &texts, MAX_LINES).map_err(engine_error)?;
            lines = keep.into_iter().map(|i| lines[i].clone()).collect();
        }
        out.considered = lines.len();
        let Some(key) = route(&learner, &task, &lines).map_err(model_failed)? else {
            out.message = "no situation with advice fits this task".into();
            return Ok(out);
        };
        let note = note_for(&notes, &key, agent.as_deref())
            .ok_or_else(|| ErrorObject::new(ErrorKind::Internal, "a routed situation has no note"))?;
        out.line = lines.iter().find(|(k, _)| *k == key).map(|(_, l)| l.clone());
        out.version = Some(note.version);
        out.runs = Some(note.run_count);
        out.personal = note.agent.clone();
        let earlier = match &session_id {
            Some(id) => engine.mark_served(id, note).map_err(engine_error)?,
            None => None,
        };
        match earlier {
            Some((version, _)) => {
                out.given_earlier = true;
                out.message = format!(
                    "advice for {key} (version {version}) was given earlier in this session; it is not repeated"
                );
            }
            None => {
                out.note = Some(note.text.clone());
                out.message = format!(
                    "advice for {key}, version {}, written from {} rewarded runs",
                    note.version, note.run_count
                );
            }
        }
        out.situation = Some(key);
        Ok(out)
    })
    .await?;
    to_value(&result)
}

fn not_found(scope: &Scope, situation: &str) -> ErrorObject {
    ErrorObject::new(ErrorKind::NotFound, format!("no situation {situation:?} in {scope}"))
}

pub(crate) async fn show(shared: &Arc<Shared>, p: AdviceShowParams) -> Result<Value, ErrorObject> {
    let scope = p.scope.clone();
    let situations = read(shared, move |e| e.situations(&scope)).await?;
    let wanted = p.situation.trim();
    let situation = situations
        .into_iter()
        .find(|s| s.key == wanted || s.aliases.iter().any(|a| a == wanted))
        .ok_or_else(|| not_found(&p.scope, wanted))?;
    let (scope, key) = (p.scope.clone(), situation.key.clone());
    let notes = read(shared, move |e| e.notes(&scope, Some(&key), true)).await?;
    to_value(&AdviceShowResult { situation, notes })
}

pub(crate) async fn list(shared: &Arc<Shared>, p: AdviceListParams) -> Result<Value, ErrorObject> {
    let scope = p.scope.clone();
    let (situations, sorted, notes) = read(shared, move |e| {
        Ok((e.situations(&scope)?, e.sorted_runs(&scope)?, e.notes(&scope, None, false)?))
    })
    .await?;
    let situations = situations
        .into_iter()
        .map(|situation| SituationListed {
            runs: sorted.iter().filter(|(_, k)| *k == situation.key).count(),
            notes: notes
                .iter()
                .filter(|n| n.situation == situation.key)
                .map(|n| Note { text: String::new(), runs: Vec::new(), ..n.clone() })
                .collect(),
            situation,
        })
        .collect();
    to_value(&AdviceListResult { scope: p.scope, situations })
}
