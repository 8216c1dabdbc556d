//! Amber's eval harness: LongMemEval and LoCoMo retrieval with the official metrics.
#![forbid(unsafe_code)]
pub mod comention;
pub mod interject;
pub mod locomo;
pub mod longmemeval;
pub mod metrics;
