"""The real daemon under test: ``amberd`` from ``$AMBERD`` (else the PATH), started on a
temporary data directory and socket with no config file, stopped at teardown."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # amber_client

READY_TIMEOUT = 120.0


def find_amberd() -> str | None:
    env = os.environ.get("AMBERD")
    if env:
        if not Path(env).is_file():
            pytest.fail(f"AMBERD={env} does not exist (build it: cargo build --release -p amber-daemon)")
        return str(Path(env).resolve())
    return shutil.which("amberd")


@pytest.fixture(scope="session")
def amberd() -> str:
    path = find_amberd()
    if path is None:
        pytest.skip("amberd not found: set AMBERD=target/release/amberd (or put amberd on the PATH)")
    return path


def short_tmpdir() -> Path:
    # Unix socket paths are limited to ~104 bytes: pytest's tmp_path can be too deep.
    return Path(tempfile.mkdtemp(prefix="amberpy-", dir="/tmp" if os.path.isdir("/tmp") else None))


def daemon_env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    for k in ("AMBER_SOCKET", "AMBER_DATA_DIR"):
        env.pop(k, None)
    env["AMBER_CONFIG"] = str(root / "none.toml")
    env["AMBER_STATE_DIR"] = str(root / "state")
    return env


class Daemon:
    """``amberd --data-dir <root>/data --socket <root>/run/amber.sock``."""

    def __init__(self, amberd: str, root: Path):
        self.amberd = amberd
        self.root = root
        self.data = root / "data"
        self.socket = root / "run" / "amber.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        errlog = open(self.root / "amberd.stderr", "ab")
        self.proc = subprocess.Popen(
            [self.amberd, "--data-dir", str(self.data), "--socket", str(self.socket)],
            env=daemon_env(self.root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
        errlog.close()
        assert self.proc.stdout is not None
        line = b""
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + READY_TIMEOUT
        while b"\n" not in line and time.monotonic() < deadline:
            if sel.select(timeout=0.5):
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                line += chunk
        sel.close()
        self.proc.stdout.close()
        if not line.startswith(b"amberd ready on "):
            self.stop()
            err = (self.root / "amberd.stderr").read_text(errors="replace")
            pytest.fail(f"amberd did not start: {line!r}\n{err}")

    def stop(self) -> None:
        """SIGTERM (a graceful stop), then SIGKILL after 20 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def person(self, *args: str) -> dict:
        """Runs the ``amber`` command (``$AMBER_BIN``, else the one beside amberd) with
        ``--json`` against this daemon, outside any agent: the person's door, for what a
        client library is refused (purge, scope moves, keeping secrets)."""
        import json

        amber = os.environ.get("AMBER_BIN") or str(Path(self.amberd).with_name("amber"))
        env = daemon_env(self.root)
        for k in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID"):
            env.pop(k, None)
        out = subprocess.run(
            [amber, "--socket", str(self.socket), "--data-dir", str(self.data), "--no-start", "--json", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
        assert out.returncode == 0, f"amber {args}: {out.stderr.decode(errors='replace')}"
        return json.loads(out.stdout)

    def client(self, **kw):
        from amber_client import Client

        return Client(self.socket, start=False, **kw)


@pytest.fixture(scope="module")
def daemon(amberd):
    """One daemon shared by a test module."""
    root = short_tmpdir()
    d = Daemon(amberd, root)
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fresh_daemon(amberd):
    """A daemon of the test's own."""
    root = short_tmpdir()
    d = Daemon(amberd, root)
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def project(tmp_path):
    """A git project with a HANDOFF file; its working directory is ``src``."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "project-context").mkdir()
    (root / "src").mkdir()
    (root / "project-context" / "HANDOFF.md").write_text("Next: ship the staging release.\n")
    return root


# Texts from daemon/tests/sessions.rs: the prompt clears the gate for RELEASE there.
RELEASE = (
    "Releasing to staging: export AWS_PROFILE=staging before running make release, "
    "otherwise the upload to the eu-west-1 bucket fails with AccessDenied."
)
POSTGRES = (
    "The integration tests need a local Postgres 16 on port 5433; start it with "
    "docker compose up db before running cargo test."
)
LUNCH = "Team lunch on Fridays is at the Thai place around the corner from the office."
RELEASE_PROMPT = "make release fails with AccessDenied uploading to the staging bucket, why?"
