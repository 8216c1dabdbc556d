//! Advice as learned: `advice_show` and `advice_list` (what was learned, no model), each
//! note series with its tally (`note_words`). Serving is `get_advice.rs`; what every
//! advice method shares (the learner, a model failure, blocking work) is `model_work.rs`.

use std::sync::Arc;

use amber_core::Scope;
use amber_core::advice::{Note, Tally};
use amber_ipc::protocol::{
    AdviceListParams, AdviceListResult, AdviceShowParams, AdviceShowResult, ErrorKind, ErrorObject,
    SituationListed,
};

use crate::rpc::blocking;
use crate::rpc::read;
use crate::state::Shared;

/// The tallies of the notes of one scope (not those below it).
pub(crate) async fn of_scope(shared: &Arc<Shared>, scope: &Scope) -> Result<Vec<Tally>, ErrorObject> {
    let (engine, wanted, bar) = (shared.engine.clone(), scope.clone(), shared.config.learn.evidence_bar);
    let all = blocking(move || super::note_words::tallies(&engine, Some(&wanted), bar)).await?;
    Ok(all.into_iter().filter(|t| &t.scope == scope).collect())
}

fn not_found(scope: &Scope, situation: &str) -> ErrorObject {
    ErrorObject::new(ErrorKind::NotFound, format!("no situation {situation:?} in {scope}"))
}

pub(crate) async fn show(shared: &Arc<Shared>, p: AdviceShowParams) -> Result<AdviceShowResult, ErrorObject> {
    let scope = p.scope.clone();
    let situations = read(shared, move |e| e.situations(&scope)).await?;
    let wanted = p.situation.trim();
    let situation = situations
        .into_iter()
        .find(|s| s.key == wanted || s.aliases.iter().any(|a| a == wanted))
        .ok_or_else(|| not_found(&p.scope, wanted))?;
    let (scope, key) = (p.scope.clone(), situation.key.clone());
    let notes = read(shared, move |e| e.notes(&scope, Some(&key), true)).await?;
    let tallies =
        of_scope(shared, &p.scope).await?.into_iter().filter(|t| t.situation == situation.key).collect();
    Ok(AdviceShowResult { situation, notes, tallies })
}

pub(crate) async fn list(shared: &Arc<Shared>, p: AdviceListParams) -> Result<AdviceListResult, ErrorObject> {
    let scope = p.scope.clone();
    let (situations, sorted, notes) = read(shared, move |e| {
        Ok((e.situations(&scope)?, e.sorted_runs(&scope)?, e.notes(&scope, None, false)?))
    })
    .await?;
    let tallies = of_scope(shared, &p.scope).await?;
    let situations = situations
        .into_iter()
        .map(|situation| SituationListed {
            tallies: tallies.iter().filter(|t| t.situation == situation.key).cloned().collect(),
            runs: sorted.iter().filter(|(_, k)| *k == situation.key).count(),
            notes: notes
                .iter()
                .filter(|n| n.situation == situation.key)
                .map(|n| Note { text: String::new(), runs: Vec::new(), ..n.clone() })
                .collect(),
            situation,
        })
        .collect();
    Ok(AdviceListResult { scope: p.scope, situations })
}
