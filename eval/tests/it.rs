//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-eval --test it -- MODULE::` runs one file's tests).

mod crosslingual;
mod curate;
mod harness;
mod interject_locomo;
mod mixed;
mod scale;
