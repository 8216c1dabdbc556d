//! Team memory: scopes under the `[team] scopes` prefixes live in PostgreSQL, shared by
//! every amberd pointed at it; every other scope stays in the local SQLite store.
//!
//! The team side is a second engine over `amber_store::PgBackend`, with its derived
//! indexes (tantivy, usearch) in `<data_dir>/team/` and the model instances shared with
//! the local engine. Its own writer thread commits this node's team writes; a follower
//! (this file's thread) asks the writer to follow what other nodes committed
//! ([`amber_engine::Engine::follow`]) as soon as PostgreSQL notifies a commit, and every
//! `poll_ms` at the latest, so the indexer indexes their memories as it indexes ours. The team engine opens in the background: while the database
//! cannot be reached, team calls answer `team_unavailable` and local scopes serve as
//! usual; the thread keeps trying.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use amber_core::Scope;
use amber_engine::{Engine, EngineOptions};
use amber_ipc::config::TeamConfig;
use amber_ipc::protocol::{ErrorKind, ErrorObject};
use tokio::sync::{mpsc, oneshot, watch};

use crate::writer::{self, Job, WriteDone, WriteOp};

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
const OPEN_RETRY: Duration = Duration::from_secs(2);
/// How often the team thread looks whether the daemon is stopping while it waits.
const STOP_CHECK: Duration = Duration::from_millis(100);

impl Team {
    /// Starts the team side when `[team]` is configured: the engine opens in the
    /// background (see the module docs).
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
        let password = password_for(url, &config.password_env);
        let backend = amber_store::PgBackend::new(&with_password(url, password.as_deref()));
        let team = Arc::new(Team {
            prefixes,
            location: url.clone(),
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
            if tx.try_send(Job { op: WriteOp::Follow, reply }).is_ok() {
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

/// The password for `url`: the environment variable `env`, else the first matching line
/// of `~/.pgpass` (or `$PGPASSFILE`), as libpq reads it.
fn password_for(url: &str, env: &str) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")));
    password_from(url, std::env::var(env).ok(), file.as_deref())
}

fn password_from(url: &str, env_value: Option<String>, pgpass: Option<&Path>) -> Option<String> {
    if let Some(p) = env_value.filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let text = std::fs::read_to_string(pgpass?).ok()?;
    let parts = UrlParts::parse(url)?;
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let f: Vec<&str> = line.splitn(5, ':').collect();
        let fits = |pat: &str, v: &str| pat == "*" || pat == v;
        (f.len() == 5
            && fits(f[0], &parts.host)
            && fits(f[1], &parts.port)
            && fits(f[2], &parts.db)
            && fits(f[3], &parts.user))
        .then(|| f[4].to_string())
    })
}

/// The URL with the password put in (percent-encoded).
fn with_password(url: &str, password: Option<&str>) -> String {
    let (Some(p), Some((scheme, rest))) = (password, url.split_once("://")) else { return url.to_string() };
    let Some((user, host)) = rest.split_once('@') else { return url.to_string() };
    let enc: String = p
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("{scheme}://{user}:{enc}@{host}")
}

struct UrlParts {
    user: String,
    host: String,
    port: String,
    db: String,
}

impl UrlParts {
    fn parse(url: &str) -> Option<UrlParts> {
        let rest = url.split_once("://")?.1;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, hostport) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "5432"));
        let db = path.split('?').next().unwrap_or("");
        let user = if user.is_empty() { std::env::var("USER").unwrap_or_default() } else { user.to_string() };
        let db = if db.is_empty() { user.clone() } else { db.to_string() };
        Some(UrlParts { user, host: host.to_string(), port: port.to_string(), db })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_goes_into_the_url_encoded() {
        assert_eq!(
            with_password("postgres://agent@db:5432/amber", Some("p@ss:w/rd")),
            "postgres://agent:p%40ss%3Aw%2Frd@db:5432/amber"
        );
        assert_eq!(with_password("postgres://agent@db/amber", None), "postgres://agent@db/amber");
    }

    #[test]
    fn the_password_comes_from_the_environment_else_pgpass() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "# comment\nother:5432:amber:agent:wrong\ndb:*:amber:agent:right\n").unwrap();
        let url = "postgres://agent@db:6543/amber";
        assert_eq!(password_from(url, None, Some(&file)).as_deref(), Some("right"));
        assert_eq!(password_from(url, Some("env".into()), Some(&file)).as_deref(), Some("env"));
        assert_eq!(password_from("postgres://someone@db:6543/amber", None, Some(&file)), None);
        assert_eq!(password_from(url, None, None), None);
    }
}
