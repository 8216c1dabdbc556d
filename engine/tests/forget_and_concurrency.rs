//! Forgetting, purging, the commit/index split and concurrent use, with the real model.
//! They need `scripts/setup.sh` to have run (CI runs it first).

use amber_store::prelude::*;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use amber_core::{Hit, MemoryId, NewMemory, Query, SearchMode};
use amber_engine::{Engine, EngineOptions, Error};

fn open(dir: &Path) -> Engine {
    Engine::open(EngineOptions::new(dir)).expect("the model is installed: run scripts/setup.sh")
}

const FILLER: &[&str] = &[
    "The weekly team meeting moved to Thursday afternoon.",
    "Our cat likes to sleep on the warm laptop keyboard.",
    "The quarterly budget review is due at the end of March.",
    "Bananas ripen faster when stored next to apples.",
    "The office coffee machine was replaced with an espresso maker.",
    "She is training for a half marathon in the autumn.",
];

const SECRET: &str = "The staging database password is kept in vault path secret/staging-db.";

fn fill(e: &Engine) -> MemoryId {
    for t in FILLER {
        e.writer().unwrap().remember(NewMemory::new(*t)).unwrap();
    }
    e.writer().unwrap().remember(NewMemory::new(SECRET)).unwrap().memory.id
}

/// Whether any mode's recall of a query aimed at the secret returns it.
fn recalled(e: &Engine, id: &MemoryId) -> bool {
    let queries =
        ["staging database password vault", "secret/staging-db", "where is the db credential kept?"];
    [SearchMode::Bm25, SearchMode::Vector, SearchMode::Hybrid].into_iter().any(|mode| {
        queries
            .iter()
            .any(|q| e.recall(&Query::new(*q).mode(mode).top(10)).unwrap().iter().any(|h| h.memory.id == *id))
    })
}

#[test]
fn the_engine_is_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Engine>();
    shareable::<std::sync::Arc<Engine>>();
}

#[test]
fn forget_hides_from_recall_and_get_still_returns_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let id = fill(&e);
    assert!(recalled(&e, &id));
    let vectors_before = e.status().unwrap().vectors;

    let gone = e.writer().unwrap().forget(&id).unwrap().expect("it exists");
    let at = gone.forgotten_at.expect("forgotten_at is set");
    assert_eq!(gone.content, SECRET, "content is kept");
    assert!(!recalled(&e, &id), "recall never returns a forgotten memory");
    let got = e.get(&id).unwrap().expect("get returns forgotten memories");
    assert_eq!(got.forgotten_at, Some(at));

    // idempotent: the first time is kept
    assert_eq!(e.writer().unwrap().forget(&id).unwrap().unwrap().forgotten_at, Some(at));
    assert!(e.writer().unwrap().forget(&NewMemory::new("never filed").id()).unwrap().is_none());

    let st = e.status().unwrap();
    assert_eq!((st.memories, st.forgotten), (FILLER.len() as u64, 1));
    assert_eq!(st.bm25_docs, st.memories);
    assert!(st.vectors < vectors_before, "its vectors left the index");
    assert!(st.indexes_complete, "{st:?}");
}

#[test]
fn forget_survives_reopen_and_reindex() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let e = open(dir.path());
        let id = fill(&e);
        e.writer().unwrap().forget(&id).unwrap();
        id
    };
    let e = open(dir.path());
    let st = e.status().unwrap();
    assert!(st.index_events.is_empty(), "nothing to repair: {:?}", st.index_events);
    assert!(st.indexes_complete, "{st:?}");
    assert!(!recalled(&e, &id));
    assert!(e.get(&id).unwrap().unwrap().forgotten_at.is_some());

    e.writer().unwrap().reindex().unwrap();
    assert!(!recalled(&e, &id), "a rebuild from the store skips forgotten memories");
    let st = e.status().unwrap();
    assert_eq!((st.memories, st.forgotten, st.bm25_docs), (FILLER.len() as u64, 1, FILLER.len() as u64));
    assert_eq!(st.vectors, FILLER.len(), "one chunk per filler memory, none for the forgotten one");
    assert_eq!(e.stats().chunks_embedded, 0, "vectors came from the cache");
}

#[test]
fn a_forget_interrupted_before_the_indexes_heals_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let e = open(dir.path());
        let id = fill(&e);
        e.flush().unwrap();
        id
    };
    // The tombstone committed, then a crash before the indexes were touched.
    {
        let mut store = amber_store::Store::open(&dir.path().join("amber.db")).unwrap();
        assert!(store.forget(&id, 1).unwrap().unwrap().1);
    }
    let e = open(dir.path());
    assert!(!recalled(&e, &id));
    let st = e.status().unwrap();
    assert!(st.indexes_complete, "{st:?}");
    assert_eq!(st.bm25_docs, FILLER.len() as u64);
    assert_eq!(st.vectors, FILLER.len());
    assert!(st.index_events.iter().any(|m| m.contains("forgotten")), "{:?}", st.index_events);
}

