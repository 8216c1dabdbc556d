//! `amber-eval scale` end to end at a small size, through the real binary, engine and
//! model: the variants' vectors come from the cache (the model embeds only the bases),
//! a rerun grows the same store, and the HNSW check compares every vector.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn scale(store: &Path, memories: usize) -> Value {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/longmemeval_tiny.json");
    let out = Command::new(env!("CARGO_BIN_EXE_amber-eval"))
        .args(["scale", "--data", data.to_str().unwrap(), "--store", store.to_str().unwrap()])
        .args(["--bases", "7", "--samples", "6", "--memories", &memories.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn scale_grows_a_store_from_cached_variants_and_checks_hnsw_against_exact() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let r = scale(&store, 200);
    assert_eq!(r["memories"], 200);
    assert_eq!(r["vectors"], 200, "one vector a memory: {r}");
    let fill = &r["fill"];
    assert_eq!(fill["bases_with_vector"], 7);
    assert_eq!(fill["chunks_embedded"], 7, "only the bases go through the model: {fill}");
    assert_eq!(fill["variants_filed"], 193);
    let check = &r["hnsw_vs_exact"];
    assert_eq!(check["vectors_compared"], 200);
    let depths = check["by_ef"].as_array().unwrap();
    assert_eq!(depths.len(), 3, "the default depths 128, 256, 512: {check}");
    for d in depths {
        assert_eq!(d["all"]["queries"], 6);
        assert_eq!(d["questions"]["queries"], 3);
        let recall = d["all"]["recall_at_10"].as_f64().unwrap();
        assert!(recall > 0.9, "HNSW at 200 vectors finds the exact top 10: {d}");
        assert!(d["all"]["recall_at_10_ties_1e-3"].as_f64().unwrap() >= recall);
    }

    // A rerun grows the same store; nothing is embedded again.
    let r = scale(&store, 250);
    assert_eq!(r["memories"], 250);
    assert_eq!(r["fill"]["variants_filed"], 50);
    assert_eq!(r["fill"]["chunks_embedded"], 0, "{}", r["fill"]);
}
