"""Amber as an Amplifier hook module (an example built on ``amber_client``).

Amplifier (https://github.com/microsoft/amplifier) loads hook modules through an
``async def mount(coordinator, config)`` entry point; a module registers async handlers
``handler(event, data) -> HookResult`` with ``coordinator.hooks.register(event, handler,
priority=..., name=...)``, which returns an unregister function. A handler that returns
``HookResult(action="inject_context", context_injection=text)`` adds ``text`` to the
agent's context. This module maps the session's events onto Amber's session methods:

- ``session:start`` -> ``session_start(agent="amplifier", cwd=..., prompt=...,
  key=<Amplifier's session id>)``: the identity (coordination files) and the briefing are
  injected (*). With the key, a hook mounted again in the same Amplifier session (or a
  session the daemon ended for being idle) continues the same Amber session: nothing is
  injected again and what was served is remembered;
- ``prompt:submit`` -> ``session_event(kind="prompt", text=<the prompt>)``: the
  interjection is injected when ``decision.fired``;
- ``tool:pre`` -> ``session_event(kind="tool_call", text=<command, path, query...>)``:
  likewise;
- ``tool:post`` -> ``session_event(kind="tool_result", text=<the output>)``: captured
  (secrets redacted), nothing injected;
- ``session:end`` -> ``session_end(session_id)``: the daemon curates the session's
  captures, nothing injected.

(*) Amplifier's orchestrators (loop-basic, for one) act on what ``prompt:submit``,
``tool:pre`` and ``tool:post`` handlers return; whether a ``session:start`` result is
injected depends on the host. So by default (``inject_at="prompt"``) the identity and
briefing text is held and injected with the first prompt; ``inject_at="start"`` returns
it from ``session:start`` instead.

The host never sees an exception from here: an Amber error (no daemon, a timeout, a
refused request) is logged on the ``amber.amplifier`` logger and the handler returns
"nothing to inject". Every request has a deadline (``deadline`` seconds, longer for
``session:end``, which curates); after a connection failure (not a mere timeout), Amber
is left alone for ``retry_after`` seconds so a dead daemon costs nothing per event.

:class:`AmberHooks` holds the mapping and is usable without Amplifier (one method per
event, taking the event's ``data`` dict and returning the text to inject, ``""`` for
none). :func:`mount` is the Amplifier entry point; it imports ``amplifier_core`` only
when it runs, so this file imports and works without Amplifier installed.

To use it in a bundle, make this file (and ``amber_client``) importable as a module and
point the bundle's ``hooks:`` list at it, with config keys matching
:class:`AmberHooks`' keyword arguments (``socket``, ``start``, ``amberd``, ``cwd``,
``deadline``, ...) plus ``inject_at`` and ``priority``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from typing import Any, Callable

from amber_client import AmberConnectionError, AmberError, Client, ResponseTimeout, SessionNotFound

log = logging.getLogger("amber.amplifier")

EVENTS = ("session:start", "prompt:submit", "tool:pre", "tool:post", "session:end")

# The tool-input fields that say what a call is about, in the order they are joined.
_TOOL_FIELDS = ("command", "cmd", "query", "pattern", "path", "file_path", "paths", "url", "operation")
# The longest text sent for an event: the daemon skips captures over its max_chars
# (8192 by default) anyway, so megabytes of tool output need not cross the socket.
MAX_EVENT_CHARS = 64 * 1024


def _clip(text: str) -> str:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates on the wire
    return text[:MAX_EVENT_CHARS]


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return str(v)


def tool_call_text(data: dict[str, Any]) -> str:
    """What a ``tool:pre`` call is about: its command, query, pattern, path or URL (else
    its whole input as JSON)."""
    inp = data.get("tool_input", data.get("input", data.get("arguments")))
    if isinstance(inp, dict):
        parts = []
        for k in _TOOL_FIELDS:
            v = inp.get(k)
            if isinstance(v, list):
                v = " ".join(str(x) for x in v)
            if isinstance(v, (str, int, float)) and str(v).strip():
                parts.append(str(v).strip())
        return " ".join(parts) if parts else _as_text(inp)
    return _as_text(inp)


def tool_result_text(data: dict[str, Any]) -> str:
    """A ``tool:post`` result as text: its output (stdout and stderr for a shell), or its
    error."""
    r = data.get("result", data.get("tool_result", data.get("tool_response")))
    if r is not None and not isinstance(r, (dict, str, list)) and hasattr(r, "output"):
        r = {"output": getattr(r, "output", None), "error": getattr(r, "error", None)}
    if isinstance(r, dict):
        out = r.get("output")
        if out is None and r.get("error") is not None:
            err = r["error"]
            out = err.get("message", err) if isinstance(err, dict) else err
        if isinstance(out, dict) and ("stdout" in out or "stderr" in out):
            out = "\n".join(_as_text(out.get(k)) for k in ("stdout", "stderr") if out.get(k))
        return _as_text(out)
    return _as_text(r)


def _session_key(data: dict[str, Any]) -> str | None:
    """The host's session id as Amber's session ``key`` (1 to 128 characters), if the
    event has one."""
    sid = data.get("session_id")
    if isinstance(sid, (str, int)) and not isinstance(sid, bool):
        key = str(sid).strip()
        if 0 < len(key) <= 128:
            return key
    return None


class AmberHooks:
    """Amber's side of an agent session, one method per host event. Each takes the
    event's data dict and returns the text to inject into the agent's context (``""``
    for none) and never raises.

    ``socket``, ``start``, ``amberd`` are :class:`amber_client.Client`'s; ``cwd`` is the
    session's working directory (default: the event's ``cwd``, else the process's);
    ``deadline`` bounds each request in seconds (``end_deadline`` for ``session_end``);
    ``client`` uses an existing client instead.
    """

    def __init__(
        self,
        *,
        socket: str | None = None,
        start: bool = True,
        amberd: str | None = None,
        cwd: str | None = None,
        agent: str = "amplifier",
        deadline: float = 5.0,
        end_deadline: float = 30.0,
        start_timeout: float = 30.0,
        retry_after: float = 30.0,
        client: Client | None = None,
    ):
        self.socket = socket
        self.start = start
        self.amberd = amberd
        self.cwd = cwd
        self.agent = agent
        self.deadline = deadline
        self.end_deadline = end_deadline
        self.start_timeout = start_timeout
        self.retry_after = retry_after
        self._client = client
        self._lock = threading.Lock()
        self._sessions: dict[Any, str] = {}  # the host's session id -> Amber's
        self._down_until = 0.0

    # -- plumbing -------------------------------------------------------------------

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _amber(self) -> Client:
        if self._client is None:
            self._client = Client(
                self.socket,
                start=self.start,
                amberd=self.amberd,
                timeout=self.deadline,
                start_timeout=self.start_timeout,
                client_name="amber-amplifier-hook",
            )
        return self._client

    def _guard(self, event: str, fn: Callable[[Client], str]) -> str:
        """Runs ``fn`` with the client; any failure is logged and becomes ``""``."""
        if time.monotonic() < self._down_until:
            return ""
        try:
            with self._lock:
                return fn(self._amber()) or ""
        except ResponseTimeout as e:
            log.warning("amber: %s gave up after %gs: %s", event, self.deadline, e)
        except AmberConnectionError as e:
            self._down_until = time.monotonic() + self.retry_after
            log.warning("amber: %s skipped, the daemon is unreachable: %s", event, e)
        except AmberError as e:
            log.warning("amber: %s failed: %s", event, e)
        except Exception:
            log.exception("amber: %s failed", event)
        return ""

    def _cwd(self, data: dict[str, Any]) -> str:
        return os.path.abspath(self.cwd or data.get("cwd") or data.get("working_dir") or os.getcwd())

    def _start(self, c: Client, data: dict[str, Any], prompt: str | None) -> tuple[str, str]:
        """Starts an Amber session for the host's: its id and its context text (the
        identity, then the briefing)."""
        r = c.session_start(self.agent, cwd=self._cwd(data), prompt=prompt or None, key=_session_key(data))
        self._sessions[data.get("session_id")] = r["session_id"]
        parts = [(r.get("identity") or {}).get("text", ""), (r.get("briefing") or {}).get("text", "")]
        return r["session_id"], "\n\n".join(p.strip() for p in parts if p and p.strip())

    def _event(self, c: Client, data: dict[str, Any], kind: str, text: str, source: str | None) -> str:
        """``session_event`` in the host session's Amber session: the text to inject (the
        interjection when one fired). Starts a session when there is none (the hook was
        mounted after session:start; its context comes first then, unless that continues
        the Amber session of an earlier mount) or the daemon ended it (idle timeout; with a
        host session id, the same Amber session is continued)."""
        key = data.get("session_id")
        sid = self._sessions.get(key)
        context = ""
        if sid is None:
            sid, context = self._start(c, data, text if kind == "prompt" else None)
        try:
            r = c.session_event(sid, kind, _clip(text), source=source)
        except SessionNotFound:
            sid, _ = self._start(c, data, None)
            r = c.session_event(sid, kind, _clip(text), source=source)
        d = r.get("decision") or {}
        fired = d.get("text", "") if d.get("fired") else ""
        return "\n\n".join(t for t in (context, fired) if t)

    # -- the events -----------------------------------------------------------------

    def session_start(self, data: dict[str, Any]) -> str:
        """``session_start``: the identity (coordination files) and the briefing."""

        def run(c: Client) -> str:
            return self._start(c, data, _as_text(data.get("prompt")))[1]

        return self._guard("session:start", run)

    def prompt_submit(self, data: dict[str, Any]) -> str:
        """``session_event(kind="prompt")``: the interjection when one fired."""
        prompt = _as_text(data.get("prompt"))
        if not prompt.strip():
            return ""

        def run(c: Client) -> str:
            return self._event(c, data, "prompt", prompt, None)

        return self._guard("prompt:submit", run)

    def tool_pre(self, data: dict[str, Any]) -> str:
        """``session_event(kind="tool_call")``: the interjection when one fired."""
        text = tool_call_text(data)
        if not text.strip():
            return ""
        source = f"tool:{data.get('tool_name') or 'unknown'}"

        def run(c: Client) -> str:
            return self._event(c, data, "tool_call", text, source)

        return self._guard("tool:pre", run)

    def tool_post(self, data: dict[str, Any]) -> str:
        """``session_event(kind="tool_result")``: the output is captured (secrets
        redacted, too short or too long ones skipped by the daemon). Injects nothing (tool
        outputs are not searched), unless this event started the session."""
        text = tool_result_text(data)
        if not text.strip():
            return ""
        source = f"tool:{data.get('tool_name') or 'unknown'}"

        def run(c: Client) -> str:
            return self._event(c, data, "tool_result", text, source)

        return self._guard("tool:post", run)

    def session_end(self, data: dict[str, Any]) -> str:
        """``session_end``: the daemon files the transcript (when the event has one) and
        curates the session's captures. Injects nothing."""
        sid = self._sessions.pop(data.get("session_id"), None)
        if sid is None:
            return ""
        transcript = data.get("transcript")

        def run(c: Client) -> str:
            try:
                c.call(
                    "session_end",
                    {"session_id": sid, **({"transcript": transcript} if isinstance(transcript, str) else {})},
                    timeout=self.end_deadline,
                )
            except SessionNotFound:
                pass  # already ended by the daemon (idle timeout)
            return ""

        return self._guard("session:end", run)

    def handle(self, event: str, data: dict[str, Any]) -> str:
        """Dispatches a host event by name (``session:start``, ...); other events: ``""``."""
        method = {
            "session:start": self.session_start,
            "prompt:submit": self.prompt_submit,
            "tool:pre": self.tool_pre,
            "tool:post": self.tool_post,
            "session:end": self.session_end,
        }.get(event)
        return method(data or {}) if method is not None else ""


