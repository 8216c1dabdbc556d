//! The team store against a real PostgreSQL (`scripts/pg.sh`, or `AMBER_PG_URL`): the
//! same scenarios over the SQLite store and the PostgreSQL store give the same results,
//! plus what only a shared server has (concurrent writers, a tailer, reconnects, row-level
//! security, schema versions). Each test gets a fresh database, so they run in parallel.

#![cfg(feature = "team")]

use crate::common;
/// The embedding cache under the scopes' grants, with real roles.
#[path = "team/cache.rs"]
mod cache;

use std::fmt::Debug;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock};

use amber_core::advice::{Judgement, Note, NoteVerdict, Situation, VerdictBy};
use amber_core::graph::{NewEntity, NewFact};
use amber_core::{
    Link, LinkKind, MemoryId, MemoryType, NewMemory, NewRun, Outcome, Report, ReportKind, RunReward, Scope,
};
use amber_store::{
    Backend, ChunkKey, Error, GuardEntry, ListFilter, MemoryStore, PgBackend, Purged, SessionRow, Store,
};

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
    fn note<T: Debug>(&mut self, what: &str, v: T) {
        self.0.push(format!("{what}: {v:?}"));
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

/// A chunk of a memory in `scope` whose text hashes to `byte` repeated.
fn chunk(scope: &Scope, byte: u8) -> ChunkKey<'_> {
    ChunkKey { scope, hash: [byte; 32] }
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
    // A file's memories by source; the document files under a folder.
    let doc = |text: &str, path: &str, chunk: bool| {
        let mut m = NewMemory::new(text).in_scope(scope("team/x"));
        m.source = Some(path.into());
        if chunk {
            m.metadata = serde_json::json!({"doc": {"path": path}});
        }
        m
    };
    s.insert_batch(&[doc("d1", "/r/docs/a.md", true), doc("d2", "/r/docs/a.md", true)], 4).unwrap();
    s.insert_batch(&[doc("d3", "/r/docs/b.md", true), doc("d4", "/r/docsx.md", true)], 4).unwrap();
    s.insert_batch(&[doc("d5", "/r/docs/c.md", false), doc("d6", "/r/docs/a.md", false)], 4).unwrap();
    let d2 = doc("d2", "/r/docs/a.md", true).id();
    s.forget(&d2, 80).unwrap();
    let by: Vec<String> =
        s.by_source(&scope("team/x"), "/r/docs/a.md").unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(by, vec!["d1", "d6"], "live ones of that source and scope, in seq order");
    assert!(s.by_source(&scope("other"), "/r/docs/a.md").unwrap().is_empty());
    let files = s.document_sources(&scope("team/x"), "/r/docs/").unwrap();
    assert_eq!(files, vec!["/r/docs/a.md", "/r/docs/b.md"], "chunks only, under the prefix");
    t.note("document_sources", files);
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
    // raw captures: counted; a person's re-filing with a durable type promotes one (type
    // and trust), an agent's does not
    let mut captured = NewMemory::new("raw tool output").of_type(MemoryType::Event);
    captured.metadata = serde_json::json!({ "captured": true, "trust": "external" });
    let mut prompt = NewMemory::new("a prompt").of_type(MemoryType::Event);
    prompt.session_id = Some("s2".into());
    s.insert_batch(&[captured, prompt], 95).unwrap();
    assert_eq!(
        s.count_raw_captures().unwrap(),
        2,
        "an event in a session and a captured one; not a person's event"
    );
    let mut by_agent = NewMemory::new("raw tool output");
    by_agent.metadata = serde_json::json!({ "trust": "agent" });
    t.note("agent refiles", insert(s, &by_agent, 96));
    assert_eq!(s.count_raw_captures().unwrap(), 2, "an agent's re-filing promotes nothing");
    let mut by_person = NewMemory::new("raw tool output");
    by_person.metadata = serde_json::json!({ "trust": "person" });
    let (promoted, new) = insert(s, &by_person, 97);
    assert!(
        !new && promoted.kind == MemoryType::Fact && promoted.metadata["trust"] == "person",
        "{promoted:?}"
    );
    assert_eq!(promoted.metadata["captured"], true, "the rest of its metadata stays");
    t.note("person promotes", (&promoted.kind, &promoted.metadata["trust"]));
    assert_eq!(s.count_raw_captures().unwrap(), 1);
    // invalid input is refused before anything is written
    assert!(matches!(s.insert_batch(&[NewMemory::new("")], 1), Err(Error::Invalid(_))));
    // cache and metadata
    let sc = scope("team/a");
    let (h1, h2, h3) = (chunk(&sc, 1), chunk(&sc, 2), chunk(&sc, 3));
    s.put_vectors("m", &[(h1, &[1.0, -2.5][..]), (h2, &[0.25][..])]).unwrap();
    s.put_vectors("m", &[(h1, &[3.0][..])]).unwrap(); // ignored: a cached vector is kept
    t.note("cached", s.cached_vectors("m", &[h1, h2, h3, h1]).unwrap());
    t.note("cached other model", s.cached_vectors("x", &[h1]).unwrap());
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
    let mut tail = backend.open_reader().unwrap();
    let refused = tail.insert_batch(&[NewMemory::new("a reader writes")], 1).unwrap_err();
    assert!(refused.to_string().contains("read-only"), "a reader cannot write: {refused}");
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
    // no schema yet: the two writers also race to create it
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let backend = db.backend();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
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
    // the embedding cache is shared too: what one node embedded, another reads
    let mut one = db.writer();
    let sc = scope("team/x");
    one.put_vectors("model", &[(chunk(&sc, 7), &[0.5, -1.0][..])]).unwrap();
    let other = db.backend().open_reader().unwrap();
    assert_eq!(other.cached_vectors("model", &[chunk(&sc, 7)]).unwrap(), vec![Some(vec![0.5, -1.0])]);
}

