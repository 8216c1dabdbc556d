//! The team store: the same [`MemoryStore`] over PostgreSQL, shared by every amberd
//! pointed at one database.
//!
//! - Connections are synchronous (`postgres`), used from plain and `spawn_blocking`
//!   threads. Connecting times out after 5 s, TCP keepalives are on and a statement is
//!   cancelled after 60 s, so no call hangs forever.
//! - A connection that broke is re-established on the next call: a read is retried once
//!   on a fresh connection, a write is not (it returns [`Error::Unavailable`] and the next
//!   call connects again). A write after an idle second first checks its connection.
//! - Every transaction that assigns seqs or changes what `scan` and `max_seq` return
//!   first takes one advisory lock, so seqs commit in order and a tailer reading
//!   `scan(after, max_seq)` never skips a seq that commits later.
//! - The schema is versioned (`amber_schema`), migrated forward in a transaction, and a
//!   database with a newer version is refused untouched ([`Error::SchemaTooNewAt`]).
//!
//! # Who reads and writes which scopes
//!
//! Row-level security on every table that says something about a scope (schema 4):
//! rows with a scope column by it (`memories`, `runs`, `sessions`, the advice tables,
//! the change log, graph entities and names, project roots, moves), the others through
//! the row they refer to (outcomes, links and supersessions through their memory,
//! rewards and judgements through their run, graph facts, mentions and invalidations
//! through their entity) lets a role see the rows whose scope starts with a prefix
//! granted to it in `amber_grants`, and write them only when the grant says
//! `can_write`. A scope equal to a prefix without its trailing `/` (`team/a` for
//! `team/a/`) counts as under it. A reader's own books (inbox servings, holds, the
//! guard's log, advice servings) are written by any role that reads their memory or
//! scope. Rows a role cannot see do not exist for it (`get` gives None, `scan` skips
//! them); a write it may not make fails with [`Error::Postgres`] ("new row violates
//! row-level security policy"). The table owner (the admin whose amberd first opened
//! the store, which created the schema) and superusers are not restricted. Setup, as the owner,
//! once per agent role, after the schema exists:
//!
//! ```sql
//! CREATE ROLE agent_a LOGIN;  -- add PASSWORD '…' unless the server trusts the host
//! GRANT USAGE ON SCHEMA public TO agent_a;
//! GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO agent_a;
//! GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO agent_a;
//! REVOKE INSERT, UPDATE, DELETE ON amber_grants FROM agent_a;  -- grants are the owner's
//! INSERT INTO amber_grants (role, prefix, can_write) VALUES ('agent_a', 'team/a/', true);
//! -- read-only elsewhere:
//! INSERT INTO amber_grants (role, prefix, can_write) VALUES ('agent_a', 'team/shared/', false);
//! ```
//!
//! A later schema migration may add tables: run the `GRANT`s again after upgrading
//! (schema 7 added `amber_cache_secret`; until a role may read it, its node works
//! without the embedding cache).
//! Never grant `TRUNCATE` (or `ALL`): it ignores row-level security.
//!
//! The tables every scope shares are under row-level security too (schema 6), whatever
//! table privileges a role has: `amber_schema` and `meta` are read by all and changed
//! only by the owner (a role may add a new `meta` key); `amber_seq` only counts up, one
//! at a time (a trigger), and is never deleted; `amber_grants` shows a role its own
//! grants only, and no role writes it. The embedding cache (schema 7, `vectors.rs`)
//! keeps a vector per scope under that scope's grants: a role reads the vectors of the
//! scopes it may read and caches vectors only in scopes it may write; a vector is keyed
//! by HMAC-SHA256 under the team's secret (`amber_cache_secret`, read by every role with
//! a grant, written by none) of its scope and the SHA-256 of its chunk's text, so the
//! rows confirm no guess about a text; a second write for the same key is ignored (`ON
//! CONFLICT DO NOTHING`), and no role updates or deletes one; `written_by` names the
//! role that wrote it. What no check can catch: a role that may write a scope may cache
//! a wrong vector there for a text nobody embedded yet. One of the model's shape then
//! stands for that exact text in that scope on every node (it misranks that text, no
//! other); any other row (not a vector, another dimension, a non-finite value, all
//! zeros) is skipped and the text embedded again by each node that needs it. The owner
//! removes a role's vectors with `DELETE FROM embeddings WHERE written_by = '…'`.
//! Connect each agent's amberd as its role: `postgres://agent_a:…@host:5432/amber`.

