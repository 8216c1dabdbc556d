//! Session prior: a candidate filed in a session gains part of the best score among its
//! session's candidates. With the real model (`scripts/setup.sh`; CI runs it first).
//! The queries use BM25 alone so that the scores come from ranks that are plain to see.

use amber_core::{Hit, MemoryId, NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions};

const QUERY: &str = "pottery class glaze kiln";

fn open(dir: &std::path::Path, session_weight: f32) -> Engine {
    let mut opts = EngineOptions::new(dir);
    opts.session_weight = session_weight;
    // The other session rules, off to see this one alone.
    opts.neighbour_weight = 0.0;
    opts.session_context = false;
    // The filing prior multiplies every score after the bonuses (tests/filing.rs): off,
    // so that the scores here are the rule's own arithmetic.
    opts.filing_strength = 0.0;
    Engine::open(opts).expect("the model is installed: run scripts/setup.sh")
}

fn chat() -> Scope {
    "chat/a".parse().unwrap()
}

fn file(e: &Engine, text: &str, session: Option<&str>) -> MemoryId {
    let mut m = NewMemory::new(text).in_scope(chat());
    m.session_id = session.map(str::to_owned);
    e.writer().unwrap().remember(m).unwrap().memory.id
}

fn recall(e: &Engine) -> Vec<Hit> {
    e.recall(&Query { mode: SearchMode::Bm25, ..Query::new(QUERY).in_scope(chat()).top(10) }).unwrap()
}

fn pos(hits: &[Hit], id: &MemoryId) -> usize {
    hits.iter().position(|h| &h.memory.id == id).unwrap_or_else(|| panic!("{id} not found: {hits:#?}"))
}

struct Filed {
    /// Session s1: the best match of the query.
    strong: MemoryId,
    /// Session s1 too, two turns later: a weak match (one word, a long turn).
    weak: MemoryId,
    /// Session s2: a weak match alone in its session (one word, a short turn).
    other: MemoryId,
    /// No session: weak matches, shorter than `weak`, so BM25 alone ranks them above it.
    loose: [MemoryId; 2],
}

fn file_all(e: &Engine) -> Filed {
    let strong = file(e, "Caroline: my pottery class fired the glaze in the kiln today!", Some("s1"));
    file(e, "Melanie: oh nice, how did it turn out?", Some("s1"));
    let weak = file(
        e,
        "Caroline: great, although afterwards we waited ages because the kiln door was stuck for a while.",
        Some("s1"),
    );
    let other = file(e, "Melanie: our kiln broke.", Some("s2"));
    let loose = [file(e, "Kiln prices went up.", None), file(e, "The kiln is in the garage.", None)];
    Filed { strong, weak, other, loose }
}

#[test]
fn a_weak_match_in_the_best_matching_session_overtakes_loose_ones() {
    let dir = tempfile::tempdir().unwrap();
    let f = {
        let e = open(dir.path(), 0.0);
        let f = file_all(&e);
        let hits = recall(&e);
        assert_eq!(pos(&hits, &f.strong), 0);
        for l in &f.loose {
            assert!(pos(&hits, l) < pos(&hits, &f.weak), "BM25 alone: the shorter loose notes first");
        }
        assert!(hits.iter().all(|h| h.evidence.session_bonus.is_none()), "weight 0 turns it off");
        f
    };

    let e = open(dir.path(), 0.3);
    let hits = recall(&e);
    let hit = |id: &MemoryId| &hits[pos(&hits, id)];
    assert_eq!(pos(&hits, &f.strong), 0);
    for l in &f.loose {
        assert!(
            pos(&hits, &f.weak) < pos(&hits, l),
            "the weak turn of the matching session first: {hits:#?}"
        );
        assert!(hit(l).evidence.session_bonus.is_none(), "filed in no session: no bonus");
    }
    // Every candidate of session s1 gains 0.3 x the best score of s1 before any bonus,
    // the strong match's own.
    let strong = hit(&f.strong).evidence.clone();
    let strong_own = strong.fused - strong.session_bonus.expect("the best gains too");
    assert!((strong.session_bonus.unwrap() - 0.3 * strong_own).abs() < 1e-6, "{strong:?}");
    let weak = hit(&f.weak).evidence.clone();
    assert!((weak.session_bonus.expect("same session") - 0.3 * strong_own).abs() < 1e-6, "{weak:?}");
    // Alone in s2, the other turn gains 0.3 x its own score: sessions are not mixed.
    let other = hit(&f.other).evidence.clone();
    let other_own = other.fused - other.session_bonus.expect("its own session");
    assert!((other.session_bonus.unwrap() - 0.3 * other_own).abs() < 1e-6, "{other:?}");
    assert!(other_own < strong_own);

    // Forgetting the strong match: the weak turn is now its session's best.
    e.writer().unwrap().forget(&f.strong).unwrap();
    let hits = recall(&e);
    let weak = hits[pos(&hits, &f.weak)].evidence.clone();
    let weak_own = weak.fused - weak.session_bonus.expect("still in s1");
    assert!((weak.session_bonus.unwrap() - 0.3 * weak_own).abs() < 1e-6, "{weak:?}");
}
