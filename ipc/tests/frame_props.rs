//! Property tests of the framer and request parser: the invariants the cargo-fuzz target
//! (`fuzz/fuzz_targets/frame_and_parse.rs`) checks, on stable and in CI.

#[path = "support/frame_check.rs"]
mod frame_check;

use amber_ipc::ErrorKind;
use amber_ipc::protocol::ErrorObject;
use proptest::prelude::*;
use serde_json::{Value, json};

/// One line's content (no newline): a request, near-request or noise.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let id = prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        any::<i64>().prop_map(|n| Some(json!(n))),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| Some(json!(f))),
        "[a-z0-9]{0,8}".prop_map(|s| Some(json!(s))),
        Just(Some(json!({}))),
        Just(Some(json!([1]))),
    ];
    let params = prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        "[a-z]{0,6}".prop_map(|s| Some(json!({ "text": s, "k": 3 }))),
        Just(Some(json!([1, 2]))),
        Just(Some(json!("x"))),
    ];
    let jsonrpc =
        prop_oneof![Just(Some(json!("2.0"))), Just(Some(json!("1.0"))), Just(None), Just(Some(json!(2)))];
    let method = prop_oneof!["[a-z_]{0,12}".prop_map(|s| Some(json!(s))), Just(None), Just(Some(json!(5)))];
    let request = (jsonrpc, id, method, params, any::<bool>()).prop_map(|(v, id, m, p, crlf)| {
        let mut obj = serde_json::Map::new();
        for (k, val) in [("jsonrpc", v), ("id", id), ("method", m), ("params", p)] {
            if let Some(val) = val {
                obj.insert(k.into(), val);
            }
        }
        let mut bytes = serde_json::to_vec(&Value::Object(obj)).unwrap();
        if crlf {
            bytes.push(b'\r');
        }
        bytes
    });
    prop_oneof![
        4 => request,
        1 => proptest::collection::vec(any::<u8>(), 0..80)
            .prop_map(|v| v.into_iter().filter(|&b| b != b'\n').collect()),
        1 => (1usize..300).prop_map(|n| vec![b'x'; n]),
        1 => Just(b"[1,2]".to_vec()),
        1 => Just(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\xff\"}".to_vec()),
    ]
}

/// A stream: lines joined by newlines, maybe ending mid-line.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    (proptest::collection::vec(line(), 0..8), any::<bool>()).prop_map(|(lines, newline_at_end)| {
        let mut out = lines.join(&b'\n');
        if newline_at_end {
            out.push(b'\n');
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn framer_and_parser_hold_on_structured_streams(
        max in 0usize..400,
        chunks in proptest::collection::vec(1usize..64, 0..6),
        payload in stream(),
    ) {
        frame_check::check(max, &chunks, &payload);
    }

    #[test]
    fn framer_and_parser_hold_on_raw_fuzz_input(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        frame_check::run(&data);
    }

    #[test]
    fn any_line_parses_or_gets_a_known_kind(line in proptest::collection::vec(any::<u8>(), 0..256)) {
        frame_check::check_line(&line);
    }
}

#[test]
fn error_kinds_parse_back() {
    for &k in ErrorKind::ALL {
        assert_eq!(ErrorKind::parse(k.as_str()), Some(k));
        let e = ErrorObject::new(k, "m");
        let back: ErrorObject = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!((back.kind(), back.code), (Some(k), k.code()));
    }
}
