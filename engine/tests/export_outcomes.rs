//! Export and import keep the outcome log whole: two identical reports (one reporter,
//! one millisecond) are two failures in the store the file is imported into, and an
//! import twice still two. With the real model (`scripts/setup.sh`).

use amber_core::portable::{ExportFilter, ImportOptions};
use amber_core::{MemoryId, NewMemory, Outcome, Report, ReportKind, Scope};
use amber_engine::{Engine, EngineOptions};
use serde_json::Value;

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(EngineOptions::new(dir)).expect("the model is installed: run scripts/setup.sh")
}

fn failure(at: i64) -> Report {
    Report {
        kind: ReportKind::Outcome,
        result: Some(Outcome::Failure),
        session_id: None,
        agent: None,
        note: Some("the same note".into()),
        at,
        basis: None,
    }
}

fn export(e: &Engine) -> Vec<Value> {
    let (mut records, mut cursor) = (Vec::new(), None);
    loop {
        let page = e.export_page(&ExportFilter::default(), false, cursor.as_deref(), 100).unwrap();
        records.extend(page.records);
        match page.next {
            Some(next) => cursor = Some(next),
            None => return records,
        }
    }
}

/// The reports on a memory and its weight, which follows them.
fn standing(e: &Engine, id: &MemoryId) -> (usize, f32) {
    (e.reports(id).unwrap().len(), e.get(id).unwrap().expect("the memory was imported").weight)
}

#[test]
fn two_identical_reports_are_two_after_an_import_and_after_two() {
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path());
    let scope: Scope = "proj/a".parse().unwrap();
    let id = a
        .writer()
        .unwrap()
        .remember(NewMemory::new("make test-integration needs Docker").in_scope(scope))
        .unwrap()
        .memory
        .id;
    a.writer().unwrap().report(&id, failure(1_000)).unwrap();
    a.writer().unwrap().report(&id, failure(1_000)).unwrap();
    let filed = standing(&a, &id);
    assert_eq!(filed.0, 2);
    assert!(filed.1 < 0.7, "two failures weigh a memory down: {}", filed.1);
    let records = export(&a);
    let nths: Vec<i64> = records
        .iter()
        .filter(|r| r["record"] == "outcome")
        .map(|r| r["nth"].as_i64().expect("every outcome says how many identical ones came before"))
        .collect();
    assert_eq!(nths, vec![0, 1]);

    let b = open(b_dir.path());
    let keep = ImportOptions { keep_trust: true };
    let first = b.writer().unwrap().import(&records, keep).unwrap();
    assert_eq!(first.added.get("outcome"), Some(&2), "{first:?}");
    assert_eq!(standing(&b, &id), filed, "both reports came in");
    let again = b.writer().unwrap().import(&records, keep).unwrap();
    assert_eq!(again.added.get("outcome"), None, "{again:?}");
    assert_eq!(again.present.get("outcome"), Some(&2), "{again:?}");
    assert_eq!(standing(&b, &id), filed, "twice changes nothing");
}
