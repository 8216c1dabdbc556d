//! Tier 3: walking the knowledge graph. A breadth-first traversal from one entity over
//! the facts valid at a moment, through either end of each fact, each entity reached
//! once (so cycles end), at most [`MAX_HOPS`] out and [`MAX_PATHS`] paths back.
//!
//! Storage is behind [`GraphRead`]; the daemon implements it over the store.

use std::collections::{HashMap, HashSet};

use amber_core::Millis;
use amber_core::graph::{EntityRef, Fact, FactObject};
use serde::{Deserialize, Serialize};

/// Hops when the caller gives none.
pub const DEFAULT_HOPS: usize = 2;
/// The most hops a traversal takes, whatever is asked.
pub const MAX_HOPS: usize = 4;
/// Paths returned when the caller gives no limit.
pub const DEFAULT_PATHS: usize = 100;
/// The most paths a traversal returns.
pub const MAX_PATHS: usize = 1000;

/// What a traversal reads.
pub trait GraphRead {
    /// The storage error.
    type Error;
    /// A page of the facts `entity` takes part in (as subject or object) that hold at
    /// `as_of`: ids above `after`, in id order, at most `limit`; and whether more may
    /// follow. Paging lets a walk stop reading a hub's facts once it has its paths.
    fn facts_page(
        &mut self,
        entity: i64,
        as_of: Millis,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<Fact>, bool), Self::Error>;
}

/// Facts read per page at least.
const MIN_PAGE: usize = 32;

/// How far and along what to walk.
#[derive(Debug, Clone, PartialEq)]
pub struct TraverseOptions {
    /// Hops out from the start (capped at [`MAX_HOPS`]; 0 walks nowhere).
    pub max_hops: usize,
    /// Only facts valid at this moment.
    pub as_of: Millis,
    /// Only these predicates (normalized); all when empty.
    pub predicates: Vec<String>,
    /// At most this many paths (capped at [`MAX_PATHS`]).
    pub limit: usize,
}

/// One fact walked, and which way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The fact.
    pub fact: Fact,
    /// True when walked from its subject to its object, false when walked backwards.
    pub forward: bool,
}

/// Where a path ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathEnd {
    /// An entity, reached here for the first time.
    Entity(EntityRef),
    /// A literal value of the last fact.
    Literal(String),
}

/// The shortest walk found from the start to one end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Path {
    /// Its length in facts.
    pub hops: usize,
    /// Where it ends.
    pub end: PathEnd,
    /// The facts walked, from the start.
    pub steps: Vec<Step>,
}

/// What a traversal found.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Traversal {
    /// Breadth first: every path of one hop before any of two.
    pub paths: Vec<Path>,
    /// The entities reached (the start first, hop 0), with their distance.
    pub reached: Vec<(EntityRef, usize)>,
    /// True when the path limit cut the walk short.
    pub truncated: bool,
}

