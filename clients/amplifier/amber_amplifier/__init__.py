"""Amber inside Amplifier: what the two module packages share.

``amplifier_module_hooks_amber`` (module id ``hooks-amber``) mounts the session's side:
identity and briefing at ``session:start``, the gate at ``prompt:submit`` and after each
tool use, capture of tool results (never Amber's own output), curation and the
transcript at ``session:end``. ``amplifier_module_tool_amber`` (``tool-amber``) mounts
the ``memory`` tool: recall, get, remember, outcome.

Both talk to ``amberd`` through :class:`amber_client.Client` over the local socket, start
the daemon when none answers (``start: true``, the default), and never break a session:
every failure is logged on the ``amber.amplifier`` logger and becomes "nothing to say".
The hooks module offers the Amber session it keeps to the tool through the coordinator's
capability registry (:data:`CAPABILITY`), so what the agent files counts for its session.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from typing import Any, Callable

from amber_client import AmberConnectionError, AmberError, Client, ResponseTimeout

log = logging.getLogger("amber.amplifier")

AGENT = "amplifier"
CAPABILITY = "amber.link"
"""The coordinator capability under which the hooks module offers its :class:`Link`."""
TOOL_NAME = "memory"
"""The ``memory`` tool's name: its calls and results are Amber's own, never captured."""

# The longest text sent for one event (the daemon skips captures over its limit anyway).
MAX_EVENT_CHARS = 64 * 1024
# The tool-input fields that say what a call is about, in this order.
_TOOL_FIELDS = ("command", "cmd", "query", "pattern", "path", "file_path", "paths", "url", "operation")
# `amber ...` run through a shell tool: its output is what Amber served.
_RUNS_AMBER = re.compile(r"(^|[;&|(]\s*|\benv\s+(\S+=\S*\s+)*)(\S*/)?amber(\s|$)")

CONFIG_KEYS = ("socket", "start", "amberd", "cwd", "deadline", "end_deadline", "start_timeout", "retry_after")


def fence(kind: str, text: str) -> str:
    """Amber's text as it goes into the context: between an opening line naming it and
    a closing line. Inside, the daemon has already labelled each memory with where it
    came from (``from person``, ``from agent …``, ``from external: …``) and quoted its
    content line by line, so no memory can close the fence or pass for Amber's words."""
    return f'<amber kind="{kind}">\n{text.strip()}\n</amber>'


def as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return str(v)


