//! Shared types of Amber: what a memory is, how it is addressed, what a query asks
//! and what a hit reports.
//!
//! # Brief overview
//! - [`NewMemory`] is what a caller files; [`Memory`] is what the store holds.
//! - [`MemoryId`] is derived from the scope and the content, so filing the same
//!   content twice into the same scope yields the same id.
//! - [`Scope`] is a `/`-separated path such as `amber/retrieval` (project, then topic).
//! - [`Query`] and [`Hit`] carry the per-signal evidence of hybrid retrieval.
//!
//! ```
//! use amber_core::{MemoryId, Scope};
//! let scope: Scope = "amber/retrieval".parse().unwrap();
//! let a = MemoryId::derive(&scope, "tantivy needs order_by_score");
//! let b = MemoryId::derive(&scope, "tantivy needs order_by_score");
//! assert_eq!(a, b);
//! assert!(scope.is_within(&"amber".parse().unwrap()));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod advice;
pub mod calendar;
pub mod calibration;
pub mod document;
pub mod endpoint;
mod error;
pub mod filing;
pub mod graph;
mod link;
mod memory;
pub mod model;
pub mod origin;
pub mod paths;
pub mod portable;
mod query;
mod run;
mod scope;
pub mod skill;
pub mod standing;

pub use error::{InvalidInput, Result};
pub use filing::Filing;
pub use link::{Link, LinkKind};
pub use memory::{
    MAX_AGENT_BYTES, MAX_AUTHOR_BYTES, MAX_CONTENT_BYTES, MAX_METADATA_BYTES, MAX_SOURCE_BYTES, Memory,
    MemoryId, MemoryType, NewMemory, check_label, is_invisible_char, is_unsafe_char, one_line,
    valid_recipient,
};
pub use query::{Evidence, Expand, Hit, MAX_K, MAX_QUERY_BYTES, Query, SearchMode, Standing};
pub use run::{MAX_TASK_CHARS, MAX_TRACE_CHARS, NewRun, Run, RunReward, RunWrite};
pub use scope::{MAX_SCOPE_BYTES, Scope};
pub use standing::{Basis, Outcome, Report, ReportKind};

/// Milliseconds since the Unix epoch, UTC: the one time unit of Amber.
pub type Millis = i64;

/// The environment variable that shifts Amber's clock forward by whole seconds: a test
/// knob that stands in for days passing between sessions (unset or unparsable: 0).
pub const CLOCK_OFFSET_ENV: &str = "AMBER_CLOCK_OFFSET_S";

/// The current wall-clock time in [`Millis`], shifted by [`CLOCK_OFFSET_ENV`] when set.
pub fn now_millis() -> Millis {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_millis() as Millis + clock_offset()
}

/// How far [`now_millis`] is ahead of the system clock ([`CLOCK_OFFSET_ENV`]; 0 unless
/// a test set it): what turns a time the system stamped (a file's) into Amber's.
pub fn clock_offset() -> Millis {
    static OFFSET: std::sync::OnceLock<Millis> = std::sync::OnceLock::new();
    *OFFSET.get_or_init(|| {
        std::env::var(CLOCK_OFFSET_ENV).ok().and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(0) * 1000
    })
}
