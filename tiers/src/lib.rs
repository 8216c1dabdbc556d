//! Amber's tiers: what the daemon hands an agent besides search results.
//!
//! - [`scope`]: the one scope model: a working directory's project scope (repository
//!   root, else the directory, else `default`) and the `user` scope.
//! - [`session`]: a session's record (what it was served and why, what it captured,
//!   what curation did) and the project scope it works in; [`transcript`], how much of
//!   its transcript was filed, so each part is stored once.
//! - Tier 0, [`identity`]: a project's coordination files (`project-context/*.md`,
//!   `AGENTS.md`, ...) assembled within a token budget for the system prompt.
//! - Tier 1, [`briefing`]: at session start, the memories that matter for the project
//!   and the opening prompt, ranked by relevance, recency and importance, within a budget.
//! - Tier 2, [`interject`]: mid-session, a memory only when it clears the gate (or the
//!   [`judge`] says yes in the band below it); silent otherwise, with the reason.
//! - [`decision`]: an interjection decision as recorded (shared by [`session`] and
//!   [`interject`]).
//! - [`judge`]: the interjection judge for the uncertain band: [`judge::Off`], an
//!   OpenAI-compatible chat endpoint ([`judge::OpenAiJudge`]: Ollama, llama.cpp's server,
//!   a hosted API), built by [`judge::from_config`]; a failure or timeout counts as "no".
//! - [`extract`]: facts proposed from captured text by a configured model
//!   ([`extract::OpenAiExtractor`]) for the knowledge graph; off by default.
//! - [`capture`]: size limits and secret redaction for what a session files.
//! - [`redact`]: the secret patterns, run on every text the daemon stores or serves.
//! - [`curate`]: at session end, duplicates collapsed or linked and ranked down, related
//!   memories linked; nothing deleted.
//!
//! - [`advice`]: advice learned by a model from runs (sorting, notes, routing, curation,
//!   the judge of runs), every call through [`advice::Learner`] and, when asked, the
//!   [`cache`] of model replies; off unless `[learn]` names an endpoint.
//!
//! The logic here is pure: the daemon runs the searches and the writes.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod advice;
pub mod briefing;
pub mod cache;
pub mod capture;
mod chat;
pub mod curate;
pub mod decision;
pub mod document;
pub mod echo;
pub mod extract;
pub mod fence;
pub mod graph;
pub mod guard;
pub mod identity;
pub mod interject;
pub mod judge;
pub mod leads;
pub mod lift;
pub mod moment;
pub mod preferences;
pub mod redact;
pub mod review;
pub mod run_log;
pub mod scope;
pub mod session;
pub mod session_run;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transcript;
