//! The cross-lingual fixture's scoring, without a model: the fixture parses as the
//! command reads it, and R@1 / R@5 count a question's own fact by its place.

use std::path::Path;

use amber_eval::crosslingual::{LANGUAGES, Tally, load, parse};

#[test]
fn the_fixture_loads_with_every_language() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/crosslingual/facts.jsonl");
    let facts = load(&path).unwrap();
    assert_eq!(facts.len(), 80);
    for f in &facts {
        for lang in LANGUAGES {
            assert!(f.questions.get(lang).is_some_and(|q| !q.trim().is_empty()), "{} lacks {lang}", f.id);
        }
    }
    assert!(parse("{\"id\": 1}").is_err());
}

#[test]
fn recall_counts_the_own_fact_at_rank_one_and_within_five() {
    let ids = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut t = Tally::default();
    assert_eq!(t.add("es", "f1", &ids(&["f1", "f2"])), Some(1));
    assert_eq!(t.add("es", "f2", &ids(&["f1", "f3", "f4", "f5", "f2"])), Some(5));
    assert_eq!(t.add("es", "f3", &ids(&["f1", "f2"])), None);
    assert_eq!(t.add("es", "f4", &ids(&[])), None);
    assert_eq!(t.add("ja", "f9", &ids(&["f8", "f9"])), Some(2));
    assert_eq!(t.recall("es"), (0.25, 0.5));
    assert_eq!(t.recall("ja"), (0.0, 1.0));
    assert_eq!(t.recall("all"), (0.2, 0.6));
    assert_eq!(t.recall("de"), (0.0, 0.0));
    let r = t.report();
    assert_eq!(r["all"]["n"], 5);
    assert_eq!(r["es"]["hits@5"], 2);
    assert_eq!(r["ja"]["r@5"], 1.0);
}
