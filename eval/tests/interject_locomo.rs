//! `amber-eval interject` on LoCoMo end to end (short memories: one per turn), on a tiny
//! two-conversation fixture, through the real binary, engine and model.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Two conversations; the first has 4 questions (two single-hop, one adversarial, one with
/// no evidence), the second 3 (two single-hop, one multi-hop).
const FIXTURE: &str = r#"[
 {"qa": [
   {"question": "What instrument is Ana learning?", "answer": "cello", "evidence": ["D1:1"], "category": 4},
   {"question": "What is the name of Ben's parrot?", "answer": "Kiwi", "evidence": ["D2:2"], "category": 4},
   {"question": "What did Ben's cello teacher say about his posture?", "adversarial_answer": "good posture",
    "evidence": ["D2:1"], "category": 5},
   {"question": "Is Ana happy?", "answer": "Yes", "evidence": [], "category": 3}
  ],
  "conversation": {
   "speaker_a": "Ana", "speaker_b": "Ben",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Ana", "dia_id": "D1:1", "text": "I started learning the cello last week."},
    {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice! I am repainting my kitchen yellow."}
   ],
   "session_2_date_time": "10:00 am on 20 June, 2023",
   "session_2": [
    {"speaker": "Ana", "dia_id": "D2:1", "text": "My cello teacher says I have good posture."},
    {"speaker": "Ben", "dia_id": "D2:2", "text": "The kitchen is finished, and we adopted a parrot named Kiwi."}
   ]
  },
  "sample_id": "tiny-a"},
 {"qa": [
   {"question": "What race is Cy training for?", "answer": "the Berlin marathon", "evidence": ["D1:1"], "category": 4},
   {"question": "What kind of bread does Dee bake?", "answer": "sourdough", "evidence": ["D1:2"], "category": 4},
   {"question": "Which city is Dee moving to, and when?", "answer": "Lisbon, in autumn",
    "evidence": ["D2:2", "D2:3"], "category": 1}
  ],
  "conversation": {
   "speaker_a": "Cy", "speaker_b": "Dee",
   "session_1_date_time": "9:00 am on 2 March, 2023",
   "session_1": [
    {"speaker": "Cy", "dia_id": "D1:1", "text": "I am training for the Berlin marathon in September."},
    {"speaker": "Dee", "dia_id": "D1:2", "text": "I bake sourdough bread every Sunday morning."}
   ],
   "session_2_date_time": "6:30 pm on 15 April, 2023",
   "session_2": [
    {"speaker": "Cy", "dia_id": "D2:1", "text": "How is the flat hunting going?"},
    {"speaker": "Dee", "dia_id": "D2:2", "text": "We found a flat in Lisbon!"},
    {"speaker": "Dee", "dia_id": "D2:3", "text": "We move there in the autumn."}
   ]
  },
  "sample_id": "tiny-b"}
]"#;

