//! `session_checkpoint`: an agent stopped (Claude Code's `Stop`). The first stop of a
//! session that did real work and filed nothing durable is blocked once, asking for the
//! takeaway; the next records what came of it.

use std::sync::Arc;

use amber_core::now_millis;
use amber_ipc::protocol::{ErrorObject, SessionCheckpointParams, SessionCheckpointResult};

use crate::live::not_found;
use crate::methods::session::persist;
use crate::methods::transcript::Part;
use crate::peer::Peer;
use crate::state::Shared;

/// Served memories the checkpoint lists by id, at most.
const MAX_LISTED: usize = 8;

/// The reason given to the agent when its first stop is blocked. When the session was
/// served memories, it also asks which of them the work relied on and how that went
/// (the manifest, as `outcome` reports in this session).
pub(crate) fn checkpoint_reason(tool_uses: u64, session_id: &str, served: &[amber_core::MemoryId]) -> String {
    let mut out = format!(
        "Amber checkpoint: this session did real work ({tool_uses} tool uses) and filed nothing \
durable in memory yet. Before stopping, file the takeaway a future session should know (a decision, \
a fact about this project, a pattern that worked, a pitfall) with the MCP `remember` tool, a `type` \
(fact, pattern, intent, invalidation or discovery) and `session_id` \"{session_id}\", or with \
`amber remember --type TYPE --session {session_id} \"...\"`. \
If nothing is worth keeping, reply with one line starting \"No takeaway:\" and why."
    );
    if !served.is_empty() {
        let ids: Vec<&str> = served.iter().take(MAX_LISTED).map(|i| &i.as_str()[..8]).collect();
        let more = served.len().saturating_sub(MAX_LISTED);
        out.push_str(&format!(
            " Amber gave this session {} memor{} ({}{}): for each one the work relied on, report \
whether it was right with the MCP `outcome` tool (`memory_id`, `result` success or failure, \
`session_id` \"{session_id}\") or `amber outcome ID success|failure --session {session_id}`; \
a memory that turned out wrong is worth a `failure`, and one that replaced another an \
invalidation with `supersedes`.",
            served.len(),
            if served.len() == 1 { "y" } else { "ies" },
            ids.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() },
        ));
    }
    out.push_str(" This is asked once per session.");
    out
}

/// True when a message declines the checkpoint (its first non-empty line starts with
/// "No takeaway").
fn decline(message: &str) -> Option<String> {
    let line = message.lines().map(str::trim).find(|l| !l.is_empty())?;
    let bare = line.trim_start_matches(['*', '_', '`', '>', '-', ' ']);
    bare.to_ascii_lowercase().starts_with("no takeaway").then(|| line.chars().take(500).collect())
}

/// `session_checkpoint`: an agent stops. The first stop of a session that did real
/// work (`checkpoint_tool_uses` tool uses) and filed nothing durable itself (a
/// `remember` naming the session) since it started is blocked once, with a reason asking for the takeaway; the next
/// stop records what came of it (filed, declined, or none). Never blocks twice, never
/// while `stop_hook_active`, never with `[session] checkpoint = false`.
pub(crate) async fn checkpoint(
    shared: &Arc<Shared>,
    peer: Peer,
    p: SessionCheckpointParams,
) -> Result<SessionCheckpointResult, ErrorObject> {
    let snapshot = shared.sessions.get(&p.session_id).ok_or_else(|| not_found(&p.session_id))?;
    // The transcript so far: what is new since the last filing, so a session that never
    // ends (its agent killed) has lost at most its last turn.
    let filed = match p.transcript {
        None => None,
        Some(text) => {
            let part =
                Part { text, source: p.transcript_source, skipped: p.transcript_skipped, door: peer.door };
            let mut s = snapshot.clone();
            super::transcript::file(shared, &mut s, &part).await?;
            Some(s)
        }
    };
    let cfg = shared.config.session.clone();
    // Only what this session filed on purpose counts (a takeaway filed again with the
    // same text included); another session's or a person's writes do not silence it.
    let since = snapshot.checkpoint.blocked_at.unwrap_or(snapshot.started_at);
    let durable = snapshot.filed_since(since);
    let mut cp = snapshot.checkpoint.clone();
    let mut block = false;
    if cp.blocked_at.is_some() {
        if cp.outcome.is_none() {
            let declined = p.message.as_deref().and_then(decline);
            cp.outcome = Some(
                if durable > 0 {
                    "filed"
                } else if declined.is_some() {
                    "declined"
                } else {
                    "none"
                }
                .to_string(),
            );
            cp.decline = declined.map(|l| amber_tiers::redact::redact(&l).0);
        }
    } else if cfg.checkpoint
        && !p.stop_hook_active
        && snapshot.tool_uses >= cfg.checkpoint_tool_uses
        && durable == 0
    {
        block = true;
        cp.blocked_at = Some(now_millis());
        cp.tool_uses = snapshot.tool_uses;
    }
    let record = {
        let mut live = shared.sessions.lock();
        live.get_mut(&p.session_id).map(|s| {
            s.last_active = now_millis();
            let mut changed = s.checkpoint != cp;
            s.checkpoint = cp.clone();
            if let Some(f) = &filed {
                // What the filing added (events may have been captured meanwhile).
                s.captured.extend(f.captured[snapshot.captured.len()..].iter().cloned());
                s.capture_skipped.too_short +=
                    f.capture_skipped.too_short - snapshot.capture_skipped.too_short;
                s.capture_skipped.too_long += f.capture_skipped.too_long - snapshot.capture_skipped.too_long;
                changed |= s.transcript != f.transcript;
                s.transcript = f.transcript.clone();
            }
            changed.then(|| s.clone())
        })
    };
    if let Some(Some(s)) = record {
        persist(shared, &s).await?;
    }
    tracing::info!(session = %p.session_id, block, outcome = ?cp.outcome, durable, "checkpoint");
    Ok(SessionCheckpointResult {
        block,
        reason: block.then(|| {
            let mut served: Vec<amber_core::MemoryId> = Vec::new();
            for x in &snapshot.served {
                if !served.contains(&x.id) {
                    served.push(x.id.clone());
                }
            }
            checkpoint_reason(cp.tool_uses, &snapshot.id, &served)
        }),
        checkpoint: cp,
    })
}
