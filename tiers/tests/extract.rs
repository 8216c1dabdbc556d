//! The OpenAI-compatible extractor against a real HTTP server on 127.0.0.1 speaking the
//! chat completions protocol, its defensive parsing, and `from_config`.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use amber_tiers::extract::{
    ExtractConfig, ExtractKind, Extractor, OpenAiExtractor, from_config, parse_facts,
};
use amber_tiers::testing::{Reply, always};

/// 2024-03-01 in ms.
const M2024: i64 = 1_709_251_200_000;

fn extractor(url: &str) -> OpenAiExtractor {
    OpenAiExtractor::new(url, "test-extractor", None, 10, 0.5).unwrap()
}

const FACTS: &str = r#"{"facts": [
  {"subject": "Ada Lovelace", "predicate": "works on", "object": "Falcon", "valid_from": "2024-03-01", "confidence": 0.9},
  {"subject": "Falcon", "predicate": "written_in", "literal": "Rust", "confidence": 0.8}
]}"#;

const TEXT: &str = "Ada Lovelace joined the Falcon team on 2024-03-01; Falcon is written in Rust.";

#[test]
fn good_json_gives_facts_and_the_request_carries_the_model_and_the_text() {
    let model = always(Reply::answer(FACTS));
    let e = extractor(&model.url).extract(TEXT, Duration::from_secs(5)).unwrap();
    assert_eq!(e.facts.len(), 2, "{e:?}");
    let ada = &e.facts[0];
    assert_eq!((ada.subject.as_str(), ada.predicate.as_str()), ("Ada Lovelace", "works on"));
    assert_eq!((ada.object.as_deref(), ada.literal.as_deref()), (Some("Falcon"), None));
    assert_eq!((ada.valid_from, ada.confidence), (Some(M2024), Some(0.9)));
    assert!(ada.sources.is_empty() && !ada.supersede);
    assert_eq!(e.facts[1].literal.as_deref(), Some("Rust"));
    assert_eq!((e.skipped, e.low_confidence, e.over_cap), (0, 0, 0));

    let seen = model.request(0);
    assert!(seen.line.starts_with("POST /v1/chat/completions "), "{seen:?}");
    assert!(
        !seen.headers.iter().any(|h| h.to_ascii_lowercase().starts_with("authorization")),
        "no key by default"
    );
    let json: serde_json::Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(json["model"], "test-extractor");
    assert_eq!(json["stream"], false);
    let messages = json["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert!(messages[0]["content"].as_str().unwrap().contains("\"facts\""));
    assert!(messages[1]["content"].as_str().unwrap().contains(TEXT));
}

