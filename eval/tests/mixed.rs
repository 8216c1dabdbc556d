//! `amber-eval mixed` end to end at its smallest size, through the real binary, engine
//! and model: the fixture filed with every memory's filing checked (the person's
//! promotions taken through the one writer while a batch's results are read), grown with
//! filler, and its questions and briefings scored.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn mixed_files_the_fixture_checks_every_filing_and_scores_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mixed.json");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/longmemeval_tiny.json");
    let run = Command::new(env!("CARGO_BIN_EXE_amber-eval"))
        .args(["mixed", "--data", data.to_str().unwrap(), "--scale", "400", "--filing-strength", "1"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let r: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let scale = &r["scales"][0];
    assert_eq!(scale["grown"]["size"], 400);
    assert_eq!(scale["grown"]["mix"]["memories"], 400);
    assert_eq!(scale["grown"]["mix"]["filings_checked"], 400, "{}", scale["grown"]);
    assert_eq!(r["fixture"]["mix"]["by_filing"]["promoted"], 5, "the person's promotions: {}", r["fixture"]);
    let run = &scale["runs"][0];
    assert_eq!(run["answerable"]["questions"], 64);
    let at5 = run["answerable"]["answer_at_5"].as_f64().unwrap();
    assert!(at5 >= 0.9, "the fixture's answers in the top 5 at 400 memories: {at5}");
    for b in run["briefing"]["briefings"].as_array().unwrap() {
        assert_eq!(b["preferences_kept"], 12, "every standing preference briefed: {b}");
    }
}
