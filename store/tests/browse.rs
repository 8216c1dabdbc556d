//! What a person browses, on the SQLite store (the scenario in `common/browse.rs`; the
//! same on PostgreSQL in `pg.rs`).

use crate::common;

#[test]
fn a_scope_is_filtered_counted_and_paged_and_its_files_listed_in_order() {
    let mut s = amber_store::Store::open_in_memory().unwrap();
    assert!(!common::browse::scenario(&mut s).is_empty());
}

/// How long the person's browsing takes on a scope of 100,000 memories (90,000 document
/// sections in 1,000 files, 10,000 others) on a SQLite file: run with
/// `cargo test --release -p amber-store --test it -- browse:: --ignored --nocapture`.
#[test]
#[ignore]
fn browsing_a_scope_of_100k_memories() {
    use amber_core::filing::Filing;
    use amber_core::{NewMemory, Scope};
    use amber_store::prelude::*;
    use amber_store::{ListFilter, Store};
    use std::time::Instant;

    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("amber.db")).unwrap();
    let sc: Scope = "project/big".parse().unwrap();
    let started = Instant::now();
    for batch in 0..100 {
        let memories: Vec<NewMemory> = (0..1000)
            .map(|i| {
                let n = batch * 1000 + i;
                let mut m = NewMemory::new(format!("memory {n}: some text about the rollout of host {n}"))
                    .in_scope(sc.clone());
                if n % 10 != 0 {
                    let (file, line) = (n / 100, (n % 100) as u32 * 10 + 1);
                    m.source = Some(format!("/r/docs/{file}.md"));
                    m.metadata = serde_json::json!({ "trust": "person", "doc": {
                        "path": format!("/r/docs/{file}.md"), "label": format!("docs/{file}.md"),
                        "lines": [line, line + 8], "sha256": "00", "file_sha256": "11", "headings": ["Guide"] } });
                } else {
                    m.metadata = serde_json::json!({ "trust": if n % 20 == 0 { "person" } else { "agent" } });
                }
                m
            })
            .collect();
        s.insert_batch(&memories, batch as i64).unwrap();
    }
    eprintln!("filed 100,000 in {:.1} s", started.elapsed().as_secs_f64());
    let time = |what: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        eprintln!("{what}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    };
    let not_docs = ListFilter {
        filings: Filing::ALL.into_iter().filter(|f| *f != Filing::Document).collect(),
        ..ListFilter::default()
    };
    let person = ListFilter { filings: vec![Filing::Person], ..ListFilter::default() };
    time("tally by filing", &mut || {
        assert_eq!(s.scope_tally(&sc, &ListFilter::default()).unwrap()[3].1, 90_000)
    });
    time("page 1, every filing", &mut || {
        assert_eq!(s.scope_page(&sc, &ListFilter::default(), None, 0, 41).unwrap().len(), 41)
    });
    time("page 1, all but documents", &mut || {
        assert_eq!(s.scope_page(&sc, &not_docs, None, 0, 41).unwrap().len(), 41)
    });
    time("last page, person", &mut || {
        assert_eq!(s.scope_page(&sc, &person, None, 4_960, 41).unwrap().len(), 40)
    });
    time("last page, every filing", &mut || {
        assert_eq!(s.scope_page(&sc, &ListFilter::default(), None, 99_960, 41).unwrap().len(), 40)
    });
    time("files, first page", &mut || assert_eq!(s.document_files(&sc, 0, 10).unwrap().1, 1000));
    time("files, last page", &mut || assert_eq!(s.document_files(&sc, 950, 50).unwrap().0.len(), 50));
    time("one file's sections", &mut || {
        assert_eq!(s.document_sections(&sc, "/r/docs/500.md", 5000).unwrap().len(), 90)
    });
}
