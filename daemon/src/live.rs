//! The live sessions: a map of session records behind a mutex, the sessions being ended,
//! and the interjection judge. The session methods (`methods/session.rs`) run the
//! searches and writes around them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use amber_core::{Millis, now_millis};
use amber_ipc::protocol::{ErrorKind, ErrorObject};
use amber_tiers::judge::Judge;
use amber_tiers::session::Session;

/// The live sessions and the judge.
pub(crate) struct Sessions {
    live: Mutex<HashMap<String, Session>>,
    /// Sessions being ended (taken out of `live`, record not stored yet): shown as they
    /// were when the end began, so no one reads an older stored record meanwhile.
    ending: Mutex<HashMap<String, Session>>,
    pub(crate) judge: Arc<dyn Judge>,
    counter: AtomicU64,
}

/// Locks a session map, going on after a panic in another holder (each entry is a whole
/// session record, replaced at once).
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sessions {
    pub(crate) fn new(judge: Arc<dyn Judge>, resumed: Vec<Session>) -> Sessions {
        let live = resumed.into_iter().map(|s| (s.id.clone(), s)).collect();
        Sessions {
            live: Mutex::new(live),
            ending: Mutex::new(HashMap::new()),
            judge,
            counter: AtomicU64::new(0),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        locked(&self.live)
    }

    pub(crate) fn new_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("s-{:x}-{:x}-{n}", now_millis(), std::process::id())
    }

    /// A copy of a live session.
    pub(crate) fn get(&self, id: &str) -> Option<Session> {
        self.lock().get(id).cloned()
    }

    /// A copy of a session whose end is under way.
    pub(crate) fn ending(&self, id: &str) -> Option<Session> {
        locked(&self.ending).get(id).cloned()
    }

    /// Ids of sessions idle for longer than `timeout`.
    pub(crate) fn idle(&self, now: Millis, timeout: Duration) -> Vec<String> {
        let limit = timeout.as_millis() as Millis;
        self.lock().values().filter(|s| now - s.last_active > limit).map(|s| s.id.clone()).collect()
    }

    /// Every live session (for shutdown).
    pub(crate) fn all(&self) -> Vec<Session> {
        self.lock().values().cloned().collect()
    }
}

/// The error for a session that is not live.
pub(crate) fn not_found(id: &str) -> ErrorObject {
    ErrorObject::new(ErrorKind::SessionNotFound, format!("no live session with id {id:?}"))
}

/// Marks a session as being ended for as long as it lives.
pub(crate) struct Ending<'a> {
    sessions: &'a Sessions,
    id: String,
}

impl<'a> Ending<'a> {
    pub(crate) fn begin(sessions: &'a Sessions, s: &Session) -> Ending<'a> {
        locked(&sessions.ending).insert(s.id.clone(), s.clone());
        Ending { sessions, id: s.id.clone() }
    }
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        locked(&self.sessions.ending).remove(&self.id);
    }
}
