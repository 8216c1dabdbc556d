//! The framer and request-parser invariants, shared by `ipc/tests/frame_props.rs` (proptest,
//! stable) and `fuzz/fuzz_targets/frame_and_parse.rs` (cargo-fuzz). Every check panics on
//! a violation.

use amber_ipc::ErrorKind;
use amber_ipc::frame::{Frame, Framer, parse_request};
use amber_ipc::protocol::Response;
use serde_json::Value;

/// The smallest frame limit [`run`] uses.
pub const MIN_MAX: usize = 64;
/// The largest frame limit [`run`] uses.
pub const MAX_MAX: usize = 4096;

/// Decodes a fuzz input and checks it: byte 0 picks the limit (`MIN_MAX..=MAX_MAX`),
/// byte 1 says how many of the next bytes (0..16) are chunk sizes (each `1..=256`, cycled;
/// none means one byte at a time), and the rest is the stream.
pub fn run(data: &[u8]) {
    let (&b0, rest) = data.split_first().unwrap_or((&0, &[]));
    let max = MIN_MAX + usize::from(b0) * (MAX_MAX - MIN_MAX) / 255;
    let (&n, rest) = rest.split_first().unwrap_or((&0, &[]));
    let (sizes, payload) = rest.split_at(usize::from(n % 16).min(rest.len()));
    let chunks: Vec<usize> = sizes.iter().map(|&s| usize::from(s) + 1).collect();
    check(max, &chunks, payload);
}

/// Feeds `payload` to a `Framer::new(max)` whole and in chunks of the given sizes (cycled;
/// empty means one byte at a time) and checks every invariant.
pub fn check(max: usize, chunks: &[usize], payload: &[u8]) {
    // whole buffer at once (feed still stops at each newline)
    let mut whole = Framer::new(max);
    let mut whole_frames = Vec::new();
    feed_all(&mut whole, payload, &mut whole_frames);

    // in chunks, with an empty feed between them
    let mut chunked = Framer::new(max);
    let mut chunked_frames = Vec::new();
    let mut rest = payload;
    let mut sizes = chunks.iter().copied().cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(1).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        feed_all(&mut chunked, chunk, &mut chunked_frames);
        assert_eq!(chunked.feed(&[]), (0, None), "an empty feed is a no-op");
        rest = tail;
    }
    assert_eq!(chunked_frames, whole_frames, "chunking changed the frames");
    assert_eq!(chunked.has_partial(), whole.has_partial());

    // a model: split on newlines; a line over the limit (counting a trailing \r) is skipped
    let mut segments: Vec<&[u8]> = payload.split(|&b| b == b'\n').collect();
    let last = segments.pop().unwrap_or_default();
    let expected: Vec<Frame> = segments
        .iter()
        .map(|s| match s.len() > max {
            true => Frame::TooLarge(s.len()),
            false => Frame::Line(s.strip_suffix(b"\r").unwrap_or(s).to_vec()),
        })
        .collect();
    assert_eq!(whole_frames, expected, "frames differ from the model");
    assert_eq!(whole.has_partial(), !last.is_empty());

    for frame in &whole_frames {
        match frame {
            Frame::Line(line) => {
                assert!(line.len() <= max, "a line of {} bytes over the limit {max}", line.len());
                assert!(!line.contains(&b'\n'), "a line holds a newline");
                check_line(line);
            }
            Frame::TooLarge(n) => assert!(*n > max, "TooLarge({n}) at limit {max}"),
        }
    }
}

/// Feeds all of `input`, checking what each call consumed.
fn feed_all(f: &mut Framer, mut input: &[u8], out: &mut Vec<Frame>) {
    while !input.is_empty() {
        let (n, frame) = f.feed(input);
        assert!(n > 0, "consumed nothing of {} bytes", input.len());
        assert!(n <= input.len(), "consumed {n} of {} bytes", input.len());
        match frame {
            Some(frame) => {
                assert_eq!(input[n - 1], b'\n', "a frame not ended by a newline");
                assert!(!input[..n - 1].contains(&b'\n'), "consumed past a newline");
                out.push(frame);
            }
            None => {
                assert_eq!(n, input.len(), "stopped early without a frame");
                assert!(!input.contains(&b'\n'), "a newline without a frame");
            }
        }
        input = &input[n..];
    }
}

fn is_id(v: &Value) -> bool {
    v.is_string() || v.is_number() || v.is_null()
}

/// `parse_request` on one line: never panics; a request has a string method and object
/// or null params and survives a round trip; an error has a known kind that survives the
/// wire.
pub fn check_line(line: &[u8]) {
    match parse_request(line) {
        Ok(req) => {
            assert_eq!(req.jsonrpc, "2.0");
            assert!(req.params.is_object() || req.params.is_null(), "params {:?}", req.params);
            assert!(req.id.as_ref().is_none_or(is_id), "id {:?}", req.id);
            let wire = serde_json::to_vec(&req).expect("a request serializes");
            let again = parse_request(&wire).expect("a serialized request parses");
            // not compared whole: serde_json may move a float by an ulp on a re-parse
            assert_eq!(again.method, req.method);
            assert_eq!(again.id.is_some(), req.id.is_some());
            assert_eq!(again.params.is_object(), req.params.is_object());
        }
        Err(bad) => {
            let kind = bad.error.kind().expect("a known error kind");
            assert!(
                matches!(
                    kind,
                    ErrorKind::InvalidUtf8
                        | ErrorKind::ParseError
                        | ErrorKind::InvalidRequest
                        | ErrorKind::InvalidParams
                ),
                "unexpected kind {kind:?}"
            );
            assert_eq!(bad.error.code, kind.code());
            assert_eq!(ErrorKind::parse(kind.as_str()), Some(kind));
            assert!(is_id(&bad.id), "error id {:?}", bad.id);
            if std::str::from_utf8(line).is_err() {
                assert_eq!(kind, ErrorKind::InvalidUtf8);
            }
            let wire = Response::err(bad.id.clone(), bad.error.clone()).to_line();
            assert_eq!(wire.last(), Some(&b'\n'));
            assert!(!wire[..wire.len() - 1].contains(&b'\n'), "an error response spans lines");
            let back: Response = serde_json::from_slice(&wire).expect("an error response parses");
            assert_eq!(back.error.and_then(|e| e.kind()), Some(kind));
            assert_eq!(back.id.is_null(), bad.id.is_null());
        }
    }
}
