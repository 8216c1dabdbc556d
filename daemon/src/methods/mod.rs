//! The methods, one module per family (after mini-redis's `cmd/`). Each parses nothing
//! itself: the dispatch (`dispatch.rs`) hands it the params the registry declares; it calls the engine
//! (through `rpc::read` / `rpc::write`) or the tiers, and shapes its result. Families
//! depend on the plumbing (`rpc`), the shared state (`state`, `live`) and, where one
//! builds on another, on that family (sessions capture and resolve scopes); nothing
//! depends on `server.rs`.
//!
//! Adding a method: one line in the registry (`amber_ipc::protocol::methods`, with its
//! params and result types, access and doors), a function in its family's file here (or
//! a new file for a new family), its arm in `dispatch.rs` (the `match` is exhaustive: it
//! does not compile without it), a test, and its section in `docs/PROTOCOL.md` (a test
//! fails without it; the MCP, CLI and Python tests fail while a declared door lacks it).

pub(crate) mod admin;
pub(crate) mod advice;
pub(crate) mod agents;
pub(crate) mod capture;
pub(crate) mod checkpoint;
pub(crate) mod compile;
pub(crate) mod compile_errors;
pub(crate) mod dispute;
pub(crate) mod doctor;
pub(crate) mod documents;
pub(crate) mod get_advice;
pub(crate) mod graph;
pub(crate) mod import_redact;
pub(crate) mod ingest;
pub(crate) mod judge;
pub(crate) mod leads;
pub(crate) mod learn;
pub(crate) mod lift;
pub(crate) mod memory;
pub(crate) mod model;
pub(crate) mod model_work;
pub(crate) mod note_words;
pub(crate) mod origin;
pub(crate) mod outcome;
pub(crate) mod places;
pub(crate) mod portable;
pub(crate) mod reader;
pub(crate) mod records;
pub(crate) mod review;
pub(crate) mod runs;
pub(crate) mod scope;
pub(crate) mod serve;
pub(crate) mod session;
pub(crate) mod session_run;
pub(crate) mod sessions;
pub(crate) mod threads;
pub(crate) mod transcript;
pub(crate) mod vendored;