/// Walks from `start`. Each entity is reached once, by a shortest path; facts back to
/// an entity already reached (cycles) add no path. Facts are read a page at a time, in
/// id order, so a hub's facts are read only as far as the path limit needs.
pub fn traverse<G: GraphRead>(
    g: &mut G,
    start: &EntityRef,
    opts: &TraverseOptions,
) -> Result<Traversal, G::Error> {
    let max_hops = opts.max_hops.min(MAX_HOPS);
    let limit = opts.limit.min(MAX_PATHS);
    let mut out = Traversal { reached: vec![(start.clone(), 0)], ..Traversal::default() };
    let mut seen: HashSet<i64> = HashSet::from([start.id]);
    let mut walked: HashSet<i64> = HashSet::new();
    let mut route: HashMap<i64, Vec<Step>> = HashMap::from([(start.id, Vec::new())]);
    let mut frontier = vec![start.id];
    for hop in 1..=max_hops {
        let mut next = Vec::new();
        for &node in &frontier {
            let mut after = i64::MIN;
            loop {
                // One more than the paths still wanted, to tell a cut walk from a whole one.
                let want = (limit + 1).saturating_sub(out.paths.len()).max(MIN_PAGE);
                let (page, more) = g.facts_page(node, opts.as_of, after, want)?;
                after = page.last().map_or(after, |f| f.id);
                for fact in page {
                    if !opts.predicates.is_empty() && !opts.predicates.contains(&fact.predicate) {
                        continue;
                    }
                    if !walked.insert(fact.id) {
                        continue;
                    }
                    let forward = fact.subject.id == node;
                    let end = match (&fact.object, fact.other_end(node)) {
                        (FactObject::Literal(v), _) if forward => PathEnd::Literal(v.clone()),
                        (_, Some(other)) if !seen.contains(&other.id) => PathEnd::Entity(other.clone()),
                        _ => continue,
                    };
                    if out.paths.len() >= limit {
                        out.truncated = true;
                        return Ok(out);
                    }
                    let mut steps = route.get(&node).cloned().unwrap_or_default();
                    steps.push(Step { fact, forward });
                    if let PathEnd::Entity(e) = &end {
                        seen.insert(e.id);
                        route.insert(e.id, steps.clone());
                        out.reached.push((e.clone(), hop));
                        next.push(e.id);
                    }
                    out.paths.push(Path { hops: hop, end, steps });
                }
                if !more {
                    break;
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory graph: facts as (id, subject, predicate, object or literal, window).
    struct Mem(Vec<Fact>, usize);

    fn e(id: i64) -> EntityRef {
        EntityRef { id, name: format!("e{id}") }
    }

    fn f(id: i64, s: i64, o: i64, from: Option<Millis>, to: Option<Millis>) -> Fact {
        Fact {
            id,
            subject: e(s),
            predicate: if o < 0 { "age".into() } else { "knows".into() },
            object: if o < 0 { FactObject::Literal("42".into()) } else { FactObject::Entity(e(o)) },
            valid_from: from,
            valid_to: to,
            recorded_at: 0,
            invalidated_at: None,
            confidence: 1.0,
            sources: vec![],
        }
    }

    impl GraphRead for Mem {
        type Error = ();
        fn facts_page(
            &mut self,
            n: i64,
            at: Millis,
            after: i64,
            limit: usize,
        ) -> Result<(Vec<Fact>, bool), ()> {
            self.1 += 1;
            let mut all: Vec<Fact> = self
                .0
                .iter()
                .filter(|x| x.subject.id == n || matches!(&x.object, FactObject::Entity(o) if o.id == n))
                .filter(|x| x.valid_at(at) && x.id > after)
                .cloned()
                .collect();
            all.sort_by_key(|f| f.id);
            let more = all.len() > limit;
            all.truncate(limit);
            Ok((all, more))
        }
    }

    fn opts(hops: usize) -> TraverseOptions {
        TraverseOptions { max_hops: hops, as_of: 50, predicates: vec![], limit: 100 }
    }

    fn ends(t: &Traversal) -> Vec<(usize, String)> {
        t.paths
            .iter()
            .map(|p| {
                let end = match &p.end {
                    PathEnd::Entity(x) => x.name.clone(),
                    PathEnd::Literal(v) => v.clone(),
                };
                (p.hops, end)
            })
            .collect()
    }

    #[test]
    fn cycles_end_and_hops_are_capped() {
        // 1 -> 2 -> 3 -> 1 (a cycle), 3 -> 4, 1 has an age literal
        let mut g = Mem(
            vec![
                f(1, 1, 2, None, None),
                f(2, 2, 3, None, None),
                f(3, 3, 1, None, None),
                f(4, 3, 4, None, None),
                f(5, 1, -1, None, None),
            ],
            0,
        );
        let t = traverse(&mut g, &e(1), &opts(2)).unwrap();
        // hop 1 (facts in id order): 2 forward, 3 backwards through fact 3, the age; hop
        // 2: 4 via 3; fact 2 (2 -> 3) closes the cycle and adds nothing
        assert_eq!(ends(&t), vec![(1, "e2".into()), (1, "e3".into()), (1, "42".into()), (2, "e4".into())]);
        let to4 = &t.paths[3];
        assert_eq!(
            to4.steps.iter().map(|s| (s.fact.id, s.forward)).collect::<Vec<_>>(),
            vec![(3, false), (4, true)]
        );
        assert!(!t.truncated);
        let one = traverse(&mut g, &e(1), &opts(1)).unwrap();
        assert_eq!(one.paths.len(), 3);
        let capped = traverse(&mut g, &e(1), &opts(99)).unwrap();
        assert_eq!(capped.paths.len(), 4, "the whole graph, every entity once");
        assert!(traverse(&mut g, &e(1), &opts(0)).unwrap().paths.is_empty());
    }

    #[test]
    fn a_hub_is_read_a_page_at_a_time() {
        // 1 knows 1000 entities; a walk for 5 paths reads one page, not all of them
        let mut g = Mem((0..1000).map(|i| f(i + 1, 1, i + 2, None, None)).collect(), 0);
        let t = traverse(&mut g, &e(1), &TraverseOptions { limit: 5, ..opts(1) }).unwrap();
        assert_eq!(t.paths.len(), 5);
        assert!(t.truncated);
        assert_eq!(g.1, 1, "one page");
        // with no limit in reach, every page is read and every entity reached once
        g.1 = 0;
        let all = traverse(&mut g, &e(1), &TraverseOptions { limit: MAX_PATHS, ..opts(1) }).unwrap();
        assert_eq!(all.paths.len(), 1000);
        assert!(!all.truncated);
        // pages of 32 when few paths are left: 40 facts to a hub already reached read
        // in two pages before the path is found
        let mut ring: Vec<Fact> = (0..40).map(|i| f(i + 1, 1, 2, None, None)).collect();
        ring.push(f(100, 1, 3, None, None));
        let mut g = Mem(ring, 0);
        let t = traverse(&mut g, &e(1), &TraverseOptions { limit: 2, ..opts(1) }).unwrap();
        assert_eq!(ends(&t), vec![(1, "e2".into()), (1, "e3".into())]);
        assert_eq!(g.1, 2);
    }

    #[test]
    fn only_facts_valid_then_and_the_limit_truncates() {
        let mut g =
            Mem(vec![f(1, 1, 2, Some(0), Some(40)), f(2, 1, 3, Some(40), None), f(3, 3, 4, None, None)], 0);
        let t = traverse(&mut g, &e(1), &opts(2)).unwrap();
        assert_eq!(ends(&t), vec![(1, "e3".into()), (2, "e4".into())]);
        let early = traverse(&mut g, &e(1), &TraverseOptions { as_of: 10, ..opts(2) }).unwrap();
        assert_eq!(ends(&early), vec![(1, "e2".into())]);
        let cut = traverse(&mut g, &e(1), &TraverseOptions { limit: 1, ..opts(2) }).unwrap();
        assert!(cut.truncated && cut.paths.len() == 1);
        let none =
            traverse(&mut g, &e(1), &TraverseOptions { predicates: vec!["age".into()], ..opts(2) }).unwrap();
        assert!(none.paths.is_empty() && none.reached.len() == 1);
    }
}
