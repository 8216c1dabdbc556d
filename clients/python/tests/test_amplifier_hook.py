"""The example Amplifier hook module driven through whole sessions against the real
daemon, and against no daemon at all."""

from __future__ import annotations

import asyncio
import time

import amplifier_hook
import pytest
from amplifier_hook import AmberHooks, make_handlers, mount, tool_call_text, tool_result_text
from conftest import POSTGRES, RELEASE, RELEASE_PROMPT, short_tmpdir

BASH_OUTPUT = {
    "stdout": "upload: dist/app.tar.gz to s3://staging-artifacts-eu-west-1/app.tar.gz failed\n",
    "stderr": "An error occurred (AccessDenied) when calling the PutObject operation: Access Denied\n",
    "returncode": 2,
}


def _scope_of(daemon, hooks: AmberHooks, host_session: str) -> tuple[str, str]:
    sid = hooks._sessions[host_session]
    with daemon.client() as c:
        return sid, c.session_show(sid)["session"]["scope"]


def test_the_hooks_drive_a_whole_session(daemon, project):
    hooks = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project / "src"))
    ev = {"session_id": "amp-1"}
    context = hooks.session_start({**ev, "prompt": "how do we release to staging?"})
    assert "ship the staging release" in context, "the identity (HANDOFF.md) is injected at start"
    sid, scope = _scope_of(daemon, hooks, "amp-1")
    assert scope.startswith("project/shop-")
    with daemon.client() as c:
        c.remember(RELEASE, scope=scope)
        c.remember(POSTGRES, scope=scope)

    said = hooks.prompt_submit({**ev, "prompt": RELEASE_PROMPT})
    assert "AWS_PROFILE=staging" in said, "the interjection fired and is returned"
    # In the cooldown: silent.
    assert hooks.tool_pre({**ev, "tool_name": "bash", "tool_input": {"command": "make release"}}) == ""
    assert hooks.tool_post({**ev, "tool_name": "bash", "tool_input": {"command": "make release"},
                            "result": {"success": False, "output": BASH_OUTPUT}}) == ""
    assert hooks.prompt_submit({**ev, "prompt": "ok"}) == ""

    with daemon.client() as c:
        s = c.session_show(sid)["session"]
        assert s["events"] == 4
        assert [d["reason"] for d in s["decisions"]] == ["gate", "cooldown", "not_searched", "too_short"]
        captured = {x["source"] for x in s["captured"]}
        assert "tool:bash" in captured, s["captured"]
        assert "prompt" in captured

    assert hooks.session_end(ev) == ""
    with daemon.client() as c:
        shown = c.session_show(sid)
        assert shown["live"] is False and shown["session"]["curation"] is not None
    assert hooks.session_end(ev) == "", "ending twice is a no-op"
    hooks.close()


def test_a_hook_mounted_late_starts_the_session_at_the_first_prompt(daemon, project):
    hooks = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    said = hooks.prompt_submit({"session_id": "late", "prompt": "what is next for the staging release?"})
    assert "ship the staging release" in said, "the session context comes with the first prompt"
    assert "late" in hooks._sessions
    hooks.session_end({"session_id": "late"})
    hooks.close()


def test_a_session_the_daemon_ended_is_continued(daemon, project):
    hooks = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    hooks.session_start({"session_id": "idle"})
    first = hooks._sessions["idle"]
    with daemon.client() as c:
        c.session_end(first)  # as the idle timeout would
    assert hooks.prompt_submit({"session_id": "idle", "prompt": "a prompt after a long pause"}) == ""
    assert hooks._sessions["idle"] == first, "keyed by the host's session id: the same Amber session, live again"
    with daemon.client() as c:
        shown = c.session_show(first)
        assert shown["live"] is True and shown["session"]["key"] == "idle"
        assert shown["session"]["events"] == 1
    hooks.session_end({"session_id": "idle"})
    hooks.close()


def test_without_a_host_session_id_an_ended_session_is_started_again(daemon, project):
    hooks = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    hooks.session_start({})
    first = hooks._sessions[None]
    with daemon.client() as c:
        c.session_end(first)
    assert hooks.prompt_submit({"prompt": "a prompt after a long pause"}) == ""
    second = hooks._sessions[None]
    assert second != first
    with daemon.client() as c:
        assert c.session_show(second)["session"]["events"] == 1
    hooks.session_end({})
    hooks.close()


def test_a_hook_mounted_again_continues_the_amber_session(daemon, project):
    ev = {"session_id": "remount"}
    hooks = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    assert "ship the staging release" in hooks.session_start(ev)
    first = hooks._sessions["remount"]
    hooks.close()
    again = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    assert again.session_start(ev) == "", "the agent's context already holds the identity and briefing"
    assert again._sessions["remount"] == first
    # Mounted late (no session:start seen): the first prompt continues it, injecting nothing again.
    late = AmberHooks(socket=str(daemon.socket), start=False, cwd=str(project))
    assert late.prompt_submit({**ev, "prompt": "what is next for the staging release?"}) == ""
    assert late._sessions["remount"] == first
    with daemon.client() as c:
        assert c.session_show(first)["session"]["events"] == 1
    late.session_end(ev)
    again.close()