#[test]
fn fenced_or_prose_wrapped_json_gives_facts() {
    let answers = [
        format!("```json\n{FACTS}\n```"),
        format!("Sure! Here are the facts I found:\n\n{FACTS}\n\nLet me know if you need more."),
        format!("<think>The text names Ada and Falcon [1].</think>\nHere you go: ```\n{FACTS}\n``` Done."),
        format!("Facts [2 of them]: {}", FACTS.replace("{\"facts\": ", "").trim_end_matches('}')),
    ];
    for answer in answers {
        let model = always(Reply::answer(answer.clone()));
        let e = extractor(&model.url)
            .extract(TEXT, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(e.facts.len(), 2, "{answer}: {e:?}");
    }
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let model = always(Reply::answer("I could not find any facts, sorry."));
    let err = extractor(&model.url).extract(TEXT, Duration::from_secs(5)).unwrap_err();
    assert!(err.contains("no JSON facts"), "{err}");

    let model = always(Reply::Raw(200, "<html>not json</html>".into()));
    let err = extractor(&model.url).extract(TEXT, Duration::from_secs(5)).unwrap_err();
    assert!(err.contains("not JSON"), "{err}");

    let model = always(Reply::Raw(500, "{\"error\": \"model not loaded\"}".into()));
    let err = extractor(&model.url).extract(TEXT, Duration::from_secs(5)).unwrap_err();
    assert!(err.contains("HTTP 500") && err.contains("model not loaded"), "{err}");

    let model = always(Reply::Raw(200, "{\"choices\": []}".into()));
    let err = extractor(&model.url).extract(TEXT, Duration::from_secs(5)).unwrap_err();
    assert!(err.contains("choices[0]"), "{err}");

    // Hostile or broken shapes: never a panic; bad items are skipped and counted.
    for answer in [
        "",
        "{",
        "[",
        "{\"facts\": 3}",
        "[1, 2, 3]",
        "```",
        "<think>never done",
        "{\"facts\": [{\"subject\": {}}",
        "\u{0}\u{1}[{]}",
    ] {
        let r = parse_facts(answer, 10, 0.5);
        assert!(r.as_ref().is_err() || r.as_ref().unwrap().facts.is_empty(), "{answer:?}: {r:?}");
    }
    let e = parse_facts(
        r#"{"facts": [{"subject": "a"}, {"predicate": "p"}, 7, {"subject": "x", "predicate": "p", "object": "y", "confidence": 9}]}"#,
        10,
        0.5,
    )
    .unwrap();
    assert_eq!((e.facts.len(), e.skipped), (0, 4));
    let none = parse_facts("{\"facts\": []}", 10, 0.5).unwrap();
    assert_eq!(none.facts.len() + none.skipped, 0);
}

#[test]
fn many_facts_are_capped_and_low_confidence_dropped() {
    let items: Vec<String> = (0..30)
        .map(|i| {
            format!(r#"{{"subject": "svc{i}", "predicate": "port", "literal": "{i}", "confidence": 0.{i}}}"#)
        })
        .collect();
    let answer = format!("{{\"facts\": [{}]}}", items.join(","));
    let e = parse_facts(&answer, 5, 0.5).unwrap();
    assert_eq!(e.facts.len(), 5);
    assert!(e.facts.iter().all(|f| f.confidence.unwrap() >= 0.5));
    assert_eq!(e.low_confidence + e.over_cap + e.facts.len(), 30);
}

#[test]
fn a_slow_server_fails_within_the_deadline() {
    let model = always(Reply::after(Duration::from_secs(3), Reply::answer("{\"facts\": []}")));
    let t0 = Instant::now();
    let err = extractor(&model.url).extract(TEXT, Duration::from_millis(300)).unwrap_err();
    assert!(t0.elapsed() < Duration::from_millis(1500), "{:?}", t0.elapsed());
    assert!(err.contains("timed out"), "{err}");
}

#[test]
fn connection_refused_is_an_error() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err =
        extractor(&format!("http://127.0.0.1:{port}/v1")).extract(TEXT, Duration::from_secs(2)).unwrap_err();
    assert!(err.contains("refused") || err.contains("failed"), "{err}");
}

#[test]
fn from_config_off_is_off_and_openai_needs_url_and_model() {
    let off = from_config(&ExtractConfig::default()).unwrap();
    assert_eq!(off.name(), "off");
    assert!(off.extract(TEXT, Duration::ZERO).unwrap().facts.is_empty());

    let base = ExtractConfig {
        kind: ExtractKind::Openai,
        url: Some("http://127.0.0.1:1/v1/".into()),
        model: Some("m".into()),
        ..ExtractConfig::default()
    };
    let ok = from_config(&base).unwrap();
    assert_eq!(ok.name(), "openai:m");
    let err = from_config(&ExtractConfig { url: None, ..base.clone() }).err().unwrap();
    assert!(err.contains("extract.url"), "{err}");
    let err = from_config(&ExtractConfig { model: Some(" ".into()), ..base.clone() }).err().unwrap();
    assert!(err.contains("extract.model"), "{err}");
    let err =
        from_config(&ExtractConfig { url: Some("127.0.0.1:11434".into()), ..base.clone() }).err().unwrap();
    assert!(err.contains("http://"), "{err}");
    let var = "AMBER_TEST_EXTRACT_KEY_THAT_IS_NOT_SET";
    let err = from_config(&ExtractConfig { api_key_env: Some(var.into()), ..base }).err().unwrap();
    assert!(err.contains(var) && err.contains("not set"), "{err}");
}

#[test]
fn debug_never_shows_the_key() {
    let e =
        OpenAiExtractor::new("http://127.0.0.1:1/v1", "m", Some("sk-secret-456".into()), 10, 0.5).unwrap();
    let shown = format!("{e:?}");
    assert!(!shown.contains("sk-secret-456") && shown.contains("<set>"), "{shown}");
    assert_eq!(e.endpoint(), "http://127.0.0.1:1/v1/chat/completions");
}
