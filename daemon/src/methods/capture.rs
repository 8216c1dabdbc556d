//! `capture`: a text a session produced, filed within the size limits with secrets
//! redacted; a new memory's text then goes to fact extraction in the background.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use amber_core::{MemoryId, NewMemory, Scope};
use amber_ipc::protocol::{CaptureParams, CaptureResult, ErrorObject};
use amber_tiers::capture::Captured;
use serde_json::json;

use amber_core::origin::{Door, Origin, Trust};

use crate::peer::Peer;
use crate::rpc::{remembered, validate_all, write};
use crate::state::Shared;
use crate::writer::{WriteDone, WriteOp};

pub(crate) async fn capture(
    shared: &Arc<Shared>,
    peer: Peer,
    p: CaptureParams,
) -> Result<CaptureResult, ErrorObject> {
    let kind = p.kind.unwrap_or(amber_core::MemoryType::Event);
    let from = CapturedFrom { door: peer.door, source: p.source, session_id: p.session_id, author: p.author };
    let r = capture_text(shared, &p.content, p.scope, kind, from).await?;
    Ok(r)
}

/// Where a captured text came from: the door it came through, its source (the tool),
/// its session and the agent.
pub(crate) struct CapturedFrom {
    pub door: Door,
    pub source: Option<String>,
    pub session_id: Option<String>,
    pub author: Option<String>,
}

/// Files a captured text: size limits, secret redaction (of the text and the source),
/// then a write (type, source and session as given; metadata `{captured, redacted}`, and the origin the daemon stamps:
/// trust `external`, whatever door it came through). A new memory's text then goes to
/// fact extraction in the background, when it is configured.
pub(crate) async fn capture_text(
    shared: &Arc<Shared>,
    content: &str,
    scope: amber_core::Scope,
    kind: amber_core::MemoryType,
    from: CapturedFrom,
) -> Result<CaptureResult, ErrorObject> {
    let CapturedFrom { door, source, session_id, author } = from;
    match amber_tiers::capture::capture(content, &shared.config.capture) {
        Captured::Skip(reason) => {
            Ok(CaptureResult { filed: false, skipped: Some(reason), memory: None, redacted: 0 })
        }
        Captured::File { text, redacted } => {
            let mut source = source;
            let redacted = redacted + source.as_mut().map_or(0, amber_tiers::redact::redact_in_place);
            // The stored (redacted) text is what an extractor sees.
            let for_extraction = shared.extract.is_some().then(|| (text.clone(), scope.clone()));
            let mut memory = NewMemory::new(text).in_scope(scope);
            memory.kind = kind;
            memory.source = source;
            memory.session_id = session_id;
            memory.author = author;
            memory.metadata = json!({ "captured": true, "redacted": redacted });
            let (agent, claimed) =
                super::origin::vouched_agent(shared, memory.session_id.as_deref(), memory.author.as_deref());
            let origin = Origin {
                door: Some(door.as_str().into()),
                agent,
                session: memory.session_id.clone(),
                tool: memory.source.clone(),
                machine: super::origin::machine(),
                inside_agent: false,
                claimed,
            };
            amber_core::origin::stamp(&mut memory.metadata, &origin, Trust::External);
            validate_all(std::slice::from_ref(&memory))?;
            // The hooks' captures (and the daemon's own, from their events) are never
            // refused for bulk work: the open lane.
            let lane = match door {
                Door::Hook | Door::Daemon => crate::rpc::Lane::Open,
                _ => crate::rpc::Lane::Single,
            };
            let done =
                crate::rpc::write_in_lane(shared, &shared.local(), WriteOp::Remember(vec![memory]), lane)
                    .await?;
            let r = remembered(done).pop();
            if let (Some((text, scope)), Some(m)) = (for_extraction, &r)
                && m.created
            {
                propose(shared, m.id.clone(), scope, text);
            }
            Ok(CaptureResult { filed: true, skipped: None, memory: r, redacted })
        }
    }
}

/// Starts extracting facts from a memory just captured, when extraction is on and a
/// permit is free. Returns at once.
pub(crate) fn propose(shared: &Arc<Shared>, memory: MemoryId, scope: Scope, text: String) {
    let Some(x) = &shared.extract else { return };
    let Ok(permit) = x.permits.clone().try_acquire_owned() else {
        x.counts.skipped_busy.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(memory = %memory, "fact extraction skipped: all extractions are busy");
        return;
    };
    x.counts.runs.fetch_add(1, Ordering::Relaxed);
    let (extractor, counts, timeout) = (x.extractor.clone(), x.counts.clone(), x.timeout);
    // Only a weak reference while the model works: a shutdown does not wait for it.
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        let _permit = permit;
        let fail = |reason: String| {
            counts.failed.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(memory = %memory, %reason, "fact extraction failed");
        };
        let r = tokio::task::spawn_blocking(move || extractor.extract(&text, timeout)).await;
        let mut e = match r {
            Ok(Ok(e)) => e,
            Ok(Err(reason)) => return fail(reason),
            Err(join) => return fail(format!("the extraction task failed: {join}")),
        };
        let dropped = (e.skipped + e.low_confidence + e.over_cap) as u64;
        counts.items_dropped.fetch_add(dropped, Ordering::Relaxed);
        counts.proposed.fetch_add(e.facts.len() as u64, Ordering::Relaxed);
        if e.facts.is_empty() {
            tracing::debug!(memory = %memory, dropped, "fact extraction proposed nothing");
            return;
        }
        for f in &mut e.facts {
            f.sources = vec![memory.clone()];
        }
        let Some(shared) = weak.upgrade() else { return fail("the daemon stopped".into()) };
        let n = e.facts.len();
        match write(&shared, WriteOp::KgAdd(scope, Vec::new(), e.facts)).await {
            Ok(WriteDone::KgAdded(a)) => {
                counts.facts_added.fetch_add(a.facts.len() as u64, Ordering::Relaxed);
                tracing::info!(memory = %memory, proposed = n, added = a.facts.len(), dropped, "facts extracted");
            }
            Ok(_) => fail("unexpected write result".into()),
            Err(e) => fail(format!("writing the facts failed: {}", e.message)),
        }
    });
}

/// Notes in the record what a capture did.
pub(crate) fn note_capture(s: &mut amber_tiers::session::Session, r: &CaptureResult, source: &str) {
    match (&r.memory, r.skipped) {
        (Some(m), _) => s.captured.push(amber_tiers::session::CaptureNote {
            id: m.id.clone(),
            created: m.created,
            redacted: r.redacted,
            source: Some(source.to_string()),
        }),
        (None, Some(amber_tiers::capture::SkipReason::TooShort)) => s.capture_skipped.too_short += 1,
        (None, _) => s.capture_skipped.too_long += 1,
    }
}
