//! Session context: a short memory filed in a session gets a second vector, of its text
//! followed by the memory filed just before it, so a reply is close to the question it
//! answers. Forgetting the earlier memory takes it out of the later one's vectors, also
//! when the forget was interrupted by a crash. BM25 never sees the context. With the
//! real model (`scripts/setup.sh`; CI runs it first).
//!
//! Session neighbours are off in these tests, so what each signal finds is plain to see.

use amber_core::{Evidence, Hit, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions};
use amber_store::prelude::*;

const QUESTION: &str = "Nate: any pointers on what I should get for my living room to make it comfy?";
const ANSWER: &str =
    "Joanna: Sure! A couch that seats several people, a weighted blanket, and lamps you can dim.";
const AFTER: &str = "Nate: Thanks, I'll shop for those on Saturday.";
const QUERY: &str = "What should go in a living room to make it comfy?";

fn open(dir: &std::path::Path, session_context: bool) -> Engine {
    let mut opts = EngineOptions::new(dir);
    opts.neighbour_weight = 0.0;
    opts.session_weight = 0.0;
    opts.session_context = session_context;
    Engine::open(opts).expect("the model is installed: run scripts/setup.sh")
}

fn scope() -> Scope {
    "chat/a".parse().unwrap()
}

fn turn(text: &str, session: Option<&str>) -> NewMemory {
    let mut m = NewMemory::new(text).in_scope(scope());
    m.session_id = session.map(str::to_owned);
    m
}

fn recall(e: &Engine, text: &str, mode: SearchMode) -> Vec<Hit> {
    e.recall(&Query { mode, ..Query::new(text).in_scope(scope()).top(10) }).unwrap()
}

fn hit<'a>(hits: &'a [Hit], id: &MemoryId) -> Option<&'a Hit> {
    hits.iter().find(|h| &h.memory.id == id)
}

/// A memory's evidence for `text`, by vectors alone.
fn by_vector(e: &Engine, text: &str, id: &MemoryId) -> Evidence {
    let hits = recall(e, text, SearchMode::Vector);
    hit(&hits, id).expect("among the vector hits").evidence.clone()
}

fn cosine(e: &Evidence) -> f32 {
    e.best_chunk_cosine.expect("a vector hit has a cosine")
}

/// QUESTION, ANSWER, AFTER in session s1; a memory in no session; one in session s2.
/// Vectors: QUESTION 1 (nothing before it), ANSWER 2, AFTER 2, the loose one 1, the s2
/// one 1 (first of its session).
fn file(e: &Engine) -> [MemoryId; 3] {
    let q = e.writer().unwrap().remember(turn(QUESTION, Some("s1"))).unwrap().memory.id;
    let answer = e.writer().unwrap().remember(turn(ANSWER, Some("s1"))).unwrap().memory.id;
    let after = e.writer().unwrap().remember(turn(AFTER, Some("s1"))).unwrap().memory.id;
    e.writer().unwrap().remember(turn("The weekend forecast says rain on Saturday.", None)).unwrap();
    e.writer().unwrap().remember(turn("Nate: the garage door is stuck again.", Some("s2"))).unwrap();
    [q, answer, after]
}

#[test]
fn a_reply_is_found_by_the_words_of_the_question_it_answers() {
    let off = tempfile::tempdir().unwrap();
    let e = open(off.path(), false);
    let [_, answer, _] = file(&e);
    assert_eq!(e.status().unwrap().vectors, 5, "one vector per memory without session context");
    let alone = by_vector(&e, QUERY, &answer);
    assert_eq!(alone.best_chunk, Some(0));
    drop(e);

    let on = tempfile::tempdir().unwrap();
    let e = open(on.path(), true);
    let [q, answer, _] = file(&e);
    assert_eq!(e.status().unwrap().vectors, 7, "a second vector for ANSWER and AFTER");
    let with = by_vector(&e, QUERY, &answer);
    assert_eq!(with.best_chunk, Some(1), "one past its own chunk: the context vector");
    let (c_on, c_off) = (cosine(&with), cosine(&alone));
    assert!(
        c_on > c_off + 0.1,
        "read with its question, the answer is closer to the query: {c_on} vs {c_off}"
    );
    // BM25 never sees the context, and the memory comes back verbatim.
    let hits = recall(&e, QUERY, SearchMode::Bm25);
    assert!(hit(&hits, &q).is_some(), "{hits:#?}");
    assert!(hit(&hits, &answer).is_none(), "the answer shares no word with the query");
    let hits = recall(&e, QUERY, SearchMode::Hybrid);
    assert_eq!(hit(&hits, &answer).expect("found").memory.content, ANSWER);
}

