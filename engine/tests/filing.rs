//! Ranking by filing (issue 45): what the person filed outranks raw captures of an agent
//! session that talk about the same thing; a promoted capture ranks as the person's; the
//! relevance floor leaves out what matches no better than unrelated text. With the real
//! model (`scripts/setup.sh`; CI runs it first).

use amber_core::origin::{Door, Origin, Trust, stamp};
use amber_core::{Filing, Hit, MemoryId, MemoryType, NewMemory, Query, Scope};
use amber_engine::{Engine, EngineOptions};
use serde_json::json;

const QUESTION: &str = "why do the ledger tests fail";

fn open(dir: &std::path::Path, filing_strength: f32) -> Engine {
    let mut opts = EngineOptions::new(dir);
    opts.filing_strength = filing_strength;
    Engine::open(opts).expect("the model is installed: run scripts/setup.sh")
}

fn project() -> Scope {
    "ledger".parse().unwrap()
}

/// Files a memory the person typed at the command line.
fn person(e: &Engine, scope: Scope, kind: MemoryType, text: &str) -> MemoryId {
    let mut m = NewMemory::new(text).in_scope(scope);
    m.kind = kind;
    stamp(
        &mut m.metadata,
        &Origin { door: Some(Door::Cli.as_str().into()), ..Origin::default() },
        Trust::Person,
    );
    e.writer().unwrap().remember(m).unwrap().memory.id
}

/// Files what a hook captured in an agent session (a prompt, a tool's output).
fn capture(e: &Engine, text: &str, tool: &str) -> MemoryId {
    let mut m = NewMemory::new(text).in_scope(project());
    m.kind = MemoryType::Event;
    m.session_id = Some("s1".into());
    m.metadata = json!({ "captured": true });
    let origin = Origin {
        door: Some(Door::Hook.as_str().into()),
        agent: Some("claude-code".into()),
        session: Some("s1".into()),
        tool: Some(format!("claude-code:{tool}")),
        ..Origin::default()
    };
    stamp(&mut m.metadata, &origin, Trust::External);
    e.writer().unwrap().remember(m).unwrap().memory.id
}

struct Filed {
    answer: MemoryId,
    captures: Vec<MemoryId>,
}

/// The case: one short agent session whose captures repeat the question's
/// words, and the person's pattern with the answer.
fn file_all(e: &Engine) -> Filed {
    let answer = person(
        e,
        project(),
        MemoryType::Pattern,
        "The ledger test suite breaks whenever TZ is not UTC: closing dates shift by a day. Run it as TZ=UTC go test ./ledger/...",
    );
    let captures = vec![
        capture(e, "why do the ledger tests fail again?", "prompt"),
        capture(
            e,
            "--- FAIL: TestLedgerClose (0.02s)\n    ledger_test.go:88: the ledger tests fail: expected 2024-03-31, got 2024-03-30",
            "tool:Bash",
        ),
        capture(e, "Let me look at why the ledger tests fail. Running go test ./ledger/... now.", "response"),
        capture(e, "The ledger tests fail on CI but pass on my machine, I think.", "response"),
    ];
    Filed { answer, captures }
}

fn recall(e: &Engine, q: Query) -> Vec<Hit> {
    e.recall(&q).unwrap()
}

fn rank(hits: &[Hit], id: &MemoryId) -> Option<usize> {
    hits.iter().position(|h| &h.memory.id == id)
}

#[test]
fn what_the_person_filed_outranks_raw_captures_that_repeat_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let e = open(&dir.path().join("off"), 0.0);
        let f = file_all(&e);
        let hits = recall(&e, Query::new(QUESTION).in_scope(project()).top(5));
        let answer = rank(&hits, &f.answer).expect("found at all");
        // Without the filing prior the captures' words win (as the issue found).
        assert!(
            f.captures.iter().any(|c| rank(&hits, c).is_some_and(|r| r < answer)),
            "the case must be one that ranking by words alone gets wrong: {hits:#?}"
        );
        answer
    };
    let e = open(&dir.path().join("on"), 1.0);
    let f = file_all(&e);
    let hits = recall(&e, Query::new(QUESTION).in_scope(project()).top(5));
    assert_eq!(rank(&hits, &f.answer), Some(0), "before: rank {before}; now: {hits:#?}");
    let top = &hits[0].evidence.standing;
    assert_eq!((top.filing, top.filing_factor), (Some(Filing::Person), 1.0));
    for h in &hits[1..] {
        assert_eq!(h.evidence.standing.filing, Some(Filing::Raw), "{h:#?}");
        assert!((h.evidence.standing.filing_factor - Filing::Raw.prior()).abs() < 1e-6);
    }

    // A capture the person promotes ranks as theirs (and stays so after a reopen,
    // when the filing is read back from the store).
    let promoted = f.captures[1].clone();
    e.writer()
        .unwrap()
        .set_trust(&promoted, Trust::Person, amber_core::origin::SetBy::Person)
        .unwrap()
        .expect("it exists");
    let hits = recall(&e, Query::new(QUESTION).in_scope(project()).top(5));
    let h = &hits[rank(&hits, &promoted).expect("still found")];
    assert_eq!(h.evidence.standing.filing, Some(Filing::Promoted));
    drop(e);
    let e = open(&dir.path().join("on"), 1.0);
    let hits = recall(&e, Query::new(QUESTION).in_scope(project()).top(5));
    let filing = |id: &MemoryId| hits[rank(&hits, id).unwrap()].evidence.standing.filing;
    assert_eq!(filing(&promoted), Some(Filing::Promoted));
    assert_eq!(filing(&f.answer), Some(Filing::Person));
    assert_eq!(filing(&f.captures[0]), Some(Filing::Raw));
}

