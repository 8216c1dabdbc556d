//! The harness end to end on tiny fixtures, through the real binary, engine and model.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn run(args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_amber-eval")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.success(), report, stderr)
}

#[test]
fn longmemeval_end_to_end_with_report_rankings_and_cache() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let cache = dir.path().join("cache.db");
    let out = dir.path().join("r.json");
    let rankings = dir.path().join("rankings.jsonl");
    let data = fixture("longmemeval_tiny.json");
    let (ok, r, err) = run(&[
        "longmemeval",
        "--data",
        data.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--rankings",
        rankings.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for key in [
        "dataset",
        "data_file",
        "data_sha256",
        "n_questions",
        "n_scored",
        "granularity",
        "mode",
        "config",
        "metrics",
        "per_type",
        "wall_seconds",
        "embed_seconds",
    ] {
        assert!(r.get(key).is_some(), "report lacks {key}");
    }
    let written: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    assert_eq!(r["n_questions"], 3);
    assert_eq!(r["n_scored"], 2, "the abstention question is skipped");
    assert_eq!(r["config"]["model"], "all-MiniLM-L6-v2-q8+single");
    // q1 has one obvious gold session; q2 two marathon sessions among four.
    assert_eq!(r["metrics"]["recall_any@1"], 1.0, "{r:#}");
    assert_eq!(r["metrics"]["recall_all@3"], 1.0, "{r:#}");
    assert_eq!(r["metrics"]["recall_all@1"], 0.5, "q2 cannot have both gold sessions at rank 1");
    assert_eq!(r["per_type"]["multi-session"]["recall_all@3"], 1.0);
    let lines: Vec<Value> = std::fs::read_to_string(&rankings)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["question_id"], "tiny_q1");
    assert_eq!(lines[0]["ranked"][0], "answer_tq1_1");
    assert!(r["config"]["chunks_embedded"].as_u64().unwrap() > 0);

    // A second run, in a fresh store, with another fusion setting embeds nothing new:
    // the vectors come from the shared cache.
    let (ok, r2, err) = run(&[
        "longmemeval",
        "--data",
        data.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--rrf-k",
        "10",
        "--mode",
        "bm25",
    ]);
    assert!(ok, "{err}");
    assert_eq!(r2["config"]["chunks_embedded"], 0);
    assert_eq!(r2["mode"], "bm25");

    // Turn level: turns are scored at session level.
    let (ok, r3, err) = run(&[
        "longmemeval",
        "--data",
        data.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--granularity",
        "turn",
    ]);
    assert!(ok, "{err}");
    assert_eq!(r3["granularity"], "turn");
    assert_eq!(r3["metrics"]["recall_any@1"], 1.0, "{r3:#}");
}

#[test]
fn locomo_end_to_end_counts_quirks() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache.db");
    let data = fixture("locomo_tiny.json");
    let (ok, r, err) = run(&[
        "locomo",
        "--data",
        data.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--granularity",
        "turn",
        "--k",
        "1,2",
    ]);
    assert!(ok, "{err}");
    assert_eq!(r["n_questions"], 5);
    assert_eq!(r["quirks"]["empty_evidence"], 1);
    assert_eq!(r["quirks"]["malformed_evidence"], 1);
    assert_eq!(r["quirks"]["missing_turns"], 1);
    assert_eq!(r["quirks"]["integer_answers"], 1);
    // scored: cello, parrot, kitchen (two evidence turns); empty and dangling ones skipped
    assert_eq!(r["n_scored"], 3, "{r:#}");
    let r1 = r["metrics"]["recall@1"].as_f64().unwrap();
    let r2 = r["metrics"]["recall@2"].as_f64().unwrap();
    assert!(r1 >= 2.0 / 3.0 - 1e-9 && r2 >= r1, "{r:#}");
    assert!(r["per_type"]["4-single-hop"].is_object());
}

