//! Advice as learned: `advice_show` and `advice_list` (what was learned, no model), and
//! what every advice method shares: the configured learner (`no_model` when `[learn]`
//! names none), a model failure on the wire, blocking work. Serving is
//! `get_advice.rs`.

use std::sync::Arc;

use amber_core::Scope;
use amber_core::advice::Note;
use amber_ipc::protocol::{
    AdviceListParams, AdviceListResult, AdviceShowParams, AdviceShowResult, ErrorKind, ErrorObject,
    SituationListed,
};
use amber_tiers::advice::{Learner, ModelError};
use serde_json::Value;

use crate::rpc::{read, to_value};
use crate::state::Shared;

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
