"""The client against the daemon's connection limits: an idle connection the daemon closed
is reopened on the next call, and a connection past ``max_connections`` raises
``TooManyConnections`` at once."""

from __future__ import annotations

import shutil
import time

import pytest
from conftest import Daemon, short_tmpdir

from amber_client import TooManyConnections


@pytest.fixture
def strict_daemon(amberd):
    """A daemon that serves 2 connections and closes one idle for 1 s."""
    root = short_tmpdir()
    (root / "none.toml").write_text("max_connections = 2\nidle_connection_timeout_s = 1\n")
    d = Daemon(amberd, root)
    yield d
    d.stop()
    shutil.rmtree(root, ignore_errors=True)


def test_an_idle_connection_closed_by_the_daemon_is_reopened(strict_daemon):
    c = strict_daemon.client()
    first = c.status()
    time.sleep(1.6)  # the daemon closes the idle connection
    st = c.status()  # the client reconnects and resends
    assert st["pid"] == first["pid"]
    assert st["connections"] == 1
    c.close()


def test_past_max_connections_the_error_is_too_many_connections(strict_daemon):
    a, b = strict_daemon.client(), strict_daemon.client()
    a.status()
    b.status()
    extra = strict_daemon.client()
    t0 = time.monotonic()
    with pytest.raises(TooManyConnections) as e:
        extra.status()
    assert time.monotonic() - t0 < 2
    assert "max_connections" in str(e.value)
    a.close()
    time.sleep(0.2)
    assert extra.status()["connections"] == 2  # a slot is free: the same client is served
    b.close()
    extra.close()
