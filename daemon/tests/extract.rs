//! Fact extraction from captures over the real socket: a fake OpenAI-compatible server
//! on 127.0.0.1 proposes a fact, and it shows up in the graph with the captured memory as
//! its source, without holding up the capture; a repeat is not extracted again (the
//! counts, kept before a capture is answered, say so without a sleep). With extraction
//! off no extractor runs and, once the capture is indexed, nothing was called;
//! an `openai` extractor without a URL refuses to start.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use amber_core::graph::FactObject;
use amber_ipc::Client;
use amber_ipc::protocol::{CaptureParams, CaptureResult, KgEntityParams};

use crate::common;
use common::*;

const ANSWER: &str = r#"Here are the facts:
```json
{"facts": [
  {"subject": "Ada Lovelace", "predicate": "leads", "object": "Falcon", "confidence": 0.9},
  {"subject": "Falcon", "predicate": "", "object": "nothing"}
]}
```"#;

const TEXT: &str = "Standup notes: Ada Lovelace leads the Falcon parser rewrite from now on.\n\
AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE was pasted by mistake.";

fn capture(c: &mut Client, text: &str) -> CaptureResult {
    c.capture(&CaptureParams {
        content: text.into(),
        scope: "work".parse().unwrap(),
        source: Some("turn:user".into()),
        session_id: None,
        author: None,
        kind: None,
    })
    .unwrap()
}

fn about(name: &str) -> KgEntityParams {
    KgEntityParams { scope: Some("work".parse().unwrap()), entity: name.into(), as_of: None }
}

#[test]
fn a_capture_is_extracted_in_the_background_into_facts_sourced_to_its_memory() {
    let (release, held) = mpsc::channel();
    let fake = fake_chat(ANSWER, move || {
        let _ = held.recv_timeout(Duration::from_secs(20));
    });
    let (d, _dir) = with_config(&format!(
        "[extract]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"test-extractor\"\ntimeout_ms = 15000\n",
        fake.url
    ));
    let mut c = d.client();
    assert_eq!(c.status().unwrap().extract.unwrap().extractor, "openai:test-extractor");

    // The capture is answered while the model is still "thinking" (the server holds its answer).
    let t0 = Instant::now();
    let r = capture(&mut c, TEXT);
    assert!(t0.elapsed() < Duration::from_secs(5), "the capture waited for extraction: {:?}", t0.elapsed());
    assert!(r.filed && r.redacted == 1, "{r:?}");
    let memory = r.memory.unwrap();
    assert!(memory.created);
    assert_eq!(fake.answered.load(Ordering::SeqCst), 0);
    release.send(()).unwrap();

    // The fact appears, with the captured memory as its source.
    let deadline = Instant::now() + Duration::from_secs(10);
    let facts = loop {
        let q = c.kg_query(&about("ada lovelace")).unwrap();
        if !q.facts.is_empty() {
            break q.facts;
        }
        assert!(Instant::now() < deadline, "no extracted fact after 10 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(facts.len(), 1, "{facts:?}");
    let f = &facts[0];
    assert_eq!(f.predicate, "leads");
    assert!(matches!(&f.object, FactObject::Entity(o) if o.name == "Falcon"), "{:?}", f.object);
    assert_eq!(f.sources, vec![memory.id.clone()]);
    assert!((f.confidence - 0.9).abs() < 1e-6);

    // The request: the model, and the stored (redacted) text, never the planted key.
    let sent = fake.bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    let body: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
    assert_eq!(body["model"], "test-extractor");
    let prompt = body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("Ada Lovelace leads the Falcon parser rewrite"), "{prompt}");
    assert!(!sent[0].contains("AKIAIOSFODNN7EXAMPLE") && prompt.contains("[REDACTED:"), "{prompt}");

    // The counters move just after the write that made the fact visible: wait for them.
    let deadline = Instant::now() + Duration::from_secs(5);
    let stats = loop {
        let stats = c.status().unwrap().extract.unwrap();
        if stats.facts_added > 0 || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!((stats.runs, stats.failed, stats.proposed, stats.facts_added), (1, 0, 1, 1), "{stats:?}");
    assert_eq!(stats.items_dropped, 1, "the item with no predicate: {stats:?}");

    // The same text again is the same memory: not extracted twice. Whether a capture is
    // extracted is decided before its answer (a run or a busy skip is counted then), so
    // the counts just after it say so without waiting; a new text is.
    drop(release); // from here the server answers at once
    let again = capture(&mut c, TEXT);
    assert!(!again.memory.unwrap().created);
    let stats = c.status().unwrap().extract.unwrap();
    assert_eq!((stats.runs, stats.skipped_busy), (1, 0), "{stats:?}");
    let other = capture(&mut c, "Grace Hopper reviews the Falcon parser rewrite this week.");
    assert!(other.memory.unwrap().created);
    let stats = c.status().unwrap().extract.unwrap();
    assert_eq!((stats.runs, stats.skipped_busy), (2, 0), "{stats:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while fake.bodies.lock().unwrap().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let bodies = fake.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "one request per new text: {bodies:?}");
    assert!(bodies[1].contains("Grace Hopper") && !bodies[1].contains("Ada Lovelace"), "{}", bodies[1]);
}

#[test]
fn with_extraction_off_nothing_is_called() {
    let fake = fake_chat(ANSWER, || {});
    let (d, _dir) = with_config(&format!(
        "[extract]\nkind = \"off\"\nurl = \"{}\"\nmodel = \"test-extractor\"\n",
        fake.url
    ));
    let mut c = d.client();
    // No extractor runs at all (the worker is not started): nothing could call later.
    assert!(c.status().unwrap().extract.is_none());
    let r = capture(&mut c, TEXT);
    assert!(r.filed);
    // Once the capture is indexed (found by recall), it has been through everything a
    // capture goes through; the endpoint was never called.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let hits = c
            .recall(&amber_ipc::protocol::RecallParams::new("who leads the Falcon parser rewrite"))
            .unwrap()
            .hits;
        if hits.iter().any(|h| h.memory.content.contains("Ada Lovelace")) {
            break;
        }
        assert!(Instant::now() < deadline, "the capture was never indexed");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(fake.bodies.lock().unwrap().is_empty(), "the endpoint was called");
    assert_eq!(fake.answered.load(Ordering::SeqCst), 0);
    assert!(c.kg_query(&about("ada lovelace")).unwrap().facts.is_empty());
    assert!(c.status().unwrap().extract.is_none());
}

#[test]
fn openai_extraction_without_a_url_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("no-config.toml"), "[extract]\nkind = \"openai\"\nmodel = \"m\"\n")
        .unwrap();
    let err = Daemon::start_in(dir.path(), &[]).err().expect("the daemon started");
    assert!(err.contains("extract.url"), "{err}");
}