/// The state after QUESTION is forgotten: ANSWER has no context vector left (AFTER still
/// has ANSWER as its context); ANSWER's best vector is its own, far from the question.
fn assert_question_gone(e: &Engine, [q, answer, _]: &[MemoryId; 3], cosine_before: f32) {
    assert!(hit(&recall(e, QUERY, SearchMode::Hybrid), q).is_none());
    let st = e.status().unwrap();
    assert_eq!(st.vectors, 5, "QUESTION's vector and ANSWER's context vector are gone: {st:?}");
    let v = by_vector(e, QUESTION, answer);
    assert_eq!(v.best_chunk, Some(0), "{v:?}");
    assert!(cosine(&v) < cosine_before - 0.1, "{v:?} vs {cosine_before}");
}

#[test]
fn whole_memory_similarity_ignores_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let [_, answer, _] = file(&e);
    // The same text in another scope, after another turn: another context vector.
    let b: Scope = "chat/b".parse().unwrap();
    let mut before = NewMemory::new("Nate: what's for dinner tonight?").in_scope(b.clone());
    before.session_id = Some("s9".into());
    e.writer().unwrap().remember(before).unwrap();
    let mut copy = NewMemory::new(ANSWER).in_scope(b);
    copy.session_id = Some("s9".into());
    let copy = e.writer().unwrap().remember(copy).unwrap().memory.id;
    let similar = e.similar(&answer, None, 5).unwrap();
    let (m, sim) = &similar[0];
    assert_eq!(m.id, copy, "{similar:?}");
    assert!(*sim > 0.999, "the same text is similarity 1 whatever came before it: {sim}");
}

#[test]
fn forgetting_a_memory_takes_it_out_of_the_next_ones_context() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), true);
    let ids = file(&e);
    let before = cosine(&by_vector(&e, QUESTION, &ids[1]));

    e.writer().unwrap().forget(&ids[0]).unwrap();
    assert_question_gone(&e, &ids, before);
    // Persisted: the same after a restart, and after the row is purged.
    drop(e);
    let e = open(dir.path(), true);
    assert_question_gone(&e, &ids, before);
    assert!(e.writer().unwrap().purge(&ids[0]).unwrap());
    assert_question_gone(&e, &ids, before);

    // Forgetting the middle memory: the one after it now reads with the one before it.
    e.writer().unwrap().remember(turn(QUESTION, Some("s3"))).unwrap();
    let mid = e
        .writer()
        .unwrap()
        .remember(turn("Joanna: hmm, let me think about it.", Some("s3")))
        .unwrap()
        .memory
        .id;
    let reply = e
        .writer()
        .unwrap()
        .remember(turn(&ANSWER.replace("Sure!", "Got it:"), Some("s3")))
        .unwrap()
        .memory
        .id;
    let two_away = by_vector(&e, QUERY, &reply);
    e.writer().unwrap().forget(&mid).unwrap();
    let next_to = by_vector(&e, QUERY, &reply);
    assert_eq!(next_to.best_chunk, Some(1), "{next_to:?}");
    assert!(cosine(&next_to) > cosine(&two_away) + 0.1, "{next_to:?} vs {two_away:?}");
}

#[test]
fn a_forget_interrupted_before_the_indexes_heals_the_next_memorys_context_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let (ids, before) = {
        let e = open(dir.path(), true);
        let ids = file(&e);
        let before = cosine(&by_vector(&e, QUESTION, &ids[1]));
        e.flush().unwrap();
        (ids, before)
    };
    // The tombstone committed, then a crash before the indexes were touched.
    {
        let mut store = amber_store::Store::open(&dir.path().join("amber.db")).unwrap();
        assert!(store.forget(&ids[0], 1).unwrap().unwrap().1);
    }
    let e = open(dir.path(), true);
    assert_question_gone(&e, &ids, before);
    let st = e.status().unwrap();
    assert!(st.indexes_complete, "{st:?}");
    assert!(st.index_events.iter().any(|m| m.contains("forgotten")), "{:?}", st.index_events);
}