mod advice;
mod documents;
mod graph;
pub(crate) mod listen;
mod memories;
mod portable;
mod runs;
mod schema;
mod scopes;
mod sessions;
mod standing;
mod threads;
mod vectors;
mod verdicts;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use crate::store::RawRow;
use crate::{Backend, Error, MemoryStore, Result};

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The server cancels a statement running longer than this.
const STATEMENT_TIMEOUT: &str = "60s";
/// A write on a connection idle longer than this checks the connection first.
const IDLE_CHECK: Duration = Duration::from_secs(1);
/// Prepared statements kept per connection, at most.
const MAX_STATEMENTS: usize = 64;
/// The advisory lock every seq-changing transaction takes ("amber" in ASCII).
pub(crate) const SEQ_LOCK: i64 = 0x0061_6d62_6572;
/// The advisory lock a migration takes.
pub(crate) const MIGRATE_LOCK: i64 = 0x0061_6d62_6572 + 1;

/// The team store's backend: a PostgreSQL database by URL
/// (`postgres://user[:password]@host:port/database`, or the key=value form), and the
/// password to log in with when it is kept apart from the URL.
#[derive(Debug, Clone)]
pub struct PgBackend {
    url: String,
    password: Option<Password>,
}

impl PgBackend {
    /// The database at `url`; nothing is connected until a store is opened.
    pub fn new(url: &str) -> PgBackend {
        PgBackend { url: url.to_string(), password: None }
    }

    /// Logs in with `password` (over any in the URL). It is never put in the URL, the
    /// location or `Debug` output.
    pub fn with_password(mut self, password: Option<String>) -> PgBackend {
        self.password = password.map(Password);
        self
    }
}

/// A password, shown as `***` by `Debug`.
#[derive(Clone)]
pub(crate) struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Backend for PgBackend {
    fn open_writer(&self) -> Result<Box<dyn MemoryStore>> {
        let s = PgStore::open(&self.url, self.password.clone(), false)?;
        s.migrate()?;
        Ok(Box::new(s))
    }

    fn open_reader(&self) -> Result<Box<dyn MemoryStore>> {
        let s = PgStore::open(&self.url, self.password.clone(), true)?;
        s.check_version()?;
        Ok(Box::new(s))
    }

    fn location(&self) -> String {
        redact(&self.url)
    }
}

/// The URL with any password removed.
pub(crate) fn redact(url: &str) -> String {
    if let Some(start) = url.find("://") {
        let rest = &url[start + 3..];
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..end];
        if let Some(at) = authority.rfind('@') {
            let userinfo = &authority[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            return format!("{}{}{}", &url[..start + 3], user, &rest[at..]);
        }
        return url.to_string();
    }
    url.split_whitespace().filter(|kv| !kv.starts_with("password=")).collect::<Vec<_>>().join(" ")
}

/// What a statement closure can fail with: a PostgreSQL error (sorted into
/// [`Error::Postgres`] or [`Error::Unavailable`] by the caller) or a store error.
pub(crate) enum Fail {
    Pg(postgres::Error),
    Store(Error),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Store(e)
    }
}

impl From<amber_core::InvalidInput> for Fail {
    fn from(e: amber_core::InvalidInput) -> Fail {
        Fail::Store(e.into())
    }
}

/// A statement closure's result.
pub(crate) type Q<T> = std::result::Result<T, Fail>;