#[test]
fn an_older_schema_is_migrated_and_a_newer_one_refused_untouched() {
    let db = Db::new();
    let mut s = db.writer();
    insert(s.as_mut(), &NewMemory::new("kept"), 1);
    drop(s);
    drop(db.writer()); // opening again at the same version is fine
    let mut sql = db.sql();
    // back to version 1 (before advice and the change log): opening migrates it
    // forward, keeping the rows
    sql.batch_execute(BACK_TO_6).unwrap();
    sql.batch_execute(
        "DROP TABLE advice_situations, advice_sorted, advice_notes, advice_served, run_judgements, amber_changes;
         ALTER TABLE amber_seq DROP COLUMN changes;
         DROP POLICY amber_read ON kg_entities; DROP POLICY amber_insert ON kg_entities;
         DROP POLICY amber_update ON kg_entities; DROP POLICY amber_delete ON kg_entities;
         DROP POLICY amber_read ON kg_names; DROP POLICY amber_insert ON kg_names;
         DROP POLICY amber_update ON kg_names; DROP POLICY amber_delete ON kg_names;
         DROP POLICY amber_read ON kg_facts; DROP POLICY amber_write ON kg_facts;
         DROP POLICY amber_read ON kg_mentions; DROP POLICY amber_write ON kg_mentions;
         DROP POLICY amber_read ON kg_invalidations; DROP POLICY amber_write ON kg_invalidations;
         DROP POLICY amber_read ON moved; DROP POLICY amber_insert ON moved;
         DROP POLICY amber_update ON moved; DROP POLICY amber_delete ON moved;
         DROP POLICY amber_read ON scope_roots; DROP POLICY amber_insert ON scope_roots;
         DROP POLICY amber_update ON scope_roots; DROP POLICY amber_delete ON scope_roots;
         DROP POLICY amber_read ON links; DROP POLICY amber_write ON links;
         DROP POLICY amber_read ON supersessions; DROP POLICY amber_write ON supersessions;
         DROP POLICY amber_read ON run_rewards; DROP POLICY amber_write ON run_rewards;
         DROP POLICY amber_seen ON inbox_served; DROP POLICY amber_seen ON thread_holds;
         DROP POLICY amber_seen ON guard_log;
         ALTER TABLE moved DROP COLUMN scope;
         ALTER TABLE outcomes DROP COLUMN basis;
         DROP POLICY amber_read ON amber_schema; DROP POLICY amber_read ON meta;
         DROP POLICY amber_insert ON meta; DROP POLICY amber_read ON amber_seq;
         DROP POLICY amber_count ON amber_seq; DROP TRIGGER amber_seq_counts_up ON amber_seq;
         DROP FUNCTION amber_seq_counts_up; DROP POLICY amber_read ON embeddings;
         DROP POLICY amber_insert ON embeddings; DROP POLICY amber_read ON amber_grants;
         ALTER TABLE amber_schema DISABLE ROW LEVEL SECURITY; ALTER TABLE meta DISABLE ROW LEVEL SECURITY;
         ALTER TABLE amber_seq DISABLE ROW LEVEL SECURITY; ALTER TABLE embeddings DISABLE ROW LEVEL SECURITY;
         ALTER TABLE amber_grants DISABLE ROW LEVEL SECURITY;
         ALTER TABLE embeddings DROP COLUMN written_by;
         UPDATE amber_schema SET version = 1",
    )
    .unwrap();
    sql.execute(
        "INSERT INTO embeddings (model, chunk_hash, vector) VALUES ('m', '\\x01', '\\x0000803f')",
        &[],
    )
    .unwrap();
    // a move recorded at version 1 gets the scope it went to (schema 4)
    sql.execute("INSERT INTO moved (old_id, new_id, moved_at) SELECT 'gone', id, 1 FROM memories", &[])
        .unwrap();
    assert!(
        matches!(db.backend().open_reader().err(), Some(Error::Corrupt { .. })),
        "a reader does not migrate"
    );
    let s = db.writer();
    assert_eq!(s.count().unwrap(), 1);
    assert!(s.notes(&scope("team/a"), None, false).unwrap().is_empty(), "the advice tables are back");
    assert_eq!(
        (s.max_change().unwrap(), s.changes_after(0, 10).unwrap()),
        (0, vec![]),
        "the change log is back"
    );
    let version: i64 = sql.query_one("SELECT version FROM amber_schema", &[]).unwrap().get(0);
    assert_eq!(version, 8);
    let basis: i64 = sql
        .query_one("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'outcomes' AND column_name = 'basis'", &[])
        .unwrap()
        .get(0);
    assert_eq!(basis, 1, "outcomes have their basis column back (schema 5)");
    let cached: i64 = sql.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get(0);
    assert_eq!(cached, 0, "a vector cached before schema 7 (no scope, a bare SHA-256) is dropped");
    let went: Option<String> = sql.query_one("SELECT scope FROM moved", &[]).unwrap().get(0);
    assert_eq!(
        went,
        Some(Scope::default().as_str().to_string()),
        "the move's scope filled in from its memory"
    );
    drop(s);
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

/// Takes a database at schema 8 back to 6: no words on served notes (7), the embedding
/// cache keyed by model and the chunk's bare SHA-256, readable by every role, and no
/// cache secret.
const BACK_TO_6: &str = "
    DROP TABLE note_verdicts;
    DROP TABLE amber_cache_secret;
    DROP POLICY amber_read ON embeddings; DROP POLICY amber_insert ON embeddings;
    ALTER TABLE embeddings DROP CONSTRAINT embeddings_pkey;
    ALTER TABLE embeddings DROP COLUMN scope;
    ALTER TABLE embeddings RENAME COLUMN chunk_key TO chunk_hash;
    ALTER TABLE embeddings ADD PRIMARY KEY (model, chunk_hash);
    CREATE POLICY amber_read ON embeddings FOR SELECT USING (TRUE);
    CREATE POLICY amber_insert ON embeddings FOR INSERT WITH CHECK (written_by = current_user);
    UPDATE amber_schema SET version = 6;";

/// Forgets and moves are logged in commit order with the scope they left, so other
/// nodes can follow them; a repeated forget logs nothing; SQLite keeps no log.
#[test]
fn the_change_log_numbers_forgets_and_moves_in_order() {
    let db = Db::new();
    let mut s = db.writer();
    let (a, _) = insert(s.as_mut(), &NewMemory::new("a").in_scope(scope("team/x")), 1);
    let (b, _) = insert(s.as_mut(), &NewMemory::new("b").in_scope(scope("team/x")), 1);
    assert_eq!(s.max_change().unwrap(), 0);
    s.forget(&a.id, 2).unwrap();
    s.forget(&a.id, 3).unwrap();
    s.move_scope(&scope("team/x"), &scope("team/y"), 4).unwrap();
    let moved = s.move_memory(&MemoryId::derive(&scope("team/y"), "b"), &scope("team/z"), 5).unwrap();
    assert!(matches!(moved, amber_store::MoveOne::Moved(_)), "{moved:?}");
    let log: Vec<(u64, u64, String)> =
        s.changes_after(0, 10).unwrap().into_iter().map(|c| (c.change, c.seq, c.scope.to_string())).collect();
    assert_eq!(
        log,
        vec![(1, a.seq, "team/x".into()), (2, b.seq, "team/x".into()), (3, b.seq, "team/y".into())],
        "one memory's move is logged as a scope move's"
    );
    assert_eq!(s.max_change().unwrap(), 3);
    assert_eq!(s.changes_after(1, 10).unwrap().len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let mut local = amber_store::SqliteBackend::new(dir.path().join("m.db")).open_writer().unwrap();
    let (m, _) = insert(local.as_mut(), &NewMemory::new("a"), 1);
    local.forget(&m.id, 2).unwrap();
    assert!(local.changes_after(0, 10).unwrap().is_empty());
}

#[test]
fn the_location_hides_the_password_and_no_server_is_unavailable() {
    let b = PgBackend::new("postgres://amber:s3cret@db.example:5432/team");
    assert_eq!(b.location(), "postgres://amber@db.example:5432/team");
    let nobody = PgBackend::new("postgres://amber:s3cret@127.0.0.1:1/team");
    let err = nobody.open_writer().err().unwrap();
    assert!(err.is_unavailable(), "{err}");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:1") && !text.contains("s3cret"), "{text}");
}

fn report(kind: ReportKind, result: Option<Outcome>, session: Option<&str>, at: i64) -> Report {
    Report {
        kind,
        result,
        session_id: session.map(String::from),
        agent: Some("a1".into()),
        note: None,
        at,
        basis: None,
    }
}

fn curation_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let (a, _) = insert(s, &NewMemory::new("the first note"), 1);
    let (b, _) = insert(s, &NewMemory::new("the first note, again"), 2);
    let (c, _) = insert(s, &NewMemory::new("something else"), 3);
    let link = |from: &amber_core::MemoryId, to: &amber_core::MemoryId, kind| Link {
        from: from.clone(),
        to: to.clone(),
        kind,
        similarity: 0.97,
        created_at: 5,
    };
    let links = [link(&b.id, &a.id, LinkKind::NearDuplicate), link(&c.id, &a.id, LinkKind::Related)];
    t.note("added", s.add_links(&links).unwrap());
    t.note("added again", s.add_links(&links[..1]).unwrap());
    t.note("links of a", s.links_of(&a.id).unwrap());
    t.note("duplicate_seqs", s.duplicate_seqs().unwrap());
    s.forget(&b.id, 9).unwrap();
    t.note("duplicate_seqs after forget", s.duplicate_seqs().unwrap());
    s.purge(&b.id).unwrap();
    t.note("links after purge", s.links_of(&a.id).unwrap());
    // sessions
    let mut row = SessionRow {
        id: "s-1".into(),
        agent: "test".into(),
        scope: "team/x".into(),
        started_at: 10,
        ended_at: None,
        record: "{}".into(),
    };
    s.put_session(&row).unwrap();
    row.ended_at = Some(20);
    row.record = r#"{"served":[]}"#.into();
    s.put_session(&row).unwrap();
    s.put_session(&SessionRow { id: "s-2".into(), started_at: 30, ..row.clone() }).unwrap();
    t.note("session", s.get_session("s-1").unwrap());
    t.note("no session", s.get_session("nope").unwrap());
    t.note("recent", s.recent_sessions(10).unwrap());
    let mut m = NewMemory::new("in session");
    m.session_id = Some("s-1".into());
    insert(s, &m, 11);
    t.note("session_memories", s.session_memories("s-1").unwrap());
    // scopes
    s.note_scope_root(&scope("project/p"), "/src/p", 100).unwrap();
    s.note_scope_root(&scope("project/p"), "/src/p", 200).unwrap();
    s.note_scope_root(&scope("project/a"), "/src/a", 100).unwrap();
    t.note("roots", s.scope_roots().unwrap());
    insert(s, &NewMemory::new("durable").in_scope(scope("team/x/y")), 50);
    insert(s, &NewMemory::new("an event").in_scope(scope("team/x")).of_type(MemoryType::Event), 50);
    insert(s, &NewMemory::new("sibling").in_scope(scope("team/xy")), 50);
    t.note("durable_since", s.durable_since(&[scope("team/x")], 40).unwrap());
    t.note("lookup", s.lookup_prefix(&a.id.as_str()[..6]).unwrap());
    t.note("lookup none", s.lookup_prefix("ffffffff").unwrap());
}

#[test]
fn links_sessions_and_scope_roots_match_the_local_store() {
    conformance(curation_scenario);
}

fn standing_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let (a, _) = insert(s, &NewMemory::new("use tool x"), 1);
    let (life, _) = insert(s, &NewMemory::new("born in 1990").of_type(MemoryType::Lifefact), 1);
    for (i, result) in
        [Outcome::Failure, Outcome::Failure, Outcome::Failure, Outcome::Success].iter().enumerate()
    {
        let r = report(ReportKind::Outcome, Some(*result), Some("s1"), 10 + i as i64);
        t.note("report", s.report(&a.id, &r, 20 + i as i64).unwrap());
    }
    s.report(&a.id, &report(ReportKind::Used, None, Some("s2"), 30), 30).unwrap();
    t.note(
        "no such memory",
        s.report(&NewMemory::new("nope").id(), &report(ReportKind::Used, None, None, 1), 1).unwrap(),
    );
    t.note("reports", s.reports(&a.id).unwrap());
    t.note("session_reports", s.session_reports("s1").unwrap());
    t.note("standings", s.standings().unwrap());
    // supersession
    let (old, _) = insert(s, &NewMemory::new("the api is v1"), 40);
    t.note("targets", s.supersession_targets(std::slice::from_ref(&old.id)).unwrap());
    t.note("lifefact refused", s.supersession_targets(std::slice::from_ref(&life.id)).unwrap());
    t.note("unknown refused", s.supersession_targets(&[NewMemory::new("x").id()]).unwrap());
    let mut inv = NewMemory::new("the api is v2 now").of_type(MemoryType::Invalidation);
    inv.supersedes = vec![old.id.clone()];
    let (inv, _) = insert(s, &inv, 41);
    t.note("unapplied", s.unapplied_supersessions().unwrap());
    t.note("applied", s.apply_supersessions(&[inv.seq], 42).unwrap());
    t.note("applied again", s.apply_supersessions(&[inv.seq], 43).unwrap());
    t.note("unapplied after", s.unapplied_supersessions().unwrap());
    t.note("archived", s.archived(None, 10).unwrap());
    t.note("archived elsewhere", s.archived(Some(&scope("team/q")), 10).unwrap().len());
    s.forget(&inv.id, 50).unwrap();
    t.note("refresh after forget", s.refresh_targets(inv.seq, 51).unwrap());
    t.note("old back", s.get(&old.id).unwrap());
}

