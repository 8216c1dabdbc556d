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
        let parsed = parse_url(url, &config.password_env)?;
        let password = password_for(&parsed, &config.password_env);
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

/// Why `[team] url` cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TeamUrlError {
    /// The PostgreSQL client cannot read it.
    #[error(
        "team.url is not a PostgreSQL connection string the client can read ({detail}): write it as postgres://USER@HOST:PORT/DATABASE"
    )]
    Unreadable { detail: String },
    /// It holds a password (never repeated here).
    #[error(
        "team.url holds a password ({form}): take it out, and put the password in the environment variable {env} (team.password_env) or in ~/.pgpass (host:port:database:user:password, mode 0600)"
    )]
    Password { form: &'static str, env: String },
}

/// `[team] url` read by the PostgreSQL client's own parser (a `postgres://` URL or the
/// key=value form), refused when it holds a password in any form: `user:password@`,
/// a `password=` query parameter, or a `password=` pair.
pub(crate) fn parse_url(url: &str, env: &str) -> Result<postgres::Config, TeamUrlError> {
    let config = url.parse::<postgres::Config>().map_err(|e| {
        let mut detail = e.to_string();
        if let Some(source) = std::error::Error::source(&e) {
            detail = format!("{detail}: {source}");
        }
        TeamUrlError::Unreadable { detail }
    })?;
    if config.get_password().is_some() {
        let form = match url.split_once("://") {
            Some((_, rest)) => match rest.split(['/', '?']).next().and_then(|a| a.split_once('@')) {
                Some((userinfo, _)) if userinfo.contains(':') => "as user:password@ in the URL",
                _ => "as a password= query parameter",
            },
            None => "as a password= pair",
        };
        return Err(TeamUrlError::Password { form, env: env.to_string() });
    }
    Ok(config)
}

/// The password for the database `config` names: the environment variable `env`, else
/// the first matching line of `~/.pgpass` (or `$PGPASSFILE`), as libpq reads it.
fn password_for(config: &postgres::Config, env: &str) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")));
    password_from(config, std::env::var(env).ok(), file.as_deref())
}

fn password_from(
    config: &postgres::Config,
    env_value: Option<String>,
    pgpass: Option<&Path>,
) -> Option<String> {
    if let Some(p) = env_value.filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let text = std::fs::read_to_string(pgpass?).ok()?;
    // As libpq: a socket directory matches `localhost`; the user defaults to the
    // login name, the database to the user.
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user =
        config.get_user().map(str::to_string).unwrap_or_else(|| std::env::var("USER").unwrap_or_default());
    let db = config.get_dbname().map(str::to_string).unwrap_or_else(|| user.clone());
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let f = pgpass_fields(line);
        let fits = |pat: &str, v: &str| pat == "*" || pat == v;
        (f.len() == 5 && fits(&f[0], &host) && fits(&f[1], &port) && fits(&f[2], &db) && fits(&f[3], &user))
            .then(|| f[4].clone())
    })
}

/// A `.pgpass` line's fields: split at `:`, with `\:` and `\\` standing for `:` and `\`.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one field at least").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_refused_in_every_form_and_never_repeated() {
        for (url, form) in [
            ("postgres://agent:s3cret@db:5432/amber", "user:password@"),
            ("postgresql://agent:@db/amber", "user:password@"),
            ("postgres://agent@db/amber?password=s3cret", "query parameter"),
            ("postgres://agent@db/amber?sslmode=disable&password=s3cret", "query parameter"),
            ("host=db user=agent password=s3cret dbname=amber", "password= pair"),
            ("host=db user=agent password='s3 cret' dbname=amber", "password= pair"),
        ] {
            let err = parse_url(url, "AMBER_TEAM_PASSWORD").unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, TeamUrlError::Password { .. }), "{url}: {text}");
            assert!(
                text.contains(form) && text.contains("AMBER_TEAM_PASSWORD") && text.contains("~/.pgpass"),
                "{text}"
            );
            assert!(!text.contains("s3cret") && !text.contains("s3 cret"), "{text}");
        }
        let err = parse_url("postgres://agent@db:notaport/amber", "X").unwrap_err();
        assert!(matches!(err, TeamUrlError::Unreadable { .. }), "{err}");
        assert!(parse_url("postgres://agent@db:5432/amber", "X").is_ok());
        assert!(parse_url("host=db user=agent dbname=amber", "X").is_ok());
    }

    #[test]
    fn the_password_comes_from_the_environment_else_pgpass() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:amber:agent:wrong\ndb:*:amber:agent:right\ndb:*:amber:a\\:b:es\\:caped\n",
        )
        .unwrap();
        let config = |url: &str| parse_url(url, "X").unwrap();
        let url = config("postgres://agent@db:6543/amber");
        assert_eq!(password_from(&url, None, Some(&file)).as_deref(), Some("right"));
        assert_eq!(
            password_from(&config("host=db port=6543 user=agent dbname=amber"), None, Some(&file)).as_deref(),
            Some("right"),
            "the key=value form too"
        );
        assert_eq!(password_from(&url, Some("env".into()), Some(&file)).as_deref(), Some("env"));
        assert_eq!(password_from(&config("postgres://someone@db:6543/amber"), None, Some(&file)), None);
        assert_eq!(
            password_from(&config("host=db user='a:b' dbname=amber"), None, Some(&file)).as_deref(),
            Some("es:caped")
        );
        assert_eq!(password_from(&url, None, None), None);
    }
}
