//! Amber's tiers: what the daemon hands an agent besides search results.
//!
//! - Tier 0, [`identity`]: a project's coordination files (`project-context/*.md`,
//!   `AGENTS.md`, ...) assembled within a token budget for the system prompt.
//!
//! - [`capture`]: size limits and secret redaction for what a session files.
//!
//! Sessions, briefing, interjection and curation come next (issue 5).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod capture;
pub mod identity;
pub mod judge;
