//! Tier 3 over the real socket: an agent adds facts, invalidates one, asks what was true
//! at a past date, traverses two hops with the memories behind each step, and recalls
//! with graph expansion. Memories are linked to the entities they name whether they were
//! filed before or after the entity, and after a restart.

use amber_core::MemoryId;
use amber_core::graph::{FactObject, NewEntity, NewFact};
use amber_ipc::Client;
use amber_ipc::protocol::{
    ErrorKind, KgAddParams, KgEntityParams, KgInvalidateParams, KgStatsParams, KgTraverseParams, RecallParams,
};
use amber_tiers::graph::PathEnd;
use serde_json::json;

use crate::common;
use common::*;

const DAY: i64 = 86_400_000;
/// 2020-01-01, 2023-01-01 and 2024-03-01, in ms.
const Y2020: i64 = 1_577_836_800_000;
const Y2023: i64 = 1_672_531_200_000;
const M2024: i64 = 1_709_251_200_000;

const ADA_FALCON: &str = "Ada Lovelace joined the Falcon team in March; she leads the parser rewrite.";
const FALCON_BILLING: &str = "The Falcon team ships the billing service every second Tuesday.";
const LUNCH: &str = "Team lunch on Fridays is at the Thai place around the corner.";

fn scope() -> Option<amber_core::Scope> {
    Some("work".parse().unwrap())
}

fn fact(s: &str, p: &str, o: &str, from: Option<i64>, sources: Vec<MemoryId>) -> NewFact {
    NewFact {
        subject: s.into(),
        predicate: p.into(),
        object: Some(o.into()),
        valid_from: from,
        sources,
        ..NewFact::default()
    }
}

fn remember(c: &mut Client, text: &str) -> MemoryId {
    c.remember_batch(vec![memory(text, "work")]).unwrap().results.remove(0).id
}

fn entity_q(name: &str, as_of: Option<i64>) -> KgEntityParams {
    KgEntityParams { scope: scope(), entity: name.into(), as_of }
}

fn traverse_q(start: &str, hops: usize) -> KgTraverseParams {
    KgTraverseParams {
        scope: scope(),
        start: start.into(),
        max_hops: Some(hops),
        as_of: None,
        predicates: vec![],
        limit: None,
        memories_per_node: None,
    }
}

fn objects(facts: &[amber_core::graph::Fact], predicate: &str) -> Vec<String> {
    facts
        .iter()
        .filter(|f| f.predicate == predicate)
        .map(|f| match &f.object {
            FactObject::Entity(e) => e.name.clone(),
            FactObject::Literal(v) => v.clone(),
        })
        .collect()
}

