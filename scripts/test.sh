#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: formatting, lints, unit and
# integration tests (with the real model), and the eval harness on a tiny fixture.
# Everything is built once, in release mode, and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

bash scripts/setup.sh
echo "== cargo fmt --check" >&2
cargo fmt --all --check
echo "== cargo clippy" >&2
cargo clippy --release --workspace --all-targets --locked -- -D warnings
echo "== cargo test" >&2
cargo test --release --workspace --locked
