//! Waking a follower when another node commits. Every transaction that files, forgets
//! or moves memories in the team store sends a notification on [`CHANNEL`] (PostgreSQL
//! delivers it at the commit, to every connection listening); a node listens on a
//! connection of its own and follows at once instead of at its next poll. The poll
//! stays, as the longest wait: a lost notification costs one poll, nothing more.

use std::time::Duration;

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use super::{PgBackend, PgStore};
use crate::Result;

/// The notification channel.
pub(crate) const CHANNEL: &str = "amber_writes";

/// Sends the commit notification from a transaction (delivered when it commits; one
/// per transaction however often it is sent).
pub(crate) fn notify(tx: &mut postgres::Transaction<'_>) -> super::Q<()> {
    tx.batch_execute(&format!("NOTIFY {CHANNEL}"))?;
    Ok(())
}

impl PgBackend {
    /// A listener for other writers' commits, on its own connection (made at its first
    /// wait).
    pub fn listener(&self) -> PgListener {
        PgListener { store: PgStore::unconnected(&self.url, self.password.clone(), false), client: None }
    }
}

/// A connection listening for other writers' commits.
pub struct PgListener {
    store: PgStore,
    client: Option<Client>,
}

impl PgListener {
    /// Waits up to `timeout` for a commit by any writer (this node's own included):
    /// true when one came (those pending are taken with it), false at the timeout. The
    /// connection is made at the first call and after a failure; a failure is
    /// [`crate::Error::Unavailable`].
    pub fn wait(&mut self, timeout: Duration) -> Result<bool> {
        let client = match &mut self.client {
            Some(c) => c,
            None => {
                let mut c = self.store.new_client()?;
                c.batch_execute(&format!("LISTEN {CHANNEL}")).map_err(|e| self.store.unavailable(&e))?;
                self.client.insert(c)
            }
        };
        let got = client.notifications().timeout_iter(timeout).next();
        let out = got.and_then(|n| {
            let mut pending = client.notifications();
            let mut more = pending.iter();
            while more.next()?.is_some() {}
            Ok(n.is_some())
        });
        out.map_err(|e| {
            self.client = None;
            self.store.unavailable(&e)
        })
    }
}