#[test]
fn standing_and_supersession_match_the_local_store() {
    conformance(standing_scenario);
}

fn addressing_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let mut q = NewMemory::new("can someone review?").in_scope(scope("team/a"));
    q.to = Some("bob".into());
    q.author = Some("alice".into());
    let (q, _) = insert(s, &q, 1);
    let mut all = NewMemory::new("standup at 10").in_scope(scope("team/b"));
    all.to = Some("all".into());
    let (all, _) = insert(s, &all, 2);
    let mut answer = NewMemory::new("on it").in_scope(scope("team/a"));
    answer.reply_to = Some(q.id.clone());
    answer.author = Some("bob".into());
    let (answer, _) = insert(s, &answer, 3);
    let mut deeper = NewMemory::new("done").in_scope(scope("team/a"));
    deeper.reply_to = Some(answer.id.clone());
    let (deeper, _) = insert(s, &deeper, 4);
    t.note("inbox", s.inbox("bob", &[], 10).unwrap());
    t.note("inbox scoped", s.inbox("bob", &[scope("team/b")], 10).unwrap());
    t.note("inbox limit", s.inbox("bob", &[], 1).unwrap().len());
    s.mark_inbox_served("bob", &[q.seq], 5).unwrap();
    s.mark_inbox_served("bob", &[q.seq, all.seq], 6).unwrap();
    t.note("inbox served", s.inbox("bob", &[], 10).unwrap());
    t.note("thread", s.thread(&deeper.id).unwrap());
    assert_eq!(s.thread(&answer.id).unwrap().len(), 3);
    t.note("no hold", s.hold_of(&q.id).unwrap());
    s.hold(&q.id, "loop", 7).unwrap();
    s.hold(&q.id, "again", 8).unwrap();
    t.note("hold", s.hold_of(&q.id).unwrap());
    t.note("release", (s.release(&q.id).unwrap(), s.release(&q.id).unwrap()));
    let entry = |decision: &str| GuardEntry {
        agent: "bob".into(),
        trigger: q.id.clone(),
        decision: decision.into(),
        rule: "r".into(),
        at: 9,
    };
    s.log_guard(&entry("deny")).unwrap();
    t.note("not allowed", s.guard_allowed("bob", &q.id).unwrap());
    s.log_guard(&entry("allow")).unwrap();
    t.note("allowed", (s.guard_allowed("bob", &q.id).unwrap(), s.guard_allowed("eve", &q.id).unwrap()));
    // runs
    let run = |task: &str| NewRun {
        task: task.into(),
        trace: "did it".into(),
        used: vec![q.id.clone()],
        outcome: Some("ok".into()),
        advice: vec![],
        reward: None,
        session: None,
        reason: None,
        part: 0,
    };
    let runs = [("r1".to_string(), run("one")), ("r2".to_string(), run("two"))];
    t.note("insert_runs", s.insert_runs(&scope("team/a"), "bob", &runs, 10).unwrap());
    t.note("again", s.insert_runs(&scope("team/a"), "bob", &runs[..1], 11).unwrap());
    s.insert_runs(&scope("team/a/sub"), "eve", &[("r3".to_string(), run("three"))], 12).unwrap();
    s.insert_runs(&scope("team/ab"), "eve", &[("r4".to_string(), run("four"))], 13).unwrap();
    let reward = |r: f32, at| RunReward { reward: r, reason: Some("why".into()), agent: "bob".into(), at };
    s.reward_runs(&[("r1".into(), reward(0.5, 20)), ("r1".into(), reward(-1.0, 21))]).unwrap();
    t.note("run", s.run("r1").unwrap());
    t.note("no run", s.run("nope").unwrap());
    t.note("runs in team/a", s.runs(Some(&scope("team/a")), None, 10).unwrap());
    t.note("runs of eve", s.runs(None, Some("eve"), 10).unwrap());
    t.note("runs limited", s.runs(None, None, 2).unwrap());
    t.note("rewards", s.run_rewards("r1").unwrap());
    t.note("activity", (s.agent_activity("bob", 0).unwrap(), s.agent_activity("bob", 21).unwrap()));
    // A session's run: rewritten (its judgement dropped) until it is rewarded.
    let part = |trace: &str| NewRun { session: Some("k-s".into()), trace: trace.into(), ..run("session") };
    t.note(
        "session run",
        s.insert_runs(&scope("team/a"), "bob", &[("r5".to_string(), part("a"))], 30).unwrap(),
    );
    let verdict =
        Judgement { run_id: "r5".into(), verdict: Some(1), reason: "ok".into(), model: "m".into(), at: 31 };
    s.put_judgements(&[verdict]).unwrap();
    let again = s.insert_runs(&scope("team/a"), "bob", &[("r5".to_string(), part("a\nb"))], 32).unwrap();
    t.note("rewritten", (again, s.run("r5").unwrap(), s.judgements(None, 10).unwrap()));
    s.reward_runs(&[("r5".into(), reward(1.0, 33))]).unwrap();
    let kept = s.insert_runs(&scope("team/a"), "bob", &[("r5".to_string(), part("a\nb\nc"))], 34).unwrap();
    t.note("kept once rewarded", (kept, s.run("r5").unwrap()));
}

#[test]
fn inbox_threads_holds_guard_and_runs_match_the_local_store() {
    conformance(addressing_scenario);
}