#[test]
fn facts_windows_traversal_and_expansion_over_the_socket() {
    let mut d = Daemon::start(&[]);
    let mut c = d.client();
    let m_ada = remember(&mut c, ADA_FALCON);
    let m_billing = remember(&mut c, FALCON_BILLING);
    let m_lunch = remember(&mut c, LUNCH);

    // Entities with an alias and a type, facts with windows and their source memories.
    let added = c
        .kg_add(&KgAddParams {
            scope: scope(),
            entities: vec![NewEntity {
                name: "Ada Lovelace".into(),
                kind: Some("person".into()),
                aliases: vec!["Ada".into()],
            }],
            facts: vec![
                fact("Ada", "works on", "Falcon", Some(M2024), vec![m_ada.clone()]),
                fact("Falcon", "ships", "billing service", None, vec![m_billing.clone()]),
                fact("ada", "lives in", "Paris", Some(Y2020), vec![]),
            ],
        })
        .unwrap();
    assert_eq!(added.facts.len(), 3);
    assert_eq!(added.facts[0].predicate, "works_on", "predicates are normalized");
    assert_eq!(added.facts[0].subject.name, "Ada Lovelace", "the alias resolved to the entity");
    let paris = added.facts[2].id;

    // What was true when: before, inside and after the Paris window; then a move.
    c.kg_invalidate(&KgInvalidateParams {
        fact: paris,
        at: Some(Y2023),
        reason: Some("moved".into()),
        scope: None,
    })
    .unwrap();
    let moved = c
        .kg_add(&KgAddParams {
            scope: scope(),
            facts: vec![fact("Ada", "lives in", "Berlin", Some(Y2023), vec![])],
            ..KgAddParams::default()
        })
        .unwrap();
    let lives =
        |c: &mut Client, t| objects(&c.kg_query(&entity_q("ADA", Some(t))).unwrap().facts, "lives_in");
    assert_eq!(lives(&mut c, Y2020 - DAY), Vec::<String>::new());
    assert_eq!(lives(&mut c, Y2020 + DAY), vec!["Paris"]);
    assert_eq!(lives(&mut c, Y2023 + DAY), vec!["Berlin"]);
    let now = c.kg_query(&entity_q("Ada Lovelace", None)).unwrap();
    assert_eq!(objects(&now.facts, "lives_in"), vec!["Berlin"]);
    assert_eq!(objects(&now.facts, "works_on"), vec!["Falcon"]);
    // The timeline keeps both, in time order, the first with its window ended.
    let tl = c.kg_timeline(&entity_q("ada", None)).unwrap();
    assert_eq!(objects(&tl.facts, "lives_in"), vec!["Paris", "Berlin"]);
    let p = tl.facts.iter().find(|f| f.id == paris).unwrap();
    assert_eq!((p.valid_from, p.valid_to), (Some(Y2020), Some(Y2023)));
    assert!(p.invalidated_at.is_some());
    // The newest invalidation wins.
    let f = c
        .kg_invalidate(&KgInvalidateParams {
            fact: paris,
            at: Some(Y2023 + 10 * DAY),
            reason: None,
            scope: None,
        })
        .unwrap();
    assert_eq!(f.fact.valid_to, Some(Y2023 + 10 * DAY));
    assert_eq!(lives(&mut c, Y2023 + 5 * DAY), vec!["Paris", "Berlin"]);
    // Ending a fact before it began, or an unknown fact: typed errors.
    let e = c
        .kg_invalidate(&KgInvalidateParams {
            fact: moved.facts[0].id,
            at: Some(Y2020),
            reason: None,
            scope: None,
        })
        .unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::InvalidParams), "{e}");
    let e = c
        .kg_invalidate(&KgInvalidateParams { fact: 999_999, at: None, reason: None, scope: None })
        .unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::FactNotFound), "{e}");

    // A memory filed after the entities exist is linked to them at once.
    let m_later = remember(&mut c, "Reminder: the billing service migration is blocked on Falcon's review.");

    // Two hops from the alias: Falcon (1), billing service (2), Paris/Berlin (1), with the
    // facts' sources and the memories naming each entity.
    let t = c.kg_traverse(&traverse_q("ada", 2)).unwrap();
    assert_eq!(t.start.as_ref().unwrap().name, "Ada Lovelace");
    let ends: Vec<(usize, String)> = t
        .paths
        .iter()
        .map(|p| match &p.end {
            PathEnd::Entity(e) => (p.hops, e.name.clone()),
            PathEnd::Literal(v) => (p.hops, v.clone()),
        })
        .collect();
    assert!(ends.contains(&(1, "Falcon".into())), "{ends:?}");
    assert!(ends.contains(&(2, "billing service".into())), "{ends:?}");
    assert!(
        ends.contains(&(1, "Berlin".into())) && !ends.iter().any(|e| e.1 == "Paris"),
        "valid now only: {ends:?}"
    );
    let to_billing =
        t.paths.iter().find(|p| matches!(&p.end, PathEnd::Entity(e) if e.name == "billing service"));
    let steps = &to_billing.unwrap().steps;
    assert_eq!(
        steps.iter().map(|s| s.fact.predicate.as_str()).collect::<Vec<_>>(),
        vec!["works_on", "ships"]
    );
    assert_eq!(steps[0].fact.sources, vec![m_ada.clone()]);
    assert_eq!(steps[1].fact.sources, vec![m_billing.clone()]);
    let content = |id: &MemoryId| t.memories.iter().find(|m| &m.id == id).map(|m| m.content.clone());
    assert_eq!(content(&m_ada).as_deref(), Some(ADA_FALCON));
    assert_eq!(content(&m_billing).as_deref(), Some(FALCON_BILLING));
    let node = |name: &str| t.nodes.iter().find(|n| n.entity.name == name).unwrap();
    // Filed before the entity (found through BM25) and after it (linked at commit).
    assert!(node("Ada Lovelace").mentioned_in.contains(&m_ada));
    assert!(node("Falcon").mentioned_in.contains(&m_later), "{:?}", node("Falcon"));
    assert!(node("Falcon").mentioned_in.contains(&m_billing));
    assert!(!t.nodes.iter().any(|n| n.mentioned_in.contains(&m_lunch)));
    assert_eq!(node("billing service").hops, 2);
    // One hop stops at Falcon; a past date walks to Paris instead of Berlin.
    let one = c.kg_traverse(&traverse_q("Ada", 1)).unwrap();
    assert!(one.paths.iter().all(|p| p.hops == 1));
    let past = c.kg_traverse(&KgTraverseParams { as_of: Some(Y2020 + DAY), ..traverse_q("Ada", 2) }).unwrap();
    let past_ends: Vec<_> = past.nodes.iter().map(|n| n.entity.name.as_str()).collect();
    assert_eq!(past_ends, vec!["Ada Lovelace", "Paris"], "Falcon starts in 2024");

    // A cycle (billing service -> Ada) ends; hops are capped at 4.
    c.kg_add(&KgAddParams {
        scope: scope(),
        facts: vec![fact("billing service", "escalates to", "Ada", None, vec![])],
        ..KgAddParams::default()
    })
    .unwrap();
    let deep = c.kg_traverse(&traverse_q("Ada", 50)).unwrap();
    assert_eq!(deep.max_hops, 4);
    let mut names: Vec<_> = deep.nodes.iter().map(|n| n.entity.name.clone()).collect();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "each entity once");

    // Unknown entities: a clear empty answer.
    let none = c.kg_query(&entity_q("Nobody Atall", None)).unwrap();
    assert!(none.entity.is_none() && none.facts.is_empty());
    let none = c.kg_traverse(&traverse_q("Nobody Atall", 2)).unwrap();
    assert!(none.start.is_none() && none.paths.is_empty());
    // Another scope has its own graph.
    let other =
        c.kg_query(&KgEntityParams { scope: Some("elsewhere".parse().unwrap()), ..entity_q("Ada", None) });
    assert!(other.unwrap().entity.is_none());

    // Bad input: typed errors, the daemon keeps serving.
    let bad = c.call_value("kg_add", json!({"facts": [{"subject": "a", "predicate": "p"}]})).unwrap_err();
    assert_eq!(bad.kind(), Some(ErrorKind::InvalidParams), "{bad}");
    let bad = c.call_value("kg_add", json!({})).unwrap_err();
    assert_eq!(bad.kind(), Some(ErrorKind::InvalidParams), "{bad}");
    let bad = c.call_value("kg_query", json!({"entity": "a", "depth": 3})).unwrap_err();
    assert_eq!(bad.kind(), Some(ErrorKind::InvalidParams), "{bad}");
    let clash = c
        .call_value("kg_add", json!({"scope": "work", "entities": [{"name": "Falcon", "aliases": ["Ada"]}]}));
    assert_eq!(clash.unwrap_err().kind(), Some(ErrorKind::InvalidParams));

    let stats = c.kg_stats(&KgStatsParams { scope: scope() }).unwrap().stats;
    assert_eq!(stats.entities, 5, "{stats:?}");
    assert_eq!((stats.facts, stats.invalidated, stats.valid_now), (5, 1, 4), "{stats:?}");
    assert!(stats.mentions >= 5, "{stats:?}");

    // Recall with graph expansion: a question naming Ada also ranks what is filed about
    // Falcon, one hop away; without expansion no hit has a graph rank.
    let mut q = RecallParams::new("What is Ada doing these days?");
    q.scope = scope();
    let plain = c.recall(&q).unwrap();
    assert!(plain.hits.iter().all(|h| h.evidence.graph_rank.is_none()));
    q.expand = Some(amber_core::Expand::Graph);
    let expanded = c.recall(&q).unwrap();
    let graph_ranked: Vec<_> = expanded
        .hits
        .iter()
        .filter(|h| h.evidence.graph_rank.is_some())
        .map(|h| h.memory.id.clone())
        .collect();
    assert!(graph_ranked.contains(&m_billing), "{graph_ranked:?}");
    assert!(!graph_ranked.contains(&m_lunch));

    // After a restart the names are reloaded: a new memory naming Ada is linked.
    c.shutdown().unwrap();
    drop(c);
    let dir = d._dir.take().unwrap();
    assert!(d.wait_exit().success());
    let d2 = Daemon::start_in(dir.path(), &[]).unwrap();
    let mut c = d2.client();
    let m_after = remember(&mut c, "Ada asked for the parser benchmarks to run nightly.");
    let t = c.kg_traverse(&traverse_q("Ada", 1)).unwrap();
    assert!(t.nodes[0].mentioned_in.contains(&m_after), "{:?}", t.nodes[0]);
}