#[test]
fn purge_deletes_only_forgotten_memories() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let id = fill(&e);
    let other = NewMemory::new(FILLER[0]).id();
    assert!(matches!(e.writer().unwrap().purge(&id), Err(Error::NotForgotten)));
    assert!(e.get(&id).unwrap().is_some(), "a refused purge deletes nothing");
    e.writer().unwrap().forget(&id).unwrap();
    assert!(e.writer().unwrap().purge(&id).unwrap());
    assert!(e.get(&id).unwrap().is_none());
    assert!(!e.writer().unwrap().purge(&id).unwrap(), "no such id any more");
    assert!(!recalled(&e, &id));
    assert!(e.get(&other).unwrap().is_some());
    let st = e.status().unwrap();
    assert_eq!((st.memories, st.forgotten), (FILLER.len() as u64, 0));
    assert!(st.indexes_complete, "{st:?}");
    drop(e);
    let e = open(dir.path());
    assert!(e.get(&id).unwrap().is_none());
    assert!(e.status().unwrap().indexes_complete);
}

#[test]
fn remembering_forgotten_content_files_it_anew() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let id = fill(&e);
    let first = e.get(&id).unwrap().unwrap();
    e.writer().unwrap().forget(&id).unwrap();
    let again = e.writer().unwrap().remember(NewMemory::new(SECRET)).unwrap();
    assert!(again.created, "forgotten content is filed anew");
    assert_eq!(again.memory.id, id);
    assert!(again.memory.seq > first.seq, "a new seq");
    assert_eq!(again.memory.forgotten_at, None);
    assert!(recalled(&e, &id));
    assert_eq!(e.get(&id).unwrap().unwrap().forgotten_at, None);
    // a repeat of a live memory is still a no-op
    assert!(!e.writer().unwrap().remember(NewMemory::new(SECRET)).unwrap().created);
    let st = e.status().unwrap();
    assert_eq!((st.memories, st.forgotten), (FILLER.len() as u64 + 1, 0));
    assert!(st.indexes_complete, "{st:?}");
    assert_eq!(e.stats().chunks_embedded, FILLER.len() as u64 + 1, "its vector came from the cache");
    drop(e);
    let e = open(dir.path());
    assert!(recalled(&e, &id));
}

#[test]
fn commit_batch_is_durable_and_index_pending_makes_it_recallable() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    assert_eq!((e.committed_through(), e.indexed_through()), (0, 0));
    fill(&e);
    let before = e.committed_through();
    assert_eq!(e.indexed_through(), before, "remember indexes");

    let out = e
        .writer()
        .unwrap()
        .commit_batch(vec![NewMemory::new(SECRET.replace("staging", "canary")), NewMemory::new(SECRET)])
        .unwrap();
    assert!(out[0].created && !out[1].created);
    let seq = out[0].memory.seq;
    assert_eq!(e.committed_through(), seq);
    assert_eq!(e.indexed_through(), before, "commit_batch does not index");
    let st = e.status().unwrap();
    assert!(!st.indexes_complete);
    assert_eq!((st.committed_through, st.indexed_through), (seq, before));
    assert!(e.get(&out[0].memory.id).unwrap().is_some(), "committed: get finds it");
    let canary = |e: &Engine| {
        e.recall(&Query::new("canary database password").mode(SearchMode::Bm25))
            .unwrap()
            .iter()
            .any(|h| h.memory.id == out[0].memory.id)
    };
    assert!(!canary(&e), "not indexed yet");

    assert_eq!(e.index_pending().unwrap(), seq);
    assert_eq!(e.indexed_through(), seq);
    assert!(canary(&e));
    assert_eq!(e.index_pending().unwrap(), seq, "nothing more to do");
    assert!(e.status().unwrap().indexes_complete);

    // committed but never indexed before a shutdown: caught up at the next open
    let late = e
        .writer()
        .unwrap()
        .commit_batch(vec![NewMemory::new("Late note: the canary deploy uses port 8443.")])
        .unwrap();
    drop(e);
    let e = open(dir.path());
    assert_eq!(e.committed_through(), late[0].memory.seq);
    assert_eq!(e.indexed_through(), late[0].memory.seq);
    let hits = e.recall(&Query::new("canary deploy port").mode(SearchMode::Bm25).top(1)).unwrap();
    assert_eq!(hits[0].memory.id, late[0].memory.id);
}