fn move_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let (a, _) = insert(s, &NewMemory::new("alpha").in_scope(scope("team/old")), 1);
    let (b, _) = insert(s, &NewMemory::new("beta").in_scope(scope("team/old/sub")), 2);
    let (dup, _) = insert(s, &NewMemory::new("gamma").in_scope(scope("team/old")), 3);
    insert(s, &NewMemory::new("gamma").in_scope(scope("team/new")), 4);
    insert(s, &NewMemory::new("delta").in_scope(scope("team/older")), 5);
    let mut reply = NewMemory::new("re alpha").in_scope(scope("team/other"));
    reply.reply_to = Some(a.id.clone());
    let (reply, _) = insert(s, &reply, 6);
    s.add_links(&[Link {
        from: b.id.clone(),
        to: a.id.clone(),
        kind: LinkKind::Related,
        similarity: 0.5,
        created_at: 7,
    }])
    .unwrap();
    s.hold(&a.id, "held", 8).unwrap();
    let moved = s.move_scope(&scope("team/old"), &scope("team/new"), 10).unwrap();
    t.note("moved", &moved);
    let new_a = moved.iter().find(|m| m.old_id == a.id).unwrap().memory.id.clone();
    t.note(
        "moved_to",
        (s.moved_to(&a.id).unwrap(), s.moved_to(&dup.id).unwrap(), s.moved_to(&reply.id).unwrap()),
    );
    t.note("links follow", s.links_of(&new_a).unwrap());
    t.note("reply follows", s.get(&reply.id).unwrap().unwrap().reply_to);
    t.note("hold follows", s.hold_of(&new_a).unwrap());
    t.note("scope_counts", s.scope_counts().unwrap());
    t.note("scan", s.scan(0, u64::MAX, 100).unwrap());
}

#[test]
fn scope_moves_match_the_local_store() {
    conformance(move_scenario);
}

fn move_one_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let (a, _) = insert(s, &NewMemory::new("alpha").in_scope(scope("team/old")), 1);
    let (b, _) = insert(s, &NewMemory::new("beta").in_scope(scope("team/old")), 2);
    let (dup, _) = insert(s, &NewMemory::new("gamma").in_scope(scope("team/old")), 3);
    let (there, _) = insert(s, &NewMemory::new("gamma").in_scope(scope("team/new")), 4);
    let mut reply = NewMemory::new("re alpha").in_scope(scope("team/other"));
    reply.reply_to = Some(a.id.clone());
    let (reply, _) = insert(s, &reply, 5);
    s.add_links(&[Link {
        from: b.id.clone(),
        to: a.id.clone(),
        kind: LinkKind::Related,
        similarity: 0.5,
        created_at: 6,
    }])
    .unwrap();
    s.report(&a.id, &report(ReportKind::Outcome, Some(Outcome::Failure), Some("s1"), 7), 7).unwrap();
    s.hold(&a.id, "held", 8).unwrap();
    let moved = s.move_memory(&a.id, &scope("team/new"), 10).unwrap();
    t.note("moved", &moved);
    let amber_store::MoveOne::Moved(m) = moved else { panic!("not moved: {moved:?}") };
    let new = m.memory.id.clone();
    assert_eq!((m.seq, m.merged), (a.seq, false));
    t.note("moved_to", s.moved_to(&a.id).unwrap());
    t.note("old id gone", s.get(&a.id).unwrap());
    t.note("links follow", s.links_of(&new).unwrap());
    t.note("reply follows", s.get(&reply.id).unwrap().unwrap().reply_to);
    t.note("hold follows", s.hold_of(&new).unwrap());
    let log = s.reports(&new).unwrap();
    assert_eq!(log.len(), 1, "the outcome log follows");
    t.note("log follows", log);
    t.note("the rest stays", s.get(&b.id).unwrap().unwrap().scope);
    let merged = s.move_memory(&dup.id, &scope("team/new"), 11).unwrap();
    assert!(matches!(&merged, amber_store::MoveOne::Moved(m) if m.merged && m.memory.id == there.id));
    t.note("merged", merged);
    t.note("already there", s.move_memory(&new, &scope("team/new"), 12).unwrap());
    t.note("old id", s.move_memory(&a.id, &scope("team/x"), 12).unwrap());
    s.forget(&b.id, 13).unwrap();
    t.note("forgotten", s.move_memory(&b.id, &scope("team/new"), 14).unwrap());
    t.note("scope_counts", s.scope_counts().unwrap());
    t.note("scan", s.scan(0, u64::MAX, 100).unwrap());
}

#[test]
fn one_memory_moves_as_on_the_local_store() {
    conformance(move_one_scenario);
}

fn scope_page_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let sc = scope("team/l");
    let mut ids = Vec::new();
    for i in 0..9 {
        ids.push(insert(s, &NewMemory::new(format!("m{i}")).in_scope(sc.clone()), i).0);
    }
    insert(s, &NewMemory::new("below").in_scope(scope("team/l/sub")), 20);
    insert(s, &NewMemory::new("beside").in_scope(scope("team/lx")), 21);
    s.forget(&ids[8].id, 22).unwrap();
    let mut inv = NewMemory::new("m3 is wrong").in_scope(sc.clone()).of_type(MemoryType::Invalidation);
    inv.supersedes = vec![ids[3].id.clone()];
    let (inv, _) = insert(s, &inv, 23);
    s.apply_supersessions(&[inv.seq], 24).unwrap();
    let seqs = |page: Vec<amber_core::Memory>| page.iter().map(|m| m.seq).collect::<Vec<_>>();
    let mut before = None;
    let mut all = Vec::new();
    loop {
        let page = s.scope_page(&sc, &ListFilter::default(), before, 0, 3).unwrap();
        t.note("page", &page);
        let got = seqs(page);
        all.extend(got.clone());
        if got.len() < 3 {
            break;
        }
        before = got.last().copied();
    }
    let mut want: Vec<u64> =
        ids.iter().map(|m| m.seq).filter(|&q| q != ids[8].seq && q != ids[3].seq).collect();
    want.insert(0, inv.seq);
    want[1..].reverse();
    assert_eq!(all, want, "newest first, live and not archived, this scope alone");
    let all = ListFilter { include_forgotten: true, ..ListFilter::default() };
    let everything = seqs(s.scope_page(&sc, &all, None, 0, 100).unwrap());
    assert_eq!(everything.len(), 10, "forgotten and archived when asked: {everything:?}");
    t.note("everything", everything);
    t.note("empty", s.scope_page(&scope("team/none"), &all, None, 0, 10).unwrap());
}

#[test]
fn a_scope_pages_as_on_the_local_store() {
    conformance(scope_page_scenario);
}

fn browse_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    for (step, seen) in common::browse::scenario(s) {
        t.note(&step, seen);
    }
}

#[test]
fn a_scope_is_filtered_counted_and_its_files_listed_as_on_the_local_store() {
    conformance(browse_scenario);
}