def test_the_amplifier_glue_injects_the_start_context_with_the_first_prompt(daemon, project):
    class Hooks:
        def __init__(self):
            self.handlers = {}

        def register(self, event, handler, priority=0, name=None):
            self.handlers[event] = handler
            return lambda: self.handlers.pop(event)

    class Coordinator:
        hooks = Hooks()

    async def session():
        coord = Coordinator()
        cleanup = await mount(coord, {"socket": str(daemon.socket), "start": False, "cwd": str(project)})
        h = coord.hooks.handlers
        assert set(h) == set(amplifier_hook.EVENTS)
        r0 = await h["session:start"]("session:start", {"session_id": "g"})
        r1 = await h["prompt:submit"]("prompt:submit", {"session_id": "g", "prompt": "what should I do next here?"})
        r2 = await h["prompt:submit"]("prompt:submit", {"session_id": "g", "prompt": "and then what should I do?"})
        r3 = await h["session:end"]("session:end", {"session_id": "g"})
        cleanup()
        assert coord.hooks.handlers == {}
        return r0, r1, r2, r3

    r0, r1, r2, r3 = asyncio.run(session())
    action = lambda r: r["action"] if isinstance(r, dict) else r.action  # noqa: E731
    text = lambda r: r["context_injection"] if isinstance(r, dict) else r.context_injection  # noqa: E731
    assert action(r0) == "continue", "held for the first prompt"
    assert action(r1) == "inject_context" and "ship the staging release" in text(r1)
    assert action(r2) == "continue" and action(r3) == "continue"


def test_a_dead_daemon_makes_every_hook_return_nothing_quickly():
    root = short_tmpdir()
    hooks = AmberHooks(socket=str(root / "nobody.sock"), start=False, deadline=1.0, retry_after=0)
    ev = {"session_id": "dead", "cwd": str(root)}
    t0 = time.monotonic()
    assert hooks.session_start(ev) == ""
    assert hooks.prompt_submit({**ev, "prompt": RELEASE_PROMPT}) == ""
    assert hooks.tool_pre({**ev, "tool_name": "bash", "tool_input": {"command": "make release"}}) == ""
    assert hooks.tool_post({**ev, "tool_name": "bash", "result": {"output": BASH_OUTPUT}}) == ""
    assert hooks.session_end(ev) == ""
    assert hooks.handle("tool:error", ev) == ""

    async def glue():
        handlers = make_handlers(hooks)
        return [await handlers[e](e, {**ev, "prompt": "a prompt with some words"}) for e in amplifier_hook.EVENTS]

    results = asyncio.run(glue())
    assert all((r["action"] if isinstance(r, dict) else r.action) == "continue" for r in results)
    assert time.monotonic() - t0 < 3, "a dead daemon costs next to nothing"
    root.rmdir()


def test_a_daemon_dying_mid_session_never_raises_into_the_host(fresh_daemon, project):
    hooks = AmberHooks(socket=str(fresh_daemon.socket), start=False, cwd=str(project), deadline=2.0)
    ev = {"session_id": "dies"}
    assert "ship the staging release" in hooks.session_start(ev)
    fresh_daemon.stop()
    t0 = time.monotonic()
    assert hooks.prompt_submit({**ev, "prompt": RELEASE_PROMPT}) == ""
    assert hooks.tool_pre({**ev, "tool_name": "grep", "tool_input": {"pattern": "AWS_PROFILE"}}) == ""
    assert hooks.session_end(ev) == ""
    assert time.monotonic() - t0 < 3


@pytest.mark.parametrize(
    ("data", "expect"),
    [
        ({"tool_name": "bash", "tool_input": {"command": "make release"}}, "make release"),
        ({"tool_name": "grep", "tool_input": {"pattern": "AWS_PROFILE", "path": "src/"}}, "AWS_PROFILE src/"),
        ({"tool_name": "read_file", "tool_input": {"file_path": "README.md"}}, "README.md"),
        ({"tool_name": "x", "tool_input": {"a": 1}}, '{"a": 1}'),
    ],
)
def test_tool_call_text(data, expect):
    assert tool_call_text(data) == expect


def test_tool_result_text():
    assert tool_result_text({"result": {"output": BASH_OUTPUT}}) == BASH_OUTPUT["stdout"] + "\n" + BASH_OUTPUT["stderr"]
    assert tool_result_text({"result": {"success": False, "error": {"message": "boom"}}}) == "boom"
    assert tool_result_text({"result": {"output": "plain"}}) == "plain"
    assert tool_result_text({"tool_response": "direct"}) == "direct"
    assert tool_result_text({}) == ""
