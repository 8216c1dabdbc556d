//! Background work yields the CPU to reads. Indexing (its thread, the model instance it
//! embeds with and tantivy's indexing workers) runs at a lower CPU priority than the
//! threads that answer clients, so a flood of writes from one client slows its own
//! indexing, not another client's recall (`amber-eval fairness`, docs/RELIABILITY.md).
//! Nothing is starved: on an idle machine background work gets every core it asks for.

/// The nice value background work adds to the daemon's own (0 to 19; higher yields more).
/// At 10 a busy background thread gets about a tenth of a core that a reader also wants.
pub const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's CPU priority by `nice` (0 changes nothing; the daemon
/// uses [`BACKGROUND_NICE`] unless configured otherwise). On Linux a nice value
/// belongs to one thread, and threads it starts later inherit it, so a model instance
/// loaded here runs its intra-op threads low too. An unprivileged thread cannot raise its
/// priority again: call this only on threads that do background work for good. Returns
/// the new nice value; a failure (another OS, a sandbox) is logged and changes nothing.
pub fn lower_this_thread(nice: i32) -> Option<i32> {
    if nice <= 0 {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        let now = rustix::process::getpriority_process(None).unwrap_or(0);
        let want = (now + nice).min(19);
        match rustix::process::setpriority_process(None, want) {
            Ok(()) => Some(want),
            Err(e) => {
                tracing::debug!(cause = %e, "could not lower a background thread's priority");
                None
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = nice;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_thread_and_the_threads_it_starts_run_at_the_lower_priority() {
        let base = rustix::process::getpriority_process(None).unwrap();
        let (mine, child) = std::thread::spawn(move || {
            assert_eq!(lower_this_thread(0), None, "0 leaves it alone");
            assert_eq!(rustix::process::getpriority_process(None).unwrap(), base);
            let mine = lower_this_thread(BACKGROUND_NICE);
            let child =
                std::thread::spawn(|| rustix::process::getpriority_process(None).unwrap()).join().unwrap();
            (mine, child)
        })
        .join()
        .unwrap();
        let want = (base + BACKGROUND_NICE).min(19);
        assert_eq!(mine, Some(want));
        assert_eq!(child, want, "a thread started by a lowered thread inherits its priority");
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), base, "only that thread changed");
    }
}