fn advice_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let sc = scope("team/a");
    let situation = |key: &str, line: &str| Situation {
        scope: sc.clone(),
        key: key.into(),
        category: "build".into(),
        line: line.into(),
        aliases: vec![],
        created_at: 1,
    };
    s.put_situations(&[situation("b-build", "builds"), situation("a-test", "tests")]).unwrap();
    s.put_situations(&[situation("b-build", "builds, again")]).unwrap();
    t.note("situations", s.situations(&sc).unwrap());
    s.sort_runs(&sc, &[("r1".into(), "a-test".into()), ("r2".into(), "b-build".into())]).unwrap();
    s.merge_situation(&sc, "a-test", "b-build").unwrap();
    t.note("merged", (s.situations(&sc).unwrap(), s.sorted_runs(&sc).unwrap()));
    let note = Note {
        scope: sc.clone(),
        situation: "b-build".into(),
        agent: None,
        version: 0,
        text: "run make".into(),
        runs: vec!["r1".into()],
        run_count: 1,
        wrong_count: 0,
        agents: 1,
        created_at: 5,
        withheld: None,
    };
    t.note("versions", (s.put_note(&note).unwrap(), s.put_note(&note).unwrap()));
    s.put_note(&Note { agent: Some("bob".into()), ..note.clone() }).unwrap();
    let latest = s.notes(&sc, None, false).unwrap();
    t.note("latest", &latest);
    t.note("history", s.notes(&sc, Some("b-build"), true).unwrap());
    s.set_withheld(&latest[0], Some("wrong")).unwrap();
    t.note("withheld", s.notes(&sc, None, false).unwrap());
    t.note(
        "served",
        (s.mark_served("s1", &latest[0], 9).unwrap(), s.mark_served("s1", &latest[1], 10).unwrap()),
    );
    s.mark_served("s2", &latest[0], 11).unwrap();
    t.note("servings", (s.servings(None, 0).unwrap(), s.servings(Some(&scope("team")), 10).unwrap()));
    let word = |session: &str, by: VerdictBy, helped: Option<bool>| NoteVerdict {
        session_id: session.into(),
        scope: sc.clone(),
        situation: "b-build".into(),
        agent: None,
        version: 2,
        voice: "bob".into(),
        applied: Some(true),
        helped,
        by,
        reason: "r".into(),
        model: (by == VerdictBy::Judge).then(|| "m".into()),
        at: 12,
    };
    s.put_note_verdicts(&[word("s1", VerdictBy::Judge, Some(false)), word("s2", VerdictBy::Judge, None)])
        .unwrap();
    s.put_note_verdicts(&[
        word("s1", VerdictBy::Person, Some(true)),
        word("s2", VerdictBy::Judge, Some(true)),
    ])
    .unwrap();
    t.note("words", (s.note_verdicts(Some(&sc)).unwrap(), s.note_verdicts(Some(&scope("team/b"))).unwrap()));
    let judge = |run: &str, v| Judgement {
        run_id: run.into(),
        verdict: v,
        reason: "r".into(),
        model: "m".into(),
        at: 3,
    };
    s.insert_runs(
        &sc,
        "bob",
        &[(
            "r1".into(),
            NewRun {
                task: "t".into(),
                trace: "x".into(),
                used: vec![],
                outcome: None,
                advice: vec![],
                reward: None,
                session: None,
                reason: None,
                part: 0,
            },
        )],
        1,
    )
    .unwrap();
    s.put_judgements(&[judge("r1", Some(-1)), judge("r9", None)]).unwrap();
    s.put_judgements(&[judge("r1", Some(1))]).unwrap();
    t.note("judgements", (s.judgements(None, 10).unwrap(), s.judgements(Some(&sc), 10).unwrap()));
}

#[test]
fn advice_matches_the_local_store() {
    conformance(advice_scenario);
}

fn graph_scenario(s: &mut dyn MemoryStore, t: &mut Transcript) {
    let sc = scope("team/a");
    let (m1, _) = insert(s, &NewMemory::new("alice works at acme").in_scope(sc.clone()), 1);
    let (m2, _) = insert(s, &NewMemory::new("alice moved to globex").in_scope(sc.clone()), 2);
    let fact =
        |subject: &str, predicate: &str, object: &str, from: Option<i64>, src: &amber_core::MemoryId| {
            NewFact {
                subject: subject.into(),
                predicate: predicate.into(),
                object: Some(object.into()),
                literal: None,
                valid_from: from,
                valid_to: None,
                confidence: Some(0.5),
                sources: vec![src.clone()],
                supersede: false,
            }
        };
    let alice = NewEntity { name: "Alice".into(), kind: Some("person".into()), aliases: vec!["Al".into()] };
    let added = s
        .kg_add(&sc, std::slice::from_ref(&alice), &[fact("alice", "Works At", "Acme", Some(10), &m1.id)], 5)
        .unwrap();
    t.note("added", &added);
    let again = s.kg_add(&sc, &[], &[fact("Al", "works at", "acme", Some(10), &m2.id)], 6).unwrap();
    t.note("identical fact merges sources", &again);
    let mut moved = fact("alice", "works at", "Globex", Some(20), &m2.id);
    moved.supersede = true;
    let later = s.kg_add(&sc, &[], &[moved], 7).unwrap();
    t.note("superseded", &later);
    let mut lit = fact("acme", "founded", "", None, &m1.id);
    lit.object = None;
    lit.literal = Some(" 1999 ".into());
    s.kg_add(&sc, &[], &[lit], 8).unwrap();
    let clash = NewEntity { name: "Bob".into(), kind: None, aliases: vec!["al".into()] };
    assert!(matches!(s.kg_add(&sc, &[clash], &[], 9), Err(Error::Invalid(_))), "an alias of another entity");
    let alice_id = added.entities[0].id;
    let first = added.facts[0].id;
    t.note("invalidate", s.kg_invalidate(first, 15, Some("wrong"), 10).unwrap());
    t.note("invalidate none", s.kg_invalidate(9999, 15, None, 10).unwrap());
    t.note("invalidations", s.kg_invalidations(first).unwrap());
    t.note("fact", s.kg_fact(first).unwrap());
    t.note("sourced by m2", s.kg_facts_sourced_by(&m2.id).unwrap());
    t.note("entity", s.kg_entity(alice_id).unwrap());
    t.note("resolve", (s.kg_resolve(&sc, "AL").unwrap(), s.kg_resolve(&scope("team/b"), "al").unwrap()));
    t.note("facts_of", s.kg_facts_of(alice_id, None).unwrap());
    t.note("facts_of as of", s.kg_facts_of(alice_id, Some(25)).unwrap());
    t.note("page", s.kg_facts_page(alice_id, 25, 0, 1).unwrap());
    t.note("names", s.kg_names().unwrap());
    t.note(
        "mentions added",
        s.kg_add_mentions(&[(alice_id, m1.id.clone()), (alice_id, m2.id.clone())]).unwrap(),
    );
    t.note("mentions again", s.kg_add_mentions(&[(alice_id, m1.id.clone())]).unwrap());
    t.note("mentions", s.kg_mentions(alice_id, 1).unwrap());
    t.note("mention count", s.kg_mention_count(alice_id).unwrap());
    t.note("mention seqs", s.kg_mention_seqs(&[alice_id, 9999], 5).unwrap());
    t.note("stats", (s.kg_stats(None, 25).unwrap(), s.kg_stats(Some(&scope("team/b")), 25).unwrap()));
    let entities = s.kg_entities(Some(&sc), 25, 10).unwrap();
    let named: Vec<(&str, u64)> = entities.iter().map(|(e, n)| (e.name.as_str(), *n)).collect();
    assert_eq!(named[0], ("Alice", 1), "most facts valid now first: {named:?}");
    assert_eq!(named.len(), 3, "{named:?}");
    t.note("entities", &entities);
    assert_eq!(s.kg_entities(None, 25, 2).unwrap().len(), 2, "every scope's, at most the limit");
    assert!(s.kg_entities(Some(&scope("team/b")), 25, 10).unwrap().is_empty());
}

#[test]
fn the_knowledge_graph_matches_the_local_store() {
    conformance(graph_scenario);
}

/// Creates a login role (once per cluster) with table privileges on `db`, and grants it
/// scope prefixes: the setup SQL `pg/mod.rs` documents.
fn agent_role(db: &Db, role: &str, grants: &[(&str, bool)]) {
    let mut sql = db.sql();
    sql.batch_execute(&format!(
        "DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
         GRANT USAGE ON SCHEMA public TO {role};
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role};
         REVOKE INSERT, UPDATE, DELETE ON amber_grants FROM {role};"
    ))
    .unwrap();
    for (prefix, can_write) in grants {
        sql.execute(
            "INSERT INTO amber_grants (role, prefix, can_write) VALUES ($1, $2, $3)",
            &[&role, prefix, can_write],
        )
        .unwrap();
    }
}

/// A fresh database with the owner's store and two agents' stores: agent_a may write
/// `team/a/`; agent_b may write `team/b/` and read `team/shared/`.
fn two_agents() -> (Db, Store3) {
    let db = Db::new();
    let admin = db.writer();
    agent_role(&db, "agent_a", &[("team/a/", true)]);
    agent_role(&db, "agent_b", &[("team/b/", true), ("team/shared/", false)]);
    let a = PgBackend::new(&db.url_as("agent_a")).open_writer().unwrap();
    let b = PgBackend::new(&db.url_as("agent_b")).open_writer().unwrap();
    (db, [admin, a, b])
}

/// The owner's store, agent_a's and agent_b's.
type Store3 = [Box<dyn MemoryStore>; 3];

