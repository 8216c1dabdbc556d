//! The MCP server's connections to amberd: one per call in flight, idle ones kept for the
//! next call and closed after a while, a broken one remade.

use super::*;

/// Connections to the daemon, made on first use, remade after a failure, closed when
/// idle. Each call takes a connection of its own (an idle one, else a new one), so a
/// slow call never queues the others.
pub(super) struct Bridge {
    pub(super) cfg: Config,
    config_file: Option<PathBuf>,
    start: bool,
    /// Idle connections and when each one's last call ended.
    pub(super) idle: Mutex<Vec<(Client, Instant)>>,
    /// The session `get_advice` opened for this server's client (asked with no session),
    /// named on its next asks, so that a note is given it once.
    pub(super) advice_session: Mutex<Option<String>>,
}

/// The most idle connections kept: the calls a host makes at once, seldom more.
pub(super) const MAX_IDLE: usize = 4;

impl Bridge {
    pub(super) fn new(cfg: Config, config_file: Option<PathBuf>, start: bool) -> Bridge {
        Bridge { cfg, config_file, start, idle: Mutex::new(Vec::new()), advice_session: Mutex::new(None) }
    }

    /// Closes the connections no call has used for `after` (a connection in use is not
    /// idle, so it is never closed). True when one was closed.
    pub(super) fn drop_idle(&self, after: Duration) -> bool {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let before = idle.len();
        idle.retain(|(_, used)| used.elapsed() < after);
        idle.len() < before
    }

    /// Calls a daemon method on the blocking pool. `Err` holds the message for the
    /// model: the daemon's error (`kind: message`), or why it cannot be reached.
    pub(super) async fn call(self: &Arc<Self>, method: &'static str, params: Value) -> Result<Value, String> {
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || this.call_blocking(method, params))
            .await
            .unwrap_or_else(|e| Err(format!("the call to amberd failed: {e}")))
    }

    /// An idle connection, the most recently used first.
    fn take(&self) -> Option<Client> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop().map(|(c, _)| c)
    }

    /// A connection whose call went through, kept for the next one.
    fn give_back(&self, client: Client) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push((client, Instant::now()));
        }
    }

    pub(super) fn call_blocking(&self, method: &str, params: Value) -> Result<Value, String> {
        // A read is tried once more on a fresh connection when the kept one turns out
        // broken (the daemon was restarted); a write is not, the caller decides. (The
        // client itself resends once when the daemon had closed the connection unread.)
        let attempts = if is_read(method) { 2 } else { 1 };
        for attempt in 1..=attempts {
            let (mut client, fresh) = match self.take() {
                Some(c) => (c, false),
                None => (self.connect()?, true),
            };
            match client.call_value(method, params.clone()) {
                Ok(v) => {
                    self.give_back(client);
                    return Ok(v);
                }
                // The daemon closed this connection after saying so.
                Err(e) if e.is_too_many_connections() => return Err(e.to_string()),
                Err(e @ ClientError::Server(_)) => {
                    self.give_back(client);
                    return Err(e.to_string());
                }
                // Not sent again: the daemon may still be doing it.
                Err(e @ ClientError::Timeout { .. }) => return Err(e.to_string()),
                Err(e) => {
                    // The connection is unusable: dropped, the next call reconnects.
                    if fresh || attempt == attempts {
                        return Err(e.to_string());
                    }
                    tracing::debug!("amberd connection broken ({e}); reconnecting");
                }
            }
        }
        Err("amberd could not be reached".into())
    }

    /// Whether to offer `get_advice`: the running daemon's word (its `status` names its
    /// model), so a daemon started with another config decides; when none runs, this
    /// server's config, which the daemon it will start reads too.
    pub(super) fn running_daemon_has_model(&self) -> bool {
        let asked = daemon::connect_or_start(&self.cfg, None, false).ok().and_then(|mut c| {
            c.hello("amber-mcp").ok()?;
            c.call_value("status", json!({})).ok()
        });
        match asked {
            Some(status) => !status["learn"].is_null(),
            None => self.cfg.learn.is_on(),
        }
    }

    fn connect(&self) -> Result<Client, String> {
        let mut c = daemon::connect_or_start(&self.cfg, self.config_file.as_deref(), self.start)
            .map_err(|e| format!("{e:#}"))?;
        c.hello("amber-mcp").map_err(|e| match e.is_too_many_connections() {
            true => e.to_string(),
            false => format!("amberd refused the handshake: {e}"),
        })?;
        Ok(c)
    }
}

/// Methods that change nothing stored (the registry's `Access::Read`), so a retry on a
/// new connection is harmless.
pub(super) fn is_read(method: &str) -> bool {
    use amber_ipc::protocol::{Access, Method};
    Method::from_name(method).is_some_and(|m| m.access() == Access::Read)
}
