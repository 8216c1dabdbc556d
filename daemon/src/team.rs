//! Team memory: scopes under the `[team] scopes` prefixes live in PostgreSQL, shared by
//! every amberd pointed at it; every other scope stays in the local SQLite store.
//!
//! The team side is a second engine over `amber_store::PgBackend`, with its derived
//! indexes (tantivy, usearch) in `<data_dir>/team/` and the model instances shared with
//! the local engine. Its own writer thread commits this node's team writes; a follower
//! (this file's thread) asks the writer to follow what other nodes committed
//! ([`amber_engine::EngineWriter::follow`]) as soon as PostgreSQL notifies a commit, and every
//! `poll_ms` at the latest, so the indexer indexes their memories as it indexes ours. The team engine opens in the background: while the database
//! cannot be reached, team calls answer `team_unavailable` and local scopes serve as
//! usual; the thread keeps trying.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use amber_core::Scope;
use amber_engine::{Engine, EngineOptions};
use amber_ipc::config::TeamConfig;
use amber_ipc::protocol::{ErrorKind, ErrorObject};
use tokio::sync::{mpsc, watch};

use crate::writer::Job;
#[cfg(feature = "team")]
use {
    crate::writer::{self, WriteDone, WriteOp},
    std::time::Duration,
    tokio::sync::oneshot,
};

/// Where a call goes: the local store or the team database.
#[derive(Clone)]
pub(crate) struct Side {
    pub engine: Arc<Engine>,
    pub writes: mpsc::Sender<Job>,
    pub indexed: watch::Receiver<u64>,
}

/// The team side of a daemon.
pub(crate) struct Team {
    /// The team scope prefixes.
    pub prefixes: Vec<Scope>,
    /// The database, without a password (for `status` and messages).
    pub location: String,
    side: Mutex<Option<Side>>,
    /// Why the team database is not usable now, and since when (for `status`).
    trouble: Mutex<Option<(String, Instant)>>,
    stop: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// How long to wait between attempts to open the team engine.
#[cfg(feature = "team")]
const OPEN_RETRY: Duration = Duration::from_secs(2);
/// How often the team thread looks whether the daemon is stopping while it waits.
#[cfg(feature = "team")]
const STOP_CHECK: Duration = Duration::from_millis(100);

impl Team {
    /// Starts the team side when `[team]` is configured: the engine opens in the
    /// background (see the module docs).
    #[cfg(feature = "team")]
    pub(crate) fn start(
        config: &TeamConfig,
        data_dir: &Path,
        local: &Arc<Engine>,
        opts: EngineOptions,
        write_queue: usize,
    ) -> anyhow::Result<Option<Arc<Team>>> {
        let Some(url) = &config.url else { return Ok(None) };
        let prefixes = config
            .scopes
            .iter()
            .map(|s| s.parse::<Scope>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("team.scopes: {e}"))?;
        let parsed = crate::team_url::parse_url(url, &config.password_env)?;
        let password = crate::team_url::password_for(&parsed, &config.password_env);
        let backend = amber_store::PgBackend::new(url).with_password(password);
        let team = Arc::new(Team {
            prefixes,
            location: amber_store::Backend::location(&backend),
            side: Mutex::new(None),
            trouble: Mutex::new(Some(("connecting".into(), Instant::now()))),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
        });
        let mut opts = opts;
        opts.data_dir = data_dir.join("team");
        // Other nodes follow the team store: its vectors are cached before a memory is
        // committed, so none of them embeds it again.
        opts.embed_before_commit = true;
        let (t, local) = (team.clone(), local.clone());
        let poll = Duration::from_millis(config.poll_ms.max(1));
        let handle = std::thread::Builder::new()
            .name("amberd-team".into())
            .spawn(move || t.run(&local, opts, Arc::new(backend), write_queue, poll))?;
        *lock(&team.thread) = Some(handle);
        Ok(Some(team))
    }

    /// Without the `team` feature there is no team side: [`check`] refuses a configured
    /// `team.url` ([`TeamFeatureMissing`]), here too in case it was not called.
    #[cfg(not(feature = "team"))]
    pub(crate) fn start(
        config: &TeamConfig,
        _data_dir: &Path,
        _local: &Arc<Engine>,
        _opts: EngineOptions,
        _write_queue: usize,
    ) -> anyhow::Result<Option<Arc<Team>>> {
        check(config)?;
        Ok(None)
    }

    /// True when `scope` is a team scope.
    pub(crate) fn owns(&self, scope: &Scope) -> bool {
        self.prefixes.iter().any(|p| scope.is_within(p))
    }

    /// True when `scope` holds team scopes below it (a query on `team` searches them).
    pub(crate) fn overlaps(&self, scope: &Scope) -> bool {
        self.owns(scope) || self.prefixes.iter().any(|p| p.is_within(scope))
    }

    /// The team side, or `team_unavailable` while its database cannot be reached.
    pub(crate) fn side(&self) -> Result<Side, ErrorObject> {
        match lock(&self.side).as_ref() {
            Some(s) => Ok(s.clone()),
            None => Err(unavailable(self.trouble().map(|t| t.0))),
        }
    }

    /// The team side when it is open.
    pub(crate) fn side_if_open(&self) -> Option<Side> {
        lock(&self.side).clone()
    }

    /// What is wrong with the team database now, and for how many seconds.
    pub(crate) fn trouble(&self) -> Option<(String, f64)> {
        lock(&self.trouble).as_ref().map(|(why, since)| (why.clone(), since.elapsed().as_secs_f64()))
    }