fn sane(hits: &[Hit], k: usize) {
    assert!(hits.len() <= k);
    let ids: HashSet<_> = hits.iter().map(|h| &h.memory.id).collect();
    assert_eq!(ids.len(), hits.len(), "no duplicates");
    assert!(hits.windows(2).all(|w| w[0].evidence.fused >= w[1].evidence.fused), "best first");
    assert!(hits.iter().all(|h| h.memory.forgotten_at.is_none()), "never a forgotten memory");
}

#[test]
fn recalls_run_concurrently_with_commits_indexing_and_forgets() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    fill(&e);
    let done = AtomicBool::new(false);
    let e = &e;
    let (committed, forgotten) = std::thread::scope(|t| {
        let readers: Vec<_> = (0..3)
            .map(|r| {
                let done = &done;
                t.spawn(move || {
                    let queries =
                        ["ticket QX-12 status", "coffee machine", "deploy notes for service 7", "cat"];
                    let mut n = 0;
                    while !done.load(Ordering::SeqCst) || n < 8 {
                        let q = queries[(n + r) % queries.len()];
                        let hits = e.recall(&Query::new(q).top(5)).unwrap();
                        sane(&hits, 5);
                        assert!(!hits.is_empty(), "{q}");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let writer = t.spawn(move || {
            let mut ids = Vec::new();
            let mut forgotten = Vec::new();
            for batch in 0..6 {
                let memories: Vec<NewMemory> = (0..5)
                    .map(|i| {
                        let n = batch * 5 + i;
                        NewMemory::new(format!("Deploy notes for service {n}: ticket QX-{n} is open."))
                    })
                    .collect();
                let out = e.writer().unwrap().commit_batch(memories).unwrap();
                for r in &out {
                    assert!(e.get(&r.memory.id).unwrap().is_some(), "committed means readable");
                }
                ids.extend(out.iter().map(|r| r.memory.id.clone()));
                assert!(e.index_pending().unwrap() >= out.last().unwrap().memory.seq);
                let victim = out[0].memory.id.clone();
                e.writer().unwrap().forget(&victim).unwrap().unwrap();
                forgotten.push(victim);
            }
            (ids, forgotten)
        });
        let result = writer.join().unwrap();
        done.store(true, Ordering::SeqCst);
        for r in readers {
            assert!(r.join().unwrap() >= 8);
        }
        result
    });
    assert_eq!(committed.len(), 30);
    for id in &committed {
        assert!(e.get(id).unwrap().is_some(), "every committed id is found by get");
    }
    let st = e.status().unwrap();
    assert_eq!((st.memories, st.forgotten), ((FILLER.len() + 1 + 30 - 6) as u64, 6));
    assert!(st.indexes_complete, "{st:?}");
    for n in [1, 7, 13, 29] {
        let hits = e.recall(&Query::new(format!("QX-{n}")).mode(SearchMode::Bm25).top(1)).unwrap();
        assert!(hits[0].memory.content.contains(&format!("QX-{n} ")), "{n}: {:?}", hits[0].memory.content);
    }
    for id in &forgotten {
        let content = e.get(id).unwrap().unwrap().content;
        let hits = e.recall(&Query::new(content).top(10)).unwrap();
        assert!(hits.iter().all(|h| h.memory.id != *id));
    }
}

#[test]
fn a_recall_does_not_wait_for_an_indexing_batch() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    fill(&e);
    // Long, distinct texts: seconds of embedding on two cores.
    let words = ["river", "copper", "lantern", "orbit", "meadow", "signal", "harbor", "thistle", "quartz"];
    let batch: Vec<NewMemory> = (0..12)
        .map(|i| {
            let text: Vec<String> = (0..180)
                .map(|j| format!("{}{}", words[(i * 7 + j) % words.len()], (i * 31 + j) % 97))
                .collect();
            NewMemory::new(format!("Log {i}: {}", text.join(" ")))
        })
        .collect();
    e.writer().unwrap().commit_batch(batch).unwrap();
    let indexing = AtomicBool::new(true);
    std::thread::scope(|t| {
        t.spawn(|| {
            e.index_pending().unwrap();
            indexing.store(false, Ordering::SeqCst);
        });
        // BM25 goes first; once it holds the batch, the indexer is in the model.
        while e.status().unwrap().bm25_docs < (FILLER.len() + 1 + 12) as u64 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut answered_while_indexing = 0;
        for q in ["espresso maker", "cat on the keyboard", "budget review", "marathon training"] {
            let hits = e.recall(&Query::new(q).top(3)).unwrap();
            assert!(!hits.is_empty());
            if indexing.load(Ordering::SeqCst) {
                answered_while_indexing += 1;
            }
        }
        assert!(
            answered_while_indexing >= 3,
            "recalls waited for the indexing batch: {answered_while_indexing}"
        );
    });
    assert_eq!(e.indexed_through(), e.committed_through());
}

/// The chunk hashes the local embedding cache holds.
fn cached_hashes(dir: &Path) -> HashSet<Vec<u8>> {
    let db = rusqlite::Connection::open(dir.join("amber.db")).unwrap();
    let mut stmt = db.prepare("SELECT chunk_hash FROM embeddings").unwrap();
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).unwrap().map(Result::unwrap).collect()
}

fn hash(text: &str) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).to_vec()
}

