//! Several scopes searched as one ranking, and memories moved between scopes, with the
//! real model and real indexes (`scripts/setup.sh` first).

use amber_core::{NewMemory, Query, Scope, SearchMode};
use amber_engine::{Engine, EngineOptions};

fn scope(s: &str) -> Scope {
    s.parse().unwrap()
}

fn file(e: &Engine, s: &str, text: &str) -> amber_core::Memory {
    e.writer().unwrap().remember(NewMemory::new(text).in_scope(scope(s))).unwrap().memory
}

fn contents(hits: &[amber_core::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.memory.content.as_str()).collect()
}

const PROJECT: &str = "project/app-1a2b3c4d";
const PREF: &str = "I prefer concise answers with the shell command first and the explanation after.";
const RELEASE: &str = "Release process: bump the version, tag it, and let CI publish the image.";
const OTHER: &str = "The other project's release is cut by hand every second Tuesday.";

#[test]
fn a_project_and_user_are_one_ranking_and_nothing_else_leaks_in() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(EngineOptions::new(dir.path())).unwrap();
    file(&e, PROJECT, RELEASE);
    file(&e, &format!("{PROJECT}/ci"), "CI caches target/ between runs of the release pipeline.");
    file(&e, "user", PREF);
    file(&e, "project/other-99999999", OTHER);
    file(&e, "userland", "A release of userland tools that should never be searched here.");
    for mode in [SearchMode::Hybrid, SearchMode::Bm25, SearchMode::Vector] {
        let q = Query {
            mode,
            ..Query::new("how do we release, and how should answers look?").in_scope(scope(PROJECT))
        }
        .also_in(scope("user"))
        .top(10);
        let hits = e.recall(&q).unwrap();
        let got = contents(&hits);
        assert!(got.contains(&RELEASE) && got.contains(&PREF), "{mode:?}: {got:?}");
        assert!(got.iter().any(|c| c.starts_with("CI caches")), "{mode:?}: sub-scopes are within: {got:?}");
        assert!(!got.contains(&OTHER) && !got.iter().any(|c| c.contains("userland")), "{mode:?}: {got:?}");
        // Fused as one list: each hit's score is comparable, best first.
        assert!(hits.windows(2).all(|w| w[0].evidence.fused >= w[1].evidence.fused));
    }
    // The same query in the project alone misses the preference; in user alone, the release.
    let alone = e.recall(&Query::new("how should answers look?").in_scope(scope(PROJECT)).top(10)).unwrap();
    assert!(!contents(&alone).contains(&PREF));
    // Listing a scope within another one listed changes nothing.
    let q = Query::new("release").in_scope(scope(PROJECT)).also_in(scope(&format!("{PROJECT}/ci"))).top(10);
    assert_eq!(e.recall(&q).unwrap().len(), 2);
}

#[test]
fn a_moved_memory_is_found_in_its_new_scope_only_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (old_id, new_id, seq) = {
        let e = Engine::open(EngineOptions::new(dir.path())).unwrap();
        let m = file(&e, "default", RELEASE);
        let dup = file(&e, "default", "The staging bucket lives in eu-west-1.");
        file(&e, PROJECT, "The staging bucket lives in eu-west-1.");
        let moved = e.writer().unwrap().move_scope(&scope("default"), &scope(PROJECT)).unwrap();
        assert_eq!(moved.len(), 2);
        let merged = moved.iter().find(|x| x.old_id == dup.id).unwrap();
        assert!(merged.merged, "the copy already in the project is kept, the moved one forgotten");
        let r = moved.iter().find(|x| x.old_id == m.id).unwrap();
        assert_eq!((r.memory.seq, r.memory.content.as_str()), (m.seq, RELEASE), "same row, verbatim");
        for mode in [SearchMode::Bm25, SearchMode::Vector] {
            let q = |s: &str| Query {
                mode,
                ..Query::new("how is a release published?").in_scope(scope(s)).top(5)
            };
            let hits = e.recall(&q(PROJECT)).unwrap();
            assert_eq!(hits[0].memory.id, r.memory.id, "{mode:?}");
            assert!(e.recall(&q("default")).unwrap().is_empty(), "{mode:?}: nothing left in default");
            let bucket =
                Query { mode, ..Query::new("where is the staging bucket?").in_scope(scope(PROJECT)).top(5) };
            let found: Vec<_> = e
                .recall(&bucket)
                .unwrap()
                .into_iter()
                .filter(|h| h.memory.content.contains("bucket"))
                .collect();
            assert_eq!(found.len(), 1, "{mode:?}: the merged copy once");
        }
        assert_eq!(e.moved_to(&m.id).unwrap(), Some(r.memory.id.clone()));
        assert!(e.get(&m.id).unwrap().is_none());
        (m.id, r.memory.id.clone(), m.seq)
    };
    // Reopened: the indexes agree with the store.
    let e = Engine::open(EngineOptions::new(dir.path())).unwrap();
    let hits = e.recall(&Query::new("how is a release published?").in_scope(scope(PROJECT)).top(5)).unwrap();
    assert_eq!((hits[0].memory.id.clone(), hits[0].memory.seq), (new_id.clone(), seq));
    assert!(e.recall(&Query::new("release").in_scope(scope("default"))).unwrap().is_empty());
    assert_eq!(e.moved_to(&old_id).unwrap(), Some(new_id));
    let listed = e.scopes().unwrap();
    assert!(listed.iter().any(|s| s.scope == PROJECT && s.memories == 2), "{listed:?}");
    assert!(!listed.iter().any(|s| s.scope == "default"), "{listed:?}");
}
