//! `amberd`: the daemon that serves Amber's engine on a local socket.
//!
//! # Brief overview
//! - One process per data directory, guarded by a lock file (`<data_dir>/amberd.lock`,
//!   holding the pid); a second daemon on the same directory refuses to start.
//! - The socket (0600, in a 0700 folder) speaks JSON-RPC 2.0, one request per line; see
//!   `docs/PROTOCOL.md` and the `amber-ipc` crate.
//! - Reads (`recall`, `get`, `status`) run concurrently on the blocking pool. Writes go
//!   through one writer thread fed by a bounded queue: a full queue answers `busy`. A
//!   write is answered once its SQLite transaction commits; the writer indexes after.
//!   Memories go as their own operations (`rpc::write`), every other write (outcomes,
//!   runs, session records, links, releases) as a closure (`rpc::write_with`) given the
//!   writer thread's `EngineWriter`, the store's one write connection. The advice
//!   passes, which call the model between their writes, run on the blocking pool and
//!   queue each write (`rpc::BlockingWriter`); the last session records at shutdown are
//!   queued after new writes are refused (`rpc::write_at_shutdown`).
//! - At most `max_connections` connections are served; one more is answered
//!   `too_many_connections` and closed. A connection with no request for
//!   `idle_connection_timeout_s`, a request line left incomplete for `frame_timeout_ms`,
//!   or a reply left unread for `reply_timeout_ms` is closed (docs/RELIABILITY.md).
//! - SIGINT, SIGTERM and the `shutdown` method stop accepting, let in-flight requests
//!   finish, drain the write queue, save the vector index and remove the socket file.
//! - On a full disk a write answers `storage_full`, reads go on, indexing is retried with
//!   a growing wait (and at once when space returns), and the daemon starts all the
//!   same; `status` lists what is degraded (docs/RELIABILITY.md).
//! - The data directory, the files in it and the socket path are checked before use: a
//!   planted symbolic link is refused, never followed (`paths`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod agent_writes;
mod ancestry;
mod dispatch;
mod extract;
mod live;
mod methods;
mod model;
mod paths;
mod peer;
mod person_log;
mod purge_due;
mod route;
mod rpc;
mod server;
mod shell_writes;
mod sources;
mod state;
mod team;
#[cfg(feature = "team")]
mod team_url;
mod web;
mod writer;

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use amber_engine::{Engine, EngineOptions};
use amber_ipc::{Config, socket_name};
use anyhow::{Context, bail};
use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::traits::tokio::Listener as _;
use tokio::sync::{Semaphore, mpsc, watch};

use crate::server::{refuse, serve_connection};
use crate::state::{Shared, shutdown_asked};

pub use team::TeamFeatureMissing;

/// The lock file's name in the data directory.
pub const LOCK_FILE: &str = "amberd.lock";

