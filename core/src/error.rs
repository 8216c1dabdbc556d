//! Validation errors for caller input.

/// The result of validating caller input.
pub type Result<T> = std::result::Result<T, InvalidInput>;

/// Input that Amber refuses, with the field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidInput {
    /// The content is empty or only whitespace.
    #[error("content is empty: a memory needs some non-whitespace text")]
    EmptyContent,
    /// The content is larger than [`crate::MAX_CONTENT_BYTES`].
    #[error("content is {len} bytes, over the limit of {max} bytes: split it into several memories")]
    ContentTooLarge {
        /// Size of the content in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A memory type that Amber does not know.
    #[error("unknown memory type {given:?}: expected one of {expected}")]
    UnknownType {
        /// What the caller sent.
        given: String,
        /// The known types, comma-separated.
        expected: &'static str,
    },
    /// An outcome that is not success, failure or neutral.
    #[error("unknown outcome {given:?}: expected one of success, failure, neutral")]
    UnknownOutcome {
        /// What the caller sent.
        given: String,
    },
    /// `supersedes` given on a memory that is not an invalidation.
    #[error("only an invalidation supersedes: file it with type invalidation")]
    SupersedesNeedsInvalidation,
    /// A recipient that is not an agent name, `all` or `self`.
    #[error(
        "bad recipient {given:?}: an agent name, `all` or `self` (letters, digits, `-`, `_`, `.`, at most 64)"
    )]
    BadRecipient {
        /// What the caller sent.
        given: String,
    },
    /// A run that cannot be recorded.
    #[error("bad run: {reason}")]
    BadRun {
        /// Why.
        reason: String,
    },
    /// A scope that is not a `/`-separated path of allowed characters.
    #[error("bad scope {given:?}: {reason}")]
    BadScope {
        /// What the caller sent.
        given: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A memory id that is not 32 lowercase hex digits.
    #[error("bad memory id {given:?}: expected 32 lowercase hex digits")]
    BadId {
        /// What the caller sent.
        given: String,
    },
    /// Metadata that is not a JSON object.
    #[error("metadata must be a JSON object")]
    BadMetadata,
    /// A knowledge-graph entity, predicate or fact that cannot be stored.
    #[error("bad graph input: {reason}")]
    BadGraph {
        /// Why it is refused.
        reason: String,
    },
    /// A query that cannot be run.
    #[error("bad query: {reason}")]
    BadQuery {
        /// Why it is refused.
        reason: String,
    },
    /// A label field (`author`, `source`, `agent`) or the metadata that Amber refuses:
    /// too long, or holding control characters (a newline could forge a line in what an
    /// agent is served).
    #[error("bad {field}: {reason}")]
    BadField {
        /// The field.
        field: &'static str,
        /// Why it is refused.
        reason: String,
    },
}
