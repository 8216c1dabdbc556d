//! What a person browses, over any backend (run on SQLite by `tests/browse.rs`, and on
//! both by `tests/pg.rs`, which compares what each saw): a scope's memories kept by
//! filing, type and trust, counted, paged; its document files; a file's sections in
//! order. Every filter is checked against the Rust functions it must agree with
//! (`Filing::of`, `trust_of`).

use amber_core::filing::Filing;
use amber_core::origin::{Trust, trust_of};
use amber_core::{Memory, MemoryType, NewMemory, Scope};
use amber_store::{ListFilter, MemoryStore};
use serde_json::{Value, json};

fn scope(s: &str) -> Scope {
    s.parse().unwrap()
}

/// A chunk of `path`, filed at `lines`, under `heading`.
fn chunk(sc: &Scope, path: &str, lines: [u32; 2], heading: &str) -> NewMemory {
    let label = path.trim_start_matches("/r/");
    let mut m =
        NewMemory::new(format!("{label} › {heading}\nbody of {heading} in {label}")).in_scope(sc.clone());
    m.source = Some(path.into());
    m.metadata = json!({
        "trust": "person",
        "doc": { "path": path, "label": label, "lines": lines, "sha256": "00", "file_sha256": "11", "headings": [heading] }
    });
    m
}

fn with(content: &str, sc: &Scope, kind: MemoryType, session: Option<&str>, metadata: Value) -> NewMemory {
    let mut m = NewMemory::new(content).in_scope(sc.clone()).of_type(kind);
    m.session_id = session.map(String::from);
    m.metadata = metadata;
    m
}

