//! The OpenAI-compatible judge against a real HTTP server on 127.0.0.1 speaking the chat
//! completions protocol, and `from_config`.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use amber_tiers::judge::{
    Judge, JudgeConfig, JudgeKind, OpenAiJudge, PROMPT_MAX_CHARS, Verdict, from_config, parse_answer,
};
use amber_tiers::testing::{Reply, always};

const DEADLINE: Duration = Duration::from_secs(5);

fn judge_for(url: &str) -> OpenAiJudge {
    OpenAiJudge::new(url, "test-model", None).unwrap()
}

fn assert_failed(v: &Verdict, contains: &str) {
    match v {
        Verdict::Failed { reason } => {
            assert!(reason.to_lowercase().contains(contains), "reason {reason:?} lacks {contains:?}")
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[test]
fn yes_answer_is_yes() {
    let model = always(Reply::answer("Yes."));
    let v =
        judge_for(&model.url).judge("cargo build fails with E0502", "E0502: borrow the map once", DEADLINE);
    assert_eq!(v, Verdict::Yes { score: None });
}

#[test]
fn no_answer_is_no() {
    let model = always(Reply::answer("  no"));
    let v = judge_for(&model.url).judge("cargo build fails with E0502", "the user likes tea", DEADLINE);
    assert_eq!(v, Verdict::No { score: None });
}

#[test]
fn other_answer_is_failed() {
    let model = always(Reply::answer("Maybe, it depends."));
    let v = judge_for(&model.url).judge("event", "memory", DEADLINE);
    assert_failed(&v, "neither yes nor no");
}

#[test]
fn request_carries_model_messages_and_no_key_by_default() {
    let model = always(Reply::answer("yes"));
    let event = "running migrations on the staging database";
    let memory = "staging needs ALEMBIC_CONFIG=staging.ini before migrating";
    let judge = judge_for(&model.url);
    assert_eq!(judge.name(), "openai:test-model");
    assert!(judge.judge(event, memory, DEADLINE).is_yes());
    let seen = model.request(0);
    assert_eq!(seen.line, "POST /v1/chat/completions HTTP/1.1");
    assert!(seen.header("content-type").unwrap().starts_with("application/json"));
    assert_eq!(seen.header("authorization"), None);
    let body = seen.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["temperature"], 0);
    assert!(body["max_tokens"].as_u64().unwrap() <= 16);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(messages[0]["content"].as_str().unwrap().contains("yes or no"));
    let user = messages.last().unwrap();
    assert_eq!(user["role"], "user");
    let text = user["content"].as_str().unwrap();
    assert!(text.contains(event) && text.contains(memory), "{text}");
}

#[test]
fn key_from_the_named_env_var_is_sent_as_bearer() {
    // PATH is always set; the tests forbid unsafe code, so they cannot set a variable.
    let key = std::env::var("PATH").unwrap();
    let model = always(Reply::answer("no"));
    let cfg = JudgeConfig {
        kind: JudgeKind::Openai,
        url: Some(format!("{}/", model.url)),
        model: Some("m".into()),
        api_key_env: Some("PATH".into()),
        ..JudgeConfig::default()
    };
    let judge = from_config(&cfg).unwrap();
    assert_eq!(judge.judge("e", "m", DEADLINE), Verdict::No { score: None });
    let seen = model.request(0);
    assert_eq!(seen.header("authorization").unwrap(), format!("Bearer {}", key.trim()));
    assert_eq!(seen.line, "POST /v1/chat/completions HTTP/1.1");
}

#[test]
fn long_texts_are_truncated_in_the_prompt() {
    let model = always(Reply::answer("yes"));
    let long = "é".repeat(PROMPT_MAX_CHARS * 3);
    assert!(judge_for(&model.url).judge(&long, &long, DEADLINE).is_yes());
    let body = model.request(0).json();
    let text = body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(text.chars().count() < PROMPT_MAX_CHARS * 2 + 500, "{}", text.len());
    assert!(text.contains("[... truncated]"));
}

#[test]
fn slow_server_fails_within_the_deadline() {
    let model = always(Reply::after(Duration::from_secs(4), Reply::answer("yes")));
    let deadline = Duration::from_millis(300);
    let t = Instant::now();
    let v = judge_for(&model.url).judge("e", "m", deadline);
    let took = t.elapsed();
    assert_failed(&v, "timed out");
    assert!(took < deadline + Duration::from_secs(1), "took {took:?}");
}

#[test]
fn trickling_body_fails_within_the_deadline() {
    let model = always(Reply::Trickle);
    let deadline = Duration::from_millis(400);
    let t = Instant::now();
    let v = judge_for(&model.url).judge("e", "m", deadline);
    let took = t.elapsed();
    assert_failed(&v, "timed out");
    assert!(took < deadline + Duration::from_secs(1), "took {took:?}");
}

#[test]
fn server_error_is_failed() {
    let model = always(Reply::Raw(500, r#"{"error":"model not loaded"}"#.into()));
    let v = judge_for(&model.url).judge("e", "m", DEADLINE);
    assert_failed(&v, "http 500");
    assert_failed(&v, "model not loaded");
}

#[test]
fn garbage_body_is_failed() {
    let model = always(Reply::Raw(200, "<html>not json</html>".into()));
    assert_failed(&judge_for(&model.url).judge("e", "m", DEADLINE), "not json");
}

#[test]
fn json_without_choices_is_failed() {
    let model = always(Reply::Raw(200, r#"{"object":"chat.completion","choices":[]}"#.into()));
    assert_failed(&judge_for(&model.url).judge("e", "m", DEADLINE), "choices[0].message.content");
}

#[test]
fn connection_refused_is_failed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let t = Instant::now();
    let v = judge_for(&url).judge("e", "m", DEADLINE);
    assert!(matches!(v, Verdict::Failed { .. }), "{v:?}");
    assert!(t.elapsed() < DEADLINE);
}

#[test]
fn answers_are_parsed_by_their_first_word() {
    for (s, want) in [
        ("yes", Some(true)),
        ("Yes.", Some(true)),
        ("  YES\n", Some(true)),
        ("**Yes**, it helps", Some(true)),
        ("\"no\"", Some(false)),
        ("No.", Some(false)),
        ("<think>the memory is about tea</think>\nNo", Some(false)),
        ("<think>unfinished", None),
        ("Not really", None),
        ("yesterday", None),
        ("", None),
        ("maybe", None),
    ] {
        assert_eq!(parse_answer(s), want, "{s:?}");
    }
}

#[test]
fn from_config_off_is_off() {
    let judge = from_config(&JudgeConfig::default()).unwrap();
    assert_eq!(judge.name(), "off");
    assert_eq!(judge.judge("e", "m", DEADLINE), Verdict::No { score: None });
}

#[test]
fn from_config_openai_needs_url_model_and_a_set_key_var() {
    let base = JudgeConfig {
        kind: JudgeKind::Openai,
        url: Some("http://127.0.0.1:11434/v1".into()),
        model: Some("qwen2.5:0.5b".into()),
        ..JudgeConfig::default()
    };
    let ok = from_config(&base).unwrap();
    assert_eq!(ok.name(), "openai:qwen2.5:0.5b");

    let err = from_config(&JudgeConfig { url: None, ..base.clone() }).err().unwrap();
    assert!(err.contains("judge.url"), "{err}");
    let err = from_config(&JudgeConfig { model: Some(" ".into()), ..base.clone() }).err().unwrap();
    assert!(err.contains("judge.model"), "{err}");
    let err =
        from_config(&JudgeConfig { url: Some("127.0.0.1:11434".into()), ..base.clone() }).err().unwrap();
    assert!(err.contains("http://"), "{err}");
    let var = "AMBER_TEST_JUDGE_KEY_THAT_IS_NEVER_SET";
    assert!(std::env::var_os(var).is_none());
    let err = from_config(&JudgeConfig { api_key_env: Some(var.into()), ..base }).err().unwrap();
    assert!(err.contains(var) && err.contains("not set"), "{err}");
}

#[test]
fn from_config_reranker_says_none_is_installed() {
    let cfg = JudgeConfig { kind: JudgeKind::Reranker, ..JudgeConfig::default() };
    let err = from_config(&cfg).err().unwrap();
    assert!(err.contains("no reranker model is installed"), "{err}");
}

#[test]
fn debug_never_shows_the_key() {
    let judge = OpenAiJudge::new("http://127.0.0.1:1/v1", "m", Some("sk-secret-123".into())).unwrap();
    let shown = format!("{judge:?}");
    assert!(!shown.contains("sk-secret-123") && shown.contains("<set>"), "{shown}");
}