/// How long shutdown waits for open requests to finish.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Holds the data directory's lock for the daemon's lifetime.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// Prepares the data directory (created 0700, or checked: see `paths`) and takes the
    /// lock, or says which process holds it.
    pub fn acquire(data_dir: &Path) -> anyhow::Result<DataDirLock> {
        crate::paths::prepare_data_dir(data_dir)?;
        let path = data_dir.join(LOCK_FILE);
        let mut file = crate::paths::open_lock_file(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                bail!(
                    "another amberd (pid {}) is already serving {}; stop it with `amber daemon stop`",
                    pid.trim(),
                    data_dir.display()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        // The pid is for people; the lock is the flock. On a full disk it may not fit.
        let pid = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.sync_all());
        if let Err(e) = pid {
            tracing::warn!(cause = %e, lock = %path.display(), "cannot write the pid into the lock file");
        }
        Ok(DataDirLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
fn own_uid() -> Option<u32> {
    Some(rustix::process::geteuid().as_raw())
}

#[cfg(not(unix))]
fn own_uid() -> Option<u32> {
    None
}

/// Runs the daemon until it is asked to stop. `ready` is called once the socket accepts
/// connections, with its path.
pub fn run(config: Config, ready: impl FnOnce(&Path)) -> anyhow::Result<()> {
    let started = Instant::now();
    // `[team]` is refused before anything opens (a password in its URL, or no `team` feature).
    crate::team::check(&config.team)?;
    let lock = DataDirLock::acquire(&config.data_dir)?;
    tracing::info!(data_dir = %config.data_dir.display(), pid = std::process::id(), "amberd starting");

    let mut opts = EngineOptions::new(&config.data_dir);
    opts.amber_home = config.amber_home.clone();
    opts.query_model = config.query_model;
    let (open_with, migrate_to) = crate::model::choose(&config);
    opts.model = open_with;
    opts.background_nice = config.index_nice;
    opts.session_context = config.session_context;
    opts.standing_strength = config.standing.strength;
    opts.age_floor = config.standing.age_floor;
    // The socket is checked before the engine opens: a refusal comes at once.
    let socket = config.socket_path();
    crate::paths::prepare_socket(&socket)?;
    let engine = Engine::open(opts.clone())
        .with_context(|| format!("cannot open the store in {}", config.data_dir.display()))?;
    let engine = Arc::new(engine);
    let migrations = crate::model::Migrations::default();
    let migrate_to = migrate_to.map(|(name, model)| {
        let mut next = opts.clone();
        next.model = model.clone();
        (name, next, model)
    });
    let team = crate::team::Team::start(&config.team, &config.data_dir, &engine, opts, config.write_queue)?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("amberd")
        .build()
        .context("cannot start the async runtime")?;
    let result =
        rt.block_on(serve(config, engine, team, (migrations, migrate_to), socket.clone(), started, ready));
    // Anything still running on the blocking pool (a long recall) gets a moment to end.
    rt.shutdown_timeout(Duration::from_secs(5));
    drop(lock);
    tracing::info!("amberd stopped");
    result
}

async fn serve(
    config: Config,
    engine: Arc<Engine>,
    team: Option<Arc<crate::team::Team>>,
    (migrations, migrate_to): (
        crate::model::Migrations,
        Option<(String, EngineOptions, amber_core::model::ModelConfig)>,
    ),
    socket: PathBuf,
    started: Instant,
    ready: impl FnOnce(&Path),
) -> anyhow::Result<()> {
    let name = socket_name(&socket).with_context(|| format!("bad socket path {}", socket.display()))?;
    let opts = ListenerOptions::new().name(name).reclaim_name(true);
    #[cfg(unix)]
    let opts = {
        use interprocess::os::unix::local_socket::ListenerOptionsExt;
        opts.mode(0o600)
    };
    let listener = opts.create_tokio().with_context(|| format!("cannot listen on {}", socket.display()))?;
    crate::paths::make_socket_private(&socket)?;

    let judge: Arc<dyn amber_tiers::judge::Judge> = amber_tiers::judge::from_config(&config.judge)
        .map_err(|e| anyhow::anyhow!("the [judge] config cannot be used: {e}"))?
        .into();
    let extract = crate::extract::Extraction::from_config(&config.extract)
        .map_err(|e| anyhow::anyhow!("the [extract] config cannot be used: {e}"))?;
    let learner = amber_tiers::advice::Learner::from_config(&config.learn)
        .map_err(|e| anyhow::anyhow!("the [learn] config cannot be used: {e}"))?;
    let resumed = crate::methods::session::resumable(&engine);
    if !resumed.is_empty() {
        tracing::info!(sessions = resumed.len(), "resuming sessions that were live at the last stop");
    }
    let (write_tx, write_rx) = mpsc::channel(config.write_queue);
    let (indexed_tx, indexed_rx) = watch::channel(engine.indexed_through());
    let (shutdown_tx, mut shutdown_rx) = watch::channel(false);
    let writer = {
        let engine = engine.clone();
        std::thread::Builder::new()
            .name("amberd-writer".into())
            .spawn(move || writer::run(engine, write_rx, indexed_tx))
            .context("cannot start the writer thread")?
    };
    let max_connections = config.max_connections;
    let shared = Arc::new(Shared {
        engine,
        config,
        socket: socket.display().to_string(),
        writes: write_tx,
        indexed: indexed_rx,
        shutdown: shutdown_tx,
        connections: AtomicUsize::new(0),
        started,
        uid: own_uid(),
        sessions: crate::live::Sessions::new(judge, resumed),
        extract,
        learner,
        team,
        compiling: tokio::sync::Mutex::new(()),
        sources: std::sync::Mutex::new(None),
        ui_start: |s, here| Box::pin(async move { crate::web::start(&s, here).await }),
        web: tokio::sync::Mutex::new(None),
        migrations,
    });
    // A migration the start found due (another model wanted than the vectors'),
    // its switch on the writer.
    if let Some((name, opts, model)) = migrate_to {
        let writer = Box::new(crate::rpc::BlockingWriter::new(&shared));
        shared.migrations.start(
            shared.engine.clone(),
            writer,
            opts,
            name,
            model,
            shared.config.interject.gate,
        );
    }
    let idle = tokio::spawn(crate::methods::session::idle_loop(shared.clone()));
    let advice_timer = tokio::spawn(crate::methods::judge::timer(shared.clone()));
    tokio::spawn(crate::purge_due::sweep_loop(shared.clone()));
    crate::sources::start(&shared);
    spawn_signal_handler(shared.shutdown.clone());

    tracing::info!(socket = %socket.display(), secs = started.elapsed().as_secs_f64(), "amberd ready");
    ready(&socket);

    // A permit per connection served. A connection past the limit is still accepted,
    // answered `too_many_connections` and closed, so no client waits unanswered.
    let limit = Arc::new(Semaphore::new(max_connections));
    let mut refused = Refusals::default();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let conn = tokio::select! {
            c = listener.accept() => c,
            _ = shutdown_asked(&mut shutdown_rx) => break,
        };
        match conn {
            Ok(conn) => match limit.clone().try_acquire_owned() {
                Ok(permit) => {
                    let shared = shared.clone();
                    tasks.spawn(async move {
                        serve_connection(conn, shared).await;
                        drop(permit);
                    });
                }
                Err(_) => {
                    refused.note(max_connections);
                    refuse(conn, max_connections).await;
                }
            },
            Err(e) => {
                tracing::warn!(cause = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    tracing::info!("shutting down: no new connections; finishing open requests");
    // A migration stops at its next batch; the next start resumes it from the cache.
    shared.migrations.stop();
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    if tokio::time::timeout(DRAIN_TIMEOUT, async { while tasks.join_next().await.is_some() {} })
        .await
        .is_err()
    {
        tracing::warn!("some requests did not finish within {DRAIN_TIMEOUT:?}; closing them");
        tasks.abort_all();
    }
    crate::web::stop(&shared).await;
    let _ = idle.await;
    // A timer pass may be waiting on the model: it is not waited for (its writes are
    // transactions; what it did not store is done at the next pass).
    advice_timer.abort();
    crate::methods::session::save_all(&shared).await;
    if let Some(team) = shared.team.clone() {
        // The team writer drains its queue and saves its vector index.
        let _ = tokio::task::spawn_blocking(move || team.stop()).await;
    }
    // The writer drains its queue and stops once the last sender is gone.
    drop(shared);
    tokio::task::spawn_blocking(move || writer.join())
        .await
        .ok()
        .and_then(|r| r.ok())
        .context("the writer thread panicked")?;
    Ok(())
}

/// Counts connections refused for `max_connections` and logs them at most once a minute.
#[derive(Default)]
struct Refusals {
    since_log: u64,
    logged: Option<Instant>,
}

impl Refusals {
    fn note(&mut self, max_connections: usize) {
        self.since_log += 1;
        if self.logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(60)) {
            tracing::warn!(
                refused = self.since_log,
                max_connections,
                "connections refused: the daemon serves max_connections already (too_many_connections)"
            );
            self.since_log = 0;
            self.logged = Some(Instant::now());
        }
    }
}

fn spawn_signal_handler(shutdown: watch::Sender<bool>) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) =
                (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
            else {
                tracing::error!("cannot install signal handlers");
                return;
            };
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                _ = int.recv() => tracing::info!("SIGINT: shutting down"),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("Ctrl-C: shutting down");
        }
        let _ = shutdown.send(true);
    });
}
