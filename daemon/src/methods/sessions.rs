//! `sessions`: the session records, newest first, live ones included (the web view's
//! list of sessions, and "where a memory was served": the sessions served it, with each
//! serving's tier, score and why).

use std::collections::HashSet;
use std::sync::Arc;

use amber_ipc::protocol::{ErrorObject, SessionSummary, SessionsParams, SessionsResult};
use amber_tiers::session::Session;

use crate::rpc::{invalid, read};
use crate::state::Shared;

/// Most sessions one `sessions` call lists.
pub(crate) const MAX_SESSIONS_LISTED: usize = 1000;

/// How many stored records are read to find the sessions served a memory.
const SERVED_SCAN: usize = 2000;

fn summary(s: &Session, servings: Vec<amber_tiers::session::Served>) -> SessionSummary {
    SessionSummary {
        id: s.id.clone(),
        agent: s.agent.clone(),
        scope: s.scope.as_str().to_string(),
        started_at: s.started_at,
        ended_at: s.ended_at,
        served: s.served.len(),
        filed: s.filed.len(),
        captured: s.captured.len(),
        reward: s.reward,
        runs: s.run.runs.clone(),
        servings,
    }
}

/// `sessions`: live sessions first, then stored records, newest first; with `served`,
/// only the sessions that were served that memory (among the last 2,000 stored).
pub(crate) async fn list(shared: &Arc<Shared>, p: SessionsParams) -> Result<SessionsResult, ErrorObject> {
    let limit = p.limit.unwrap_or(50);
    if limit == 0 || limit > MAX_SESSIONS_LISTED {
        return Err(invalid(format!("limit must be 1 to {MAX_SESSIONS_LISTED}, got {limit}")));
    }
    let mut live = shared.sessions.all();
    live.sort_by_key(|s| std::cmp::Reverse(s.started_at));
    let scan = if p.served.is_some() { SERVED_SCAN } else { limit };
    let rows = read(shared, move |e| e.recent_sessions(scan)).await?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let stored = rows.into_iter().filter_map(|row| match serde_json::from_str::<Session>(&row.record) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(session = %row.id, cause = %e, "sessions: a stored session record does not parse");
            None
        }
    });
    for s in live.into_iter().chain(stored) {
        if out.len() >= limit {
            break;
        }
        if !seen.insert(s.id.clone()) {
            continue;
        }
        let servings: Vec<_> = match &p.served {
            Some(id) => s.served.iter().filter(|x| &x.id == id).cloned().collect(),
            None => Vec::new(),
        };
        if p.served.is_some() && servings.is_empty() {
            continue;
        }
        out.push(summary(&s, servings));
    }
    Ok(SessionsResult { sessions: out })
}
