"""What the MCP tests share: the `amber` binary and a private data directory, socket,
state directory and (absent) config for `amber mcp` and the daemon it starts.

A module of its own, not a conftest.py: the Python client's tests import from theirs by
name, and pytest runs both folders in one session."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AMBER = os.environ.get("AMBER_BIN") or str(ROOT / "target" / "release" / "amber")


@pytest.fixture
def amber_env():
    if not os.path.exists(AMBER):
        pytest.fail(f"amber binary not found at {AMBER} (set AMBER_BIN)")
    # Short: a Unix socket path must stay under ~100 bytes.
    tmp = tempfile.mkdtemp(prefix="amber-mcp-")
    env = {
        "AMBER_DATA_DIR": os.path.join(tmp, "data"),
        "AMBER_SOCKET": os.path.join(tmp, "amber.sock"),
        "AMBER_STATE_DIR": os.path.join(tmp, "state"),
        "AMBER_CONFIG": os.path.join(tmp, "config.toml"),  # absent: defaults
        "AMBER_LOG": "warn",
    }
    for key in ("AMBERD", "AMBER_HOME", "HOME", "PATH"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    yield env
    subprocess.run([AMBER, "daemon", "stop"], env=env, timeout=90, check=False, capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)
