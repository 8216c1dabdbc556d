//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-tiers --test it -- MODULE::` runs one file's tests).

mod advice;
mod common;
mod compile;
mod extract;
mod judge;
mod secret_shapes;
mod secrets;
