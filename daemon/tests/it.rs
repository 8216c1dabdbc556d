//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-daemon --test it -- MODULE::` runs one file's tests).

mod addressing;
mod adversarial;
mod advice;
mod common;
mod compile;
mod daemon;
mod endpoint;
mod extract;
mod graph;
#[path = "loop.rs"]
mod r#loop;
mod migrate;
mod moves;
mod no_team;
mod outcomes;
mod runs;
mod secrets;
mod sessions;
mod sources;
mod team;
mod web;
