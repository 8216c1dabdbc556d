"""hooks-amber: Amber's session tiers on the Amplifier kernel's own events.

| kernel event (``amplifier_core.events``) | Amber | what reaches the context |
|---|---|---|
| ``session:start`` | ``session_start`` (agent ``amplifier``, key = Amplifier's session id, cwd): identity and briefing | held: the kernel discards a ``session:start`` result, so they go in with the first prompt |
| ``prompt:submit`` | ``session_event`` kind ``prompt`` (the gate; the prompt is filed with the transcript at the end, not on its own) | the held identity and briefing, and the interjection when the gate fires |
| ``tool:post``, ``tool:error`` | ``session_event`` kind ``tool_result`` (``<tool>: <what>`` and the output): captured as evidence, sent to the gate. The ``memory`` tool and ``amber`` run through a shell are Amber's own: not sent at all | the interjection when the gate fires |
| ``session:end`` | ``session_end`` with the transcript (the context's user and assistant text, without what hooks injected or the ``memory`` tool's calls): curation | nothing |

Everything injected goes through ``HookResult(action="inject_context")``, which the
orchestrator hands to the kernel (``coordinator.process_hook_result``), fenced as
``<amber kind="briefing|interjection">`` with each memory labelled by the daemon with
where it came from. A handler never raises and never blocks past its deadline.

Config (bundle ``hooks:`` entry): ``socket``, ``start`` (start amberd when none answers,
default true), ``amberd``, ``cwd``, ``deadline`` (s per request, 5), ``end_deadline``
(30), ``start_timeout`` (30), ``retry_after`` (30), ``priority`` (50), ``transcript``
(file it at session end, default true).
"""

from __future__ import annotations

__amplifier_module_type__ = "hook"

import asyncio
import time
from typing import Any

from amber_amplifier import AGENT, CAPABILITY, TOOL_NAME, Link, as_text, clip, fence, is_ambers_own, log
from amber_amplifier import tool_call_text, tool_result_text
from amber_client import Client, SessionNotFound
from amplifier_core import HookResult
from amplifier_core.events import PROMPT_SUBMIT, SESSION_END, SESSION_START, TOOL_ERROR, TOOL_POST

EVENTS = (SESSION_START, PROMPT_SUBMIT, TOOL_POST, TOOL_ERROR, SESSION_END)


def _start_text(r: dict[str, Any]) -> str:
    parts = [
        ((r.get("identity") or {}).get("text") or "", "identity"),
        ((r.get("inbox") or {}).get("text") or "", "inbox"),
        ((r.get("briefing") or {}).get("text") or "", "briefing"),
    ]
    return "\n\n".join(fence(kind, t) for t, kind in parts if t.strip())


def _message_text(m: dict[str, Any]) -> str:
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text")
    return ""


def transcript_of(messages: list[dict[str, Any]]) -> str:
    """The session's words: each user and assistant message's text and each tool call's
    name, but not what hooks injected (Amber's own and others'), nor the ``memory``
    tool's calls; tool output was captured when it came."""
    lines = []
    for m in messages:
        if not isinstance(m, dict) or (m.get("metadata") or {}).get("source") == "hook":
            continue
        role = m.get("role")
        if role not in ("user", "assistant"):
            continue
        text = _message_text(m).strip()
        if text:
            lines.append(f"{role}: {text}")
        for tc in m.get("tool_calls") or []:
            name = tc.get("tool") or tc.get("name") if isinstance(tc, dict) else None
            if name and name != TOOL_NAME:
                lines.append(f"[tool {name}]")
    return "\n\n".join(lines)


