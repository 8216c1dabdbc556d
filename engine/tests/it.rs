//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-engine --test it -- MODULE::` runs one file's tests).

mod curation;
mod engine;
mod export_outcomes;
mod filing;
mod forget_and_concurrency;
mod migrate;
mod neighbours;
mod scopes;
mod session_context;
mod session_prior;
mod standing;
