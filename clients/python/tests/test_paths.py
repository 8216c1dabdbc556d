"""Socket resolution, the same as the Rust side (no daemon needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from amber_client import default_socket_path

VARS = ("AMBER_SOCKET", "AMBER_DATA_DIR", "AMBER_HOME", "AMBER_CONFIG", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


@pytest.fixture
def env(monkeypatch, tmp_path):
    for v in VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AMBER_CONFIG", str(tmp_path / "none.toml"))
    return monkeypatch


@pytest.mark.skipif(sys.platform != "linux", reason="XDG defaults are Linux's")
def test_defaults_and_overrides(env, tmp_path):
    home = tmp_path / "home"
    assert default_socket_path() == home / ".local/share/amber/data/amber.sock"
    env.setenv("XDG_DATA_HOME", "/xdg-data")
    assert default_socket_path() == Path("/xdg-data/amber/data/amber.sock")
    env.setenv("XDG_DATA_HOME", "relative")  # ignored, as the `dirs` crate does
    assert default_socket_path() == home / ".local/share/amber/data/amber.sock"
    env.setenv("AMBER_HOME", "/h")
    assert default_socket_path() == Path("/h/data/amber.sock")
    env.setenv("AMBER_DATA_DIR", "/d")
    assert default_socket_path() == Path("/d/amber.sock")
    assert default_socket_path(data_dir="/flag") == Path("/flag/amber.sock")
    env.setenv("XDG_RUNTIME_DIR", "/run/user/7")
    assert default_socket_path() == Path("/run/user/7/amber/amber.sock")
    env.setenv("XDG_RUNTIME_DIR", "")
    assert default_socket_path() == Path("/d/amber.sock"), "empty means unset"
    env.setenv("AMBER_SOCKET", "/s.sock")
    assert default_socket_path() == Path("/s.sock")


@pytest.mark.parametrize("no_tomllib", [False, True])
def test_the_config_file(env, tmp_path, no_tomllib):
    if no_tomllib:
        env.setitem(sys.modules, "tomllib", None)  # as on Python 3.10: the fallback reader
    cfg = tmp_path / "config.toml"
    env.setenv("AMBER_CONFIG", str(cfg))
    cfg.write_text('amber_home = "/fh"\nlog = "info"\n\n[identity]\nbudget_tokens = 5\n')
    assert default_socket_path() == Path("/fh/data/amber.sock"), "a home set in the file moves the data dir"
    env.setenv("AMBER_HOME", "/eh")
    assert default_socket_path() == Path("/eh/data/amber.sock")
    env.delenv("AMBER_HOME")
    cfg.write_text("data_dir = '/fd'  # literal string\n")
    assert default_socket_path() == Path("/fd/amber.sock")
    cfg.write_text('data_dir = "/fd"\nsocket = "/file.sock"\n[identity]\nsocket = "/not-top-level.sock"\n')
    assert default_socket_path() == Path("/file.sock")
    env.setenv("AMBER_SOCKET", "/env.sock")
    assert default_socket_path() == Path("/env.sock"), "the environment overrides the file"
    assert default_socket_path(config=tmp_path / "absent.toml") == Path("/env.sock")
