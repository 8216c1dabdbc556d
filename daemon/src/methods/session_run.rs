//! A session recorded as a run when it ends, when its client asked (`session_start` with
//! `run`; what goes in is `amber_tiers::session_run`'s): through `run_record`'s own store,
//! limits and redaction. One run per session: its later ends rewrite it, until a reward
//! closes it and the session's next part becomes a run of its own. A failure is logged
//! and the session still ends.

use std::sync::Arc;

use amber_core::{MemoryId, Report, RunWrite, now_millis};
use amber_tiers::session::Session;
use amber_tiers::session_run::{as_run, digest};

use crate::rpc::read;
use crate::state::Shared;

/// Records the session's current run as it stands, when it is a run and did something
/// new since it was last recorded.
pub(crate) async fn record(shared: &Arc<Shared>, s: &mut Session) {
    if !s.run.on {
        return;
    }
    let id = s.id.clone();
    let reports = match read(shared, move |e| e.session_reports(&id)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(session = %s.id, error = %e.message, "the session's reports are unreadable; its run is recorded without them");
            Vec::new()
        }
    };
    // Its run was rewarded since it was last recorded (kept as it was): the rest goes to
    // the session's next run.
    if store(shared, s, &reports).await == Some(RunWrite::Kept) {
        s.run.close();
        store(shared, s, &reports).await;
    }
}

/// Stores the session's current run; what was done, or None when there was nothing to
/// store or it failed (logged).
async fn store(shared: &Arc<Shared>, s: &mut Session, reports: &[(MemoryId, Report)]) -> Option<RunWrite> {
    let run = as_run(s, reports)?;
    if let Err(e) = run.validate() {
        tracing::warn!(session = %s.id, cause = %e, "the session's run is not valid; not recorded");
        return None;
    }
    let digest = digest(s, &run);
    match super::runs::store(shared, &s.scope, &s.agent, vec![run]).await {
        Ok((ids, writes)) => {
            let (run_id, write) = ids.into_iter().zip(writes).next()?;
            if write != RunWrite::Kept {
                tracing::info!(session = %s.id, run = %run_id, scope = %s.scope, ?write, "the session was recorded as a run");
                s.run.recorded(run_id, digest, now_millis());
            }
            Some(write)
        }
        Err(e) => {
            tracing::warn!(session = %s.id, error = %e.message, "the session's run was not recorded");
            None
        }
    }
}
