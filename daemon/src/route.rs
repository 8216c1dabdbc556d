//! Which side a call goes to, local or team: a write by its scope, a query split into a
//! local part and a team part whose hits are merged into one ranking, an id looked up
//! locally first and then in the team database.

use std::sync::Arc;

use amber_core::{Hit, NewMemory, Query, Scope};
use amber_ipc::protocol::ErrorObject;

use crate::state::Shared;
use crate::team::{Side, Team};

/// A query's local part and team part (None: that side is not searched). A query on
/// no scope searches both; each listed scope goes to the side(s) that hold it (a parent
/// of a team prefix, such as `team`, to both).
pub(crate) fn split_query(team: &Team, q: &Query) -> (Option<Query>, Option<Query>) {
    let scopes: Vec<Scope> = q.scope.iter().chain(q.also.iter()).cloned().collect();
    if scopes.is_empty() {
        return (Some(q.clone()), Some(q.clone()));
    }
    let part = |v: Vec<Scope>| {
        let (first, rest) = v.split_first()?;
        let mut p = q.clone();
        p.scope = Some(first.clone());
        p.also = rest.to_vec();
        Some(p)
    };
    let local = part(scopes.iter().filter(|s| !team.owns(s)).cloned().collect());
    let shared = part(scopes.iter().filter(|s| team.overlaps(s)).cloned().collect());
    (local, shared)
}

/// One ranking from the two sides' hits: by fused score (reciprocal-rank fusion gives
/// the same score to the same ranks on either side, and both apply the same standing
/// prior), best first, at most `k`.
pub(crate) fn merge_hits(mut local: Vec<Hit>, team: Vec<Hit>, k: usize) -> Vec<Hit> {
    local.extend(team);
    local.sort_by(|a, b| b.evidence.fused.total_cmp(&a.evidence.fused));
    local.truncate(k);
    local
}

/// Memories for the team database carry the machine that filed them
/// (`metadata.machine`), next to their author.
pub(crate) fn mark_machine(m: &mut NewMemory) {
    let machine = || crate::methods::origin::machine().unwrap_or_else(|| "unknown".into());
    if let Some(obj) = m.metadata.as_object_mut() {
        obj.entry("machine").or_insert_with(|| serde_json::Value::String(machine()));
    } else if m.metadata.is_null() {
        m.metadata = serde_json::json!({ "machine": machine() });
    }
}

/// Memories split by side, in their original order within each: (indices, memories).
pub(crate) type Parts = Vec<(Side, Vec<usize>, Vec<NewMemory>)>;

/// Splits a batch by the side of each memory's scope; team memories get their machine.
pub(crate) fn split_batch(shared: &Arc<Shared>, memories: Vec<NewMemory>) -> Result<Parts, ErrorObject> {
    let team = shared.team.as_deref();
    let (mut local, mut shared_part) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    for (i, mut m) in memories.into_iter().enumerate() {
        if team.is_some_and(|t| t.owns(&m.scope)) {
            mark_machine(&mut m);
            shared_part.0.push(i);
            shared_part.1.push(m);
        } else {
            local.0.push(i);
            local.1.push(m);
        }
    }
    let mut parts = Vec::new();
    if !local.1.is_empty() {
        parts.push((shared.local(), local.0, local.1));
    }
    if let Some(t) = team
        && !shared_part.1.is_empty()
    {
        parts.push((t.side()?, shared_part.0, shared_part.1));
    }
    Ok(parts)
}
