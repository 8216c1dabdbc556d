//! Standing: outcome weights, the archive, supersession chains, lifefacts and age. With
//! the real model (`scripts/setup.sh`; CI runs it first); queries use BM25 alone so the
//! scores come from plain ranks.

use amber_core::standing::ARCHIVE_BELOW;
use amber_core::{
    Hit, MemoryId, MemoryType, NewMemory, Outcome, Query, Report, ReportKind, Scope, SearchMode,
};
use amber_engine::{Engine, EngineOptions, Error};

const DAY: i64 = 86_400_000;

fn open(dir: &std::path::Path, age_floor: f32) -> Engine {
    let mut opts = EngineOptions::new(dir);
    opts.age_floor = age_floor;
    // These tests are about weights and age; the filing prior (tests/filing.rs) would
    // multiply every score by the agent's 0.85 too.
    opts.filing_strength = 0.0;
    Engine::open(opts).expect("the model is installed: run scripts/setup.sh")
}

fn scope() -> Scope {
    "proj/a".parse().unwrap()
}

fn file(e: &Engine, text: &str, kind: MemoryType) -> MemoryId {
    e.writer().unwrap().remember(NewMemory::new(text).in_scope(scope()).of_type(kind)).unwrap().memory.id
}

fn supersede(e: &Engine, text: &str, targets: &[&MemoryId]) -> MemoryId {
    let mut m = NewMemory::new(text).in_scope(scope()).of_type(MemoryType::Invalidation);
    m.supersedes = targets.iter().map(|t| (*t).clone()).collect();
    e.writer().unwrap().remember(m).unwrap().memory.id
}

fn recall(e: &Engine, text: &str, archived: bool) -> Vec<Hit> {
    e.recall(&Query { mode: SearchMode::Bm25, archived, ..Query::new(text).in_scope(scope()).top(10) })
        .unwrap()
}

fn ids(hits: &[Hit]) -> Vec<MemoryId> {
    hits.iter().map(|h| h.memory.id.clone()).collect()
}

fn outcome(result: Outcome, session: Option<&str>, at: i64) -> Report {
    Report {
        kind: ReportKind::Outcome,
        result: Some(result),
        session_id: session.map(String::from),
        agent: None,
        note: None,
        at,
        basis: None,
    }
}

#[test]
fn a_failure_ranks_a_memory_down_and_enough_failures_archive_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    // Two memories that match the query equally well; the first filed ranks first.
    let a = file(&e, "deploy staging with make deploy-staging", MemoryType::Fact);
    let b = file(&e, "deploy staging with the deploy-staging script", MemoryType::Fact);
    let before = recall(&e, "deploy staging", false);
    assert_eq!(before.len(), 2);
    let (first, second) = (before[0].memory.id.clone(), before[1].memory.id.clone());
    assert!([&a, &b].contains(&&first));
    assert_eq!(before[0].evidence.standing.weight, 1.0);
    assert_eq!(before[0].evidence.standing.prior, 1.0);

    // One failure on the first: weight 0.8, prior 1 - 0.5 + 0.5 * 0.8 = 0.9 on its
    // fused score, not enough to fall below the second (1/6 x 0.9 > 1/7, RRF k = 5).
    let m = e.writer().unwrap().report(&first, outcome(Outcome::Failure, None, 1)).unwrap().unwrap();
    assert!((m.weight - 0.8).abs() < 1e-6, "{}", m.weight);
    let after = recall(&e, "deploy staging", false);
    assert_eq!(ids(&after), vec![first.clone(), second.clone()]);
    let ev = &after[0].evidence.standing;
    assert!((ev.weight - 0.8).abs() < 1e-6 && (ev.prior - 0.9).abs() < 1e-6, "{ev:?}");
    assert_eq!((ev.successes, ev.failures), (0, 1));
    let ratio = after[0].evidence.fused / before[0].evidence.fused;
    assert!((ratio - 0.9).abs() < 1e-4, "the prior multiplies the fused score: {ratio}");
    // A second failure (weight 0.6, prior 0.8) puts it below.
    e.writer().unwrap().report(&first, outcome(Outcome::Failure, None, 2)).unwrap();
    let after = recall(&e, "deploy staging", false);
    assert_eq!(ids(&after), vec![second.clone(), first.clone()]);
    assert!((after[1].evidence.standing.prior - 0.8).abs() < 1e-6);

    // Three more failures: weight 0 < 0.10, archived. Out of recall, still readable,
    // listed, and shown (marked) when asked for.
    for i in 0..3 {
        e.writer().unwrap().report(&first, outcome(Outcome::Failure, None, 3 + i)).unwrap();
    }
    let m = e.get(&first).unwrap().unwrap();
    assert!(m.weight < ARCHIVE_BELOW && m.archived_at.is_some(), "{m:?}");
    assert_eq!(ids(&recall(&e, "deploy staging", false)), vec![second.clone()]);
    let listed: Vec<MemoryId> = e.archived(Some(&scope()), 10).unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(listed, vec![first.clone()]);
    let with = recall(&e, "deploy staging", true);
    assert_eq!(with.len(), 2);
    assert!(with.iter().any(|h| h.memory.id == first && h.evidence.standing.archived));

    // A later success restores it (0 + 0.3).
    let m = e.writer().unwrap().report(&first, outcome(Outcome::Success, None, 10)).unwrap().unwrap();
    assert!((m.weight - 0.3).abs() < 1e-6 && m.archived_at.is_none(), "{m:?}");
    assert_eq!(recall(&e, "deploy staging", false).len(), 2);

    // The standing survives a reopen (the engine reloads it from the store).
    drop(e);
    let e = open(dir.path(), 1.0);
    let hit = recall(&e, "deploy staging", false).into_iter().find(|h| h.memory.id == first).unwrap();
    assert!((hit.evidence.standing.weight - 0.3).abs() < 1e-6);
    assert_eq!(e.reports(&first).unwrap().len(), 6);
}