#[test]
fn a_purged_memorys_cached_vectors_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let in_session = |t: &str| {
        let mut m = NewMemory::new(t);
        m.session_id = Some("s1".into());
        e.writer().unwrap().remember(m).unwrap().memory.id
    };
    let (before, secret, after) = (in_session(FILLER[0]), in_session(SECRET), in_session(FILLER[1]));
    e.flush().unwrap();
    // Its own text, its session-context text, and the next memory's (ending with it).
    let carrying =
        [hash(SECRET), hash(&format!("{SECRET}\n{}", FILLER[0])), hash(&format!("{}\n{SECRET}", FILLER[1]))];
    let held = cached_hashes(dir.path());
    for (i, h) in carrying.iter().enumerate() {
        assert!(held.contains(h), "text {i} was cached: the case");
    }
    e.writer().unwrap().forget(&secret).unwrap();
    assert!(e.writer().unwrap().purge(&secret).unwrap());
    let held = cached_hashes(dir.path());
    for (i, h) in carrying.iter().enumerate() {
        assert!(!held.contains(h), "text {i} carrying the purged memory's words is still cached");
    }
    assert!(
        held.contains(&hash(FILLER[0])) && held.contains(&hash(FILLER[1])),
        "the others' own vectors stay"
    );
    assert!(e.get(&before).unwrap().is_some() && e.get(&after).unwrap().is_some());
}

#[test]
fn what_someone_waits_for_is_indexed_before_the_backlog_ahead_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let backlog: Vec<NewMemory> = (0..300)
        .map(|i| {
            NewMemory::new(format!("build log {i}: runner {} finished job {} in {} s", i % 17, i * 3, i % 60))
        })
        .collect();
    e.writer().unwrap().commit_batch(backlog).unwrap();
    let waited = e.writer().unwrap().commit_batch(vec![NewMemory::new(SECRET)]).unwrap()[0].memory.seq;
    let person = e
        .writer()
        .unwrap()
        .commit_batch(vec![NewMemory::new("The pager rota swaps every Monday at nine.")])
        .unwrap();
    let person = person[0].memory.seq;
    let by_meaning = |e: &Engine, q: &str, seq: u64| {
        e.recall(&Query::new(q).mode(SearchMode::Vector).top(3)).unwrap().iter().any(|h| h.memory.seq == seq)
    };
    assert!(!by_meaning(&e, "where is the db credential kept?", waited), "nothing is indexed yet");

    // A client waits for one memory at the end of 300; the person's write goes first.
    assert_eq!(e.unindexed(&[[waited, waited]]), 1);
    e.index_first([person]);
    // One slice, as when the daemon is stopping: the words of everything, the two
    // waited-for memories, and the first 64 of the backlog.
    e.stop_indexing();
    e.index_pending().unwrap();
    let mark = e.indexed_through();
    assert!(mark < waited, "the pass went on past one slice ({mark})");
    assert_eq!(e.unindexed(&[[waited, waited], [person, person]]), 0, "both are indexed, ahead of {mark}");
    assert!(by_meaning(&e, "where is the db credential kept?", waited));
    assert!(by_meaning(&e, "when does on-call duty change hands", person));
    assert_eq!(e.stats().indexed_first, 2);
    // What is behind the watermark still counts; what is past what is committed does not.
    assert_eq!(e.unindexed(&[[mark + 1, mark + 2], [person + 1, person + 50]]), 2);

    // The ordered pass indexes them again when it gets there (a replace): after a restart
    // the indexes hold each memory once.
    drop(e);
    let e = open(dir.path());
    let st = e.status().unwrap();
    assert!(st.indexes_complete, "{st:?}");
    assert_eq!(st.bm25_docs, 302);
    assert!(by_meaning(&e, "where is the db credential kept?", waited));
}
