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
import time
from pathlib import Path

import pytest
from mcp_env import amber_env  # noqa: F401 (a fixture)
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
    "outcome",
    "thread",
    "guard",
    "release",
    "run_record",
    "run_reward",
    "review",
}
KG_TOOLS = {"kg_add", "kg_invalidate", "kg_query", "kg_timeline", "kg_traverse", "kg_stats"}

# A call may start the daemon, which loads the embedding model: allow for it.
CALL_TIMEOUT = 120


def field(obj, snake, camel):
    """A field of an SDK model: v2 names them in snake_case, v1 in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def is_error(result):
    return bool(field(result, "is_error", "isError"))


async def with_session(env, body, tools="all"):
    """Runs `body` in an MCP session; `tools` picks the server's tool set (None: the
    default, what an agent sees)."""
    args = ["mcp"] if tools is None else ["mcp", "--tools", tools]
    params = StdioServerParameters(command=AMBER, args=args, env=env)
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
        assert EXPECTED_TOOLS | KG_TOOLS <= set(by_name), sorted(by_name)
        # No model is configured ([learn]): get_advice would answer no_model, so it is hidden.
        assert "get_advice" not in by_name, sorted(by_name)
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


def test_the_default_tool_surface_is_what_an_agent_needs_and_small(amber_env):
    """By default an agent sees recall, get, remember and outcome, and the definitions
    (what the model is sent with every request) stay within 4,000 characters."""
    env = dict(amber_env, AMBER_NO_START="1")

    async def body(session, init):
        listed = await session.list_tools()
        names = sorted(t.name for t in listed.tools)
        assert names == ["get", "outcome", "recall", "remember"], names
        chars = len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in listed.tools]))
        print(f"default tools/list: {len(names)} tools, {chars} characters")
        assert chars <= 4000, chars
        return chars

    small = asyncio.run(with_session(env, body, tools=None))

    async def everything(session, init):
        listed = await session.list_tools()
        return len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in listed.tools]))

    assert asyncio.run(with_session(env, everything)) > 3 * small, "--tools all offers the rest"


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
        # Every hit says how far it is trusted and where it came from (the daemon's word).
        assert top["trust"] == "agent" and top["from"].startswith("agent"), top

        r = await call(session, "get", {"id": filed["id"]})
        assert not is_error(r), text_of(r)
        meta = json.loads(text_of(r))["memory"]["metadata"]
        assert meta["by"] == "pytest", meta
        # Stamped by the daemon: the MCP door, an agent's trust.
        assert meta["trust"] == "agent" and meta["origin"]["door"] == "mcp", meta

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


def test_knowledge_graph_tools(amber_env):
    ada_falcon = "Ada Lovelace joined the Falcon team in March; she leads the parser rewrite."
    falcon_billing = "The Falcon team ships the billing service every second Tuesday."
    scope = "mcpgraph"

    async def body(session, init):
        # The six tools, each with an object schema naming its required arguments.
        by_name = {t.name: t for t in (await session.list_tools()).tools}
        assert KG_TOOLS <= set(by_name), sorted(by_name)
        schema = {n: field(by_name[n], "input_schema", "inputSchema") for n in KG_TOOLS | {"recall"}}
        for name in KG_TOOLS:
            assert schema[name]["type"] == "object" and by_name[name].description, name
        assert {"entities", "facts", "scope"} <= set(schema["kg_add"]["properties"])
        assert schema["kg_query"]["required"] == ["entity"] and "as_of" in schema["kg_query"]["properties"]
        assert schema["kg_timeline"]["required"] == ["entity"]
        assert schema["kg_invalidate"]["required"] == ["fact"] and "at" in schema["kg_invalidate"]["properties"]
        assert schema["kg_traverse"]["required"] == ["start"]
        assert {"max_hops", "as_of", "predicates", "memories_per_node"} <= set(schema["kg_traverse"]["properties"])
        assert "expand" in schema["recall"]["properties"]

        async def ok(name, arguments):
            r = await call(session, name, arguments)
            assert not is_error(r), f"{name}: {text_of(r)}"
            return json.loads(text_of(r))

        m_ada = (await ok("remember", {"content": ada_falcon, "scope": scope}))["id"]
        m_billing = (await ok("remember", {"content": falcon_billing, "scope": scope}))["id"]

        added = await ok(
            "kg_add",
            {
                "scope": scope,
                "entities": [{"name": "Ada Lovelace", "type": "person", "aliases": ["Ada"]}],
                "facts": [
                    {"subject": "Ada", "predicate": "works on", "object": "Falcon", "valid_from": "2024-03-01", "sources": [m_ada]},
                    {"subject": "Falcon", "predicate": "ships", "object": "billing service", "sources": [m_billing]},
                ],
            },
        )
        works_on, ships = added["facts"]
        assert works_on["predicate"] == "works_on" and works_on["subject"]["name"] == "Ada Lovelace"
        assert works_on["valid_from"] == "2024-03-01T00:00:00.000Z", "times come back as RFC 3339"
        assert works_on["sources"] == [m_ada]

        q = await ok("kg_query", {"entity": "ada", "scope": scope})
        assert q["entity"]["name"] == "Ada Lovelace"
        assert [f["id"] for f in q["facts"]] == [works_on["id"]]
        # Before its window began, the fact did not hold.
        q = await ok("kg_query", {"entity": "ada", "scope": scope, "as_of": "2024-01-01"})
        assert q["facts"] == []

        # Invalidate "ships" one second ago; asked just before that, it holds; now it does not.
        now_ms = int(time.time() * 1000)
        inv = await ok("kg_invalidate", {"fact": ships["id"], "at": now_ms - 1_000, "reason": "handed over"})
        assert inv["fact"]["id"] == ships["id"] and inv["fact"]["valid_to"]
        q = await ok("kg_query", {"entity": "Falcon", "scope": scope, "as_of": now_ms - 60_000})
        assert ships["id"] in [f["id"] for f in q["facts"]]
        q = await ok("kg_query", {"entity": "Falcon", "scope": scope})
        assert ships["id"] not in [f["id"] for f in q["facts"]]
        assert works_on["id"] in [f["id"] for f in q["facts"]], "Falcon as the object"
        tl = await ok("kg_timeline", {"entity": "Falcon", "scope": scope})
        assert {works_on["id"], ships["id"]} <= {f["id"] for f in tl["facts"]}

        # Two hops out, at a moment both facts held: the path and the memories behind it.
        t = await ok("kg_traverse", {"start": "Ada", "scope": scope, "max_hops": 2, "as_of": now_ms - 60_000})
        assert t["start"]["name"] == "Ada Lovelace"
        path = next(p for p in t["paths"] if p["end"].get("entity", {}).get("name") == "billing service")
        assert path["hops"] == 2
        assert [s["fact"]["predicate"] for s in path["steps"]] == ["works_on", "ships"]
        contents = {m["id"]: m["content"] for m in t["memories"]}
        assert contents[m_ada] == ada_falcon and contents[m_billing] == falcon_billing
        # Now the second hop is gone.
        t = await ok("kg_traverse", {"start": "Ada", "scope": scope, "max_hops": 2})
        assert [p["end"]["entity"]["name"] for p in t["paths"]] == ["Falcon"]

        st = await ok("kg_stats", {"scope": scope})
        assert (st["entities"], st["facts"], st["invalidated"], st["valid_now"]) == (3, 2, 1, 1), st

        r = await ok("recall", {"query": "What is Ada working on?", "scope": scope, "expand": "graph"})
        # The query names Ada: the memory behind her live fact comes in through the graph,
        # and says so; without expansion no hit carries a graph rank.
        by_id = {h["id"]: h for h in r["hits"]}
        assert by_id[m_ada].get("graph_rank") is not None, r["hits"]
        plain = await ok("recall", {"query": "What is Ada working on?", "scope": scope})
        assert not any("graph_rank" in h for h in plain["hits"]), plain["hits"]

        # An unknown fact: a tool error with the daemon's message; then bad arguments
        # and a bad time; the server still answers.
        r = await call(session, "kg_invalidate", {"fact": 987654321})
        assert is_error(r)
        assert "fact_not_found" in text_of(r) and "987654321" in text_of(r)
        r = await call(session, "kg_query", {"scope": scope})
        assert is_error(r) and "entity" in text_of(r)
        r = await call(session, "kg_query", {"entity": "Ada", "as_of": "last week"})
        assert is_error(r) and "as_of" in text_of(r)
        q = await ok("kg_query", {"entity": "Ada Lovelace", "scope": scope})
        assert q["entity"]["name"] == "Ada Lovelace"

    asyncio.run(with_session(amber_env, body))


def test_outcomes_supersession_and_a_session_manifest(amber_env):
    scope = "mcpoutcome"

    async def body(session, init):
        async def ok(name, arguments):
            r = await call(session, name, arguments)
            assert not is_error(r), f"{name}: {text_of(r)}"
            return json.loads(text_of(r))

        old = (await ok("remember", {"content": "the nightly job runs at 02:00 UTC", "scope": scope}))["id"]
        # A failure lowers the weight; an unknown result is a tool error the model can read.
        m = (await ok("outcome", {"memory_id": old[:8], "result": "failure", "note": "it moved"}))["memory"]
        assert abs(m["weight"] - 0.9) < 1e-6  # an agent never served it: half a failure
        r = await call(session, "outcome", {"memory_id": old, "result": "great"})
        assert is_error(r)
        # An invalidation that supersedes it takes its place in recall.
        new = (
            await ok(
                "remember",
                {"content": "the nightly job now runs at 04:00 UTC", "scope": scope, "type": "invalidation", "supersedes": [old]},
            )
        )["id"]
        hits = (await ok("recall", {"query": "when does the nightly job run?", "scope": scope}))["hits"]
        assert [h["id"] for h in hits] == [new]
        got = (await ok("get", {"id": old}))["memory"]
        assert got["superseded_by"] == new and got["archived_at"]
        # A session's manifest at session_end moves the weights of what it relied on.
        s = await ok("session_start", {"agent": "mcp-test", "scope": scope, "prompt": "nightly job time"})
        end = await ok(
            "session_end",
            {"session_id": s["session_id"], "manifest": [{"memory_id": new, "used": True, "result": "failure"}]},
        )
        assert abs(end["manifest"]["applied"][0]["weight"] - 0.9) < 1e-6, end["manifest"]
        # Addressing: a memory to another agent reaches its inbox; the guard answers.
        note = (await ok("remember", {"content": "codex: rotate the job's token", "scope": scope, "author": "mcp-test", "to": "codex"}))["id"]
        s = await ok("session_start", {"agent": "codex", "scope": scope})
        assert [i["id"] for i in s["inbox"]["items"]] == [note]
        g = await ok("guard", {"memory_id": note, "agent": "gemini"})
        assert (g["decision"], g["rule"]) == ("skip", "addressed_elsewhere")
        # Mail stays its recipient's: a client in no session reads no thread of it (as with get).
        r = await call(session, "thread", {"id": note[:8]})
        assert is_error(r) and "not_found" in text_of(r), text_of(r)
        # Runs: recorded, rewarded by their agent; the reward moves the used memory.
        run = (await ok("run_record", {"task": "retime the nightly job", "used": [new], "scope": scope}))["results"][0]["id"]
        r = await ok("run_reward", {"run_id": run, "reward": 1.0, "reason": "it ran at 04:00"})
        assert r["weights_moved"] == 1
        r = await call(session, "run_reward", {"run_id": run, "reward": 1.0, "agent": "someone-else"})
        assert is_error(r) and "not_permitted" in text_of(r)
        # Without a scope, a run files into the client's project (where get_advice looks),
        # with the advice it was given.
        def cli(*args):
            p = subprocess.run([AMBER, "--json", *args], env=amber_env, capture_output=True, text=True, timeout=CALL_TIMEOUT)
            assert p.returncode == 0, p.stderr
            return json.loads(p.stdout)

        project = cli("scope", "here")["scope"]
        assert project != "default"
        mine = (await ok("run_record", {"task": "retime it again", "advice": ["nightly-job"]}))["results"][0]["id"]
        shown = cli("runs", "show", mine)["run"]
        assert (shown["scope"], shown["advice"]) == (project, ["nightly-job"]), shown

    asyncio.run(with_session(amber_env, body))


def test_an_agent_through_mcp_disputes_but_never_retires_a_persons_memory_nor_reads_anothers_diary(amber_env):
    scope = "mcpauthority"

    def amber(*args):
        p = subprocess.run([AMBER, "--json", *args], env=amber_env, capture_output=True, text=True, timeout=CALL_TIMEOUT)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout) if p.stdout.strip() else None

    # The person's memory, filed at the command line.
    persons = amber("remember", "--scope", scope, "The staging database listens on port 5433.")["id"]

    async def body(session, init):
        async def ok(name, arguments):
            r = await call(session, name, arguments)
            assert not is_error(r), f"{name}: {text_of(r)}"
            return json.loads(text_of(r))

        # The agent's invalidation names it: the person's memory stays, disputed.
        r = await ok(
            "remember",
            {"content": "The staging database moved to port 6543.", "scope": scope, "type": "invalidation", "supersedes": [persons]},
        )
        assert r["disputed"] == [persons], r
        hits = (await ok("recall", {"query": "staging database port", "scope": scope}))["hits"]
        old = [h for h in hits if h["id"] == persons]
        assert old and old[0]["disputed_by"] == [r["id"]], hits
        # Another agent's diary is not there for this agent, by get or recall.
        diary = (await ok("remember", {"content": "diary: the staging password rotates on Fridays", "scope": scope, "author": "codex", "to": "self"}))["id"]
        g = await call(session, "get", {"id": diary})
        assert is_error(g) and "no memory with id" in text_of(g), text_of(g)
        hits = (await ok("recall", {"query": "staging password rotates", "scope": scope}))["hits"]
        assert diary not in [h["id"] for h in hits], hits
        # The agent may forget; only the person brings it back.
        await ok("forget", {"id": persons})

    asyncio.run(with_session(amber_env, body))
    assert amber("get", persons)["forgotten_at"]
    amber("unforget", persons)
    assert amber("get", persons).get("forgotten_at") is None
    assert amber("get", persons)["metadata"]["trust"] == "person"


def test_the_mcp_server_gives_claude_codes_token_only_to_claude_codes_sessions(amber_env):
    for name in ("claude-code", "codex"):
        p = subprocess.run([AMBER, "agent", "register", name], env=amber_env, capture_output=True, text=True, timeout=CALL_TIMEOUT)
        assert p.returncode == 0, p.stderr

    async def as_claude_code(session, init):
        r = await call(session, "session_start", {"agent": "claude-code", "scope": "mcptokens"})
        assert not is_error(r), text_of(r)
        # A model naming another registered agent does not get that agent's token.
        r = await call(session, "session_start", {"agent": "codex", "scope": "mcptokens"})
        assert is_error(r) and "registered" in text_of(r), text_of(r)

    under_claude = dict(amber_env, CLAUDE_CODE_SESSION_ID="5d6c7b8a-1e2f-4a3b-9c8d-7e6f5a4b3c2d")
    asyncio.run(with_session(under_claude, as_claude_code))

    async def elsewhere(session, init):
        # Not started by Claude Code: the server holds no agent's token for it.
        r = await call(session, "session_start", {"agent": "claude-code", "scope": "mcptokens"})
        assert is_error(r) and "registered" in text_of(r), text_of(r)

    asyncio.run(with_session(amber_env, elsewhere))


def test_get_advice_is_listed_with_a_model_and_answers_through_the_daemon(amber_env):
    # A model configured (never contacted here: no advice is learned, so nothing is routed).
    Path(amber_env["AMBER_CONFIG"]).write_text(
        '[learn]\nkind = "openai"\nurl = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    )

    async def body(session, init):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert "get_advice" in tools, sorted(tools)
        assert field(tools["get_advice"], "input_schema", "inputSchema")["required"] == ["task"]
        r = await call(session, "get_advice", {"task": "fix the failing migration", "scope": "mcpadvice"})
        assert not is_error(r), text_of(r)
        out = json.loads(text_of(r))
        assert out["situation"] is None and "no advice has been learned in mcpadvice" in out["message"], out
        r = await call(session, "get_advice", {"task": "x", "moment": "later", "scope": "mcpadvice"})
        assert is_error(r) and "moment must be one of" in text_of(r)

    asyncio.run(with_session(amber_env, body))


def test_get_advice_follows_the_running_daemon_not_the_servers_own_config(amber_env):
    config = Path(amber_env["AMBER_CONFIG"])
    learn = '[learn]\nkind = "openai"\nurl = "http://127.0.0.1:9/v1"\nmodel = "m"\n'

    async def listed(session, init):
        return "get_advice" in {t.name for t in (await session.list_tools()).tools}

    def daemon(action):
        subprocess.run([AMBER, "daemon", action], env=amber_env, timeout=120, check=True, capture_output=True)

    # A daemon started with a model; this server's config names none: offered, and it
    # answers through the daemon.
    config.write_text(learn)
    daemon("start")
    config.write_text("")
    assert asyncio.run(with_session(amber_env, listed))

    async def asks(session, init):
        r = await call(session, "get_advice", {"task": "rotate the keys", "scope": "mcpadvice2"})
        return is_error(r), text_of(r)

    failed, text = asyncio.run(with_session(amber_env, asks))
    assert not failed and "no advice has been learned" in text, text
    # A daemon without a model; this server's config names one: not offered.
    daemon("stop")
    daemon("start")
    config.write_text(learn)
    assert not asyncio.run(with_session(amber_env, listed))