#[test]
fn within_a_session_the_latest_word_wins_and_unarchive_restores() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let a = file(&e, "the cache lives in /var/cache/amber", MemoryType::Fact);
    for i in 0..3 {
        e.writer().unwrap().report(&a, outcome(Outcome::Failure, Some("s1"), i)).unwrap();
    }
    // One session's three failures count once.
    assert!((e.get(&a).unwrap().unwrap().weight - 0.8).abs() < 1e-6);
    e.writer().unwrap().report(&a, outcome(Outcome::Neutral, Some("s1"), 5)).unwrap();
    assert_eq!(e.get(&a).unwrap().unwrap().weight, 1.0, "the session ended on neutral");
    for i in 0..5 {
        e.writer().unwrap().report(&a, outcome(Outcome::Failure, None, 10 + i)).unwrap();
    }
    assert!(e.get(&a).unwrap().unwrap().is_archived());
    let m = e.writer().unwrap().unarchive(&a, Some("me".into())).unwrap().unwrap();
    assert!(!m.is_archived() && (m.weight - 0.3).abs() < 1e-6, "{m:?}");
    assert_eq!(recall(&e, "cache lives", false).len(), 1);
}

#[test]
fn supersession_chains_three_deep_newest_wins_and_forgetting_restores() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let a = file(&e, "the release branch is named main-release", MemoryType::Fact);
    let b = supersede(&e, "correction: the release branch is named release/next", &[&a]);
    let ma = e.get(&a).unwrap().unwrap();
    assert_eq!(ma.superseded_by.as_ref(), Some(&b));
    assert_eq!(ma.weight, 0.0);
    assert!(ma.is_archived());
    let hits = recall(&e, "release branch named", false);
    assert_eq!(ids(&hits), vec![b.clone()]);
    assert_eq!(hits[0].memory.supersedes, vec![a.clone()], "the invalidation shows what it replaces");

    // C retracts B: B stops enforcing, A stands again.
    let c = supersede(&e, "retract: the release branch rename never happened", &[&b]);
    assert!(e.get(&b).unwrap().unwrap().is_archived());
    let ma = e.get(&a).unwrap().unwrap();
    assert!(!ma.is_archived() && ma.superseded_by.is_none() && ma.weight == 1.0, "{ma:?}");
    // D retracts C: C retired, B stands, A retired again.
    let d = supersede(&e, "retract the retraction: the release branch was renamed after all", &[&c]);
    assert!(e.get(&c).unwrap().unwrap().is_archived());
    assert!(!e.get(&b).unwrap().unwrap().is_archived());
    assert_eq!(e.get(&a).unwrap().unwrap().superseded_by.as_ref(), Some(&b));
    let live = ids(&recall(&e, "release branch", false));
    assert!(live.contains(&b) && live.contains(&d) && !live.contains(&a) && !live.contains(&c), "{live:?}");

    // The chain survives a reopen.
    drop(e);
    let e = open(dir.path(), 1.0);
    assert!(e.get(&a).unwrap().unwrap().is_archived());
    assert!(!ids(&recall(&e, "release branch", false)).contains(&a));

    // Forgetting D: C stands again, so B is retired and A restored.
    e.writer().unwrap().forget(&d).unwrap();
    assert!(!e.get(&c).unwrap().unwrap().is_archived());
    assert!(e.get(&b).unwrap().unwrap().is_archived());
    assert!(!e.get(&a).unwrap().unwrap().is_archived());
    assert!(ids(&recall(&e, "release branch", false)).contains(&a));

    // An unarchive of a superseded memory is refused with the invalidation named.
    match e.writer().unwrap().unarchive(&b, None) {
        Err(Error::Superseded { by, .. }) => assert_eq!(by, c),
        other => panic!("{other:?}"),
    }
}

