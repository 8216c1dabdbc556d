#!/usr/bin/env bash
# Sets everything up (model, runtime, release build) and runs `amber` with the given
# arguments. With no arguments it starts the daemon (amberd) in the background on the
# default store (~/.local/share/amber/data, or $AMBER_DATA_DIR) and shows its status.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
bash "$root/scripts/setup.sh"
cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml" -p amber-cli -p amber-daemon
if [ $# -eq 0 ]; then
  "$root/target/release/amber" daemon start
  set -- status
fi
exec "$root/target/release/amber" "$@"
