//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-ipc --test it -- MODULE::` runs one file's tests).

mod deadline;
mod frame_props;
