"""`amber mcp` driven by the official MCP Python SDK (the `mcp` package from PyPI).

The server is spawned over stdio the way an MCP host spawns it. Its daemon is started on
demand by `amber mcp` itself, in a private data directory and socket; it is stopped at
the end with `amber daemon stop`.

Run: AMBER_BIN=target/release/amber [AMBERD=target/release/amberd] python3 -m pytest tests/mcp -q
(the model and runtime from scripts/setup.sh must be installed; AMBER_HOME is passed on).
"""

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
AMBER = os.environ.get("AMBER_BIN") or str(ROOT / "target" / "release" / "amber")

EXPECTED_TOOLS = {
    "recall",
    "remember",
    "get",
    "forget",
    "status",
    "links",
    "session_start",
    "session_event",
    "session_end",
    "session_show",
}

# A call may start the daemon, which loads the embedding model: allow for it.
CALL_TIMEOUT = 120


def field(obj, snake, camel):
    """A field of an SDK model: v2 names them in snake_case, v1 in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def is_error(result):
    return bool(field(result, "is_error", "isError"))


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


async def with_session(env, body):
    params = StdioServerParameters(command=AMBER, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return await body(session, init)


async def call(session, name, arguments=None):
    return await asyncio.wait_for(session.call_tool(name, arguments or {}), CALL_TIMEOUT)


def test_initialize_and_tools_list_need_no_daemon(amber_env):
    env = dict(amber_env, AMBER_NO_START="1")

    async def body(session, init):
        info = field(init, "server_info", "serverInfo")
        assert info.name == "amber"
        assert init.capabilities.tools is not None
        tools = (await session.list_tools()).tools
        by_name = {t.name: t for t in tools}
        assert EXPECTED_TOOLS <= set(by_name), sorted(by_name)
        for t in tools:
            schema = field(t, "input_schema", "inputSchema")
            assert schema.get("type") == "object", t.name
            assert t.description, t.name
        recall_schema = field(by_name["recall"], "input_schema", "inputSchema")
        assert "query" in recall_schema["properties"] and recall_schema["required"] == ["query"]
        assert "content" in field(by_name["remember"], "input_schema", "inputSchema")["properties"]
        # No daemon and none may be started: a tool error with the reason, and the
        # server keeps serving.
        r = await call(session, "status")
        assert is_error(r)
        assert "not running" in text_of(r)
        r = await call(session, "recall", {"query": "anything"})
        assert is_error(r) and "not running" in text_of(r)

    asyncio.run(with_session(env, body))


def test_remember_recall_round_trip_and_daemon_errors(amber_env):
    content = "The flaky integration test XK-4471 is fixed by pinning the tantivy writer heap to 50 MB."
    others = [
        "Deploys go out on Tuesdays after the release notes are reviewed.",
        "The CI cache lives in target/, keep it between runs.",
    ]

    async def body(session, init):
        for other in others:
            r = await call(session, "remember", {"content": other, "scope": "mcptest"})
            assert not is_error(r), text_of(r)
        r = await call(
            session,
            "remember",
            {"content": content, "scope": "mcptest/ci", "type": "discovery", "metadata": {"by": "pytest"}},
        )
        assert not is_error(r), text_of(r)
        filed = json.loads(text_of(r))
        assert filed["created"] is True and len(filed["id"]) == 32

        r = await call(session, "recall", {"query": "how was the flaky XK-4471 test fixed?", "scope": "mcptest", "k": 3})
        assert not is_error(r), text_of(r)
        hits = json.loads(text_of(r))["hits"]
        assert hits, "no hits"
        top = hits[0]
        assert top["id"] == filed["id"]
        assert top["content"] == content
        assert top["scope"] == "mcptest/ci" and top["type"] == "discovery"
        assert isinstance(top["score"], float) and top["score"] > 0

        r = await call(session, "get", {"id": filed["id"]})
        assert not is_error(r), text_of(r)
        assert json.loads(text_of(r))["memory"]["metadata"] == {"by": "pytest"}

        # A daemon error is a tool error carrying the daemon's message.
        bogus = "0123456789abcdef0123456789abcdef"
        r = await call(session, "get", {"id": bogus})
        assert is_error(r)
        assert f"no memory with id {bogus}" in text_of(r)
        assert "not_found" in text_of(r)
        r = await call(session, "get", {"id": "not-an-id"})
        assert is_error(r) and text_of(r)

        # Arguments that miss the schema: a tool error too, and the server goes on.
        r = await call(session, "recall", {"scope": "mcptest"})
        assert is_error(r) and "query" in text_of(r)

        r = await call(session, "status")
        assert not is_error(r), text_of(r)
        assert json.loads(text_of(r))["engine"]["memories"] == 3

    asyncio.run(with_session(amber_env, body))