#[test]
fn lifefacts_are_immune_and_supersedes_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let life = file(&e, "Dana was born in Lisbon", MemoryType::Lifefact);
    for i in 0..6 {
        e.writer().unwrap().report(&life, outcome(Outcome::Failure, None, i)).unwrap();
    }
    assert_eq!(e.get(&life).unwrap().unwrap().weight, 1.0);
    let mut m = NewMemory::new("Dana was born in Porto").in_scope(scope()).of_type(MemoryType::Invalidation);
    m.supersedes = vec![life.clone()];
    assert!(matches!(e.writer().unwrap().remember(m), Err(Error::SupersedesLifefact { .. })));
    let mut m = NewMemory::new("no such thing").in_scope(scope()).of_type(MemoryType::Invalidation);
    m.supersedes = vec![MemoryId::derive(&scope(), "never filed")];
    assert!(matches!(e.writer().unwrap().remember(m), Err(Error::SupersedesUnknown { .. })));
    let mut m = NewMemory::new("a fact cannot supersede").in_scope(scope());
    m.supersedes = vec![life.clone()];
    assert!(matches!(e.writer().unwrap().remember(m), Err(Error::Invalid(_))));
    assert_eq!(e.archived(None, 10).unwrap().len(), 0);
}

/// The reference multiplies the weight by its type's rate every 6 hours, so a fact used
/// every three days is archived (0.95^240 < 0.10) within 60 days. Here use restarts its
/// age and age never archives: steady use keeps it at full standing, and a memory
/// nobody used keeps the floor.
#[test]
fn steady_use_keeps_a_memory_alive_and_age_alone_never_archives() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 0.5);
    let day0 = 1_700_000_000_000;
    let mut used = NewMemory::new("run the migrations with cargo xtask migrate").in_scope(scope());
    used.event_time = Some(day0);
    let used = e.writer().unwrap().remember(used).unwrap().memory.id;
    let mut idle = NewMemory::new("run the linters with cargo xtask lint").in_scope(scope());
    idle.event_time = Some(day0);
    let idle = e.writer().unwrap().remember(idle).unwrap().memory.id;
    for d in (0..=60).step_by(3) {
        let r = Report {
            kind: ReportKind::Used,
            result: Some(Outcome::Success),
            session_id: Some(format!("s{d}")),
            agent: Some("agent".into()),
            note: None,
            at: day0 + d * DAY,
            basis: None,
        };
        e.writer().unwrap().report(&used, r).unwrap();
    }
    let reference = 0.95f64.powi(4 * 60);
    assert!(reference < 0.10, "the reference archives it: {reference}");
    let now = day0 + 61 * DAY;
    let hits = e
        .recall(&Query {
            mode: SearchMode::Bm25,
            now: Some(now),
            ..Query::new("cargo xtask").in_scope(scope()).top(10)
        })
        .unwrap();
    assert_eq!(hits.len(), 2, "neither is archived");
    let get = |id: &MemoryId| hits.iter().find(|h| &h.memory.id == id).unwrap().evidence.standing.clone();
    let (u, i) = (get(&used), get(&idle));
    assert_eq!(u.weight, 1.0);
    assert!((u.age_factor - 0.95f32.powi(4)).abs() < 1e-3, "one day since its last use: {u:?}");
    assert_eq!(i.weight, 1.0);
    assert_eq!(i.age_factor, 0.5, "61 days unused: the floor, not archived: {i:?}");
    assert_eq!(hits[0].memory.id, used, "the memory in use ranks first");
    assert!(e.archived(None, 10).unwrap().is_empty());
}

