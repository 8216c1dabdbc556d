//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-cli --test it -- MODULE::` runs one file's tests).

mod agent_restore;
mod attacks;
mod claude_code;
mod claude_replay;
mod claude_runs;
mod claude_week;
mod cli;
mod cold_start;
mod common;
mod conventions;
mod importers;
mod ingest;
mod portable;
mod provenance;
mod purge_grace;
