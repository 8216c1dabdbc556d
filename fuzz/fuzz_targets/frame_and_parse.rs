//! Arbitrary bytes through the line framer (limit and chunking from the input) and every
//! complete line through `parse_request`. The invariants are in
//! `ipc/tests/support/frame_check.rs`, shared with the stable property test
//! `ipc/tests/frame_props.rs`.
#![no_main]

#[path = "../../ipc/tests/support/frame_check.rs"]
#[allow(dead_code)]
mod frame_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    frame_check::run(data);
});
