//! A session recorded as a run when it ends, when its client asked (`session_start` with
//! `run`; what goes in is `amber_tiers::session_run`'s): through `run_record`'s own store,
//! limits and redaction. A failure is logged and the session still ends.

use std::sync::Arc;

use amber_core::now_millis;
use amber_tiers::session::Session;

use crate::rpc::read;
use crate::state::Shared;

/// Records what `s` did since its last run, when it is a run and did something.
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
    let Some(run) = amber_tiers::session_run::as_run(s, &reports) else { return };
    if let Err(e) = run.validate() {
        tracing::warn!(session = %s.id, cause = %e, "the session's run is not valid; not recorded");
        return;
    }
    match super::runs::store(shared, &s.scope, &s.agent, vec![run]).await {
        Ok((ids, _)) => {
            let Some(run_id) = ids.into_iter().next() else { return };
            tracing::info!(session = %s.id, run = %run_id, scope = %s.scope, "the session was recorded as a run");
            s.run.recorded(run_id, now_millis());
        }
        Err(e) => tracing::warn!(session = %s.id, error = %e.message, "the session's run was not recorded"),
    }
}
