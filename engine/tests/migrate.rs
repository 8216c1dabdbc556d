//! Changing the model, the switch's catch-up, with the real model. The next model's
//! index is built aside (`Engine::prepare_switch`, nothing locked, off the daemon's
//! writer) while writes go on; `EngineWriter::switch_model` redoes what changed meanwhile, so
//! the index switched to holds what an index rebuilt from the store would. (The next
//! model here is the packaged one again: what is tested is the catch-up, not the model;
//! daemon/tests/migrate.rs changes the model for real.) They need `scripts/setup.sh`.

use amber_core::model::ModelConfig;
use amber_core::{Hit, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions, Migration, NextModel, Prepared};

const QUESTION: &str = "Nate: Any tips for making my living room feel cosier?";
const ANSWER: &str =
    "Joanna: Sure! A couch that seats several people, a weighted blanket, and lamps you can dim.";
const AFTER: &str = "Nate: Thanks, I'll shop for those on Saturday.";
const LATE: &str = "Joanna: the plumber comes on Tuesday to fix the leaking kitchen tap.";
const UNINDEXED: &str = "Nate: my passport expires in March, renew it before the trip.";
const PROBES: &[&str] = &[
    "When does my passport expire?",
    QUESTION,
    "What should go in a living room to make it comfy?",
    "When does the plumber come?",
    "garage door stuck",
    "weekend rain",
];

fn options(dir: &std::path::Path) -> EngineOptions {
    let mut opts = EngineOptions::new(dir);
    opts.neighbour_weight = 0.0;
    opts.session_weight = 0.0;
    opts.session_context = true;
    opts
}

fn scope() -> Scope {
    "chat/a".parse().unwrap()
}

fn turn(text: &str, session: &str) -> NewMemory {
    let mut m = NewMemory::new(text).in_scope(scope());
    m.session_id = Some(session.to_owned());
    m
}

/// What vectors alone find for each probe: (id, best chunk, cosine to 3 places).
fn by_vector(e: &Engine) -> Vec<Vec<(MemoryId, Option<usize>, i64)>> {
    PROBES
        .iter()
        .map(|p| {
            let hits: Vec<Hit> = e
                .recall(&Query { mode: SearchMode::Vector, ..Query::new(*p).in_scope(scope()).top(10) })
                .unwrap();
            hits.into_iter()
                .map(|h| {
                    let c = h.evidence.best_chunk_cosine.unwrap_or(0.0);
                    (h.memory.id, h.evidence.best_chunk, (c * 1000.0).round() as i64)
                })
                .collect()
        })
        .collect()
}

/// A store with a session whose question is forgotten while the next index is built
/// aside, and a memory filed meanwhile; `between` runs between the build and the switch.
fn migrate_with_writes_between(between: impl FnOnce(&Engine)) -> (Engine, tempfile::TempDir, [MemoryId; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let e = Engine::open(opts.clone()).expect("the model is installed: run scripts/setup.sh");
    let q = e.writer().unwrap().remember(turn(QUESTION, "s1")).unwrap().memory.id;
    let answer = e.writer().unwrap().remember(turn(ANSWER, "s1")).unwrap().memory.id;
    e.writer().unwrap().remember(turn(AFTER, "s1")).unwrap();
    e.writer().unwrap().remember(turn("Nate: the garage door is stuck again.", "s2")).unwrap();
    e.writer().unwrap().remember(turn("The weekend forecast says rain on Saturday.", "s2")).unwrap();
    e.index_pending().unwrap();
    // Committed, not indexed yet when the build begins (the build takes it from the
    // store), and forgotten before the switch.
    let unindexed =
        e.writer().unwrap().commit_batch(vec![turn(UNINDEXED, "s3")]).unwrap().remove(0).memory.id;

    let next = NextModel::load(&opts, &ModelConfig::default()).unwrap();
    let progress = Migration::default();
    assert!(e.migrate_cache(&next, &progress).unwrap());
    let prepared: Prepared = e.prepare_switch(next, &progress).unwrap().expect("not stopped");
    // Writes after the build's bound: the forget drops QUESTION's vector and ANSWER's
    // context vector from the current index.
    e.writer().unwrap().forget(&q).unwrap().expect("forgotten");
    e.writer().unwrap().forget(&unindexed).unwrap().expect("forgotten");
    // Filed, and not indexed by the current index before the switch.
    let late = e.writer().unwrap().commit_batch(vec![turn(LATE, "s1")]).unwrap().remove(0).memory.id;
    between(&e);
    e.writer().unwrap().switch_model(prepared, &progress).unwrap();
    e.index_pending().unwrap();
    (e, dir, [q, answer, late])
}

#[test]
fn what_changed_while_the_next_index_was_built_is_redone_at_the_switch() {
    let (e, _dir, [q, answer, late]) = migrate_with_writes_between(|_| {});
    let st = e.status().unwrap();
    // QUESTION gone; ANSWER one vector (nothing before it now), AFTER two, LATE two
    // (after AFTER in s1), the two of s2 one and two.
    assert_eq!((st.memories, st.vectors), (5, 8), "{st:?}");
    assert!(st.indexes_complete, "{st:?}");
    let found = by_vector(&e);
    assert!(found.iter().flatten().all(|(id, ..)| *id != q), "the forgotten memory is not found");
    let answer_hit = found[1].iter().find(|(id, ..)| *id == answer).expect("ANSWER among the hits");
    assert_eq!(
        answer_hit.1,
        Some(0),
        "ANSWER's context vector (its forgotten question) is gone: {answer_hit:?}"
    );
    assert_eq!(found[3][0].0, late, "the memory filed during the build is found by vectors");

    // The same as an index rebuilt from the store.
    e.writer().unwrap().reindex().unwrap();
    assert_eq!(e.status().unwrap().vectors, st.vectors);
    assert_eq!(by_vector(&e), found, "the switched index ranks as a rebuilt one does");
}

#[test]
fn an_index_replaced_during_the_build_makes_the_switch_rebuild() {
    // A reindex between the build and the switch replaces the journaling index: the
    // switch cannot know what changed and builds again from the store.
    let (e, _dir, _) = migrate_with_writes_between(|e| e.writer().unwrap().reindex().unwrap());
    let st = e.status().unwrap();
    assert_eq!((st.memories, st.vectors), (5, 8), "{st:?}");
    let found = by_vector(&e);
    e.writer().unwrap().reindex().unwrap();
    assert_eq!(by_vector(&e), found);
}
