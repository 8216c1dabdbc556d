"""amber_client against the real daemon (and, for timeouts and garbage, a fake one)."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import LUNCH, POSTGRES, RELEASE, RELEASE_PROMPT, Daemon, short_tmpdir

import amber_client
from amber_client import (
    AmberError,
    Client,
    ConnectionLost,
    DaemonNotRunning,
    InvalidParams,
    MethodNotFound,
    NotFound,
    NotPermitted,
    ProtocolError,
    ResponseTimeout,
    SessionNotFound,
)


def test_hello_reports_the_protocol_version_and_every_method(daemon):
    with daemon.client() as c:
        h = c.hello()
    assert h["server"] == "amberd"
    assert h["protocol_version"] == amber_client.PROTOCOL_VERSION == 1
    for m in ("remember", "recall", "session_start", "session_event", "session_end", "session_show", "links"):
        assert m in h["methods"]
        assert hasattr(Client, m), f"the client has no method for {m}"
    # Every method the registry gives a Python door (not the person's own export, import
    # and backup: the `amber` command's) has a client method.
    python = {d["name"] for d in h["method_doors"] if d["python"]}
    assert {"export", "import", "backup"}.isdisjoint(python)
    assert all(hasattr(Client, m) for m in python), "every method with a Python door has a client method"


def test_the_clients_methods_are_the_registrys_python_door(daemon):
    """The daemon's registry (`hello`'s `method_doors`) says which methods the Python
    client has: exactly those are its public methods (beside `call` and `close`), and each
    sends the method of its own name."""
    import inspect
    import re

    with daemon.client() as c:
        h = c.hello()
    doors = {d["name"]: d for d in h["method_doors"]}
    assert set(doors) == set(h["methods"])
    declared = {n for n, d in doors.items() if d["python"]}
    ours = {n for n, v in vars(Client).items() if callable(v) and not n.startswith("_")} - {"call", "close"}
    assert ours == declared, f"missing: {declared - ours}, not in the registry: {ours - declared}"
    for name in ours:
        src = inspect.getsource(getattr(Client, name))
        assert re.search(rf'self\.call\(\s*"{name}"', src), f"Client.{name} does not send {name!r}"
    assert {d["access"] for d in doors.values()} == {"read", "write"}
    assert doors["recall"]["mcp"] == "agent" and doors["kg_add"]["mcp"] == "all"
    assert doors["runs"]["cli"] == "runs list"


def test_the_web_view_is_the_persons_and_sessions_are_listed(daemon):
    """`ui_start` is refused to a client library (`amber ui` is the person's); `sessions`
    lists what `session_start` opened, and with `served` where a memory was served."""
    with daemon.client() as c:
        with pytest.raises(amber_client.NotPermitted):
            c.ui_start()
        m = c.remember("The release train leaves on Thursdays at noon", scope="pytest/sessions")
        s = c.session_start("pytest", scope="pytest/sessions", prompt="when does the release train leave?")
        listed = c.sessions(limit=10)["sessions"]
        assert s["session_id"] in [x["id"] for x in listed]
        served = c.sessions(served=m["id"])["sessions"]
        if served:
            assert served[0]["servings"][0]["id"] == m["id"]
        c.session_end(s["session_id"])


def test_remember_then_recall_finds_it(daemon):
    with daemon.client() as c:
        text = "The CI cache lives in target/, keep it between runs"
        r = c.remember(text, scope="pytest/recall", source="test", metadata={"n": 1})
        assert r["created"] is True and len(r["id"]) == 32
        again = c.remember(text, scope="pytest/recall")
        assert (again["id"], again["created"]) == (r["id"], False), "same content, same scope: stored once"
        c.remember(LUNCH, scope="pytest/recall")
        hits = c.recall("where is the build cache?", scope="pytest", k=5)["hits"]
        assert hits and hits[0]["memory"]["id"] == r["id"]
        assert hits[0]["memory"]["content"] == text
        meta = hits[0]["memory"]["metadata"]
        assert meta["n"] == 1, meta
        # The daemon stamps the origin: a Python process is the Python door, an agent.
        assert meta["trust"] == "agent" and meta["origin"]["door"] == "python", meta
        assert "fused" in hits[0]["evidence"]


def test_get_forget_purge_batch_and_links(daemon):
    with daemon.client() as c:
        batch = c.remember_batch(["first batch memory about the deploy key", {"content": "second one", "type": "event"}])
        ids = [x["id"] for x in batch["results"]]
        assert len(ids) == 2
        m = c.get(ids[1])["memory"]
        assert m["content"] == "second one" and m["type"] == "event"
        assert c.links(ids[0]) == {"links": []}
        f = c.forget(ids[0])["memory"]
        assert f["forgotten_at"] is not None
        assert c.get(ids[0])["memory"]["forgotten_at"] is not None, "get still returns a forgotten memory"
        assert ids[0] not in [h["memory"]["id"] for h in c.recall("first batch memory about the deploy key")["hits"]]
        # Purging is the person's: a Python process is refused; the `amber` command is not.
        with pytest.raises(NotPermitted):
            c.purge(ids[0])
        assert daemon.person("purge", ids[0]) == {"id": ids[0], "purged": True}
        with pytest.raises(NotFound):
            c.get(ids[0])
        st = c.status()
        assert st["protocol_version"] == 1 and st["socket"] == str(daemon.socket)


def test_errors_are_typed_by_kind(daemon):
    with daemon.client() as c:
        with pytest.raises(NotFound) as e:
            c.get("0" * 32)
        assert (e.value.kind, e.value.code) == ("not_found", -32003)
        assert isinstance(e.value, AmberError) and e.value.message
        with pytest.raises(InvalidParams) as e:
            c.remember("")
        assert e.value.kind == "invalid_params" and e.value.code == -32602
        with pytest.raises(SessionNotFound) as e:
            c.session_event("no-such-session", "prompt", "hello there, anyone?")
        assert e.value.code == -32012
        with pytest.raises(MethodNotFound) as e:
            c.call("no_such_method", {})
        assert e.value.kind == "method_not_found"
        with pytest.raises(InvalidParams):
            c.recall("anything", k=0)
        with pytest.raises(InvalidParams):
            c.call("recall", {"text": "x", "no_such_field": 1})
        # The connection stays usable after errors.
        assert c.hello()["server"] == "amberd"
    # A kind this client does not know is still an AmberError, with its kind.
    e = AmberError.from_wire({"code": -32099, "message": "new", "data": {"kind": "brand_new"}})
    assert type(e) is AmberError and (e.kind, e.code, e.message) == ("brand_new", -32099, "new")
    # The table of error kinds is the daemon's, exactly: every kind it may answer, with
    # its code, and none it does not.
    with daemon.client() as c:
        served = {e["kind"]: e["code"] for e in c.hello()["error_kinds"]}
    assert len(served) >= 25, served
    assert {k: cls.CODE for k, cls in amber_client.ERROR_KINDS.items()} == served


def test_a_whole_session(daemon, project):
    with daemon.client() as c:
        s = c.session_start("pytest", cwd=project / "src", prompt="how do we release to staging?")
        assert s["project_root"] == str(project)
        assert s["scope"].startswith("project/shop-")
        assert "ship the staging release" in s["identity"]["text"]
        assert "text" in s["briefing"]
        sid = s["session_id"]
        # Remembered after the briefing, so the interjection has something new to say.
        release = c.remember(RELEASE, scope=s["scope"])["id"]
        c.remember(POSTGRES, scope=s["scope"])
        c.remember(LUNCH, scope=s["scope"])

        e = c.session_event(sid, "prompt", RELEASE_PROMPT)
        d = e["decision"]
        assert d["fired"], d
        assert d["memories"][0]["id"] == release
        assert "AWS_PROFILE=staging" in d["text"]

        out = "error: upload failed: An error occurred (AccessDenied) when calling the PutObject operation: Access Denied"
        e = c.session_event(sid, "tool_result", out, source="tool:bash")
        assert e["decision"]["fired"] is False
        assert e["captured"]["filed"] is True

        shown = c.session_show(sid)
        assert shown["live"] is True
        assert shown["session"]["events"] == 2
        assert release in [x["id"] for x in shown["session"]["served"]]

        r = c.recall("AccessDenied staging upload", scope=s["scope"], session_id=sid)
        assert release in [g["id"] for g in r["given_earlier"]]

        end = c.session_end(sid, transcript="user: why does make release fail?\n\nassistant: set AWS_PROFILE=staging.\n")
        assert end["live"] is False
        assert end["session"]["end_reason"] == "ended"
        assert end["session"]["curation"] is not None
        with pytest.raises(SessionNotFound):
            c.session_end(sid)


def test_identity_and_capture(daemon, project):
    with daemon.client() as c:
        i = c.identity(project / "src")
        assert i["root"] == str(project) and "ship the staging release" in i["text"]
        secret = "deploy with token=abcd1234abcd1234abcd1234 and then check the dashboard for errors please"
        r = c.capture(secret, "pytest/capture", source="tool:bash")
        assert r["filed"] and r["redacted"] >= 1
        assert "abcd1234abcd1234" not in c.get(r["memory"]["id"])["memory"]["content"]
        assert c.capture("too short", "pytest/capture") == {"filed": False, "skipped": "too_short", "redacted": 0}


def test_one_client_is_safe_to_share_between_threads(daemon):
    c = daemon.client()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                text = f"thread {n} memory {i} about the shared client"
                r = c.remember(text, scope=f"pytest/threads/{n}")
                assert c.get(r["id"])["memory"]["content"] == text
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c.close()
    assert not errors, errors


def test_a_client_reconnects_once_when_the_daemon_restarted(fresh_daemon):
    c = fresh_daemon.client()
    pid = c.status()["pid"]
    fresh_daemon.stop()
    fresh_daemon.start()
    st = c.status()  # the old connection is broken: the client reconnects and resends
    assert st["pid"] != pid
    fresh_daemon.stop()
    with pytest.raises((ConnectionLost, DaemonNotRunning)):
        c.status()
    with pytest.raises(DaemonNotRunning):
        c.status()  # and without a daemon, says so


def test_no_daemon_and_start_false_raises_daemon_not_running():
    root = short_tmpdir()
    t0 = time.monotonic()
    with pytest.raises(DaemonNotRunning) as e:
        Client(root / "nothing.sock", start=False)
    assert time.monotonic() - t0 < 2
    assert e.value.socket == str(root / "nothing.sock")
    assert isinstance(e.value, AmberError) and e.value.code is None
    os.rmdir(root)


def test_start_true_starts_amberd_and_shutdown_stops_it(amberd, monkeypatch, capfd):
    root = short_tmpdir()
    monkeypatch.setenv("AMBER_CONFIG", str(root / "none.toml"))
    monkeypatch.setenv("AMBER_STATE_DIR", str(root / "state"))
    monkeypatch.setenv("AMBER_DATA_DIR", str(root / "data"))
    monkeypatch.delenv("AMBER_SOCKET", raising=False)
    sock = root / "run" / "amber.sock"
    c = Client(socket=sock, amberd=amberd, start=True, start_timeout=120)
    assert "starting amberd" in capfd.readouterr().err
    assert c.spawned is not None
    st = c.status()
    assert st["socket"] == str(sock) and st["pid"] == c.spawned.pid
    assert st["engine"]["data_dir"] == str(root / "data")
    # A second client finds the running daemon and starts nothing.
    with Client(socket=sock, amberd=amberd, start=True) as c2:
        assert c2.spawned is None and c2.status()["pid"] == st["pid"]
    assert c.shutdown() == {"ok": True}
    assert c.spawned.wait(30) == 0
    assert not sock.exists()
    with pytest.raises(DaemonNotRunning):
        Client(socket=sock, start=False)
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def test_a_missing_amberd_is_a_start_error(monkeypatch):
    root = short_tmpdir()
    with pytest.raises(amber_client.DaemonStartError):
        Client(socket=root / "x.sock", amberd=root / "no-such-amberd", start=True)
    os.rmdir(root)


def _fake_server(path: Path, reply: bytes | None):
    """A socket that answers every line with ``reply`` (None: never answers)."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen()
    conns = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conns.append(conn)
            if reply is not None:
                conn.recv(65536)
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return srv, conns


def test_a_silent_daemon_times_out_and_garbage_is_a_protocol_error():
    root = short_tmpdir()
    srv, conns = _fake_server(root / "silent.sock", None)
    c = Client(root / "silent.sock", start=False, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(ResponseTimeout):
        c.status()
    assert time.monotonic() - t0 < 2
    srv.close()
    srv2, _ = _fake_server(root / "garbage.sock", b"this is not json\n")
    with pytest.raises(ProtocolError):
        Client(root / "garbage.sock", start=False, timeout=2).status()
    srv2.close()
    srv3, _ = _fake_server(root / "wrong.sock", b'{"jsonrpc":"2.0","id":999,"result":{}}\n')
    with pytest.raises(ProtocolError):
        Client(root / "wrong.sock", start=False, timeout=2).status()
    srv3.close()
    for conn in conns:
        conn.close()
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def test_an_agent_name_is_registered_by_a_person_not_by_a_python_process(daemon):
    from amber_client import NotPermitted

    with daemon.client() as c:
        with pytest.raises(NotPermitted):
            c.agent_register("py-agent")