#[test]
fn facts_whose_sources_are_all_superseded_are_invalidated_with_the_reason() {
    use amber_core::graph::NewFact;
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let a = file(&e, "Dana leads the billing team", MemoryType::Fact);
    let c = file(&e, "the billing team is led by Dana, per the org chart", MemoryType::Fact);
    let fact = |subject: &str, object: &str, sources: Vec<MemoryId>| NewFact {
        subject: subject.into(),
        predicate: "leads".into(),
        object: Some(object.into()),
        literal: None,
        valid_from: None,
        valid_to: None,
        confidence: None,
        sources,
        supersede: false,
    };
    let added = e
        .writer()
        .unwrap()
        .kg_add(
            &scope(),
            &[],
            &[
                fact("Dana", "billing team", vec![a.clone()]),
                fact("Dana", "billing", vec![a.clone(), c.clone()]),
            ],
        )
        .unwrap();
    let (only_a, both) = (added.facts[0].id, added.facts[1].id);
    let b = supersede(&e, "Dana moved to the platform team; Ravi leads billing", &[&a]);
    let f = e.read_store(|s| s.kg_fact(only_a)).unwrap().unwrap();
    assert!(f.invalidated_at.is_some() && f.valid_to.is_some(), "{f:?}");
    let why = e.read_store(|s| s.kg_invalidations(only_a)).unwrap();
    assert_eq!(why.len(), 1);
    assert!(why[0].1.as_deref().unwrap().contains(b.as_str()), "{why:?}");
    // A fact with a source still standing keeps its window.
    let f = e.read_store(|s| s.kg_fact(both)).unwrap().unwrap();
    assert!(f.invalidated_at.is_none(), "{f:?}");
}

/// Two connections write a store: the writer's, and the embedding cache's that indexing
/// writes. Outcomes (a transaction that reads the log, then writes the standing) are
/// reported while indexing writes the cache at full speed: none is refused for the
/// other connection's commits in between (SQLite's `SQLITE_BUSY` on a transaction that
/// read first), and every one is counted. Indexing does not fail either when the
/// writer's back-to-back commits keep the lock from the cache past the busy timeout (a
/// loaded machine): those vectors are indexed uncached.
#[test]
fn outcomes_reported_while_indexing_writes_the_cache_are_never_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let target = file(&e, "The staging bastion needs the VPN on first.", MemoryType::Pattern);
    let done = std::sync::atomic::AtomicBool::new(false);
    let reports = 3_000;
    /// Stops the indexing loop however the writer's loop ends (a refused outcome panics).
    struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    std::thread::scope(|t| {
        let e = &e;
        let done = &done;
        t.spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                e.index_pending().unwrap();
            }
        });
        let _stop = Stop(done);
        let mut w = e.writer().unwrap();
        for i in 0..reports {
            // Something new to index (its vectors go to the cache) between two outcomes.
            let note = format!("Note {i}: build {i} passed on runner {}.", i % 7);
            w.commit_batch(vec![NewMemory::new(note).in_scope(scope())]).unwrap();
            let r = outcome(if i % 2 == 0 { Outcome::Success } else { Outcome::Failure }, None, 1_000 + i);
            w.report(&target, r).unwrap_or_else(|err| panic!("outcome {i} refused: {err}"));
        }
    });
    assert_eq!(e.reports(&target).unwrap().len(), reports as usize);
    e.index_pending().unwrap();
    assert_eq!(e.indexed_through(), e.committed_through(), "everything indexed, cached or not");
}
