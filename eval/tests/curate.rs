//! `amber-eval curate` end to end on a tiny LoCoMo-shaped conversation, through the real
//! binary, engine, model and curation.

use std::process::Command;

use serde_json::{Value, json};

/// Six long turns on clearly different subjects, in two sessions.
const TURNS: [(&str, &str); 6] = [
    (
        "Ann",
        "I finally started cello lessons on Tuesday evenings, and my teacher says my bowing arm is much steadier than last month.",
    ),
    (
        "Bob",
        "Our accountant found a mistake in last year's tax return, so we have to file an amended form before the end of April.",
    ),
    (
        "Ann",
        "The parrot we adopted from the shelter learned to whistle the opening of the kettle song and now does it every morning.",
    ),
    (
        "Bob",
        "We are repainting the kitchen a pale green this weekend and replacing the old cabinet handles with brass ones from the market.",
    ),
    (
        "Ann",
        "My brother is training for a marathon in Berlin and runs thirty kilometres along the river every Sunday before breakfast.",
    ),
    (
        "Bob",
        "The volcano documentary explained how magma chambers empty during an eruption and why the summit collapses into a caldera.",
    ),
];

fn fixture() -> Value {
    let turn = |i: usize| {
        let (speaker, text) = TURNS[i];
        json!({"speaker": speaker, "dia_id": format!("D{}:{}", i / 3 + 1, i % 3 + 1), "text": text})
    };
    json!([{
        "sample_id": "conv-tiny",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1": [turn(0), turn(1), turn(2)],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2": [turn(3), turn(4), turn(5)],
            "session_2_date_time": "2:10 pm on 9 May, 2023"
        },
        "qa": [{"question": "What does Ann play?", "answer": "cello", "evidence": ["D1:1"], "category": 4}]
    }])
}

#[test]
fn curate_finds_planted_exact_and_typo_copies_and_links_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("locomo_tiny.json");
    std::fs::write(&data, serde_json::to_vec(&fixture()).unwrap()).unwrap();
    let cache = dir.path().join("cache.db");
    let out = dir.path().join("curate.json");
    let links = dir.path().join("links.jsonl");
    // Seed 7 plants one copy of each kind; its typo copy scores 0.975 against its original.
    // (Not every typo clears 0.95: a swapped pair of letters can change a word's pieces,
    // which is what the full run measures; this checks that the pipeline finds the ones
    // that do, and merges nothing else.)
    let run = Command::new(env!("CARGO_BIN_EXE_amber-eval"))
        .args(["curate", "--data", data.to_str().unwrap(), "--cache", cache.to_str().unwrap()])
        .args(["--kinds", "case_whitespace,typo", "--rate", "0.34", "--seed", "7"])
        .args(["--out", out.to_str().unwrap(), "--links", links.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let r: Value = serde_json::from_slice(&run.stdout).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    assert!(stderr.contains("| typo |"), "the table goes to stderr: {stderr}");

    let f = &r["fixture"];
    assert_eq!(f["turns"], 6);
    assert_eq!(f["originals_filed"], 6);
    assert_eq!(f["identical_originals"], 0);
    assert_eq!(f["planted"], 2, "{f}");
    assert_eq!(f["planted_by_edit"], json!({"case_whitespace": 1, "typo": 1}));

    let d = &r["default"];
    assert_eq!(d["duplicate_threshold"].as_f64().unwrap() as f32, 0.95);
    assert_eq!(d["by_edit"]["case_whitespace"]["found_exact"], 1, "{d:#}");
    assert_eq!(d["by_edit"]["typo"]["found"], 1, "{d:#}");
    assert_eq!(d["recall"], 1.0);
    assert_eq!(d["false_merges"], 0, "{d:#}");
    assert_eq!(d["precision"], 1.0);
    assert_eq!(d["collapsed"], 1, "the exact copy is forgotten");
    assert_eq!(d["examined"], 7, "8 memories filed, the collapsed copy is not examined");
    assert_eq!(r["sweep"].as_array().unwrap().len(), 4);
    assert!(r["false_merge_examples"].as_array().unwrap().is_empty());

    // Every link joins a copy to its original: no two different turns are linked.
    let lines: Vec<Value> =
        std::fs::read_to_string(&links).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for l in &lines {
        assert!(l["planted_edit"].is_string(), "an unplanted link: {l}");
        assert!(l["kind"] != "related", "{l}");
    }
    let has = |l: &Value, needle: &str| {
        l["from_text"].as_str().unwrap().to_lowercase().contains(needle)
            || l["to_text"].as_str().unwrap().to_lowercase().contains(needle)
    };
    assert!(!lines.iter().any(|l| has(l, "cello") && has(l, "tax return")));
}