fn run(args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_amber-eval")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), report, stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn interject_on_locomo_files_turns_and_groups_questions() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("conversations.json");
    std::fs::write(&data, FIXTURE).unwrap();
    let cache = dir.path().join("cache.db");
    let out = dir.path().join("interject.json");
    let png = dir.path().join("curve.png");
    let table = dir.path().join("table.md");
    let records = dir.path().join("events.jsonl");
    let (ok, r, err) = run(&[
        "interject",
        "--data",
        s(&data),
        "--cache",
        s(&cache),
        "--gate-from",
        "0.2",
        "--gate-to",
        "0.8",
        "--gate-step",
        "0.1",
        "--bands",
        "0,0.1",
        "--out",
        s(&out),
        "--plot",
        s(&png),
        "--table",
        s(&table),
        "--rankings",
        s(&records),
    ]);
    assert!(ok, "{err}");
    // told apart by content: a .json file whose records open with qa/evidence
    assert_eq!(r["dataset"], "locomo", "{r:#}");
    let written: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    assert_eq!(r["n_questions"], 7);
    assert_eq!(r["conversations_run"], 2);
    assert_eq!(r["turns_filed"], 9, "one memory per turn");
    assert_eq!(r["memories_filed"], 9);
    assert_eq!(r["quirks"]["empty_evidence"], 1);
    assert_eq!(r["questions_without_usable_evidence"], 1, "Is Ana happy? has no evidence");
    assert_eq!(r["config"]["granularity"], "turn");
    assert_eq!(r["config"]["order"], "retrieval");
    // 4 single-hop + 1 multi-hop answerable, 1 adversarial; every question slot (7) also
    // asks the previous conversation's question against this one
    assert_eq!(r["events"]["answerable"], 5, "{:#}", r["events"]);
    assert_eq!(r["events"]["adversarial"], 1);
    assert_eq!(r["events"]["unrelated"], 7);
    assert_eq!(r["events"]["abstention"], 0);
    assert_eq!(r["events_by_category"]["4-single-hop"], 4);
    assert_eq!(r["events_by_category"]["5-adversarial"], 1);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "7 gates x 2 bands");
    for row in rows {
        for judge in ["judge_off", "judge_oracle"] {
            let g = &row[judge]["groups"];
            assert_eq!(g["unrelated"]["fired_gold"], 0, "nothing is gold in another conversation");
            assert!(g["adversarial"]["fired_gold"].as_u64() <= g["adversarial"]["fired"].as_u64());
            assert!(g.get("abstention").is_none());
        }
    }
    let fire = |row: &Value| row["judge_off"]["groups"]["answerable"]["fire_rate"].as_f64().unwrap();
    assert!(fire(&rows[0]) >= fire(&rows[6]));

    let lines: Vec<Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5 + 1 + 7);
    // first: the cello question against its own conversation, then the control in its slot:
    // tiny-b's first question (the previous conversation, cyclically) against tiny-a
    assert_eq!(lines[0]["question"], "What instrument is Ana learning?");
    assert_eq!(lines[0]["group"], "answerable");
    assert_eq!(lines[0]["candidates"][0]["ids"][0], "D1:1", "{:#}", lines[0]);
    assert_eq!(lines[0]["candidates"][0]["gold"], true);
    assert!(lines[0]["candidates"][0]["cosine"].as_f64().unwrap() > 0.3);
    assert_eq!(lines[1]["group"], "unrelated");
    assert_eq!(lines[1]["question"], "What race is Cy training for?");
    assert_eq!(lines[1]["haystack"], "tiny-a");
    // the control for the 4th slot of tiny-a wraps to tiny-b's first question
    let unrelated: Vec<&Value> = lines.iter().filter(|l| l["group"] == "unrelated").collect();
    assert_eq!(unrelated[3]["question"], "What race is Cy training for?");
    assert_eq!(unrelated[4]["question"], "What instrument is Ana learning?");
    assert_eq!(unrelated[4]["haystack"], "tiny-b");
    let multi = lines.iter().find(|l| l["category"] == 1 && l["group"] == "answerable").unwrap();
    assert_eq!(multi["evidence"], serde_json::json!(["D2:2", "D2:3"]));

    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"), "not a PNG");
    let table = std::fs::read_to_string(&table).unwrap();
    assert_eq!(table.lines().count(), 2 + 14);
    assert!(table.lines().next().unwrap().contains("silence adversarial"));

    // Named explicitly, walked best score first (the daemon's order), the vectors from the cache.
    let (ok, r2, err) = run(&[
        "interject",
        "--data",
        s(&data),
        "--dataset",
        "locomo",
        "--order",
        "score",
        "--k",
        "5",
        "--cache",
        s(&cache),
        "--gate-from",
        "0.3",
        "--gate-to",
        "0.5",
        "--gate-step",
        "0.1",
    ]);
    assert!(ok, "{err}");
    assert_eq!(r2["dataset"], "locomo");
    assert_eq!(r2["config"]["order"], "score");
    assert_eq!(r2["config"]["chunks_embedded"], 0, "every turn from the shared cache");
    assert_eq!(r2["events"]["answerable"], 5);

    // A file neither format: a clear error naming the flag.
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"[{"id": 1}]"#).unwrap();
    let (ok, _, err) = run(&["interject", "--data", s(&other), "--cache", s(&cache)]);
    assert!(!ok);
    assert!(err.contains("--dataset"), "{err}");
}