#[test]
fn row_level_security_keeps_each_agent_to_its_granted_scopes() {
    let (db, [mut admin, mut a, mut b]) = two_agents();
    let (shared, _) = insert(admin.as_mut(), &NewMemory::new("read me").in_scope(scope("team/shared/x")), 1);
    let (secret, created) = insert(a.as_mut(), &NewMemory::new("a's plan").in_scope(scope("team/a/x")), 2);
    assert!(created);
    let (mine, _) = insert(b.as_mut(), &NewMemory::new("b's plan").in_scope(scope("team/b")), 3);

    // agent_b cannot read agent_a's scope
    assert_eq!(b.get(&secret.id).unwrap(), None);
    assert!(b.get_by_seqs(&[secret.seq]).unwrap().is_empty());
    let b_sees: Vec<_> = b.scan(0, u64::MAX, 100).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(b_sees, vec![shared.id.clone(), mine.id.clone()], "its own scope and the read-only one");
    assert_eq!(b.count().unwrap(), 2);
    // ... nor write into it, nor change or forget what is there
    let err = b.insert_batch(&[NewMemory::new("b writes in a").in_scope(scope("team/a/x"))], 4).unwrap_err();
    assert!(matches!(err, Error::Postgres { .. }), "{err}");
    assert!(err.to_string().contains("row-level security"), "{err}");
    assert_eq!(b.forget(&secret.id, 5).unwrap(), None);
    // a read-only grant reads but does not write
    assert!(b.get(&shared.id).unwrap().is_some());
    assert!(
        b.insert_batch(&[NewMemory::new("b writes shared").in_scope(scope("team/shared/x"))], 6).is_err()
    );
    let kept = b.forget(&shared.id, 6).unwrap().map(|(m, changed)| (m.forgotten_at, changed));
    assert_eq!(kept, Some((None, false)), "a read-only grant cannot forget");
    // ... and cannot grant itself more
    let mut as_b = postgres::Client::connect(&db.url_as("agent_b"), postgres::NoTls).unwrap();
    let denied =
        as_b.execute("INSERT INTO amber_grants VALUES ('agent_b', 'team/a/', true)", &[]).unwrap_err();
    assert_eq!(denied.code(), Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE), "{denied:?}");
    // The knowledge graph too: agent_b neither reads agent_a's entities, facts,
    // invalidations and mentions, nor adds to its scope.
    let fact = NewFact {
        subject: "billing service".into(),
        predicate: "owned by".into(),
        object: Some("agent a".into()),
        literal: None,
        valid_from: None,
        valid_to: None,
        confidence: None,
        sources: vec![secret.id.clone()],
        supersede: false,
    };
    let added = a.kg_add(&scope("team/a/x"), &[], std::slice::from_ref(&fact), 7).unwrap();
    let (entity, fact_id) = (added.entities[0].id, added.facts[0].id);
    a.kg_invalidate(fact_id, 8, Some("moved to team b"), 8).unwrap();
    a.kg_add_mentions(&[(entity, secret.id.clone())]).unwrap();
    assert!(
        a.kg_fact(fact_id).unwrap().is_some()
            && a.kg_resolve(&scope("team/a/x"), "billing service").unwrap().is_some()
    );
    assert_eq!(b.kg_resolve(&scope("team/a/x"), "billing service").unwrap(), None);
    assert_eq!(b.kg_entity(entity).unwrap(), None);
    assert_eq!(b.kg_fact(fact_id).unwrap(), None);
    assert!(b.kg_facts_of(entity, None).unwrap().is_empty());
    assert!(b.kg_invalidations(fact_id).unwrap().is_empty());
    assert_eq!(b.kg_mention_count(entity).unwrap(), 0);
    assert!(b.kg_names().unwrap().iter().all(|(_, s, _)| s.as_str().starts_with("team/b")));
    assert!(b.kg_add(&scope("team/a/x"), &[], std::slice::from_ref(&fact), 9).is_err());
    let own = b.kg_add(&scope("team/b"), &[], std::slice::from_ref(&fact), 9).unwrap();
    assert_ne!(own.entities[0].id, entity, "its own entity, in its own scope");
    assert_eq!(admin.kg_fact(fact_id).unwrap().unwrap().id, fact_id);
    // agent_a sees only its own scope; the owner sees everything, untouched
    assert_eq!(a.count().unwrap(), 1);
    assert_eq!(admin.count().unwrap(), 3);
    assert_eq!(admin.get(&shared.id).unwrap().unwrap().forgotten_at, None);
    assert_eq!(admin.get(&secret.id).unwrap().unwrap().content, "a's plan");
}

#[test]
fn row_level_security_covers_links_runs_judgements_moves_and_a_readers_own_books() {
    let (_db, [mut admin, mut a, mut b]) = two_agents();
    let here = scope("team/a/x");
    let (x1, _) = insert(a.as_mut(), &NewMemory::new("the billing plan").in_scope(here.clone()), 1);
    let (x2, _) = insert(a.as_mut(), &NewMemory::new("the billing plan, again").in_scope(here.clone()), 2);
    let link = Link {
        from: x2.id.clone(),
        to: x1.id.clone(),
        kind: LinkKind::Related,
        similarity: 0.8,
        created_at: 3,
    };
    assert_eq!(a.add_links(std::slice::from_ref(&link)).unwrap(), 1);
    let task = NewRun {
        task: "migrate billing".into(),
        trace: "secret trace".into(),
        used: vec![x1.id.clone()],
        outcome: None,
        advice: vec![],
        reward: None,
        session: None,
        reason: None,
        part: 0,
    };
    a.insert_runs(&here, "agent-a", &[("ra".to_string(), task)], 4).unwrap();
    let reward = RunReward { reward: 1.0, reason: Some("a's reason".into()), agent: "agent-a".into(), at: 5 };
    a.reward_runs(&[("ra".into(), reward.clone())]).unwrap();
    let verdict = Judgement {
        run_id: "ra".into(),
        verdict: Some(1),
        reason: "the judge on a".into(),
        model: "m".into(),
        at: 6,
    };
    a.put_judgements(std::slice::from_ref(&verdict)).unwrap();
    a.hold(&x1.id, "loop", 7).unwrap();
    let guard = |agent: &str, trigger: &amber_core::MemoryId| GuardEntry {
        agent: agent.into(),
        trigger: trigger.clone(),
        decision: "allow".into(),
        rule: "r".into(),
        at: 8,
    };
    a.log_guard(&guard("agent-a", &x1.id)).unwrap();
    let mut to_b = NewMemory::new("for b, in a's scope").in_scope(here.clone());
    to_b.to = Some("agent-b".into());
    insert(a.as_mut(), &to_b, 9);
    a.note_scope_root(&here, "/home/a/billing", 9).unwrap();

    // agent_b sees none of it, and cannot add to it
    assert!(b.links_of(&x1.id).unwrap().is_empty() && b.links_of(&x2.id).unwrap().is_empty());
    assert!(b.run_rewards("ra").unwrap().is_empty());
    assert!(b.judgements(None, 10).unwrap().is_empty());
    assert_eq!(b.hold_of(&x1.id).unwrap(), None);
    assert!(!b.guard_allowed("agent-a", &x1.id).unwrap());
    assert!(b.inbox("agent-b", &[], 10).unwrap().is_empty());
    assert!(b.scope_roots().unwrap().is_empty());
    assert!(b.add_links(&[Link { created_at: 10, ..link.clone() }]).is_err());
    assert!(b.reward_runs(&[("ra".into(), reward.clone())]).is_err());
    assert!(b.put_judgements(&[Judgement { reason: "b overwrites".into(), ..verdict.clone() }]).is_err());
    assert!(b.hold(&x2.id, "b holds a's thread", 10).is_err());
    assert!(b.log_guard(&guard("agent-b", &x1.id)).is_err());
    // ... while agent_a sees its own
    assert_eq!(a.links_of(&x1.id).unwrap().len(), 1);
    assert_eq!(a.run_rewards("ra").unwrap(), vec![reward.clone()]);
    assert_eq!(a.judgements(None, 10).unwrap(), vec![verdict.clone()]);
    assert_eq!(a.scope_roots().unwrap(), vec![(here.as_str().to_string(), "/home/a/billing".to_string())]);

    // A read-only grant keeps its own books: its inbox, the guard's log, holds.
    let mut shared = NewMemory::new("standup moved to 11").in_scope(scope("team/shared/ops"));
    shared.to = Some("agent-b".into());
    let (shared, _) = insert(admin.as_mut(), &shared, 11);
    let inbox: Vec<_> = b.inbox("agent-b", &[], 10).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(inbox, vec![shared.id.clone()]);
    b.mark_inbox_served("agent-b", &[shared.seq], 12).unwrap();
    assert!(b.inbox("agent-b", &[], 10).unwrap().is_empty(), "served once");
    b.log_guard(&guard("agent-b", &shared.id)).unwrap();
    assert!(b.guard_allowed("agent-b", &shared.id).unwrap());
    b.hold(&shared.id, "loop", 13).unwrap();
    assert_eq!(b.hold_of(&shared.id).unwrap().map(|h| h.reason), Some("loop".to_string()));
    let note = Note {
        scope: scope("team/shared/ops"),
        situation: "deploy".into(),
        agent: None,
        version: 0,
        text: "tag first".into(),
        runs: vec![],
        run_count: 1,
        wrong_count: 0,
        agents: 1,
        created_at: 13,
        withheld: None,
    };
    admin.put_note(&note).unwrap();
    let served = b.notes(&note.scope, None, false).unwrap();
    assert_eq!(served.len(), 1, "a read-only grant reads the scope's advice");
    assert_eq!(b.mark_served("sb", &served[0], 13).unwrap(), None);
    assert_eq!(
        b.mark_served("sb", &served[0], 14).unwrap().map(|(_, at)| at),
        Some(13),
        "and notes its serving"
    );
    assert!(a.notes(&note.scope, None, false).unwrap().is_empty());

    // A scope move by a role under the policies carries the references along.
    let moved = a.move_scope(&here, &scope("team/a/y"), 14).unwrap();
    let new_x1 = moved.iter().find(|m| m.old_id == x1.id).map(|m| m.memory.id.clone()).unwrap();
    assert_ne!(new_x1, x1.id);
    assert_eq!(a.links_of(&new_x1).unwrap().len(), 1, "the link followed the memory");
    assert_eq!(a.hold_of(&new_x1).unwrap().map(|h| h.reason), Some("loop".to_string()));
    assert!(a.guard_allowed("agent-a", &new_x1).unwrap());
    assert_eq!(a.moved_to(&x1.id).unwrap(), Some(new_x1.clone()));
    assert_eq!(b.moved_to(&x1.id).unwrap(), None);
    // A purge by the role takes the memory's links with it.
    let new_x2 = moved.iter().find(|m| m.old_id == x2.id).map(|m| m.memory.id.clone()).unwrap();
    a.forget(&new_x2, 15).unwrap();
    assert_eq!(a.purge(&new_x2).unwrap(), Purged::Deleted);
    assert!(admin.links_of(&new_x1).unwrap().is_empty(), "no link left behind");
    // The owner sees every row, untouched by agent_b.
    assert_eq!(admin.judgements(None, 10).unwrap(), vec![verdict]);
    assert_eq!(admin.run_rewards("ra").unwrap(), vec![reward]);
}

