"""Where the daemon's socket is: the same resolution as the Rust side
(``amber_core::paths``, ``amber_ipc::config::Config::load`` and
``amber_ipc::default_socket_path``), so this client finds the daemon ``amber`` finds.

Order: ``$AMBER_SOCKET``, else ``socket`` in the config file, else
``$XDG_RUNTIME_DIR/amber/amber.sock``, else ``<data_dir>/amber.sock``. The data directory
is ``$AMBER_DATA_DIR``, else ``data_dir`` in the config file, else ``<amber_home>/data``
(``amber_home`` from ``$AMBER_HOME``, the config file, else ``$XDG_DATA_HOME/amber``,
i.e. ``~/.local/share/amber``). The config file is ``$AMBER_CONFIG``, else
``$XDG_CONFIG_HOME/amber/config.toml``. Empty variables count as unset.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

SOCKET_FILE = "amber.sock"


def _env_path(name: str) -> Path | None:
    v = os.environ.get(name)
    return Path(v) if v else None


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _xdg(var: str, fallback: str) -> Path:
    # The `dirs` crate: the XDG variable when it is an absolute path, else the fallback.
    v = os.environ.get(var)
    if v and os.path.isabs(v):
        return Path(v)
    return _home() / fallback


def _data_dir() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or _home())
    return _xdg("XDG_DATA_HOME", ".local/share")


def _config_dir() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or _home())
    return _xdg("XDG_CONFIG_HOME", ".config")


def default_amber_home() -> Path:
    """``$AMBER_HOME``, else ``$XDG_DATA_HOME/amber`` (``~/.local/share/amber``)."""
    return _env_path("AMBER_HOME") or _data_dir() / "amber"


def default_config_path() -> Path:
    """``$AMBER_CONFIG``, else ``$XDG_CONFIG_HOME/amber/config.toml``."""
    return _env_path("AMBER_CONFIG") or _config_dir() / "amber" / "config.toml"


_KEY = re.compile(r"""^\s*(socket|data_dir|amber_home)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*(?:#.*)?$""")


def _read_config(path: Path) -> dict[str, Any]:
    """The top-level keys of the config file that locate the socket; {} when the file
    is absent or unreadable (the daemon itself reports a broken config file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    try:
        import tomllib  # Python >= 3.11

        v = tomllib.loads(text)
        return {k: v[k] for k in ("socket", "data_dir", "amber_home") if isinstance(v.get(k), str)}
    except ImportError:
        pass
    except Exception:
        return {}
    # Python 3.10: the three keys are plain strings before the first table.
    found: dict[str, Any] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            break
        m = _KEY.match(line)
        if m:
            raw = m.group(2)
            try:
                found[m.group(1)] = json.loads(raw) if raw.startswith('"') else raw[1:-1]
            except ValueError:
                pass
    return found


def resolve_data_dir(config: str | os.PathLike[str] | None = None) -> Path:
    """The data directory in force (``--data-dir`` aside)."""
    return _resolve(config)[0]


def default_socket_path(
    config: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The socket path ``amber`` and ``amberd`` use, given the config file (default
    ``$AMBER_CONFIG`` or the XDG path) and a ``--data-dir`` override."""
    dd, socket = _resolve(config)
    if socket is not None:
        return socket
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return Path(run) / "amber" / SOCKET_FILE
    return (Path(data_dir) if data_dir is not None else dd) / SOCKET_FILE


def _resolve(config: str | os.PathLike[str] | None) -> tuple[Path, Path | None]:
    path = Path(config) if config is not None else default_config_path()
    file = _read_config(path)
    default_home = default_amber_home()
    home = Path(file["amber_home"]) if "amber_home" in file else default_home
    data = Path(file["data_dir"]) if "data_dir" in file else default_home / "data"
    home_set_in_file = home != default_home
    home = _env_path("AMBER_HOME") or home
    env_data = _env_path("AMBER_DATA_DIR")
    if env_data is not None:
        data = env_data
    elif home_set_in_file and data == default_home / "data":
        data = home / "data"
    socket = Path(file["socket"]) if file.get("socket") else None
    env_socket = _env_path("AMBER_SOCKET")
    if env_socket is not None:
        socket = env_socket
    return data, socket
