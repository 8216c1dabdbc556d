//! The team store against a real PostgreSQL (`scripts/pg.sh`, or `AMBER_PG_URL`): the
//! same scenarios over the SQLite store and the PostgreSQL store give the same results,
//! plus what only a shared server has (concurrent writers, a tailer, reconnects, row-level
//! security, schema versions). Each test gets a fresh database, so they run in parallel.

use std::fmt::Debug;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock};

use amber_core::{MemoryType, NewMemory, Scope};
use amber_store::{Backend, Error, MemoryStore, PgBackend, Purged, Store};

/// Runs `scripts/pg.sh` with these environment variables; its stdout, or a panic with
/// its message.
fn pg_sh(arg: &str, env: &[(&str, &str)]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg(arg)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} {arg} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The admin URL of the shared test server (started once).
fn admin_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| match std::env::var("AMBER_PG_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => pg_sh("start", &[]),
    })
}

/// A fresh database, dropped at the end of the test.
struct Db {
    admin: String,
    name: String,
    url: String,
}

impl Db {
    fn new() -> Db {
        Db::on(admin_url())
    }

    fn on(admin: &str) -> Db {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let name = format!("amber_t_{}_{}_{}", std::process::id(), nanos, N.fetch_add(1, Ordering::Relaxed));
        let mut c = postgres::Client::connect(admin, postgres::NoTls).expect("connect as admin");
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let (base, _) = admin.rsplit_once('/').unwrap();
        Db { admin: admin.to_string(), url: format!("{base}/{name}"), name }
    }

    fn backend(&self) -> PgBackend {
        PgBackend::new(&self.url)
    }

    fn writer(&self) -> Box<dyn MemoryStore> {
        self.backend().open_writer().unwrap()
    }

