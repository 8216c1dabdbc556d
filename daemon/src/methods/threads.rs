//! Addressing: `thread` (a memory's conversation), `guard` (may an agent answer it?) and
//! `release` (lift a hold). The guard's rules are `amber_tiers::guard`; this module
//! gathers the thread, logs the decision and holds the thread when it says hold.

use std::sync::Arc;

use amber_core::now_millis;
use amber_engine::GuardEntry;
use amber_ipc::protocol::{
    ErrorKind, ErrorObject, GuardParams, GuardResult, ReleaseParams, ReleaseResult, ThreadParams,
    ThreadResult,
};
use amber_tiers::guard::{Message, Verdict, decide};

use super::scope::resolve_id;
use crate::rpc::{agent_name, read_on};
use crate::state::Shared;
use crate::team::Side;

/// A memory's thread and its root (and the side, local or team, that keeps it), or
/// not_found; `given` is a memory already resolved (`resolve_id`).
async fn thread_of(
    shared: &Arc<Shared>,
    given: (Side, amber_core::MemoryId),
) -> Result<(Side, amber_core::MemoryId, Vec<amber_core::Memory>), ErrorObject> {
    let (side, id) = given;
    let key = id.clone();
    let memories = read_on(shared, &side, move |e| e.thread(&key)).await?;
    let root = memories.first().map(|m| m.id.clone()).ok_or_else(|| {
        ErrorObject::new(ErrorKind::NotFound, format!("no live memory with id {id} (forgotten?)"))
    })?;
    Ok((side, root, memories))
}

/// `thread`: the memories of a thread this reader may read (another agent's mail and
/// diary stay theirs; a thread whose asked-for memory the reader may not read is
/// `not_found`, as with `get`).
pub(crate) async fn thread(
    shared: &Arc<Shared>,
    peer: crate::peer::Peer,
    p: ThreadParams,
) -> Result<ThreadResult, ErrorObject> {
    let reader = super::reader::Reader::of(shared, peer, p.session_id.as_deref()).await?;
    let resolved = resolve_id(shared, &p.id).await?;
    let asked = resolved.1.clone();
    let (side, root, mut memories) = thread_of(shared, resolved).await?;
    if !memories.iter().any(|m| m.id == asked && reader.may_read(m)) {
        return Err(ErrorObject::new(ErrorKind::NotFound, format!("no memory with id {}", p.id.trim())));
    }
    memories.retain(|m| reader.may_read(m));
    let key = root.clone();
    let held = read_on(shared, &side, move |e| e.hold_of(&key)).await?.map(|h| h.reason);
    Ok(ThreadResult { thread: root, memories, held })
}

pub(crate) async fn guard(shared: &Arc<Shared>, p: GuardParams) -> Result<GuardResult, ErrorObject> {
    let agent = agent_name(&p.agent)?;
    let resolved = resolve_id(shared, &p.memory_id).await?;
    let trigger_id = resolved.1.clone();
    let (side, root, memories) = thread_of(shared, resolved).await?;
    let (r, a, t) = (root.clone(), agent.clone(), trigger_id.clone());
    let (held, handled, failures) = read_on(shared, &side, move |e| {
        let held = e.hold_of(&r)?.map(|h| h.reason);
        let handled = e.guard_allowed(&a, &t)?;
        Ok((held, handled, memories.iter().map(|m| Message::of(m, e.failures(m.seq))).collect::<Vec<_>>()))
    })
    .await?;
    let thread = failures;
    let Some(trigger) = thread.iter().find(|m| m.id == trigger_id) else {
        return Err(ErrorObject::new(ErrorKind::NotFound, format!("memory {trigger_id} is not live")));
    };
    let d = decide(&agent, trigger, &thread, held.as_deref(), handled);
    let verdict = match d.decision {
        Verdict::Allow => "allow",
        Verdict::Skip => "skip",
        Verdict::Hold => "hold",
    };
    let entry = GuardEntry {
        agent: agent.clone(),
        trigger: trigger_id.clone(),
        decision: verdict.into(),
        rule: d.rule.clone(),
        at: now_millis(),
    };
    let (r, rule, hold) = (root.clone(), d.rule.clone(), d.decision == Verdict::Hold && held.is_none());
    crate::rpc::write_with_on(shared, &side, move |e| {
        e.log_guard(&entry)?;
        if hold {
            e.hold(&r, &rule)?;
        }
        Ok(())
    })
    .await?;
    tracing::debug!(%agent, trigger = %trigger_id, decision = verdict, rule = %d.rule, "guard");
    Ok(GuardResult { decision: d, memory_id: trigger_id, thread: root })
}

pub(crate) async fn release(shared: &Arc<Shared>, p: ReleaseParams) -> Result<ReleaseResult, ErrorObject> {
    let (side, root, _) = thread_of(shared, resolve_id(shared, &p.thread).await?).await?;
    let key = root.clone();
    let released = crate::rpc::write_with_on(shared, &side, move |e| e.release(&key)).await?;
    Ok(ReleaseResult { thread: root, released })
}
