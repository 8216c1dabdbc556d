"""amberd for the Amplifier tests (a helper module, not a conftest.py: clients/python/tests has one
its test modules import by name): the Python client's test daemon (a private data
directory and socket, no config file), and the kernel test modules on sys.path."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "kernel_modules"))  # loop-scripted, context-list, provider-scripted

_spec = importlib.util.spec_from_file_location("amber_client_testdaemon", HERE.parents[1] / "python/tests/conftest.py")
_py = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_py)
Daemon, short_tmpdir, daemon_env, find_amberd = _py.Daemon, _py.short_tmpdir, _py.daemon_env, _py.find_amberd


def amber_cli(d, *args: str, cwd: str | Path | None = None) -> dict:
    """The ``amber`` command (``$AMBER_BIN``, else beside amberd) as a person runs it, from ``cwd``."""
    amber = os.environ.get("AMBER_BIN") or str(Path(d.amberd).with_name("amber"))
    env = daemon_env(d.root)
    for k in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID"):
        env.pop(k, None)
    out = subprocess.run(
        [amber, "--socket", str(d.socket), "--data-dir", str(d.data), "--no-start", "--json", *args],
        env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
    )
    assert out.returncode == 0, f"amber {args}: {out.stderr.decode(errors='replace')}"
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def amberd() -> str:
    path = find_amberd()
    if path is None:
        pytest.skip("amberd not found: set AMBERD=target/release/amberd (or put amberd on the PATH)")
    return path


@pytest.fixture(scope="module")
def daemon(amberd):
    root = short_tmpdir()
    d = Daemon(amberd, root)
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)