#[test]
fn a_stopped_server_gives_unavailable_quickly_and_the_same_store_works_once_it_is_back() {
    // Its own cluster (kept between runs, stopped after): stopping it must not disturb
    // the other tests.
    let env = [("AMBER_PG_DIR", "/tmp/amber-pg-restart-test"), ("AMBER_PG_PORT", "55433")];
    let admin = pg_sh("start", &env);
    let db = Db::on(&admin);
    let mut s = db.writer();
    let (kept, _) = insert(s.as_mut(), &NewMemory::new("before the restart"), 1);
    pg_sh("stop", &env);

    let started = std::time::Instant::now();
    let read = s.get(&kept.id).unwrap_err();
    assert!(read.is_unavailable(), "{read}");
    let write = s.insert_batch(&[NewMemory::new("while down")], 2).unwrap_err();
    assert!(write.is_unavailable(), "{write}");
    assert!(s.max_seq().unwrap_err().is_unavailable());
    assert!(PgBackend::new(&db.url).open_reader().err().is_some_and(|e| e.is_unavailable()));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "took {:?}", started.elapsed());

    pg_sh("start", &env);
    assert_eq!(s.get(&kept.id).unwrap().unwrap().content, "before the restart", "the same store object");
    let (after, created) = insert(s.as_mut(), &NewMemory::new("after the restart"), 3);
    assert!(created && after.seq > kept.seq);
    assert_eq!(s.count().unwrap(), 2);
    drop(s);
    drop(db);
    pg_sh("stop", &env);
}

