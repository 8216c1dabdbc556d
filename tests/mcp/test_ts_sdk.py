"""`amber mcp` driven by the official MCP TypeScript SDK (`@modelcontextprotocol/sdk`).

`tests/mcp/ts/client.mjs` spawns `$AMBER_BIN mcp` over stdio, declares the `roots`
capability and answers `roots/list` with one root, a temporary git repository made here;
it files a memory with no scope, recalls it with no scope (the hit must be in a
`project/...` scope), gets it back by an 8-character id prefix, and checks that an unknown
id is a tool error. The daemon is started on demand by `amber mcp` in a private data
directory and socket, and stopped at the end with `amber daemon stop`.

Run: npm ci --prefix tests/mcp/ts --no-audit --no-fund
     AMBER_BIN=target/release/amber [AMBERD=target/release/amberd] python3 -m pytest tests/mcp/test_ts_sdk.py -q
(skipped, saying why, only when `node` is missing or tests/mcp/ts/node_modules is absent).
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_env import amber_env  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[2]
AMBER = os.environ.get("AMBER_BIN") or str(ROOT / "target" / "release" / "amber")
TS_DIR = Path(__file__).resolve().parent / "ts"

# The first tool call may start the daemon, which loads the embedding model.
RUN_TIMEOUT = 600


def test_typescript_sdk_client(amber_env):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the MCP TypeScript SDK test needs Node.js 18 or later")
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip(
            f"{TS_DIR / 'node_modules'} is absent: run `npm ci --prefix tests/mcp/ts --no-audit --no-fund`"
        )
    tmp = os.path.dirname(amber_env["AMBER_DATA_DIR"])
    project = os.path.join(tmp, "ledger-api")
    os.makedirs(project)
    subprocess.run(["git", "init", "-q", project], check=True, timeout=30)
    env = dict(amber_env, AMBER_BIN=AMBER, AMBER_TEST_ROOT=project)
    # Not from the project directory: the scope must come from the root the client
    # offers, not from the server's working directory.
    r = subprocess.run(
        [node, str(TS_DIR / "client.mjs")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    print(r.stdout)
    assert r.returncode == 0, f"client.mjs exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    assert "FAIL" not in r.stdout
    assert r.stdout.count("ok - ") >= 7, r.stdout