# -- Amplifier glue ---------------------------------------------------------------------


def _result(text: str) -> Any:
    """A HookResult: inject ``text`` when there is any, else continue. A plain dict with
    the same fields when amplifier_core is not installed."""
    fields: dict[str, Any] = {"action": "continue"}
    if text:
        fields = {
            "action": "inject_context",
            "context_injection": text,
            "context_injection_role": "system",
            "suppress_output": True,
        }
    try:
        from amplifier_core.models import HookResult
    except ImportError:
        return fields
    return HookResult(**fields)


def make_handlers(hooks: AmberHooks, *, inject_at: str = "prompt") -> dict[str, Callable[..., Any]]:
    """The async handlers for :data:`EVENTS`, each ``handler(event, data)``. The blocking
    client runs in a worker thread, bounded by a deadline a little past the client's."""
    held: dict[Any, str] = {}  # session:start context waiting for the first prompt

    async def run(event: str, data: dict[str, Any], limit: float) -> str:
        try:
            return await asyncio.wait_for(asyncio.to_thread(hooks.handle, event, data), limit)
        except Exception as e:  # includes the deadline
            log.warning("amber: %s gave up: %r", event, e)
            return ""

    async def handler(event: str, data: dict[str, Any]) -> Any:
        data = data or {}
        key = data.get("session_id")
        limit = hooks.deadline + 1.0
        if event == "session:end":
            limit = hooks.end_deadline + 1.0
        elif event == "session:start" and hooks.start:
            limit = hooks.start_timeout + hooks.deadline + 1.0
        text = await run(event, data, limit)
        if event == "session:start" and inject_at == "prompt":
            if text:
                held[key] = text
            return _result("")
        if event == "prompt:submit":
            text = "\n\n".join(t for t in (held.pop(key, ""), text) if t)
        if event == "session:end":
            held.pop(key, None)
        return _result(text)

    return {event: handler for event in EVENTS}


async def mount(coordinator: Any, config: dict[str, Any] | None = None) -> Callable[[], None]:
    """Amplifier's entry point: registers a handler for each of :data:`EVENTS` and
    returns the function that unregisters them."""
    config = dict(config or {})
    inject_at = config.pop("inject_at", "prompt")
    priority = int(config.pop("priority", 50))
    known = {"socket", "start", "amberd", "cwd", "agent", "deadline", "end_deadline", "start_timeout", "retry_after"}
    hooks = AmberHooks(**{k: v for k, v in config.items() if k in known})
    unregister = [
        coordinator.hooks.register(event, h, priority=priority, name=f"amber-{event}")
        for event, h in make_handlers(hooks, inject_at=inject_at).items()
    ]

    def cleanup() -> None:
        for u in unregister:
            try:
                u()
            except Exception:
                log.exception("amber: unregistering a hook failed")
        hooks.close()

    return cleanup