/// Throughput on the local test server (not a test: `cargo test --release -p
/// amber-store --test it -- pg::throughput --ignored --nocapture`).
#[test]
#[ignore]
fn throughput() {
    let db = Db::new();
    drop(db.writer());
    let per_sec = |n: usize, t: std::time::Instant| n as f64 / t.elapsed().as_secs_f64();
    let mut s = db.writer();
    let t = std::time::Instant::now();
    for i in 0..1000 {
        s.insert_batch(&[NewMemory::new(format!("single {i}"))], i).unwrap();
    }
    println!("one writer, 1 memory per transaction: {:.0}/s", per_sec(1000, t));
    let t = std::time::Instant::now();
    for b in 0..20 {
        let batch: Vec<_> = (0..100).map(|i| NewMemory::new(format!("batch {b} {i}"))).collect();
        s.insert_batch(&batch, b).unwrap();
    }
    println!("one writer, 100 per transaction: {:.0}/s", per_sec(2000, t));
    let t = std::time::Instant::now();
    let threads: Vec<_> = (0..2)
        .map(|w| {
            let backend = db.backend();
            std::thread::spawn(move || {
                let mut s = backend.open_writer().unwrap();
                for i in 0..500 {
                    s.insert_batch(&[NewMemory::new(format!("writer {w} {i}"))], i).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    println!("two writers, 1 memory per transaction: {:.0}/s together", per_sec(1000, t));
    let t = std::time::Instant::now();
    let all = s.scan(0, u64::MAX, 100_000).unwrap();
    println!("scan of {}: {:.0}/s", all.len(), per_sec(all.len(), t));
    let t = std::time::Instant::now();
    for m in all.iter().take(1000) {
        s.get(&m.id).unwrap();
    }
    println!("get by id: {:.0}/s", per_sec(1000, t));
    // Row-level security's price: the same reads and writes as the owner (not checked)
    // and as a role granted the scope (every row checked), alternated twice.
    agent_role(&db, "bench_role", &[("default/", true)]);
    let mut role = PgBackend::new(&db.url_as("bench_role")).open_writer().unwrap();
    let seqs: Vec<u64> = all.iter().take(1000).map(|m| m.seq).collect();
    let mut rates: Vec<(&str, [f64; 4])> = Vec::new();
    for round in 0..2 {
        for (who, st) in [("owner", &mut s), ("role", &mut role)] {
            let t = std::time::Instant::now();
            let n = st.scan(0, u64::MAX, 100_000).unwrap().len();
            let scan = per_sec(n, t);
            let t = std::time::Instant::now();
            for m in all.iter().take(1000) {
                st.get(&m.id).unwrap().unwrap();
            }
            let get = per_sec(1000, t);
            let t = std::time::Instant::now();
            for chunk in seqs.chunks(10) {
                assert_eq!(st.get_by_seqs(chunk).unwrap().len(), chunk.len());
            }
            let by_seqs = per_sec(1000, t);
            let t = std::time::Instant::now();
            for i in 0..300 {
                st.insert_batch(&[NewMemory::new(format!("{who} round {round} {i}"))], i).unwrap();
            }
            rates.push((who, [scan, get, by_seqs, per_sec(300, t)]));
        }
    }
    // The embedding cache (schema 7: a row per scope under the grants, keyed by HMAC):
    // 20,000 cached vectors of 384 floats, then lookups of 256 chunks (the indexer's
    // batch) that all hit and writes of 16 new vectors (its embedding batch).
    let sc = Scope::default();
    let hash = |i: usize| -> [u8; 32] {
        let mut h = [0u8; 32];
        h[..8].copy_from_slice(&(i as u64).to_le_bytes());
        h
    };
    let vector = vec![0.25f32; 384];
    for start in (0..20_000).step_by(500) {
        let rows: Vec<_> = (start..start + 500)
            .map(|i| (ChunkKey { scope: &sc, hash: hash(i) }, vector.as_slice()))
            .collect();
        s.put_vectors("bench", &rows).unwrap();
    }
    let mut next = 20_000;
    for _ in 0..2 {
        for (who, st) in [("owner", &mut s), ("role", &mut role)] {
            let t = std::time::Instant::now();
            for b in 0..40 {
                let keys: Vec<_> =
                    (0..256).map(|i| ChunkKey { scope: &sc, hash: hash((b * 256 + i) % 20_000) }).collect();
                assert!(st.cached_vectors("bench", &keys).unwrap().iter().all(Option::is_some));
            }
            let read = per_sec(40 * 256, t);
            let t = std::time::Instant::now();
            for _ in 0..50 {
                let rows: Vec<_> = (next..next + 16)
                    .map(|i| (ChunkKey { scope: &sc, hash: hash(i) }, vector.as_slice()))
                    .collect();
                st.put_vectors("bench", &rows).unwrap();
                next += 16;
            }
            let written = per_sec(50 * 16, t);
            println!(
                "{who}: cache reads {read:.0} chunks/s (256 a call), writes {written:.0} vectors/s (16 a call)"
            );
        }
    }
    for (i, what) in
        ["scan", "get by id", "get_by_seqs (10 a call)", "insert, 1 per transaction"].iter().enumerate()
    {
        let mean = |w: &str| {
            let v: Vec<f64> = rates.iter().filter(|(who, _)| *who == w).map(|(_, r)| r[i]).collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        println!(
            "{what}: owner {:.0}/s, role {:.0}/s, role / owner {:.2}",
            mean("owner"),
            mean("role"),
            mean("role") / mean("owner")
        );
    }
}

/// What a role granted the documented table privileges can do to the tables every scope
/// shares. Each statement runs on its own (autocommit); the answer is the rows it
/// changed, or the error's SQLSTATE.
fn try_as(c: &mut postgres::Client, sql: &str) -> String {
    match c.execute(sql, &[]) {
        Ok(n) => format!("{n} rows"),
        Err(e) => {
            format!("refused {}", e.code().map(|c| c.code().to_string()).unwrap_or_else(|| e.to_string()))
        }
    }
}

/// The tables without row-level security, in name order.
fn tables_without_rls(c: &mut postgres::Client) -> Vec<String> {
    c.query(
        "SELECT c.relname::TEXT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'r' AND NOT c.relrowsecurity ORDER BY 1",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

/// At schema 5 a role with the documented table privileges could rewrite the schema
/// version, reset the seq counter and overwrite or delete every embedding (the first
/// commit of this test measured it: `UPDATE amber_schema` 1 row, `DELETE FROM
/// embeddings` 2 rows, `UPDATE amber_seq SET seq = 0` 1 row). From schema 6 every
/// table is under row-level security, and each of those statements changes nothing.
#[test]
fn a_role_changes_neither_the_schema_version_nor_the_seq_counter_nor_the_grants_nor_anothers_embeddings() {
    let (db, [mut admin, mut a, _b]) = two_agents();
    let mut sql = db.sql();
    assert_eq!(tables_without_rls(&mut sql), Vec::<String>::new(), "every table is under row-level security");
    insert(admin.as_mut(), &NewMemory::new("owner's").in_scope(scope("team/a/x")), 1);
    admin.set_meta("embedding_model", "m:2").unwrap();
    let (sa, sb) = (scope("team/a/x"), scope("team/b"));
    admin.put_vectors("model", &[(chunk(&sb, 1), &[1.0, 0.0][..])]).unwrap();
    a.put_vectors("model", &[(chunk(&sa, 2), &[0.0, 1.0][..])]).unwrap();
    let state = |sql: &mut postgres::Client| -> (i64, i64, i64, i64, String) {
        let r = sql
            .query_one(
                "SELECT (SELECT COUNT(*) FROM amber_schema), (SELECT MAX(version) FROM amber_schema),
                        (SELECT seq FROM amber_seq), (SELECT changes FROM amber_seq),
                        (SELECT string_agg(scope || ':' || encode(chunk_key, 'hex') || '=' || encode(vector, 'hex'), ',' ORDER BY chunk_key) FROM embeddings)
                          || ';' || (SELECT string_agg(key || '=' || value, ',') FROM meta)
                          || ';' || (SELECT encode(secret, 'hex') FROM amber_cache_secret)
                          || ';' || (SELECT COUNT(*) FROM amber_grants)",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))
    };
    let before = state(&mut sql);
    assert_eq!((before.0, before.1), (1, 8));
    let mut as_b = postgres::Client::connect(&db.url_as("agent_b"), postgres::NoTls).unwrap();
    let refused = "refused 42501"; // insufficient_privilege, or a row-level security violation
    for (stmt, expected) in [
        ("UPDATE amber_schema SET version = 99", "0 rows"),
        ("DELETE FROM amber_schema", "0 rows"),
        ("INSERT INTO amber_schema (version) VALUES (99)", refused),
        ("UPDATE embeddings SET vector = '\\x0000803f00000000'", "0 rows"),
        ("DELETE FROM embeddings", "0 rows"),
        (
            // over the owner's vector in agent_b's own scope, the one row it sees
            "INSERT INTO embeddings (model, scope, chunk_key, vector) SELECT model, scope, chunk_key, '\\x0000803f00000000' FROM embeddings
             ON CONFLICT (model, scope, chunk_key) DO UPDATE SET vector = excluded.vector",
            refused,
        ),
        ("INSERT INTO embeddings (model, scope, chunk_key, vector) VALUES ('model', 'team/a/x', '\\x02', '\\x00')", refused),
        (
            "INSERT INTO embeddings (model, scope, chunk_key, vector, written_by) VALUES ('model', 'team/b', '\\x03', '\\x00', 'agent_a')",
            refused,
        ),
        ("UPDATE amber_cache_secret SET secret = '\\x00'", "0 rows"),
        ("DELETE FROM amber_cache_secret", "0 rows"),
        ("INSERT INTO amber_cache_secret (one, secret) VALUES (FALSE, sha256('\\x00'))", refused),
        ("UPDATE amber_seq SET seq = 0", refused),
        ("UPDATE amber_seq SET seq = seq + 1000", refused),
        ("UPDATE amber_seq SET changes = changes - 1", refused),
        ("DELETE FROM amber_seq", "0 rows"),
        ("INSERT INTO amber_seq (one, seq) VALUES (TRUE, 0)", refused),
        ("INSERT INTO amber_grants (role, prefix, can_write) VALUES ('agent_b', 'team/a/', true)", refused),
        ("UPDATE amber_grants SET prefix = 'team/' WHERE role = 'agent_b'", refused),
        ("UPDATE meta SET value = 'poisoned'", "0 rows"),
        ("DELETE FROM meta", "0 rows"),
    ] {
        assert_eq!(try_as(&mut as_b, stmt), expected, "agent_b: {stmt}");
    }
    assert_eq!(state(&mut sql), before, "nothing changed");
    // Even with every table privilege on amber_grants, a role reads only its own grants
    // and writes none.
    sql.batch_execute("GRANT INSERT, UPDATE, DELETE ON amber_grants TO agent_b").unwrap();
    for stmt in [
        "INSERT INTO amber_grants (role, prefix, can_write) VALUES ('agent_b', 'team/a/', true)",
        "UPDATE amber_grants SET can_write = true",
        "DELETE FROM amber_grants",
    ] {
        let got = try_as(&mut as_b, stmt);
        assert!(got == refused || got == "0 rows", "agent_b: {stmt} -> {got}");
    }
    let grants: Vec<String> = as_b
        .query("SELECT prefix FROM amber_grants ORDER BY 1", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(grants, vec!["team/b/".to_string(), "team/shared/".to_string()], "its own grants only");
    assert_eq!(state(&mut sql), before, "nothing changed");
    // What the store does as a role still works: it counts seqs up, adds a metadata key
    // (an existing one stays the owner's) and reads the version.
    let mut b = PgBackend::new(&db.url_as("agent_b")).open_writer().unwrap();
    insert(b.as_mut(), &NewMemory::new("b's").in_scope(scope("team/b")), 2);
    b.set_meta("embedding_model", "other:3").unwrap();
    b.set_meta("b's key", "x").unwrap();
    assert_eq!(admin.meta("embedding_model").unwrap().as_deref(), Some("m:2"));
    assert_eq!(admin.meta("b's key").unwrap().as_deref(), Some("x"));
    assert!(b.integrity_check().unwrap());
    assert_eq!(state(&mut sql).2, before.2 + 1, "one seq taken");
}
