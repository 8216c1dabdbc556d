#!/usr/bin/env bash
# Sets everything up (model, runtime, release build) and runs `amber` with the given
# arguments on the default store (~/.local/share/amber/data, or $AMBER_DATA_DIR).
# With no arguments it shows the store's status.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
bash "$root/scripts/setup.sh"
cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml" -p amber-cli
if [ $# -eq 0 ]; then set -- status; fi
exec "$root/target/release/amber" "$@"
