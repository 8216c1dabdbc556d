//! Advice in the hooks: asked at the opening prompt (`start`: the daemon's model routes
//! the prompt to a learned situation), and re-read at the moments the runtimes expose,
//! with no model call: a failed tool (`stuck`: the Pitfalls) and the stop (`done`: the
//! Steps). No runtime has a point where the agent is about to choose between paths, so
//! `fork` is never sent. Without a model (`no_model`), with nothing
//! learned, or in the holdout arm, nothing is added and nothing fails.

use std::time::{Duration, Instant};

use amber_ipc::Client;
use amber_ipc::protocol::{ErrorKind, GetAdviceParams, GetAdviceResult};

use super::Hook;

/// Time kept back from the hook's deadline for the answer to reach Claude Code.
const MARGIN: Duration = Duration::from_millis(300);
/// Below this much time left, advice is not asked (a model call cannot fit).
const MIN_LEFT: Duration = Duration::from_millis(200);

/// The advice text for the agent at `moment`, when there is one; `until` is the hook's
/// deadline (the model's call gets what is left of it, so that a note is marked given
/// only when the answer can still reach the agent).
pub(super) fn ask(
    hook: &Hook<'_>,
    client: &mut Client,
    session_id: &str,
    task: &str,
    moment: &str,
) -> Option<String> {
    let left = hook.until.saturating_duration_since(Instant::now()).saturating_sub(MARGIN);
    if left < MIN_LEFT {
        hook.log(&format!("advice at {moment} not asked: {left:?} left"));
        return None;
    }
    let task: String = task.trim().chars().take(2_000).collect();
    let p = GetAdviceParams {
        task: if task.is_empty() { "(the session's work)".into() } else { task },
        session_id: Some(session_id.to_string()),
        moment: Some(moment.to_string()),
        timeout_ms: Some(left.as_millis() as u64),
        ..Default::default()
    };
    match client.call::<_, GetAdviceResult>("get_advice", &p) {
        Ok(r) => {
            hook.log(&format!("advice at {moment}: {}", r.message));
            (!r.text.is_empty()).then_some(r.text)
        }
        Err(e) if e.kind() == Some(ErrorKind::NoModel) => None,
        Err(e) => {
            hook.log(&format!("advice at {moment} failed: {e}"));
            None
        }
    }
}
