//! Whole-memory similarity, links and duplicate demotion, with the real model.
//! They need `scripts/setup.sh` to have run (CI runs it first).

use amber_core::{Link, LinkKind, NewMemory, Query, Scope, now_millis};
use amber_engine::{Engine, EngineOptions};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(EngineOptions::new(dir)).expect("the model is installed: run scripts/setup.sh")
}

fn scope(s: &str) -> Scope {
    s.parse().unwrap()
}

const ORIGINAL: &str = "The deploy script needs AWS_PROFILE=staging set before running make release.";
const NEAR: &str = "The deploy script needs AWS_PROFILE=staging set before you run make release.";
const RELATED: &str = "Production releases go out through make release after the staging checks pass.";
const OTHER: &str = "Grandma's apple pie recipe uses cinnamon, nutmeg and a lattice crust.";

#[test]
fn similar_ranks_a_near_copy_first_and_stays_in_scope() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let p = scope("project/a");
    let a = e.writer().unwrap().remember(NewMemory::new(ORIGINAL).in_scope(p.clone())).unwrap().memory;
    let near = e.writer().unwrap().remember(NewMemory::new(NEAR).in_scope(p.clone())).unwrap().memory;
    let related = e.writer().unwrap().remember(NewMemory::new(RELATED).in_scope(p.clone())).unwrap().memory;
    e.writer().unwrap().remember(NewMemory::new(OTHER).in_scope(p.clone())).unwrap();
    let elsewhere =
        e.writer().unwrap().remember(NewMemory::new(NEAR).in_scope(scope("project/b"))).unwrap().memory;

    let sims = e.similar(&a.id, Some(&p), 10).unwrap();
    let ids: Vec<_> = sims.iter().map(|(m, _)| m.id.clone()).collect();
    assert_eq!(ids[0], near.id, "{sims:?}");
    assert!(!ids.contains(&a.id), "a memory is not similar to itself");
    assert!(!ids.contains(&elsewhere.id), "another scope is not searched");
    let score = |id| sims.iter().find(|(m, _)| &m.id == id).map(|x| x.1).unwrap();
    assert!(score(&near.id) > 0.95, "near copy {}", score(&near.id));
    assert!(score(&related.id) < score(&near.id));
    // Unscoped, the copy in the other project is found as well.
    let all: Vec<_> = e.similar(&a.id, None, 10).unwrap().into_iter().map(|(m, _)| m.id).collect();
    assert!(all.contains(&elsewhere.id));
    // Unknown or forgotten: nothing.
    e.writer().unwrap().forget(&related.id).unwrap();
    assert!(e.similar(&related.id, None, 5).unwrap().is_empty());
}

#[test]
fn a_duplicate_link_ranks_the_newer_copy_down_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let q = Query::new("what must be set before make release in the deploy script?").top(5);
    let (a, near) = {
        let e = open(dir.path());
        let a = e.writer().unwrap().remember(NewMemory::new(ORIGINAL)).unwrap().memory;
        let near = e.writer().unwrap().remember(NewMemory::new(NEAR)).unwrap().memory;
        e.writer().unwrap().remember(NewMemory::new(OTHER)).unwrap();
        let fused_of = |hits: &[amber_core::Hit], id: &amber_core::MemoryId| {
            hits.iter().find(|h| &h.memory.id == id).map(|h| h.evidence.fused).unwrap()
        };
        let before = fused_of(&e.recall(&Query::new(NEAR).top(5)).unwrap(), &near.id);
        let link = Link {
            from: near.id.clone(),
            to: a.id.clone(),
            kind: LinkKind::NearDuplicate,
            similarity: 0.97,
            created_at: now_millis(),
        };
        assert_eq!(e.writer().unwrap().add_links(std::slice::from_ref(&link)).unwrap(), 1);
        assert_eq!(e.writer().unwrap().add_links(&[link]).unwrap(), 0);
        assert!(e.is_demoted(near.seq));
        let hits = e.recall(&Query::new(NEAR).top(5)).unwrap();
        let order: Vec<_> = hits.iter().map(|h| h.memory.id.clone()).collect();
        assert!((fused_of(&hits, &near.id) - before * 0.5).abs() < 1e-6, "its fused score is halved");
        assert_eq!(order[0], a.id, "the older memory now comes first: {order:?}");
        assert!(order.contains(&near.id), "the duplicate is ranked down, not removed");
        assert_eq!(e.links_of(&a.id).unwrap().len(), 1);
        (a, near)
    };
    let e = open(dir.path());
    assert!(e.is_demoted(near.seq), "demotion is rebuilt from the store at open");
    let hits = e.recall(&q).unwrap();
    let pos = |id| hits.iter().position(|h| &h.memory.id == id).unwrap();
    assert!(pos(&a.id) < pos(&near.id));
}
