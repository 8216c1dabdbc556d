//! The memory methods: `remember`, `remember_batch`, `recall`, `forget`, `purge` and
//! `links`. (`get` takes id prefixes and lives with the scopes, `methods/scope.rs`.)

use std::sync::Arc;

use amber_core::NewMemory;
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, IdParams, LinksResult, MAX_BATCH, MemoryResult, PurgeResult, RecallParams,
    RecallResult, RememberBatchParams,
};
use serde_json::{Value, json};

use crate::live::not_found;
use crate::rpc::{invalid, read, remembered, to_value, validate_all, wait_indexed, write};
use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

pub(crate) async fn remember(shared: &Arc<Shared>, memory: NewMemory) -> Result<Value, ErrorObject> {
    validate_all(std::slice::from_ref(&memory))?;
    let done = write(shared, WriteOp::Remember(vec![memory])).await?;
    let r = remembered(done).pop().ok_or_else(|| ErrorObject::new(ErrorKind::Internal, "no result"))?;
    to_value(&r)
}

pub(crate) async fn remember_batch(
    shared: &Arc<Shared>,
    p: RememberBatchParams,
) -> Result<Value, ErrorObject> {
    if p.memories.is_empty() || p.memories.len() > MAX_BATCH {
        return Err(invalid(format!(
            "remember_batch takes 1 to {MAX_BATCH} memories, got {}",
            p.memories.len()
        )));
    }
    validate_all(&p.memories)?;
    let done = write(shared, WriteOp::Remember(p.memories)).await?;
    Ok(json!({ "results": to_value(&remembered(done))? }))
}

pub(crate) async fn recall(shared: &Arc<Shared>, p: RecallParams) -> Result<Value, ErrorObject> {
    let q = p.query();
    q.validate().map_err(|e| invalid(e.to_string()))?;
    let session = match &p.session_id {
        Some(id) => Some(shared.sessions.get(id).ok_or_else(|| not_found(id))?),
        None => None,
    };
    let fresh = if p.fresh.unwrap_or(true) { wait_indexed(shared).await } else { false };
    let (lead_scope, lead_also) = (q.scope.clone(), q.also.clone());
    let hits = read(shared, move |e| e.recall(&q)).await?;
    let leads = super::leads::leads_for(shared, &p.text, lead_scope, lead_also, |_| false).await?;
    let given_earlier: Vec<amber_tiers::session::Served> = match &session {
        Some(s) => hits.iter().filter_map(|h| s.served_earlier(&h.memory.id).cloned()).collect(),
        None => Vec::new(),
    };
    to_value(&RecallResult { hits, fresh, given_earlier, leads })
}

pub(crate) async fn forget(shared: &Arc<Shared>, p: IdParams) -> Result<Value, ErrorObject> {
    match write(shared, WriteOp::Forget(p.id.clone())).await? {
        WriteDone::Forgot(Some(memory)) => to_value(&MemoryResult { memory: *memory }),
        _ => Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))),
    }
}

pub(crate) async fn purge(shared: &Arc<Shared>, p: IdParams) -> Result<Value, ErrorObject> {
    match write(shared, WriteOp::Purge(p.id.clone())).await? {
        WriteDone::Purged(true) => to_value(&PurgeResult { id: p.id, purged: true }),
        _ => Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id))),
    }
}

pub(crate) async fn links(shared: &Arc<Shared>, p: IdParams) -> Result<Value, ErrorObject> {
    let id = p.id.clone();
    let links = read(shared, move |e| e.links_of(&id)).await?;
    to_value(&LinksResult { links })
}