/// The scenario: what it saw, as (step, value) notes.
pub fn scenario(s: &mut dyn MemoryStore) -> Vec<(String, String)> {
    let mut notes = Vec::new();
    let mut note = |k: &str, v: String| notes.push((k.to_string(), v));
    let sc = scope("team/browse");
    let ev = MemoryType::Event;
    let fact = MemoryType::Fact;
    let mut batch = vec![
        with("mine", &sc, fact, None, json!({ "trust": "person" })),
        with(
            "promoted capture",
            &sc,
            ev,
            Some("s1"),
            json!({ "trust": "person", "captured": true, "trust_set": { "by": "person", "was": "external" } }),
        ),
        with("agent filed", &sc, fact, Some("s1"), json!({ "trust": "agent" })),
        with("an event on purpose", &sc, ev, None, json!({ "trust": "agent" })),
        with("raw in session", &sc, ev, Some("s1"), json!({ "trust": "external", "captured": true })),
        with("raw captured", &sc, ev, None, json!({ "captured": true })),
        with("captured fact", &sc, fact, None, json!({ "captured": true })),
        with(
            "forged promotion",
            &sc,
            fact,
            None,
            json!({ "trust": "agent", "trust_set": { "by": "person" } }),
        ),
        with("a number for trust", &sc, fact, None, json!({ "trust": 5, "captured": "yes" })),
        with("no metadata", &sc, MemoryType::Pattern, None, json!({})),
        with(
            "a skill",
            &sc,
            MemoryType::Pattern,
            None,
            json!({ "trust": "agent", "skill": { "name": "x" } }),
        ),
        with("a skill's revision", &sc, MemoryType::Invalidation, None, json!({ "skill_revision": {} })),
        with("doc not an object", &sc, fact, None, json!({ "trust": "person", "doc": "a.md" })),
    ];
    // Two files; b.md's sections filed out of their order in the file.
    batch.push(chunk(&sc, "/r/b.md", [20, 29], "Later"));
    batch.push(chunk(&sc, "/r/b.md", [1, 9], "Intro"));
    batch.push(chunk(&sc, "/r/b.md", [10, 19], "Middle"));
    batch.push(chunk(&sc, "/r/a.md", [1, 5], "Only"));
    let gone = chunk(&sc, "/r/a.md", [6, 9], "Forgotten");
    batch.push(gone.clone());
    batch.push(chunk(&scope("team/browse/below"), "/r/c.md", [1, 2], "Below"));
    let filed: Vec<Memory> = s.insert_batch(&batch, 100).unwrap().into_iter().map(|(m, _)| m).collect();
    let gone = filed.iter().find(|m| m.content == gone.content).unwrap();
    s.forget(&gone.id, 101).unwrap();
    let live: Vec<&Memory> = filed.iter().filter(|m| m.scope == sc && m.id != gone.id).collect();

    let seqs = |f: &ListFilter| -> Vec<u64> {
        s.scope_page(&sc, f, None, 0, 100).unwrap().iter().map(|m| m.seq).collect()
    };
    let newest_first = |keep: &dyn Fn(&Memory) -> bool| -> Vec<u64> {
        let mut v: Vec<u64> = live.iter().filter(|m| keep(m)).map(|m| m.seq).collect();
        v.reverse();
        v
    };
    for f in Filing::ALL {
        let only = ListFilter { filings: vec![f], ..ListFilter::default() };
        assert_eq!(seqs(&only), newest_first(&|m| Filing::of(m) == f), "filing {f}: as Filing::of says");
    }
    for t in [Trust::Person, Trust::Agent, Trust::External] {
        let only = ListFilter { trust: Some(t), ..ListFilter::default() };
        assert_eq!(seqs(&only), newest_first(&|m| trust_of(&m.metadata) == t), "trust {t:?}");
    }
    let events = ListFilter { kind: Some(ev), ..ListFilter::default() };
    assert_eq!(seqs(&events), newest_first(&|m| m.kind == ev));
    let not_docs = ListFilter {
        filings: Filing::ALL.into_iter().filter(|f| *f != Filing::Document).collect(),
        trust: Some(Trust::Agent),
        ..ListFilter::default()
    };
    let want = newest_first(&|m| Filing::of(m) != Filing::Document && trust_of(&m.metadata) == Trust::Agent);
    assert_eq!(seqs(&not_docs), want, "filters combine");
    note("not documents, agent", format!("{:?}", seqs(&not_docs)));

    // Counts by filing: every filing, under the type and trust filters (not the filings).
    let tally = s.scope_tally(&sc, &not_docs).unwrap();
    for (f, n) in &tally {
        let want =
            live.iter().filter(|m| Filing::of(m) == *f && trust_of(&m.metadata) == Trust::Agent).count();
        assert_eq!(*n, want as u64, "{f}");
    }
    note("tally", format!("{tally:?}"));
    let all = s.scope_tally(&sc, &ListFilter { include_forgotten: true, ..ListFilter::default() }).unwrap();
    assert_eq!(all.iter().map(|(_, n)| n).sum::<u64>(), live.len() as u64 + 1, "the forgotten chunk too");

    // Paged by offset: the same as one long page cut in pieces.
    let every = seqs(&ListFilter::default());
    let mut paged = Vec::new();
    for offset in (0..every.len() as u64).step_by(4) {
        let page = s.scope_page(&sc, &ListFilter::default(), None, offset, 4).unwrap();
        paged.extend(page.iter().map(|m| m.seq));
    }
    assert_eq!(paged, every);
    let cursor = s.scope_page(&sc, &ListFilter::default(), Some(every[2]), 1, 2).unwrap();
    assert_eq!(cursor.iter().map(|m| m.seq).collect::<Vec<_>>(), every[4..6], "a cursor, then an offset");

    // The scope's files, by path, with their live sections; paged with the total.
    let (files, total) = s.document_files(&sc, 0, 10).unwrap();
    assert_eq!(total, 2);
    let summary: Vec<(&str, &str, u64)> =
        files.iter().map(|f| (f.path.as_str(), f.label.as_str(), f.sections)).collect();
    assert_eq!(
        summary,
        [("/r/a.md", "a.md", 1), ("/r/b.md", "b.md", 3)],
        "c.md is below, doc-as-text is none"
    );
    note("files", format!("{files:?}"));
    let (second, total) = s.document_files(&sc, 1, 1).unwrap();
    assert_eq!((second.len(), second[0].path.as_str(), total), (1, "/r/b.md", 2));
    assert!(s.document_files(&scope("team/none"), 0, 10).unwrap() == (Vec::new(), 0));

    // A file's sections in the order of their lines, not of filing.
    let sections = s.document_sections(&sc, "/r/b.md", 100).unwrap();
    let heads: Vec<&str> = sections.iter().map(|m| m.content.lines().next().unwrap()).collect();
    assert_eq!(heads, ["b.md › Intro", "b.md › Middle", "b.md › Later"]);
    assert_eq!(s.document_sections(&sc, "/r/b.md", 2).unwrap().len(), 2, "at most the limit");
    assert!(s.document_sections(&sc, "/r/a.md", 10).unwrap().iter().all(|m| m.forgotten_at.is_none()));
    note("sections", format!("{heads:?}"));
    notes
}
