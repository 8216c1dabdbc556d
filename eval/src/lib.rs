//! Amber's eval harness: LongMemEval and LoCoMo retrieval with the official metrics.
#![forbid(unsafe_code)]
pub mod comention;
pub mod crosslingual;
pub mod interject;
pub mod locomo;
pub mod longmemeval;
pub mod metrics;

/// One document as the harness files it: one memory.
#[derive(Debug, Clone, PartialEq)]
pub struct FiledDoc {
    /// The benchmark's id for it (a session or turn id).
    pub id: String,
    /// The text filed, verbatim.
    pub text: String,
    /// When it happened (the session date), if known.
    pub time: Option<i64>,
    /// The conversation session it belongs to, when the documents are turns: filed as the
    /// memory's session, so recall's neighbour ranking sees the turns around a match.
    pub session: Option<String>,
}
