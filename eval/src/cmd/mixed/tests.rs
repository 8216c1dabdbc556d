//! The fixture parses, every question's gold is in it (and only there), and every
//! memory comes out with the filing intended, read the way ranking reads it.

use std::collections::BTreeMap;

use amber_core::filing::Filing;
use amber_core::origin::{Trust, set_trust};
use amber_core::{Memory, MemoryType};

use super::filing::Planned;
use super::fixture::{Fixture, Gold, default_dir, parse_sessions};
use super::plan::{fixture_plan, stamper};

fn load() -> Fixture {
    Fixture::load(&default_dir()).expect("the fixture loads and checks")
}

/// A planned memory as the store would hold it, promoted when the person promotes it.
fn as_stored(p: &Planned, seq: u64) -> Memory {
    let mut m = Memory::filed(p.memory.clone(), seq, p.memory.event_time.unwrap_or_default());
    if p.promote {
        assert_eq!(Filing::of(&m), Filing::Raw, "a promoted memory is a capture first");
        assert!(set_trust(&mut m.metadata, Trust::Person, amber_core::origin::SetBy::Person, 1));
    }
    m
}

#[test]
fn the_fixture_has_the_shape_the_benchmark_needs() {
    let f = load();
    let q = &f.questions;
    let curated = q.answerable.iter().filter(|a| a.gold[0].kind() == "curated").count();
    assert!((55..=70).contains(&q.answerable.len()), "{} answerable", q.answerable.len());
    assert!(curated * 2 >= q.answerable.len() && curated < q.answerable.len(), "{curated} curated golds");
    assert!((15..=25).contains(&q.unanswerable.len()));
    assert!((150..=250).contains(&f.memories.len()), "{} curated memories", f.memories.len());
    assert!((20..=40).contains(&f.sessions.len()), "{} sessions", f.sessions.len());
    assert!((15..=30).contains(&f.docs.len()), "{} documents", f.docs.len());
    assert!((3..=5).contains(&f.skills.len()));
    assert!(f.memories.iter().filter(|m| m.preference).count() >= 8);
    assert!(f.sessions.iter().all(|s| s.day <= 6), "one week");
}

#[test]
fn every_memory_gets_the_filing_intended() {
    let f = load();
    let st = stamper(&f).unwrap();
    let (plan, ids) = fixture_plan(&f, &st).unwrap();
    let mut by: BTreeMap<Filing, usize> = BTreeMap::new();
    for (i, p) in plan.iter().enumerate() {
        let m = as_stored(p, i as u64 + 1);
        assert_eq!(
            Filing::of(&m),
            p.filing,
            "{} {:?}",
            p.role,
            m.content.chars().take(60).collect::<String>()
        );
        *by.entry(p.filing).or_default() += 1;
    }
    // The fixture's documents are the project's own; documents from outside (`reference`)
    // come with the filler's vendored tree.
    for filing in Filing::ALL.into_iter().filter(|f| *f != Filing::Reference) {
        assert!(by.get(&filing).copied().unwrap_or(0) > 0, "no {filing} memory: {by:?}");
    }
    assert!(!by.contains_key(&Filing::Reference), "{by:?}");
    assert_eq!(by[&Filing::Skill], f.skills.len());
    assert_eq!(by[&Filing::Raw], f.sessions.iter().map(|s| s.captures.len()).sum::<usize>());
    assert_eq!(by[&Filing::Document], f.docs.iter().map(|d| d.pieces.len()).sum::<usize>());
    // Invalidations name the ids of what they replace, filed before them.
    let filed: Vec<_> = plan.iter().map(|p| p.memory.id()).collect();
    for p in plan.iter().filter(|p| !p.memory.supersedes.is_empty()) {
        let at = filed.iter().position(|id| *id == p.memory.id()).unwrap();
        assert!(p.memory.supersedes.iter().all(|old| filed[..at].contains(old)));
        assert_eq!(p.memory.kind, MemoryType::Invalidation);
    }
    assert_eq!(ids.len(), f.memories.len());
}

#[test]
fn every_gold_is_in_the_fixture_and_nothing_else_matches_it() {
    let f = load();
    let st = stamper(&f).unwrap();
    let (plan, _) = fixture_plan(&f, &st).unwrap();
    let stored: Vec<(Memory, &Planned)> =
        plan.iter().enumerate().map(|(i, p)| (as_stored(p, i as u64), p)).collect();
    for q in &f.questions.answerable {
        for g in &q.gold {
            let hits: Vec<&(Memory, &Planned)> = stored.iter().filter(|(m, _)| g.matches(m)).collect();
            match g {
                Gold::Memory { .. } => {
                    assert_eq!(hits.len(), 1, "{}: {g:?}", q.id);
                    assert!(
                        matches!(hits[0].1.role, "curated" | "preference"),
                        "{}: {}",
                        q.id,
                        hits[0].1.role
                    );
                }
                Gold::Doc { doc, heading } => {
                    assert!(!hits.is_empty(), "{}: no chunk of {g:?}", q.id);
                    let file = f.docs.iter().find(|d| d.rel == *doc).unwrap();
                    // A section is part of its file, unless the gold is the file's title.
                    let title = super::fixture::headings_in(&file.text).next();
                    assert!(
                        hits.len() < file.pieces.len() || title.as_ref() == Some(heading),
                        "{}: the whole file",
                        q.id
                    );
                    assert!(hits.iter().all(|(_, p)| p.filing == Filing::Document));
                }
            }
        }
    }
    // The question's words are not the gold's: no question is a prefix of its answer.
    for q in &f.questions.answerable {
        if let Gold::Memory { memory } = &q.gold[0] {
            assert!(!q.question.contains(memory.as_str()), "{} copies its answer", q.id);
        }
    }
}

#[test]
fn sessions_text_is_checked() {
    let ok = "# comment\n@@session s1 day 2\n@@capture transcript\nuser: hi\n\nassistant: yes\n\n@@capture tool:Edit\nEdit: x\n";
    let s = parse_sessions(ok).unwrap();
    assert_eq!((s.len(), s[0].day, s[0].captures.len()), (1, 2, 2));
    assert_eq!(s[0].captures[0].text, "user: hi\n\nassistant: yes");
    assert!(parse_sessions("@@session s1 day x\n@@capture transcript\nhi\n").is_err());
    assert!(parse_sessions("@@session s1 day 1\n@@capture stdout\nhi\n").is_err());
    assert!(parse_sessions("@@session s1 day 1\n").is_err(), "a session without captures");
    assert!(parse_sessions("stray text\n@@session s1 day 1\n@@capture transcript\nhi\n").is_err());
}

#[test]
fn a_first_sentence_is_a_whole_sentence_of_note_length() {
    use super::filler::first_sentence;
    let long = "I have been thinking about getting a new bike for commuting to work. Any advice?";
    assert_eq!(
        first_sentence(long).as_deref(),
        Some("I have been thinking about getting a new bike for commuting to work.")
    );
    assert_eq!(first_sentence("Too short. Really."), None);
    assert_eq!(first_sentence(&"word ".repeat(100)), None, "over 300 characters");
    assert_eq!(
        first_sentence("Version 3.14 of the tool is what I have been running on my laptop\nsince May"),
        Some("Version 3.14 of the tool is what I have been running on my laptop".into())
    );
}