def clip(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")[:MAX_EVENT_CHARS]


def tool_call_text(name: str, inp: Any) -> str:
    """What a call is about: its command, query, pattern, path or URL (else its input as JSON)."""
    if isinstance(inp, dict):
        parts = []
        for k in _TOOL_FIELDS:
            v = inp.get(k)
            if isinstance(v, list):
                v = " ".join(str(x) for x in v)
            if isinstance(v, (str, int, float)) and str(v).strip():
                parts.append(str(v).strip())
        what = " ".join(parts) if parts else as_text(inp)
    else:
        what = as_text(inp)
    return f"{name}: {what}" if what else name


def tool_result_text(result: Any) -> str:
    """A ``tool:post`` result (``ToolResult.to_dict()``) as text: its output (stdout and
    stderr for a shell), or its error."""
    r = result
    if r is not None and not isinstance(r, (dict, str, list)) and hasattr(r, "output"):
        r = {"output": getattr(r, "output", None), "error": getattr(r, "error", None)}
    if isinstance(r, dict):
        out = r.get("output")
        if out is None and r.get("error") is not None:
            err = r["error"]
            out = err.get("message", err) if isinstance(err, dict) else err
        if isinstance(out, dict) and ("stdout" in out or "stderr" in out):
            out = "\n".join(as_text(out.get(k)) for k in ("stdout", "stderr") if out.get(k))
        return as_text(out)
    return as_text(r)


def is_ambers_own(tool_name: str, tool_input: Any) -> bool:
    """Whether a tool use is Amber's own: the ``memory`` tool, or ``amber`` run through a
    shell tool. Neither is captured nor sent to the gate."""
    if tool_name == TOOL_NAME:
        return True
    if isinstance(tool_input, dict):
        cmd = tool_input.get("command") or tool_input.get("cmd")
        if isinstance(cmd, str) and _RUNS_AMBER.search(cmd.strip()):
            return True
    return False


def trust_of(metadata: dict[str, Any] | None) -> str:
    """``person``, ``agent`` or ``external``, as the daemon stamped it (core/src/origin.rs)."""
    m = metadata or {}
    t = m.get("trust")
    if t in ("person", "agent", "external"):
        return t
    return "external" if m.get("captured") is True else "agent"


def from_label(metadata: dict[str, Any] | None, author: str | None) -> str:
    """Who or what a memory came from, in words, as the MCP server says it:
    ``person``, ``agent <name>``, ``external: <tool>``."""
    m = metadata or {}
    origin = m.get("origin") if isinstance(m.get("origin"), dict) else {}
    clean = lambda s: " ".join(str(s).split())[:80]  # noqa: E731
    t = trust_of(m)
    if t == "person":
        return "person"
    if t == "agent":
        a = origin.get("agent") or author
        return f"agent {clean(a)}" if a and str(a).strip() else "agent"
    tool = origin.get("tool")
    return f"external: {clean(tool)}" if tool and str(tool).strip() else "external"


def is_raw_capture(m: dict[str, Any]) -> bool:
    """A capture (evidence, not a memory): an ``event`` filed in a session or captured."""
    return m.get("type") == "event" and (
        bool(m.get("session_id")) or (m.get("metadata") or {}).get("captured") is True
    )


class Link:
    """One connection to amberd for a mounted module, and the Amber sessions it keeps
    (by Amplifier's session id). Every call goes through :meth:`guard`: bounded by a
    deadline, never raising, and after a connection failure Amber is left alone for
    ``retry_after`` seconds, so a daemon that is away costs next to nothing per event."""

    def __init__(
        self,
        *,
        socket: str | None = None,
        start: bool = True,
        amberd: str | None = None,
        cwd: str | None = None,
        deadline: float = 5.0,
        end_deadline: float = 30.0,
        start_timeout: float = 30.0,
        retry_after: float = 30.0,
    ):
        self.socket = socket
        self.start = bool(start)
        self.amberd = amberd
        self.cwd = cwd
        self.deadline = float(deadline)
        self.end_deadline = float(end_deadline)
        self.start_timeout = float(start_timeout)
        self.retry_after = float(retry_after)
        self._client: Client | None = None
        self._lock = threading.Lock()
        self._down_until = 0.0
        self.sessions: dict[str, str] = {}
        """Amplifier's session id -> Amber's."""

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> Link:
        return cls(**{k: v for k, v in (config or {}).items() if k in CONFIG_KEYS})

    def here(self) -> str:
        return os.path.abspath(self.cwd or os.getcwd())

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _amber(self) -> Client:
        if self._client is None:
            self._client = Client(
                self.socket,
                start=self.start,
                amberd=self.amberd,
                timeout=self.deadline,
                start_timeout=self.start_timeout,
                client_name="amber-amplifier",
            )
        return self._client

    def attempt(self, what: str, fn: Callable[[Client], Any]) -> tuple[bool, Any]:
        """``(True, fn(client))``, or ``(False, why)`` when Amber is away or refused: for
        the tool, which tells the agent why instead of saying nothing."""
        if time.monotonic() < self._down_until:
            return False, "Amber's daemon is unreachable; try again later"
        try:
            with self._lock:
                return True, fn(self._amber())
        except AmberConnectionError as e:
            if not isinstance(e, ResponseTimeout):
                self._down_until = time.monotonic() + self.retry_after
            log.warning("amber: %s failed: %s", what, e)
            return False, f"Amber's daemon is unreachable: {e}"
        except AmberError as e:
            return False, f"{e.kind}: {e.message}" if getattr(e, "kind", None) else str(e)
        except Exception as e:
            log.exception("amber: %s failed", what)
            return False, f"{type(e).__name__}: {e}"

    def guard(self, what: str, fn: Callable[[Client], Any], default: Any = None) -> Any:
        """``fn(client)``, or ``default`` when Amber is away or anything fails (logged)."""
        if time.monotonic() < self._down_until:
            return default
        try:
            with self._lock:
                return fn(self._amber())
        except ResponseTimeout as e:
            log.warning("amber: %s gave up after %gs: %s", what, self.deadline, e)
        except AmberConnectionError as e:
            self._down_until = time.monotonic() + self.retry_after
            log.warning("amber: %s skipped, the daemon is unreachable: %s", what, e)
        except AmberError as e:
            log.warning("amber: %s failed: %s", what, e)
        except Exception:
            log.exception("amber: %s failed", what)
        return default