class AmberHooks:
    """The handlers of one mounted session. ``timings`` keeps, per handled event, its
    name, milliseconds and the characters it injected (what docs/INTEGRATIONS.md reports)."""

    def __init__(self, coordinator: Any, link: Link, *, transcript: bool = True):
        self.coordinator = coordinator
        self.link = link
        self.transcript = transcript
        self.held: dict[str, str] = {}
        self.timings: list[dict[str, Any]] = []

    # -- plumbing ---------------------------------------------------------------------

    def host_session(self, data: dict[str, Any]) -> str:
        sid = data.get("session_id") or getattr(self.coordinator, "session_id", None)
        return str(sid or "amplifier")

    async def _run(self, what: str, fn, limit: float, default: Any = None) -> Any:
        try:
            return await asyncio.wait_for(asyncio.to_thread(self.link.guard, what, fn, default), limit)
        except Exception as e:  # the deadline, or anything else: never into the host
            log.warning("amber: %s gave up: %r", what, e)
            return default

    def _start(self, c: Client, host: str, prompt: str | None) -> tuple[str, str]:
        """Starts (or, with the same key, continues) the Amber session of ``host``."""
        r = c.session_start(AGENT, cwd=self.link.here(), prompt=prompt or None, key=host[:128])
        self.link.sessions[host] = r["session_id"]
        return r["session_id"], ("" if r.get("resumed") else _start_text(r))

    def _event(self, c: Client, host: str, kind: str, text: str, source: str | None, capture: bool | None) -> str:
        sid = self.link.sessions.get(host)
        context = ""
        if sid is None:  # mounted late, or session:start failed: start it now
            sid, context = self._start(c, host, text if kind == "prompt" else None)
        try:
            r = c.session_event(sid, kind, clip(text), source=source, capture=capture)
        except SessionNotFound:  # ended by the daemon (idle): the key continues it
            sid, _ = self._start(c, host, None)
            r = c.session_event(sid, kind, clip(text), source=source, capture=capture)
        d = r.get("decision") or {}
        fired = fence("interjection", d["text"]) if d.get("fired") and d.get("text") else ""
        return "\n\n".join(t for t in (context, fired) if t)

    def _result(self, event: str, t0: float, text: str) -> HookResult:
        self.timings.append({"event": event, "ms": (time.perf_counter() - t0) * 1000, "chars": len(text)})
        if not text:
            return HookResult(action="continue")
        return HookResult(
            action="inject_context",
            context_injection=text,
            context_injection_role="system",
            suppress_output=True,
        )

    # -- the events -------------------------------------------------------------------

    async def on_session_start(self, event: str, data: dict[str, Any]) -> HookResult:
        t0 = time.perf_counter()
        host = self.host_session(data or {})
        limit = self.link.deadline + 1 + (self.link.start_timeout if self.link.start else 0)
        got = await self._run(event, lambda c: self._start(c, host, as_text((data or {}).get("prompt"))), limit)
        if got and got[1]:
            self.held[host] = got[1]
        # Held for the first prompt: the kernel does not act on a session:start result.
        return self._result(event, t0, "")

    async def on_prompt_submit(self, event: str, data: dict[str, Any]) -> HookResult:
        t0 = time.perf_counter()
        data = data or {}
        host = self.host_session(data)
        prompt = as_text(data.get("prompt"))
        said = ""
        if prompt.strip():
            limit = self.link.deadline + 1 + (self.link.start_timeout if self.link.start else 0)
            said = await self._run(event, lambda c: self._event(c, host, "prompt", prompt, None, False), limit, "")
        text = "\n\n".join(t for t in (self.held.pop(host, ""), said) if t)
        return self._result(event, t0, text)

    async def on_tool_done(self, event: str, data: dict[str, Any]) -> HookResult:
        t0 = time.perf_counter()
        data = data or {}
        name = str(data.get("tool_name") or "tool")
        inp = data.get("tool_input")
        if is_ambers_own(name, inp):
            return self._result(event, t0, "")
        if event == TOOL_ERROR:
            out = "[failed]\n" + tool_result_text({"error": data.get("error")})
        else:
            out = tool_result_text(data.get("result"))
        text = tool_call_text(name, inp) + ("\n" + out if out.strip() else "")
        host = self.host_session(data)
        source = f"amplifier:tool:{name}"
        said = await self._run(
            event, lambda c: self._event(c, host, "tool_result", text, source, None), self.link.deadline + 1, ""
        )
        return self._result(event, t0, said)

    async def on_session_end(self, event: str, data: dict[str, Any]) -> HookResult:
        t0 = time.perf_counter()
        host = self.host_session(data or {})
        self.held.pop(host, None)
        sid = self.link.sessions.pop(host, None)
        if sid is None:
            return self._result(event, t0, "")
        transcript = ""
        if self.transcript:
            try:
                context = self.coordinator.get("context")
                messages = await context.get_messages() if context is not None else []
                transcript = transcript_of(list(messages or []))
            except Exception as e:
                log.warning("amber: the transcript was not read: %r", e)

        def end(c: Client) -> None:
            params: dict[str, Any] = {"session_id": sid}
            if transcript:
                params |= {"transcript": transcript, "transcript_source": "amplifier:transcript"}
            try:
                c.call("session_end", params, timeout=self.link.end_deadline)
            except SessionNotFound:
                pass  # ended already (idle timeout)

        await self._run(event, end, self.link.end_deadline + 1)
        return self._result(event, t0, "")


async def mount(coordinator: Any, config: dict[str, Any] | None = None):
    """Registers the handlers on the kernel's hook registry and offers the session's
    :class:`~amber_amplifier.Link` to the ``memory`` tool; returns the cleanup."""
    config = dict(config or {})
    priority = int(config.get("priority", 50))
    hooks = AmberHooks(coordinator, Link.from_config(config), transcript=bool(config.get("transcript", True)))
    handlers = {
        SESSION_START: hooks.on_session_start,
        PROMPT_SUBMIT: hooks.on_prompt_submit,
        TOOL_POST: hooks.on_tool_done,
        TOOL_ERROR: hooks.on_tool_done,
        SESSION_END: hooks.on_session_end,
    }
    unregister = [
        coordinator.hooks.register(event, h, priority=priority, name=f"amber-{event}") for event, h in handlers.items()
    ]
    try:
        coordinator.register_capability(CAPABILITY, hooks.link)
        coordinator.register_capability("amber.hooks", hooks)
    except Exception:
        log.exception("amber: the memory tool will run without the session")

    async def cleanup() -> None:
        for u in unregister:
            try:
                u()
            except Exception:
                log.debug("amber: unregistering a hook failed", exc_info=True)
        await asyncio.to_thread(hooks.link.close)

    return cleanup
