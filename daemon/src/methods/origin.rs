//! Where a write comes from, as the daemon finds it: this machine's name and the agent of
//! the session a write names. The door and its trust are the connecting process's
//! (`crate::peer`).

use crate::state::Shared;

/// The host name, once (`/proc/sys/kernel/hostname`, else `/etc/hostname`): part of
/// every origin the daemon stamps, and of a team memory's `metadata.machine`.
pub(crate) fn machine() -> Option<String> {
    static HOST: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty() && amber_core::check_label("machine", h, 255).is_ok())
    })
    .clone()
}

/// The agent a write comes from: that of the live session it names (the daemon checked
/// the name when the session started), else the author it gives, with true for "only
/// the writer's word" when it names an author or a session at all.
pub(crate) fn vouched_agent(
    shared: &Shared,
    session: Option<&str>,
    author: Option<&str>,
) -> (Option<String>, bool) {
    let live = session.and_then(|id| shared.sessions.lock().get(id).map(|s| s.agent.clone()));
    match live {
        Some(agent) => (Some(agent), false),
        None => (author.map(str::to_string), author.is_some() || session.is_some()),
    }
}
