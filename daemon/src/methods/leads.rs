//! Error leads: when a recall's or an event's text carries an error, up to 3 earlier
//! memories and runs with an error like it. The text's error signature
//! (`amber_tiers::leads`) gives a normalised query, BM25 finds candidate memories for it
//! in the searched scopes, the scopes' newest runs join them, and the candidates are
//! ranked by the error signals fused with their BM25 rank. No model.

use std::sync::Arc;

use amber_core::{Query, Scope, SearchMode};
use amber_ipc::protocol::{ErrorObject, LeadHit};
use amber_tiers::leads::{query_text, rank, signature};

use crate::rpc::read;
use crate::state::Shared;

/// Leads returned at most.
pub(crate) const MAX_LEADS: usize = 3;
/// BM25 candidates read for the error's text.
const CANDIDATES: usize = 50;
/// Newest runs read from the scope.
const RUNS: usize = 200;
/// A lead's opening, in characters.
const OPENING: usize = 160;
/// Leads scoring under this are not shown: on the leads fixture (docs/EVAL.md, "Error
/// leads") errors never filed still drew leads scoring 0.11 to 0.22, while right top
/// leads scored 0.34 and up. Say nothing rather than something doubtful.
pub(crate) const MIN_LEAD_SCORE: f32 = 0.3;

/// The leads for `text` in these scopes (`scope` plus `also`; none: every scope),
/// leaving out memories `skip` says no to (a session's own captures).
pub(crate) async fn leads_for(
    shared: &Arc<Shared>,
    text: &str,
    scope: Option<Scope>,
    also: Vec<Scope>,
    skip: impl Fn(&amber_core::Memory) -> bool + Send + 'static,
) -> Result<Vec<LeadHit>, ErrorObject> {
    let Some(sig) = signature(text) else { return Ok(Vec::new()) };
    let q_text = query_text(&sig);
    if q_text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let own = text.trim().to_string();
    read(shared, move |e| {
        let mut q = Query { mode: SearchMode::Bm25, ..Query::new(q_text).top(CANDIDATES) };
        q.scope = scope.clone();
        q.also = also.clone();
        let hits = e.recall(&q)?;
        let mut cands: Vec<(String, String, Option<usize>)> = Vec::new();
        let mut openings = std::collections::HashMap::new();
        for (i, h) in hits.into_iter().enumerate() {
            // The text itself (filed earlier as it is) is not a lead to itself.
            if skip(&h.memory) || h.memory.content.trim() == own {
                continue;
            }
            openings
                .insert(h.memory.id.to_string(), amber_tiers::briefing::summary(&h.memory.content, OPENING));
            cands.push((h.memory.id.to_string(), h.memory.content, Some(i)));
        }
        let scopes: Vec<Option<Scope>> = match &scope {
            Some(s) => std::iter::once(Some(s.clone())).chain(also.iter().cloned().map(Some)).collect(),
            None => vec![None],
        };
        for s in scopes {
            for r in e.runs(s.as_ref(), None, RUNS)? {
                let key = format!("run:{}", r.id);
                openings.insert(key.clone(), amber_tiers::briefing::summary(&r.task, OPENING));
                cands.push((key, format!("{}\n{}", r.task, r.trace), None));
            }
        }
        Ok(rank(&sig, &cands, MAX_LEADS)
            .into_iter()
            .filter(|l| l.score >= MIN_LEAD_SCORE)
            .map(|l| {
                let opening = openings.remove(&l.key).unwrap_or_default();
                let (kind, id) = match l.key.strip_prefix("run:") {
                    Some(id) => ("run", id.to_string()),
                    None => ("memory", l.key.clone()),
                };
                LeadHit { kind: kind.into(), id, score: l.score, why: l.why, bm25_rank: l.bm25_rank, opening }
            })
            .collect())
    })
    .await
}
