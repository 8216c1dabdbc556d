//! Session neighbours: the memory filed just before or after a match in the same session
//! gains part of its score. With the real model (`scripts/setup.sh`; CI runs it first).
//! The queries use BM25 alone so that which memories match at all is plain to see: the
//! answer shares no word with the question, so only its neighbour can bring it in.

use amber_core::{Hit, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions};

const QUESTION: &str = "Nate: any pointers on what I should get for my living room to make it comfy?";
const ANSWER: &str =
    "Joanna: Sure! A couch that seats several people, a weighted blanket, and lamps you can dim.";
const AFTER: &str = "Nate: Thanks, I'll shop for those on Saturday.";
const QUERY: &str = "What should go in a living room to make it comfy?";

fn open(dir: &std::path::Path, neighbour_weight: f32) -> Engine {
    let mut opts = EngineOptions::new(dir);
    opts.neighbour_weight = neighbour_weight;
    // Session context would let BM25 find the answer by its question's words
    // (tests/session_context.rs): off here, to see the neighbour rule alone.
    opts.session_context = false;
    // The session prior lifts every candidate of a matching session (tests/session_prior.rs).
    opts.session_weight = 0.0;
    // The filing prior multiplies every score after the bonuses (tests/filing.rs): off,
    // so that the scores here are the rule's own arithmetic.
    opts.filing_strength = 0.0;
    Engine::open(opts).expect("the model is installed: run scripts/setup.sh")
}

fn scope(s: &str) -> Scope {
    s.parse().unwrap()
}

fn turn(text: &str, scope: &Scope, session: Option<&str>) -> NewMemory {
    let mut m = NewMemory::new(text).in_scope(scope.clone());
    m.session_id = session.map(str::to_owned);
    m
}

fn recall(e: &Engine) -> Vec<Hit> {
    e.recall(&Query { mode: SearchMode::Bm25, ..Query::new(QUERY).in_scope(scope("chat/a")).top(10) })
        .unwrap()
}

fn hit<'a>(hits: &'a [Hit], id: &MemoryId) -> Option<&'a Hit> {
    hits.iter().find(|h| &h.memory.id == id)
}

/// Files: in chat/a, session s1: QUESTION, (chat/b s1: a copy of the answer's topic),
/// ANSWER, AFTER; then an unrelated memory outside any session, and one in session s2.
fn file(e: &Engine) -> [MemoryId; 4] {
    let (a, b) = (scope("chat/a"), scope("chat/b"));
    let q = e.writer().unwrap().remember(turn(QUESTION, &a, Some("s1"))).unwrap().memory.id;
    // Same session id, another scope: not a neighbour of anything in chat/a.
    e.writer()
        .unwrap()
        .remember(turn("Ann: my living room is comfy enough, no pointers needed.", &b, Some("s1")))
        .unwrap();
    let answer = e.writer().unwrap().remember(turn(ANSWER, &a, Some("s1"))).unwrap().memory.id;
    let after = e.writer().unwrap().remember(turn(AFTER, &a, Some("s1"))).unwrap().memory.id;
    // Filed right after, but in no session: never a neighbour.
    let loose = e
        .writer()
        .unwrap()
        .remember(turn("The weekend forecast says rain on Saturday.", &a, None))
        .unwrap()
        .memory
        .id;
    e.writer().unwrap().remember(turn("Nate: the living room lamp broke again.", &a, Some("s2"))).unwrap();
    [q, answer, after, loose]
}

#[test]
fn the_turn_after_a_match_is_found_with_it_and_only_in_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let [q, answer, after, loose] = {
        let e = open(dir.path(), 0.0);
        let ids = file(&e);
        let hits = recall(&e);
        assert!(hit(&hits, &ids[0]).is_some(), "the question matches: {hits:#?}");
        assert!(hit(&hits, &ids[1]).is_none(), "alone, the answer shares no word with the query");
        assert!(hits.iter().all(|h| h.evidence.neighbour_bonus.is_none()), "weight 0 turns it off");
        ids
    };

    let e = open(dir.path(), 0.5);
    let hits = recall(&e);
    let question_hit = hit(&hits, &q).expect("the question still matches");
    let answer_hit = hit(&hits, &answer).expect("the answer comes in as the question's neighbour");
    // The answer's only neighbour that matched is the question: it gains half the
    // question's score (the question's own score before any bonus of its own).
    let bonus = answer_hit.evidence.neighbour_bonus.expect("it carries its bonus");
    assert!(bonus > 0.0);
    assert!((answer_hit.evidence.fused - bonus).abs() < 1e-6, "no score of its own: {answer_hit:#?}");
    assert_eq!(answer_hit.evidence.bm25_rank, None);
    let question_own = question_hit.evidence.fused - question_hit.evidence.neighbour_bonus.unwrap_or(0.0);
    assert!((bonus - 0.5 * question_own).abs() < 1e-6, "bonus {bonus} vs question {question_own}");
    let pos = |id: &MemoryId| hits.iter().position(|h| &h.memory.id == id).unwrap();
    assert!(pos(&q) < pos(&answer), "the match stays ahead of what it brought in");
    // Two steps away, outside any session, or in another scope: never a neighbour.
    assert!(hit(&hits, &after).is_none(), "the turn after the answer is two steps from the match");
    assert!(hit(&hits, &loose).is_none());
    assert!(hits.iter().all(|h| h.memory.scope == scope("chat/a")));

    // Forgetting the answer makes the next turn of the session the question's neighbour.
    e.writer().unwrap().forget(&answer).unwrap();
    let hits = recall(&e);
    assert!(hit(&hits, &answer).is_none());
    assert!(hit(&hits, &after).and_then(|h| h.evidence.neighbour_bonus).is_some(), "{hits:#?}");
    drop(e);

    // The sessions are rebuilt from the store at open.
    let e = open(dir.path(), 0.5);
    let hits = recall(&e);
    assert!(hit(&hits, &after).and_then(|h| h.evidence.neighbour_bonus).is_some(), "after a restart");
}