#[test]
fn the_floor_leaves_out_what_matches_no_better_than_unrelated_text() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), 1.0);
    let user: Scope = "user".parse().unwrap();
    let style =
        person(&e, user.clone(), MemoryType::Lifefact, "The user prefers short answers without emojis.");
    let key = person(
        &e,
        project(),
        MemoryType::Fact,
        "The staging API key for ledger-api lives in Vault at secret/ledger/staging and rotates every 30 days.",
    );
    let code = person(&e, project(), MemoryType::Intent, "Next up: LED-412.");
    let q = |text: &str| Query::new(text).in_scope(project()).also_in(user.clone()).top(5);

    // Without the floor k is filled; with it, only the match.
    let all = recall(&e, q("where is the staging API key"));
    assert!(rank(&all, &style).is_some(), "no floor: the least bad fill k: {all:#?}");
    let good = recall(&e, q("where is the staging API key").with_floor(true));
    assert_eq!(rank(&good, &key), Some(0), "{good:#?}");
    assert_eq!(rank(&good, &style), None, "a style preference is no answer: {good:#?}");

    // Nothing answers: no hits rather than k bad ones.
    let none = recall(&e, q("what hydration suits a rye sourdough loaf").with_floor(true));
    assert!(none.is_empty(), "{none:#?}");
    // An identifier the query names exactly is a match whatever its cosine.
    let exact = recall(&e, q("LED-412").with_floor(true));
    assert_eq!(rank(&exact, &code), Some(0), "{exact:#?}");

    // The floor comes from the model's own spread (MiniLM here: the reference).
    let c = e.calibration().unwrap();
    assert!((c.unrelated_mean - 0.045).abs() < 0.01 && (c.unrelated_sd - 0.081).abs() < 0.01, "{c:?}");
    assert!((c.gate(0.42) - 0.42).abs() < 0.005, "MiniLM's gate carries to itself: {}", c.gate(0.42));
    assert!(c.is_complete() && c.best_mean.unwrap() > c.unrelated_mean, "{c:?}");
    assert!(c.floor() > c.unrelated_mean && c.floor() < 0.42, "{}", c.floor());
    // Kept in the store: a reopened engine reads it instead of measuring again.
    drop(e);
    let e = open(dir.path(), 1.0);
    assert_eq!(*e.calibration().unwrap(), *c);
}

/// Files a section of an ingested file: the project's own (`person`) or from outside
/// (`external`: a vendored tree).
fn section(e: &Engine, path: &str, body: &str, trust: Trust) -> MemoryId {
    let heading = vec!["Configuration".to_string()];
    let text = amber_core::document::chunk_content(path, &heading, body);
    let mut m = NewMemory::new(text).in_scope(project());
    m.kind = MemoryType::Fact;
    m.metadata = json!({ "doc": { "path": path, "headings": heading } });
    if trust == Trust::External {
        m.metadata["external"] = json!(true);
    }
    let origin =
        Origin { door: Some(Door::Cli.as_str().into()), tool: Some("ingest".into()), ..Origin::default() };
    stamp(&mut m.metadata, &origin, trust);
    e.writer().unwrap().remember(m).unwrap().memory.id
}

#[test]
fn the_projects_own_document_outranks_a_vendored_one_on_the_same_subject() {
    const ASKED: &str = "how is the retry timeout configured";
    let file = |e: &Engine| {
        let own = section(
            e,
            "docs/config.md",
            "Set `retry_timeout_ms` in ledger.toml; the ledger client gives up after it.",
            Trust::Person,
        );
        // The vendored README repeats the question's words: words alone rank it first.
        let vendored = section(
            e,
            "vendor/httpkit/README.md",
            "How is the retry timeout configured? The retry timeout is configured with RetryTimeout; the retry timeout defaults to 30 s.",
            Trust::External,
        );
        (own, vendored)
    };
    let dir = tempfile::tempdir().unwrap();
    let off = open(&dir.path().join("off"), 0.0);
    let (own, vendored) = file(&off);
    let hits = recall(&off, Query::new(ASKED).in_scope(project()).top(5));
    assert!(
        rank(&hits, &vendored) < rank(&hits, &own),
        "the case must be one that ranking by words alone gets wrong: {hits:#?}"
    );
    let on = open(&dir.path().join("on"), 1.0);
    let (own, vendored) = file(&on);
    let hits = recall(&on, Query::new(ASKED).in_scope(project()).top(5));
    assert_eq!(rank(&hits, &own), Some(0), "{hits:#?}");
    let standing = |id: &MemoryId| hits[rank(&hits, id).unwrap()].evidence.standing.clone();
    assert_eq!(standing(&own).filing, Some(Filing::Document));
    assert_eq!(standing(&vendored).filing, Some(Filing::Reference));
    assert!((standing(&vendored).filing_factor - Filing::Reference.prior()).abs() < 1e-6);
    assert!(Filing::Reference.prior() < Filing::Document.prior());
}