#[test]
fn locomo_with_graph_expansion_builds_the_graph_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache.db");
    let data = fixture("locomo_tiny.json");
    let args = |expand: &'static str| {
        let mut v = vec!["locomo", "--data", data.to_str().unwrap(), "--cache", cache.to_str().unwrap()];
        v.extend(["--granularity", "turn", "--k", "1,2", "--expand", expand]);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run_with = |e| {
        let a = args(e);
        run(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (ok, r, err) = run_with("graph");
    assert!(ok, "{err}");
    assert_eq!(r["config"]["expand"], "graph");
    // the two speakers at least, through EngineWriter::kg_add
    assert!(r["config"]["graph"]["entities"].as_u64().unwrap() >= 2, "{r:#}");
    assert!(r["config"]["graph"]["questions_with_graph_hits"].is_u64(), "{r:#}");
    assert_eq!(r["n_scored"], 3);
    assert!(r["metrics"]["recall@2"].as_f64().is_some());
    let (ok, _, err) = run_with("everything");
    assert!(!ok && err.contains("--expand"), "{err}");
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let (ok, _, err) = run(&["longmemeval", "--data", "/nonexistent/lme.json"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/lme.json"), "{err}");
}

#[test]
fn interject_end_to_end_report_rates_plot_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache.db");
    let out = dir.path().join("interject.json");
    let png = dir.path().join("curve.png");
    let table = dir.path().join("table.md");
    let records = dir.path().join("events.jsonl");
    let data = fixture("longmemeval_tiny.json");
    let (ok, r, err) = run(&[
        "interject",
        "--data",
        data.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--k",
        "2",
        "--gate-from",
        "0.2",
        "--gate-to",
        "0.8",
        "--gate-step",
        "0.1",
        "--bands",
        "0,0.1",
        "--out",
        out.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
        "--table",
        table.to_str().unwrap(),
        "--rankings",
        records.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for key in [
        "dataset",
        "study",
        "data_file",
        "data_sha256",
        "n_questions",
        "events",
        "gate_score",
        "definitions",
        "config",
        "gates",
        "bands",
        "reference_gate_0_72_band_0_10",
        "target",
        "recommendation",
        "rows",
        "wall_seconds",
        "embed_seconds",
    ] {
        assert!(r.get(key).is_some(), "report lacks {key}");
    }
    let written: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    // 2 answerable questions, 1 abstention, and each question against the previous haystack
    assert_eq!(r["events"]["answerable"], 2, "{:#}", r["events"]);
    assert_eq!(r["events"]["abstention"], 1);
    assert_eq!(r["events"]["unrelated"], 3);
    assert_eq!(r["config"]["k"], 2);
    assert_eq!(r["gates"].as_array().unwrap().len(), 7);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "7 gates x 2 bands");
    let in_unit = |v: &Value, what: &str| {
        if !v.is_null() {
            let x = v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"));
            assert!((0.0..=1.0).contains(&x), "{what} = {x}");
        }
    };
    for row in rows {
        for judge in ["judge_off", "judge_oracle"] {
            let o = &row[judge];
            in_unit(&o["precision_with_negatives"], "precision_with_negatives");
            for (group, rates) in o["groups"].as_object().unwrap() {
                for key in ["fire_rate", "silence_rate", "precision", "precision_first", "band_rate"] {
                    assert!(rates.get(key).is_some(), "{group} lacks {key}");
                    in_unit(&rates[key], &format!("{judge} {group} {key}"));
                }
                let fired = rates["fired"].as_u64().unwrap();
                assert!(rates["fired_gold"].as_u64().unwrap() <= fired);
            }
            // negatives have no gold: whatever fires there is wrong
            assert_eq!(o["groups"]["unrelated"]["fired_gold"], 0);
        }
        // the oracle only adds gold memories: it never fires less, never fires more on negatives
        let off = &row["judge_off"]["groups"];
        let or = &row["judge_oracle"]["groups"];
        assert!(or["answerable"]["fire_rate"].as_f64() >= off["answerable"]["fire_rate"].as_f64());
        assert_eq!(or["unrelated"]["fire_rate"], off["unrelated"]["fire_rate"]);
    }
    // the lowest gate fires more often than the highest
    let fire = |row: &Value| row["judge_off"]["groups"]["answerable"]["fire_rate"].as_f64().unwrap();
    assert!(fire(&rows[0]) >= fire(&rows[6]));
    // q1 ("What breed is my dog Biscuit?") finds its corgi session first
    let lines: Vec<Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["question_id"], "tiny_q1");
    assert_eq!(lines[0]["candidates"][0]["ids"][0], "answer_tq1_1");
    assert_eq!(lines[0]["candidates"][0]["gold"], true);
    assert!(lines[0]["candidates"][0]["cosine"].as_f64().unwrap() > 0.3);
    // a recommendation (or null when no setting meets the target) for each cap
    for cap in ["max_fire", "one_memory"] {
        let rec = &r["recommendation"][cap];
        assert!(rec.is_null() || rec["gate"].is_f64(), "{rec}");
    }
    assert!(r["target"]["met_judge_off"].is_array());
    let png = std::fs::read(&png).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let table = std::fs::read_to_string(&table).unwrap();
    assert_eq!(table.lines().count(), 2 + 14);
}
