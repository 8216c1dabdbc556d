//! Framing: one message per line. The decoder never holds more than the frame limit, and
//! a line over it is skipped to its newline and reported, so the connection stays usable.

use serde_json::Value;

use crate::protocol::{ErrorKind, ErrorObject, Request};

/// What the decoder produced from the bytes it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A whole line, without its newline (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the limit was skipped; this many bytes were dropped.
    TooLarge(usize),
}

/// A newline framer with a size limit. Feed it bytes with [`Framer::feed`]; it says how
/// many it consumed and whether a frame is complete.
#[derive(Debug)]
pub struct Framer {
    max: usize,
    buf: Vec<u8>,
    /// Bytes of the current line dropped because it went over the limit.
    dropped: usize,
}

impl Framer {
    /// A framer for lines of at most `max` bytes.
    pub fn new(max: usize) -> Framer {
        Framer { max, buf: Vec::new(), dropped: 0 }
    }

    /// The limit.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Takes bytes from `input` up to and including the first newline. Returns how many
    /// were consumed and the frame, if that newline completed one. Call again with the
    /// rest of the input.
    pub fn feed(&mut self, input: &[u8]) -> (usize, Option<Frame>) {
        let (part, consumed, complete) = match input.iter().position(|&b| b == b'\n') {
            Some(i) => (&input[..i], i + 1, true),
            None => (input, input.len(), false),
        };
        if self.dropped > 0 || self.buf.len() + part.len() > self.max {
            self.dropped += self.buf.len() + part.len();
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(part);
        }
        if !complete {
            return (consumed, None);
        }
        if self.dropped > 0 {
            let n = std::mem::take(&mut self.dropped);
            return (consumed, Some(Frame::TooLarge(n)));
        }
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        (consumed, Some(Frame::Line(line)))
    }

    /// True when part of a line is buffered (input that ended mid-line).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty() || self.dropped > 0
    }
}

/// Why a line is not a request: the error to answer with, and the request id when it
/// could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct BadRequest {
    /// The id, or null.
    pub id: Value,
    /// The error.
    pub error: ErrorObject,
}

/// Parses one line into a request, checking the JSON-RPC envelope.
pub fn parse_request(line: &[u8]) -> Result<Request, BadRequest> {
    let bad = |id: Value, kind, msg: String| BadRequest { id, error: ErrorObject::new(kind, msg) };
    let text = std::str::from_utf8(line).map_err(|e| {
        bad(Value::Null, ErrorKind::InvalidUtf8, format!("the request is not valid UTF-8 ({e})"))
    })?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| bad(Value::Null, ErrorKind::ParseError, format!("the request is not JSON ({e})")))?;
    let Value::Object(obj) = value else {
        return Err(bad(
            Value::Null,
            ErrorKind::InvalidRequest,
            "a request must be a JSON object (batches are not supported)".into(),
        ));
    };
    let id = obj.get("id").cloned();
    let echo = id.clone().unwrap_or(Value::Null);
    if let Some(id) = &id
        && !(id.is_string() || id.is_number() || id.is_null())
    {
        return Err(bad(Value::Null, ErrorKind::InvalidRequest, "id must be a string or a number".into()));
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(bad(echo, ErrorKind::InvalidRequest, r#"jsonrpc must be "2.0""#.into()));
    }
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return Err(bad(echo, ErrorKind::InvalidRequest, "method must be a string".into()));
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    if !(params.is_object() || params.is_null()) {
        return Err(bad(echo, ErrorKind::InvalidParams, "params must be an object".into()));
    }
    Ok(Request { jsonrpc: "2.0".into(), id, method: method.to_string(), params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut f = Framer::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut rest = *chunk;
            while !rest.is_empty() {
                let (n, frame) = f.feed(rest);
                rest = &rest[n..];
                out.extend(frame);
            }
        }
        out
    }

    #[test]
    fn lines_split_across_chunks_are_joined() {
        let got = frames(100, &[b"{\"a\"", b":1}\n{\"b\":2}\r\n", b"x"]);
        assert_eq!(got, vec![Frame::Line(b"{\"a\":1}".to_vec()), Frame::Line(b"{\"b\":2}".to_vec())]);
    }

    #[test]
    fn an_oversize_line_is_skipped_and_the_next_one_read() {
        let big = [b'x'; 25];
        let got = frames(10, &[&big[..12], &big[12..], b"\nok\n"]);
        assert_eq!(got, vec![Frame::TooLarge(25), Frame::Line(b"ok".to_vec())]);
        // exactly at the limit is fine
        assert_eq!(frames(2, &[b"ab\n"]), vec![Frame::Line(b"ab".to_vec())]);
        assert_eq!(frames(2, &[b"abc\n"]), vec![Frame::TooLarge(3)]);
    }

    #[test]
    fn envelope_defects_get_their_own_kinds() {
        let kind = |line: &[u8]| parse_request(line).unwrap_err().error.kind().unwrap();
        assert_eq!(kind(b"\xff\xfe"), ErrorKind::InvalidUtf8);
        assert_eq!(kind(b"{not json"), ErrorKind::ParseError);
        assert_eq!(kind(b"[1,2]"), ErrorKind::InvalidRequest);
        assert_eq!(kind(br#"{"id":1,"method":"status"}"#), ErrorKind::InvalidRequest);
        assert_eq!(kind(br#"{"jsonrpc":"2.0","id":1}"#), ErrorKind::InvalidRequest);
        assert_eq!(kind(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#), ErrorKind::InvalidRequest);
        assert_eq!(kind(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), ErrorKind::InvalidParams);
        let e = parse_request(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).unwrap_err();
        assert_eq!(e.id, Value::from(7));
        let ok = parse_request(br#"{"jsonrpc":"2.0","id":"a","method":"status"}"#).unwrap();
        assert_eq!((ok.id, ok.method.as_str()), (Some(Value::from("a")), "status"));
    }

    #[test]
    fn kinds_round_trip_and_codes_are_distinct_per_name() {
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::parse(k.as_str()), Some(*k));
            assert_eq!(ErrorObject::new(*k, "m").kind(), Some(*k));
        }
        let names: std::collections::HashSet<_> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
