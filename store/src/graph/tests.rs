use super::*;
use crate::prelude::*;

fn fact(s: &str, p: &str, o: &str) -> NewFact {
    NewFact { subject: s.into(), predicate: p.into(), object: Some(o.into()), ..NewFact::default() }
}

#[test]
fn windows_invalidation_and_supersession() {
    let mut st = Store::open_in_memory().unwrap();
    let sc = Scope::default();
    let mut lives = fact("Ada", "lives in", "Paris");
    lives.valid_from = Some(100);
    let a = st.kg_add(&sc, &[], &[lives], 1).unwrap();
    assert_eq!(a.facts[0].predicate, "lives_in");
    assert_eq!(a.entities.len(), 2);
    let ada = st.kg_resolve(&sc, "ada").unwrap().unwrap().id;
    // before the window: nothing; inside: Paris
    assert!(st.kg_facts_of(ada, Some(50)).unwrap().is_empty());
    assert_eq!(st.kg_facts_of(ada, Some(150)).unwrap().len(), 1);
    // invalidate at 200, then a later invalidation at 300 wins
    st.kg_invalidate(a.facts[0].id, 200, None, 2).unwrap().unwrap();
    assert!(st.kg_facts_of(ada, Some(250)).unwrap().is_empty());
    let f = st.kg_invalidate(a.facts[0].id, 300, Some("fixed date"), 3).unwrap().unwrap();
    assert_eq!((f.valid_to, f.invalidated_at), (Some(300), Some(3)));
    assert_eq!(st.kg_facts_of(ada, Some(250)).unwrap().len(), 1);
    // a new city superseding from 300: Berlin after, Paris before
    let mut moved = fact("ada", "Lives In", "Berlin");
    moved.valid_from = Some(300);
    moved.supersede = true;
    st.kg_add(&sc, &[], &[moved], 4).unwrap();
    let at = |t| st.kg_facts_of(ada, Some(t)).unwrap();
    assert!(matches!(&at(299)[0].object, FactObject::Entity(e) if e.name == "Paris"));
    assert!(matches!(&at(301)[0].object, FactObject::Entity(e) if e.name == "Berlin"));
    assert_eq!(st.kg_facts_of(ada, None).unwrap().len(), 2, "facts are never deleted");
    assert_eq!(st.kg_invalidate(999, 1, None, 1).unwrap(), None);
    let stats = st.kg_stats(Some(&sc), 1000).unwrap();
    assert_eq!((stats.entities, stats.facts, stats.invalidated, stats.valid_now), (3, 2, 1, 1));
}

#[test]
fn facts_come_a_page_at_a_time_from_both_ends() {
    let mut st = Store::open_in_memory().unwrap();
    let sc = Scope::default();
    // hub -> e0..e59 (odd ones only from 100 on), and e60..e79 -> hub
    let mut facts: Vec<NewFact> = (0..60)
        .map(|i| {
            let mut f = fact("hub", "knows", &format!("e{i}"));
            if i % 2 == 1 {
                f.valid_from = Some(100);
            }
            f
        })
        .collect();
    facts.extend((60..80).map(|i| fact(&format!("e{i}"), "knows", "hub")));
    st.kg_add(&sc, &[], &facts, 1).unwrap();
    let hub = st.kg_resolve(&sc, "hub").unwrap().unwrap().id;
    let mut seen = Vec::new();
    let mut after = i64::MIN;
    loop {
        let page = st.kg_facts_page(hub, 50, after, 7).unwrap();
        assert!(page.facts.len() <= 7);
        assert!(page.facts.windows(2).all(|w| w[0].id < w[1].id));
        seen.extend(page.facts.iter().map(|f| f.id));
        after = page.facts.last().map_or(after, |f| f.id);
        if !page.more {
            break;
        }
    }
    // at 50 the 30 odd facts do not hold yet: 30 outgoing + 20 incoming
    assert_eq!(seen.len(), 50);
    let later = st.kg_facts_page(hub, 150, i64::MIN, 1000).unwrap();
    assert_eq!((later.facts.len(), later.more), (80, false));
}

#[test]
fn aliases_resolve_and_conflicts_are_refused() {
    let mut st = Store::open_in_memory().unwrap();
    let sc = Scope::default();
    let e =
        NewEntity { name: "Robert Smith".into(), kind: Some("person".into()), aliases: vec!["Bob".into()] };
    st.kg_add(&sc, &[e], &[], 1).unwrap();
    let bob = st.kg_resolve(&sc, "BOB").unwrap().unwrap();
    assert_eq!((bob.name.as_str(), bob.aliases.clone()), ("Robert Smith", vec!["Bob".to_string()]));
    st.kg_add(&sc, &[NewEntity { name: "Alice".into(), ..Default::default() }], &[], 1).unwrap();
    let clash = NewEntity { name: "Alice".into(), aliases: vec!["bob".into()], ..Default::default() };
    assert!(matches!(st.kg_add(&sc, &[clash], &[], 1), Err(Error::Invalid(_))));
    // the failed call left nothing behind
    assert_eq!(st.kg_resolve(&sc, "alice").unwrap().unwrap().aliases, Vec::<String>::new());
    // another scope has its own graph
    let other: Scope = "elsewhere".parse().unwrap();
    assert_eq!(st.kg_resolve(&other, "bob").unwrap(), None);
}

#[test]
fn the_same_fact_twice_merges_sources() {
    let mut st = Store::open_in_memory().unwrap();
    let sc = Scope::default();
    let id = |c: char| c.to_string().repeat(32).parse::<MemoryId>().unwrap();
    let mut f = fact("a", "knows", "b");
    f.sources = vec![id('a')];
    let one = st.kg_add(&sc, &[], &[f.clone()], 1).unwrap();
    f.sources = vec![id('a'), id('b')];
    let two = st.kg_add(&sc, &[], &[f], 2).unwrap();
    assert_eq!(one.facts[0].id, two.facts[0].id);
    assert_eq!(two.facts[0].sources, vec![id('a'), id('b')]);
}
