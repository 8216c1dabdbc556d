//! Supersession between authors. An invalidation retires what its `supersedes` names only
//! when its writer may: a person (the command line, outside any agent) retires anything
//! but a lifefact; an agent retires only what the same author filed and no person did.
//! Anything else it names stays live, linked `disputes` from the invalidation, and is
//! shown as disputed wherever `recall` finds it, until a person decides (files the
//! invalidation again, or forgets one of the two).

use std::sync::Arc;

use amber_core::origin::{Trust, trust_of};
use amber_core::{Link, LinkKind, MemoryId, NewMemory, now_millis};
use amber_ipc::protocol::{DisputedHit, ErrorObject, RememberResult};

use crate::peer::Peer;
use crate::rpc::read;
use crate::state::Shared;

/// Takes out of each memory's `supersedes` what its writer may not retire, and returns
/// those ids per memory (in the order given). Ids naming no memory here stay (the store
/// refuses them as before).
pub(crate) async fn hold_back(
    shared: &Arc<Shared>,
    peer: Peer,
    memories: &mut [NewMemory],
) -> Result<Vec<Vec<MemoryId>>, ErrorObject> {
    let mut out = vec![Vec::new(); memories.len()];
    if peer.writer_trust() == Trust::Person {
        return Ok(out);
    }
    for (i, m) in memories.iter_mut().enumerate() {
        if m.supersedes.is_empty() {
            continue;
        }
        let (targets, author) = (m.supersedes.clone(), m.author.clone());
        let foreign = read(shared, move |e| {
            let mut foreign = Vec::new();
            for id in &targets {
                if let Some(t) = e.get(id)? {
                    let own = t.author == author && trust_of(&t.metadata) != Trust::Person;
                    if !own {
                        foreign.push(id.clone());
                    }
                }
            }
            Ok(foreign)
        })
        .await?;
        if foreign.is_empty() {
            continue;
        }
        m.supersedes.retain(|id| !foreign.contains(id));
        if let Some(obj) = m.metadata.as_object_mut() {
            obj.insert("disputes".into(), serde_json::to_value(&foreign).unwrap_or_default());
        }
        out[i] = foreign;
    }
    Ok(out)
}

/// Links each filed invalidation to what it disputes and says so in its result.
pub(crate) async fn link(shared: &Arc<Shared>, results: &mut [RememberResult], disputed: Vec<Vec<MemoryId>>) {
    let now = now_millis();
    let mut links = Vec::new();
    for (r, ids) in results.iter_mut().zip(disputed) {
        for to in &ids {
            links.push(Link {
                from: r.id.clone(),
                to: to.clone(),
                kind: LinkKind::Disputes,
                similarity: 0.0,
                created_at: now,
            });
        }
        r.disputed = ids;
    }
    if links.is_empty() {
        return;
    }
    if let Err(e) = crate::rpc::write_with(shared, move |e| e.add_links(&links)).await {
        tracing::warn!(error = %e.message, "disputes not linked");
    }
}

/// The hits among `ids` that an invalidation disputes.
pub(crate) async fn disputed(shared: &Arc<Shared>, ids: Vec<MemoryId>) -> Vec<DisputedHit> {
    let r = read(shared, move |e| {
        let mut out = Vec::new();
        for id in ids {
            let by: Vec<MemoryId> = e
                .links_of(&id)?
                .into_iter()
                .filter(|l| l.kind == LinkKind::Disputes && l.to == id)
                .map(|l| l.from)
                .collect();
            if !by.is_empty() {
                out.push(DisputedHit { id, by });
            }
        }
        Ok(out)
    })
    .await;
    r.unwrap_or_else(|e| {
        tracing::warn!(error = %e.message, "disputes not read");
        Vec::new()
    })
}