/// True when a PostgreSQL error means the connection (or the server) is gone rather
/// than a statement failing.
fn is_connection_error(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        let c = code.code();
        // connection_exception, admin/crash shutdown, cannot connect now
        return c.starts_with("08") || c == "57P01" || c == "57P02" || c == "57P03";
    }
    let text = e.to_string();
    text.starts_with("error communicating with the server")
        || text.starts_with("error connecting to server")
        || text.starts_with("timeout waiting for server")
        || text.contains("connection closed")
}

/// One connection to the team store, re-established when it broke.
pub(crate) struct PgStore {
    url: String,
    password: Option<Password>,
    /// A reader's transactions are read-only (as SQLite's `query_only`).
    read_only: bool,
    pub(crate) location: String,
    client: RefCell<Option<Client>>,
    /// The connection's prepared statements by SQL (the frequent reads), dropped with
    /// the connection and after any error.
    statements: RefCell<HashMap<String, postgres::Statement>>,
    /// The team's embedding cache secret once read on this connection (`vectors.rs`),
    /// or when it was found unreadable; dropped with the statements.
    cache_secret: RefCell<Option<(Option<[u8; 32]>, Instant)>>,
    last_used: Cell<Instant>,
}

impl PgStore {
    /// Connects to `url` (for reading only when `read_only`).
    fn open(url: &str, password: Option<Password>, read_only: bool) -> Result<PgStore> {
        let store = Self::unconnected(url, password, read_only);
        let client = store.new_client()?;
        *store.client.borrow_mut() = Some(client);
        Ok(store)
    }

    /// The store at `url`, not connected yet.
    fn unconnected(url: &str, password: Option<Password>, read_only: bool) -> PgStore {
        PgStore {
            url: url.to_string(),
            password,
            read_only,
            location: redact(url),
            client: RefCell::new(None),
            statements: RefCell::new(HashMap::new()),
            cache_secret: RefCell::new(None),
            last_used: Cell::new(Instant::now()),
        }
    }