    /// Notes that a team call failed for want of the database (or that it works again).
    pub(crate) fn note(&self, trouble: Option<String>) {
        let mut t = lock(&self.trouble);
        match (trouble, t.is_some()) {
            (Some(why), false) => {
                tracing::warn!(cause = %why, "the team database cannot be reached: team calls answer team_unavailable");
                *t = Some((why, Instant::now()));
            }
            (None, true) if lock(&self.side).is_some() => {
                tracing::info!("the team database is reachable again");
                *t = None;
            }
            _ => {}
        }
    }

    /// Stops the follower and the team writer (after the last request was answered).
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = lock(&self.thread).take()
            && h.join().is_err()
        {
            tracing::error!("the team thread panicked");
        }
    }

    #[cfg(feature = "team")]
    fn run(
        &self,
        local: &Arc<Engine>,
        opts: EngineOptions,
        backend: Arc<amber_store::PgBackend>,
        queue: usize,
        poll: Duration,
    ) {
        // Open, retrying until the database answers.
        let engine = loop {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            match local.open_sharing(opts.clone(), backend.clone()) {
                Ok(e) => break Arc::new(e),
                Err(e) => {
                    let first = lock(&self.trouble).as_ref().is_none_or(|t| t.0 == "connecting");
                    if first {
                        tracing::warn!(cause = %e, location = %self.location, "cannot open the team store yet; retrying every 2 s");
                    }
                    *lock(&self.trouble) = Some((e.to_string(), Instant::now()));
                    self.sleep(OPEN_RETRY);
                }
            }
        };
        let (tx, rx) = mpsc::channel(queue);
        let (indexed_tx, indexed_rx) = watch::channel(engine.indexed_through());
        let writer = {
            let engine = engine.clone();
            std::thread::Builder::new()
                .name("amberd-team-writer".into())
                .spawn(move || writer::run(engine, rx, indexed_tx))
        };
        let writer = match writer {
            Ok(w) => w,
            Err(e) => {
                tracing::error!(cause = %e, "cannot start the team writer thread: team scopes are unavailable");
                return;
            }
        };
        *lock(&self.side) = Some(Side { engine, writes: tx.clone(), indexed: indexed_rx });
        *lock(&self.trouble) = None;
        tracing::info!(location = %self.location, scopes = ?self.prefixes, "team store open");
        // Follow other nodes' writes until the daemon stops: as soon as one commits
        // (PostgreSQL notifies the listener), else every `poll`.
        let mut listener = backend.listener();
        while !self.stop.load(Ordering::SeqCst) {
            self.wait_for_commit(&mut listener, poll);
            let (reply, done) = oneshot::channel();
            if tx.try_send(Job { op: WriteOp::Follow, reply, first: false }).is_ok() {
                match done.blocking_recv() {
                    Ok(Ok(done)) => {
                        if let WriteDone::Followed(n) = done
                            && n > 0
                        {
                            tracing::debug!(memories = n, "followed other nodes' team writes");
                        }
                        self.note(None);
                    }
                    Ok(Err(e)) if e.is_unavailable() => self.note(Some(e.to_string())),
                    Ok(Err(e)) => tracing::debug!(cause = %e, "following the team store failed"),
                    Err(_) => {}
                }
            }
        }
        lock(&self.side).take();
        drop(tx);
        if writer.join().is_err() {
            tracing::error!("the team writer thread panicked");
        }
    }

    /// Waits until a node commits to the team store, `poll` at most. While the store is
    /// away (the last follow failed) it only sleeps: the listener reconnects once the
    /// store answers again.
    #[cfg(feature = "team")]
    fn wait_for_commit(&self, listener: &mut amber_store::PgListener, poll: Duration) {
        let until = Instant::now() + poll;
        while !self.stop.load(Ordering::SeqCst) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            if lock(&self.trouble).is_some() {
                return self.sleep(left);
            }
            match listener.wait(left.min(STOP_CHECK)) {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => {
                    tracing::debug!(cause = %e, "not listening for team commits; following every poll");
                    return self.sleep(left);
                }
            }
        }
    }

    #[cfg(feature = "team")]
    fn sleep(&self, d: Duration) {
        let until = Instant::now() + d;
        while !self.stop.load(Ordering::SeqCst) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(STOP_CHECK));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `team_unavailable` error.
pub(crate) fn unavailable(why: Option<String>) -> ErrorObject {
    let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
    ErrorObject::new(
        ErrorKind::TeamUnavailable,
        format!(
            "the team database cannot be reached{why}: the team scopes can be neither read nor written now (nothing was written to them); local scopes work; the daemon reconnects on its own"
        ),
    )
}

/// `team.url` is set but this amberd was built without the `team` feature: it has no
/// PostgreSQL client, so it refuses to start rather than serve the team scopes locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "team.url is set, but this amberd was built without the `team` feature (it has no PostgreSQL client): \
     rebuild it with --features team (on by default: cargo build --release -p amber-daemon), \
     or remove the [team] table to keep every scope local"
)]
pub struct TeamFeatureMissing;

/// Checks `[team]` before anything opens: the URL as the PostgreSQL client reads it (and
/// that it holds no password).
#[cfg(feature = "team")]
pub(crate) fn check(config: &TeamConfig) -> anyhow::Result<()> {
    if let Some(url) = &config.url {
        crate::team_url::parse_url(url, &config.password_env)?;
    }
    Ok(())
}

/// Checks `[team]` before anything opens: without the `team` feature, no URL may be set
/// ([`TeamFeatureMissing`]).
#[cfg(not(feature = "team"))]
pub(crate) fn check(config: &TeamConfig) -> anyhow::Result<()> {
    match config.url {
        Some(_) => Err(TeamFeatureMissing.into()),
        None => Ok(()),
    }
}
