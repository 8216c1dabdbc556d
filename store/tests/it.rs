//! The crate's integration tests, one binary: each file beside this one is a module
//! (`cargo test -p amber-store --test it -- MODULE::` runs one file's tests).

mod common {
    pub mod browse;
}
mod browse;
mod pg;