    fn new_client(&self) -> Result<Client> {
        let mut config = postgres::Config::from_str(&self.url).map_err(|e| Error::Unavailable {
            location: self.location.clone(),
            detail: format!("bad URL: {e}"),
        })?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30))
            .keepalives_interval(Duration::from_secs(10))
            .keepalives_retries(3)
            .tcp_user_timeout(Duration::from_secs(60))
            .options(&format!(
                "-c statement_timeout={STATEMENT_TIMEOUT}{}",
                if self.read_only { " -c default_transaction_read_only=on" } else { "" }
            ));
        if let Some(Password(p)) = &self.password {
            config.password(p);
        }
        if config.get_application_name().is_none() {
            config.application_name("amberd");
        }
        config.connect(NoTls).map_err(|e| self.unavailable(&e))
    }

    fn unavailable(&self, e: &postgres::Error) -> Error {
        let mut detail = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            detail.push_str(": ");
            detail.push_str(&s.to_string());
            source = s.source();
        }
        Error::Unavailable { location: self.location.clone(), detail }
    }

    /// The path-like name row decoding reports corrupt rows under.
    pub(crate) fn path(&self) -> &Path {
        Path::new(&self.location)
    }

    fn sort(&self, fail: Fail) -> (Error, bool) {
        match fail {
            Fail::Store(e) => (e, false),
            Fail::Pg(e) if is_connection_error(&e) => (self.unavailable(&e), true),
            Fail::Pg(source) => (Error::Postgres { location: self.location.clone(), source }, false),
        }
    }

    /// Runs `f` on the connection (connecting first if needed). A connection error
    /// drops the connection; a read (`retry`) then runs once more on a new one.
    fn call<T>(&self, retry: bool, mut f: impl FnMut(&mut Client) -> Q<T>) -> Result<T> {
        let mut slot = self.client.borrow_mut();
        let idle = self.last_used.get().elapsed() > IDLE_CHECK;
        self.last_used.set(Instant::now());
        if let Some(c) = slot.as_mut()
            && (c.is_closed() || (!retry && idle && c.is_valid(CONNECT_TIMEOUT).is_err()))
        {
            *slot = None;
        }
        for attempt in 0..2 {
            if slot.is_none() {
                self.forget_connection_state();
                *slot = Some(self.new_client()?);
            }
            let client = slot.as_mut().expect("connected above");
            match f(client) {
                Ok(v) => return Ok(v),
                Err(fail) => {
                    // A statement prepared before a migration may no longer fit.
                    self.forget_connection_state();
                    let (err, broken) = self.sort(fail);
                    if !broken {
                        return Err(err);
                    }
                    *slot = None;
                    if !retry || attempt == 1 {
                        return Err(err);
                    }
                    tracing::warn!(location = %self.location, error = %err, "team store connection broke; reconnecting");
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// Drops what was kept for the connection: its prepared statements and the cache
    /// secret read on it.
    fn forget_connection_state(&self) {
        self.statements.borrow_mut().clear();
        self.cache_secret.borrow_mut().take();
    }

    /// `sql` prepared on this connection, once per connection.
    pub(crate) fn prepared(
        &self,
        c: &mut Client,
        sql: &str,
    ) -> std::result::Result<postgres::Statement, postgres::Error> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql)?;
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= MAX_STATEMENTS {
            cache.clear();
        }
        cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Runs a read (retried once on a new connection if the connection broke).
    pub(crate) fn read<T>(&self, f: impl FnMut(&mut Client) -> Q<T>) -> Result<T> {
        self.call(true, f)
    }

    /// Runs a write (never re-run: a broken connection gives [`Error::Unavailable`]).
    pub(crate) fn write<T>(&self, f: impl FnMut(&mut Client) -> Q<T>) -> Result<T> {
        self.call(false, f)
    }
}

/// A memory row's columns, in [`RawRow`] order.
pub(crate) const MEMORY_COLUMNS: &str = crate::store::MEMORY_COLUMNS;

/// Reads a memory row selected with [`MEMORY_COLUMNS`].
pub(crate) fn raw_row(r: &postgres::Row) -> std::result::Result<RawRow, postgres::Error> {
    raw_row_at(r, 0)
}

/// Reads a memory row whose [`MEMORY_COLUMNS`] start at column `at`.
pub(crate) fn raw_row_at(r: &postgres::Row, at: usize) -> std::result::Result<RawRow, postgres::Error> {
    Ok(RawRow {
        seq: r.try_get(at)?,
        id: r.try_get(at + 1)?,
        scope: r.try_get(at + 2)?,
        content: r.try_get(at + 3)?,
        kind: r.try_get(at + 4)?,
        source: r.try_get(at + 5)?,
        author: r.try_get(at + 6)?,
        session_id: r.try_get(at + 7)?,
        created_at: r.try_get(at + 8)?,
        event_time: r.try_get(at + 9)?,
        metadata: r.try_get(at + 10)?,
        forgotten_at: r.try_get(at + 11)?,
        recipient: r.try_get(at + 12)?,
        reply_to: r.try_get(at + 13)?,
        supersedes: r.try_get(at + 14)?,
        weight: r.try_get(at + 15)?,
        used_at: r.try_get(at + 16)?,
        archived_at: r.try_get(at + 17)?,
        superseded_by: r.try_get(at + 18)?,
    })
}

/// Decodes memory rows.
pub(crate) fn memories(path: &Path, rows: &[postgres::Row]) -> Q<Vec<amber_core::Memory>> {
    rows.iter().map(|r| Ok(crate::store::decode(raw_row(r)?, path)?)).collect()
}

/// Takes the seq lock for the rest of the transaction.
pub(crate) fn seq_lock(tx: &mut postgres::Transaction<'_>) -> Q<()> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEQ_LOCK])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn the_location_has_no_password() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgresql://h/db?x=1"), "postgresql://h/db?x=1");
        assert_eq!(redact("host=h user=u password=secret dbname=d"), "host=h user=u dbname=d");
    }
}