    fn sql(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// The URL of this database as another role.
    #[allow(dead_code)]
    fn url_as(&self, role: &str) -> String {
        self.url.replacen("postgres@", &format!("{role}@"), 1)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// What a scenario saw, step by step, to compare the two backends.
#[derive(Default)]
struct Transcript(Vec<String>);

impl Transcript {
    fn note<T: Debug>(&mut self, what: &str, v: T) -> T {
        self.0.push(format!("{what}: {v:?}"));
        v
    }
}

/// Runs a scenario on an in-memory SQLite store and on a PostgreSQL store and checks
/// they saw the same.
fn conformance(scenario: fn(&mut dyn MemoryStore, &mut Transcript)) {
    let mut sqlite = Store::open_in_memory().unwrap();
    let mut local = Transcript::default();
    scenario(&mut sqlite, &mut local);
    let db = Db::new();
    let mut pg = db.writer();
    let mut team = Transcript::default();
    scenario(pg.as_mut(), &mut team);
    assert!(!local.0.is_empty());
    for (i, (a, b)) in local.0.iter().zip(&team.0).enumerate() {
        assert_eq!(a, b, "step {i}: sqlite and postgres differ");
    }
    assert_eq!(local.0.len(), team.0.len());
}

fn scope(s: &str) -> Scope {
    s.parse().unwrap()
}

fn insert(s: &mut dyn MemoryStore, m: &NewMemory, now: i64) -> (amber_core::Memory, bool) {
    s.insert_batch(std::slice::from_ref(m), now).unwrap().remove(0)
}

fn memories_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let mut in_session = NewMemory::new("c");
    in_session.session_id = Some("s1".into());
    let out = s.insert_batch(&[NewMemory::new("a"), NewMemory::new("b"), in_session], 1).unwrap();
    let (a, b, c) = (out[0].0.clone(), out[1].0.clone(), out[2].0.clone());
    t.note("inserted", &out);
    let (again, new) = insert(s, &NewMemory::new("a"), 2);
    assert!(!new && again == a, "the same content is the same memory");
    let (other, new) = insert(s, &NewMemory::new("a").in_scope(scope("team/x")), 3);
    assert!(new && other.id != a.id, "another scope, another memory");
    assert_eq!(s.purge(&b.id).unwrap(), Purged::NotForgotten);
    let (gone, fresh) = s.forget(&b.id, 50).unwrap().unwrap();
    assert!(fresh && gone.forgotten_at == Some(50));
    let (gone_again, fresh) = s.forget(&b.id, 60).unwrap().unwrap();
    assert!(!fresh && gone_again.forgotten_at == Some(50));
    assert!(s.forget(&NewMemory::new("never").id(), 1).unwrap().is_none());
    t.note("get forgotten", s.get(&b.id).unwrap());
    let live: Vec<u64> = s.scan(0, u64::MAX, 10).unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(live, vec![a.seq, c.seq, other.seq]);
    t.note("scan", s.scan(0, u64::MAX, 10).unwrap());
    t.note("scan through", s.scan(0, a.seq, 10).unwrap().len());
    t.note("scan limit", s.scan(0, u64::MAX, 1).unwrap().len());
    t.note("scan_keys", s.scan_keys(0, 10).unwrap());
    t.note("scan_keys after", s.scan_keys(a.seq, 10).unwrap());
    t.note("get_by_seqs", s.get_by_seqs(&[c.seq, b.seq, a.seq, 999]).unwrap());
    t.note("counts", (s.count().unwrap(), s.count_forgotten().unwrap(), s.count_through(b.seq).unwrap()));
    t.note("forgotten_seqs", s.forgotten_seqs().unwrap());
    t.note("scope_counts", s.scope_counts().unwrap());
    let (gone_c, _) = s.forget(&c.id, 70).unwrap().unwrap();
    t.note("forgotten_session_keys", s.forgotten_session_keys().unwrap());
    assert_eq!(s.purge(&c.id).unwrap(), Purged::Deleted);
    assert_eq!(s.purge(&c.id).unwrap(), Purged::NotFound);
    assert!(s.get(&c.id).unwrap().is_none());
    t.note("max_seq", s.max_seq().unwrap());
    assert!(s.max_seq().unwrap() >= gone_c.seq);
    let (d, _) = insert(s, &NewMemory::new("d"), 80);
    assert!(d.seq > s.max_seq().unwrap() - 1 && d.seq > other.seq, "seqs are never reused");
    // remembering forgotten content files it anew, with a new seq
    let back =
        s.insert_batch(&[NewMemory::new("b").of_type(MemoryType::Event), NewMemory::new("b")], 90).unwrap();
    assert_eq!(back.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![true, false]);
    assert!(back[0].0.seq > d.seq && back[0].0.forgotten_at.is_none());
    t.note("refiled", &back);
    // invalid input is refused before anything is written
    assert!(matches!(s.insert_batch(&[NewMemory::new("")], 1), Err(Error::Invalid(_))));
    // cache and metadata
    let h1 = [1u8; 32];
    let h2 = [2u8; 32];
    s.put_vectors("m", &[(h1, &[1.0, -2.5][..]), (h2, &[0.25][..])]).unwrap();
    s.put_vectors("m", &[(h1, &[3.0][..])]).unwrap();
    let mut cached: Vec<_> = s.cached_vectors("m", &[h1, h2, [3u8; 32], h1]).unwrap().into_iter().collect();
    cached.sort_by_key(|(h, _)| *h);
    t.note("cached", cached);
    t.note("cached other model", s.cached_vectors("x", &[h1]).unwrap().len());
    t.note("cache count", (s.cached_vector_count("m").unwrap(), s.cached_vector_count("x").unwrap()));
    assert_eq!(s.meta("k").unwrap(), None);
    s.set_meta("k", "1").unwrap();
    s.set_meta("k", "2").unwrap();
    t.note("meta", s.meta("k").unwrap());
    assert!(s.integrity_check().unwrap());
}

#[test]
fn memories_cache_and_meta_match_the_local_store() {
    conformance(memories_scenario);
}

#[test]
fn a_tailer_by_seq_sees_every_memory_of_concurrent_writers_exactly_once() {
    const PER_WRITER: usize = 150;
    let db = Db::new();
    drop(db.writer());
    let backend = db.backend();
    let done = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let backend = backend.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut s = backend.open_writer().unwrap();
                for i in 0..PER_WRITER {
                    // small transactions of one or two memories
                    let batch: Vec<NewMemory> = (0..1 + i % 2)
                        .map(|j| NewMemory::new(format!("writer {w} memory {i}.{j}")))
                        .collect();
                    s.insert_batch(&batch, i as i64).unwrap();
                }
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let tail = backend.open_reader().unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut cursor = 0;
    let mut rounds = 0;
    loop {
        let finished = done.load(Ordering::SeqCst) == 2;
        let through = tail.max_seq().unwrap();
        for m in tail.scan(cursor, through, usize::MAX >> 1).unwrap() {
            assert!(seen.insert(m.seq), "seq {} seen twice", m.seq);
        }
        cursor = through;
        rounds += 1;
        if finished {
            break;
        }
    }
    for w in writers {
        w.join().unwrap();
    }
    let expected = 2 * (PER_WRITER / 2 + PER_WRITER) as u64;
    assert_eq!(tail.count().unwrap(), expected);
    assert_eq!(seen.len() as u64, expected, "every memory seen by the tailer, in {rounds} rounds");
}

#[test]
fn concurrent_remembers_of_the_same_content_give_one_memory() {
    const N: usize = 60;
    let db = Db::new();
    drop(db.writer());
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let backend = db.backend();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut s = backend.open_writer().unwrap();
                barrier.wait();
                (0..N)
                    .map(|i| {
                        let m = NewMemory::new(format!("shared fact {i}")).in_scope(scope("team/a"));
                        let (m, created) = s.insert_batch(&[m], i as i64).unwrap().remove(0);
                        (m.id, m.seq, created)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for (a, b) in results[0].iter().zip(&results[1]) {
        assert_eq!((&a.0, a.1), (&b.0, b.1), "both writers got the same memory");
        assert!(a.2 ^ b.2, "exactly one of them created it");
    }
    let s = db.writer();
    assert_eq!(s.count().unwrap(), N as u64);
    let seqs: std::collections::HashSet<u64> = results[0].iter().map(|r| r.1).collect();
    assert_eq!(seqs.len(), N, "one seq per memory");
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let db = Db::new();
    let mut s = db.writer();
    insert(s.as_mut(), &NewMemory::new("kept"), 1);
    drop(s);
    drop(db.writer()); // opening again at the same version is fine
    let mut sql = db.sql();
    sql.batch_execute("UPDATE amber_schema SET version = 99").unwrap();
    for result in [db.backend().open_writer().map(|_| ()), db.backend().open_reader().map(|_| ())] {
        match result {
            Err(Error::SchemaTooNewAt { found: 99, location, .. }) => assert!(!location.is_empty()),
            other => panic!("expected SchemaTooNewAt, got {:?}", other.err()),
        }
    }
    let version: i64 = sql.query_one("SELECT version FROM amber_schema", &[]).unwrap().get(0);
    let rows: i64 = sql.query_one("SELECT COUNT(*) FROM memories", &[]).unwrap().get(0);
    assert_eq!((version, rows), (99, 1), "left untouched");
}

#[test]
fn the_location_hides_the_password() {
    let b = PgBackend::new("postgres://amber:s3cret@db.example:5432/team");
    assert_eq!(b.location(), "postgres://amber@db.example:5432/team");
}
