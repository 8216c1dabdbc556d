"""The blocking client: one connection to ``amberd``, one request at a time."""

from __future__ import annotations

import errno
import json
import os
import selectors
import shutil
import socket as _socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from .errors import (
    AmberConnectionError,
    AmberError,
    ConnectionLost,
    DaemonNotRunning,
    DaemonStartError,
    ProtocolError,
    ResponseTimeout,
)
from .paths import default_socket_path

PROTOCOL_VERSION = 1
"""The protocol version this client speaks (``hello``)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a request may take, connecting included, unless the client says otherwise."""

DEFAULT_START_TIMEOUT = 60.0
"""Seconds to wait for a started ``amberd`` to be ready (it loads the model and catches
up on indexing before it says so)."""

_DEFAULT: Any = object()

# Errors that mean nobody listens on the socket.
_NOT_RUNNING = (FileNotFoundError, ConnectionRefusedError)
# Errors writing to a connection whose other end is gone (e.g. the daemon restarted).
_BROKEN = {errno.EPIPE, errno.ECONNRESET, errno.ECONNABORTED, errno.ENOTCONN, errno.ESHUTDOWN}

# Daemons this process started, so their Popen objects are not collected while they run.
_spawned: list[subprocess.Popen[bytes]] = []


class _ResetUnread(Exception):
    """The daemon reset the connection before answering, with the request unread."""


def _error_kind(response: dict[str, Any]) -> Any:
    error = response.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    return data.get("kind") if isinstance(data, dict) else None


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    """Params without the unset ones: the daemon refuses unknown fields, and an absent
    optional field means its default."""
    return {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in d.items() if v is not None}


class Client:
    """A connection to ``amberd`` over its Unix socket (JSON-RPC 2.0, one line each way).

    ``socket``: the socket path (default: resolved like ``amber`` does, see
    :func:`amber_client.default_socket_path`). ``start``: when no daemon answers, start
    ``amberd`` in the background (saying so on stderr) and wait for it, up to
    ``start_timeout`` seconds. ``amberd``: the binary to start (default ``$AMBERD``, else
    ``amberd`` on the PATH). ``timeout``: seconds a request may take, ``None`` for no
    limit. ``data_dir`` and ``config`` are passed to a started daemon as ``--data-dir`` and
    ``--config`` (and take part in finding the socket).

    The constructor connects (and starts the daemon if allowed): it raises
    :class:`DaemonNotRunning` or :class:`DaemonStartError` when that fails. Every method
    returns the decoded ``result`` object and raises a subclass of :class:`AmberError`
    named after ``error.data.kind``. A connection the daemon closed (it closes idle ones,
    ``idle_connection_timeout_s``) is reopened once, when the request was not read; a
    connection past the daemon's ``max_connections`` raises :class:`TooManyConnections`.
    Calls from several threads are serialised by one lock; use one client per thread for
    parallel requests.
    """

    def __init__(
        self,
        socket: str | os.PathLike[str] | None = None,
        start: bool = True,
        amberd: str | os.PathLike[str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        data_dir: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        client_name: str = "amber-client-python",
    ):
        self.socket_path = Path(socket) if socket is not None else default_socket_path(config, data_dir)
        self.start = start
        self.amberd = amberd
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.data_dir = data_dir
        self.config = config
        self.client_name = client_name
        self.spawned: subprocess.Popen[bytes] | None = None
        """The daemon this client started, if it started one."""
        self._lock = threading.Lock()
        self._sock: _socket.socket | None = None
        self._buf = bytearray()
        self._next_id = 1
        self.scope_cache: dict[str, dict[str, Any]] = {}
        """``resolve_scope`` answers by absolute directory (``clear()`` it to ask again,
        e.g. after ``git init`` in a parent directory)."""
        with self._lock:
            self._connect(self._deadline(timeout))

    # -- connection ---------------------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._drop()
        except Exception:
            pass

    def close(self) -> None:
        """Closes the connection (the daemon keeps running)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buf.clear()

    @staticmethod
    def _deadline(timeout: float | None) -> float | None:
        return None if timeout is None else time.monotonic() + timeout

    @staticmethod
    def _remaining(deadline: float | None) -> float | None:
        if deadline is None:
            return None
        return max(deadline - time.monotonic(), 0.001)

    def _try_connect(self, deadline: float | None) -> _socket.socket:
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            s.settimeout(self._remaining(deadline))
            s.connect(os.fspath(self.socket_path))
        except BaseException:
            s.close()
            raise
        return s

    def _connect(self, deadline: float | None) -> None:
        path = os.fspath(self.socket_path)
        try:
            self._sock = self._try_connect(deadline)
            return
        except _NOT_RUNNING:
            if not self.start:
                raise DaemonNotRunning(f"amberd is not running (no daemon answers on {path})", path) from None
        except _socket.timeout:
            raise ResponseTimeout(f"connecting to {path} timed out", path) from None
        except OSError as e:
            raise AmberConnectionError(f"cannot connect to {path}: {e}", path) from None
        self._spawn()
        try:
            self._sock = self._try_connect(self._deadline(self.timeout))
        except OSError as e:
            raise DaemonStartError(f"amberd started but does not answer on {path}: {e}", path) from None

    def _amberd_path(self) -> str:
        if self.amberd is not None:
            return os.fspath(self.amberd)
        env = os.environ.get("AMBERD")
        if env:
            return env
        found = shutil.which("amberd")
        if found is None:
            raise DaemonStartError(
                "amberd is not running and was not found (set AMBERD or put amberd on the PATH)",
                os.fspath(self.socket_path),
            )
        return found

    def _spawn(self) -> None:
        """Starts amberd detached (its own session) and waits for its ready line, or for
        the socket to answer, up to ``start_timeout``."""
        path = os.fspath(self.socket_path)
        exe = self._amberd_path()
        cmd = [exe, "--socket", path]
        if self.data_dir is not None:
            cmd += ["--data-dir", os.fspath(self.data_dir)]
        if self.config is not None:
            cmd += ["--config", os.fspath(self.config)]
        print(f"amber-client: starting amberd in the background (socket {path})", file=sys.stderr, flush=True)
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as e:
            raise DaemonStartError(f"cannot run {exe}: {e}", path) from None
        _spawned.append(proc)
        deadline = time.monotonic() + self.start_timeout
        out, err = bytearray(), bytearray()
        streams = {proc.stdout: out, proc.stderr: err}
        sel = selectors.DefaultSelector()
        for f in streams:
            sel.register(f, selectors.EVENT_READ)
        try:
            while time.monotonic() < deadline:
                for key, _ in sel.select(timeout=min(0.1, max(deadline - time.monotonic(), 0))):
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        streams[key.fileobj].extend(chunk)  # type: ignore[index]
                    else:
                        sel.unregister(key.fileobj)
                if out.startswith(b"amberd ready") and b"\n" in out:
                    self.spawned = proc
                    return
                if proc.poll() is not None and not sel.get_map():
                    break
                if self._answers():
                    # Another client started one at the same moment, and it won.
                    self.spawned = proc if proc.poll() is None else None
                    return
            else:
                raise DaemonStartError(
                    f"amberd did not become ready within {self.start_timeout:g}s (socket {path})", path
                )
        finally:
            sel.close()
            for f in streams:
                if f is not None:
                    f.close()
        # It exited without saying it is ready.
        message = err.decode("utf-8", "replace").strip()
        proc.wait()
        if "already serving" in message or "another daemon is listening" in message:
            while time.monotonic() < deadline:
                if self._answers():
                    return
                time.sleep(0.1)
        raise DaemonStartError(f"amberd did not start: {message or f'exit status {proc.returncode}'}", path)

    def _answers(self) -> bool:
        try:
            self._try_connect(time.monotonic() + 1.0).close()
            return True
        except OSError:
            return False

    # -- requests -----------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = _DEFAULT) -> Any:
        """Sends one request and returns its ``result``; raises the typed error otherwise.
        ``params`` is sent as given (``None``: no params)."""
        if timeout is _DEFAULT:
            timeout = self.timeout
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": method}
        if params is not None:
            request["params"] = params
        with self._lock:
            deadline = self._deadline(timeout)
            rid = self._next_id
            self._next_id += 1
            request["id"] = rid
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
            response = self._exchange(method, line, deadline)
            if isinstance(response, dict) and _error_kind(response) == "too_many_connections":
                self._drop()  # the daemon closed this connection after saying so
        if not isinstance(response, dict):
            raise ProtocolError(f"{method}: the response is not an object: {response!r}")
        if response.get("error") is not None:
            raise AmberError.from_wire(response["error"])
        if response.get("id") != rid:
            raise ProtocolError(f"{method}: response for id {response.get('id')!r}, expected {rid}")
        if "result" not in response:
            raise ProtocolError(f"{method}: a response with neither result nor error")
        return response["result"]

    def _exchange(self, method: str, line: bytes, deadline: float | None) -> Any:
        """Sends one request line and reads its response. The request is sent again once,
        on a new connection, when the daemon had closed the kept one without reading it
        (it closes connections idle for ``idle_connection_timeout_s``, or it restarted):
        the send found the connection closed, or the read found it reset before any answer.
        What the daemon said before closing (``too_many_connections``) is the answer."""
        path = os.fspath(self.socket_path)
        for attempt in (0, 1):
            if self._sock is None:
                self._connect(deadline)
            assert self._sock is not None
            try:
                self._sock.settimeout(self._remaining(deadline))
                self._sock.sendall(line)
            except _socket.timeout:
                self._drop()
                raise ResponseTimeout(f"{method}: sending the request timed out", path) from None
            except OSError as e:
                said = self._last_words() if e.errno in _BROKEN else None
                self._drop()
                if said is not None:
                    return said
                if e.errno in _BROKEN and attempt == 0:
                    continue  # the daemon closed it before this request: reconnect once
                raise ConnectionLost(f"{method}: the connection to amberd broke: {e}", path) from None
            try:
                return self._read_response(method, deadline)
            except _ResetUnread as e:
                if attempt == 0:
                    continue  # closed with the request unread: reconnect once
                raise ConnectionLost(f"{method}: the connection to amberd broke: {e}", path) from None
        raise ConnectionLost(f"{method}: amberd could not be reached", path)

    def _last_words(self) -> Any:
        """The response line the daemon sent before it closed the connection, if any."""
        assert self._sock is not None
        try:
            self._sock.settimeout(1.0)
            while b"\n" not in self._buf:
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    break
                self._buf.extend(chunk)
        except OSError:
            pass
        nl = self._buf.find(b"\n")
        if nl < 0:
            return None
        try:
            said = json.loads(bytes(self._buf[:nl]).decode("utf-8"))
        except ValueError:
            return None
        return said if isinstance(said, dict) and said.get("error") is not None else None

    def _read_response(self, method: str, deadline: float | None) -> Any:
        assert self._sock is not None
        path = os.fspath(self.socket_path)
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                raw = bytes(self._buf[:nl]).rstrip(b"\r")
                del self._buf[: nl + 1]
                if not raw.strip():
                    continue
                try:
                    return json.loads(raw.decode("utf-8"))
                except ValueError as e:
                    self._drop()
                    raise ProtocolError(f"{method}: the response is not JSON: {e}", path) from None
            try:
                self._sock.settimeout(self._remaining(deadline))
                chunk = self._sock.recv(1 << 16)
            except _socket.timeout:
                self._drop()
                raise ResponseTimeout(f"{method}: no answer from amberd in time", path) from None
            except OSError as e:
                unread = e.errno == errno.ECONNRESET and not self._buf
                self._drop()
                if unread:
                    # A Unix socket closed with our request unread resets: it never ran.
                    raise _ResetUnread(str(e)) from None
                raise ConnectionLost(f"{method}: the connection to amberd broke: {e}", path) from None
            if not chunk:
                self._drop()
                raise ConnectionLost(f"{method}: amberd closed the connection before answering", path)
            self._buf.extend(chunk)

    # -- methods (docs/PROTOCOL.md) ---------------------------------------------------

    def hello(self, client: str | None = None, protocol_version: int | None = PROTOCOL_VERSION) -> dict[str, Any]:
        """The handshake: ``{server, version, protocol_version, methods, model}``."""
        return self.call("hello", _drop_none({"client": client or self.client_name, "protocol_version": protocol_version}))

    def remember(
        self,
        content: str,
        scope: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        type: str | None = None,
        source: str | None = None,
        author: str | None = None,
        session_id: str | None = None,
        event_time: int | None = None,
        metadata: dict[str, Any] | None = None,
        supersedes: Iterable[str] | None = None,
        to: str | None = None,
        reply_to: str | None = None,
    ) -> dict[str, Any]:
        """Files one memory verbatim: ``{id, seq, created}``.

        The scope: ``scope`` when given; else, with ``cwd``, the project scope of that
        directory (:meth:`resolve_scope`; ``cwd=os.getcwd()`` files into the current
        project); else the daemon's default, ``default``.

        ``supersedes`` (whole ids, with ``type="invalidation"``): the memories this one
        replaces; they are archived while it stands. ``to``: an agent's name (its inbox
        at its next session start; no other agent is served it), ``all``, or ``self`` (the
        author's diary). ``reply_to`` (a whole id): the memory this one answers."""
        return self.call(
            "remember",
            _drop_none(
                {
                    "content": content,
                    "scope": self._filing_scope(scope, cwd),
                    "type": type,
                    "source": source,
                    "author": author,
                    "session_id": session_id,
                    "event_time": event_time,
                    "metadata": metadata,
                    "supersedes": list(supersedes) if supersedes is not None else None,
                    "to": to,
                    "reply_to": reply_to,
                }
            ),
        )

    def remember_batch(
        self, memories: Iterable[dict[str, Any] | str], *, cwd: str | os.PathLike[str] | None = None
    ) -> dict[str, Any]:
        """Files 1 to 1000 memories in one transaction (each a ``remember`` params dict, or
        a string for its content): ``{results: [{id, seq, created}]}``. With ``cwd``, the
        memories without a ``scope`` go to that directory's project scope."""
        ms = [{"content": m} if isinstance(m, str) else _drop_none(dict(m)) for m in memories]
        if cwd is not None:
            scope = self.resolve_scope(cwd)["scope"]
            for m in ms:
                m.setdefault("scope", scope)
        return self.call("remember_batch", {"memories": ms})

    def recall(
        self,
        text: str,
        scope: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        also: Iterable[str] | None = None,
        all_scopes: bool = False,
        k: int | None = None,
        since: int | None = None,
        until: int | None = None,
        mode: str | None = None,
        now: int | None = None,
        fresh: bool | None = None,
        session_id: str | None = None,
        expand: str | None = None,
        archived: bool | None = None,
    ) -> dict[str, Any]:
        """Hybrid search: ``{hits: [{memory, evidence}], fresh, given_earlier?,
        team_unavailable?}``.

        Where it searches (each scope with the scopes under it, as one ranking):
        ``scope`` (plus ``also``) when given; else, with ``cwd``, the scopes a search from
        that directory covers (``resolve_scope(cwd)["search"]``: the project's, ``user``
        and the team scopes when ``[team]`` is configured), plus ``also``;
        ``all_scopes=True`` searches every scope (``cwd`` is then ignored; ``scope`` and
        ``also`` are refused). With none of these: only ``also`` when given, else every
        scope. While the team database is away, ``team_unavailable`` says why the team
        scopes were not searched (a recall on team scopes alone raises
        ``TeamUnavailable``).

        ``expand="graph"`` also ranks the memories about entities one hop away in the
        knowledge graph from those the text names (their ``evidence.graph_rank`` is set).
        ``archived=True`` includes archived memories (``evidence.standing.archived``).
        Every hit's ``evidence.standing`` gives its weight, age factor, prior and
        outcome counts."""
        extra = [also] if isinstance(also, str) else list(also or ())
        if all_scopes:
            if scope is not None or extra:
                raise ValueError("recall: all_scopes=True searches every scope; do not give scope or also")
        elif scope is None and cwd is not None:
            search = list(self.resolve_scope(cwd)["search"])
            scope, extra = search[0], search[1:] + [s for s in extra if s not in search]
        return self.call(
            "recall",
            _drop_none(
                {
                    "text": text,
                    "scope": scope,
                    "also": extra or None,
                    "k": k,
                    "since": since,
                    "until": until,
                    "mode": mode,
                    "now": now,
                    "fresh": fresh,
                    "session_id": session_id,
                    "expand": expand,
                    "archived": archived,
                }
            ),
        )

    def get(self, id: str) -> dict[str, Any]:
        """``{memory}``, forgotten ones too (with ``forgotten_at``). ``id`` is a whole id
        or a prefix of at least 4 hex digits naming one memory (an ambiguous prefix
        raises :class:`InvalidParams`); the id of a memory moved to another scope raises
        :class:`NotFound` whose message names its new id."""
        return self.call("get", {"id": id})

    def forget(self, id: str) -> dict[str, Any]:
        """Tombstones a memory: ``{memory}`` with ``forgotten_at``."""
        return self.call("forget", {"id": id})

    def purge(self, id: str) -> dict[str, Any]:
        """Deletes a forgotten memory for good: ``{id, purged}``. A person's call: refused
        to a Python process (:class:`NotPermitted`); ``amber purge ID`` does it."""
        return self.call("purge", {"id": id})

    def agent_register(self, name: str) -> dict[str, Any]:
        """Registers an agent name: ``{name, token}`` (a person's call: refused to agents,
        which a Python process is; ``amber agent register NAME`` does it at the command line)."""
        return self.call("agent_register", {"name": name})

    def unforget(self, id: str) -> dict[str, Any]:
        """A forgotten memory back, as it was (a person's call: refused to agents)."""
        return self.call("unforget", {"id": id})

    def links(self, id: str) -> dict[str, Any]:
        """Links from or to a memory: ``{links: [...]}``."""
        return self.call("links", {"id": id})

    def status(self) -> dict[str, Any]:
        """The daemon's and the engine's state."""
        return self.call("status")

    def reindex(self, *, timeout: float | None = None) -> dict[str, Any]:
        """Rebuilds the indexes from the store: ``{ok}``. No time limit by default."""
        return self.call("reindex", timeout=timeout)

    def shutdown(self) -> dict[str, Any]:
        """Stops the daemon gracefully: ``{ok}``. The connection is closed afterwards."""
        result = self.call("shutdown")
        self.close()
        return result

    def identity(self, cwd: str | os.PathLike[str], *, budget_tokens: int | None = None) -> dict[str, Any]:
        """Tier 0, the project's coordination files: ``{root, text, tokens, ...}``."""
        return self.call("identity", _drop_none({"cwd": cwd, "budget_tokens": budget_tokens}))

    def capture(
        self,
        content: str,
        scope: str,
        *,
        source: str | None = None,
        session_id: str | None = None,
        author: str | None = None,
        type: str | None = None,
    ) -> dict[str, Any]:
        """Files a session's text with secrets redacted: ``{filed, skipped?, memory?, redacted}``."""
        return self.call(
            "capture",
            _drop_none(
                {
                    "content": content,
                    "scope": scope,
                    "source": source,
                    "session_id": session_id,
                    "author": author,
                    "type": type,
                }
            ),
        )

    def session_start(
        self,
        agent: str,
        *,
        project_root: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        prompt: str | None = None,
        scope: str | None = None,
        key: str | None = None,
        rebrief: bool | None = None,
        run: bool | None = None,
    ) -> dict[str, Any]:
        """Starts a session: ``{session_id, scope, project_root, identity, briefing,
        resumed, search}`` (``search``: the scopes briefing and interjection search).
        ``run=True``: the session is recorded as a run when it ends (its opening prompt
        the task, its tool results the trace), for a person to reward.

        ``key`` is the client's own id for the session: a later ``session_start`` with the
        same agent and key continues that session, even after it ended (``resumed:
        True``, same ``session_id``, no identity, an empty briefing). ``rebrief=True``
        with a key briefs again, for a new context (compacted or cleared)."""
        return self.call(
            "session_start",
            _drop_none(
                {
                    "agent": agent,
                    "project_root": project_root,
                    "cwd": cwd,
                    "prompt": prompt,
                    "scope": scope,
                    "key": key,
                    "rebrief": rebrief,
                    "run": run,
                }
            ),
        )

    def session_event(
        self,
        session_id: str,
        kind: str,
        text: str,
        *,
        source: str | None = None,
        capture: bool | None = None,
        moment: str | None = None,
    ) -> dict[str, Any]:
        """One event (``prompt``, ``tool_call``, ``tool_result``, ``response``):
        ``{event, decision, captured?, reminders?, reminder_text?}``; ``decision.fired``
        and ``decision.text`` say whether and what to interject. ``moment``: ``start``
        (default) or ``next`` search as usual; ``fork``, ``stuck`` and ``done`` remind
        the session of the pitfalls or verification steps it was already given."""
        return self.call(
            "session_event",
            _drop_none(
                {
                    "session_id": session_id,
                    "kind": kind,
                    "text": text,
                    "source": source,
                    "capture": capture,
                    "moment": moment,
                }
            ),
        )

    def session_checkpoint(
        self, session_id: str, stop_hook_active: bool = False, message: str | None = None
    ) -> dict[str, Any]:
        """The agent stops (Claude Code's ``Stop`` hook): ``{block, reason?,
        checkpoint}``. ``block`` asks to block this stop once with ``reason`` (the ask for
        the session's takeaway); never when ``stop_hook_active``. ``message``: the agent's
        last message, when known (a decline is read from it)."""
        return self.call(
            "session_checkpoint",
            _drop_none({"session_id": session_id, "stop_hook_active": bool(stop_hook_active), "message": message}),
        )

    def session_end(
        self,
        session_id: str,
        *,
        transcript: str | None = None,
        transcript_source: str | None = None,
        manifest: Iterable[dict[str, Any]] | None = None,
        outcome: float | str | None = None,
    ) -> dict[str, Any]:
        """Ends a session (curation runs): ``{session, live, manifest?}``. ``transcript`` is
        filed in pieces first, with ``transcript_source`` as their source (default
        ``transcript``). ``manifest``: what the session relied on, each
        ``{memory_id, used, result?}`` (``result`` success, failure or neutral, with
        ``used`` only); the reply's ``manifest`` gives each memory's new standing and the
        lines refused. ``outcome``: how the session went, a reward in -1..1 or
        ``success``, ``failure``, ``unclear`` (counted by :meth:`lift`)."""
        return self.call(
            "session_end",
            _drop_none(
                {
                    "session_id": session_id,
                    "transcript": transcript,
                    "transcript_source": transcript_source,
                    "manifest": list(manifest) if manifest is not None else None,
                    "outcome": outcome,
                }
            ),
        )

    # -- outcomes -------------------------------------------------------------------

    def outcome(
        self,
        memory_id: str,
        result: str,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        note: str | None = None,
    ) -> dict[str, Any]:
        """Reports what came of relying on a memory (``success``, ``failure`` or
        ``neutral``): ``{memory}`` with its new ``weight``. Within a session the latest
        report on a memory counts; the session's agent is recorded."""
        return self.call(
            "outcome",
            _drop_none(
                {"memory_id": memory_id, "result": result, "session_id": session_id, "agent": agent, "note": note}
            ),
        )

    def outcomes(self, memory_id: str) -> dict[str, Any]:
        """A memory as it stands and every report logged on it: ``{memory, reports}``."""
        return self.call("outcomes", {"memory_id": memory_id})

    def archived(self, scope: str | None = None, *, limit: int | None = None) -> dict[str, Any]:
        """Archived memories, newest archived first: ``{memories}``."""
        return self.call("archived", _drop_none({"scope": scope, "limit": limit}))

    def unarchive(self, id: str) -> dict[str, Any]:
        """Restores an archived memory (weight at least 0.30): ``{memory}``. A memory an
        invalidation supersedes raises :class:`Superseded`."""
        return self.call("unarchive", {"id": id})

    def thread(self, id: str) -> dict[str, Any]:
        """A memory's thread: ``{thread, memories, held?}`` (root first)."""
        return self.call("thread", {"id": id})

    def guard(self, memory_id: str, agent: str) -> dict[str, Any]:
        """May ``agent`` answer ``memory_id``? ``{decision, rule, rule_number, why,
        memory_id, thread}`` with ``decision`` ``allow``, ``skip`` or ``hold``."""
        return self.call("guard", {"memory_id": memory_id, "agent": agent})

    def release(self, thread: str) -> dict[str, Any]:
        """Lifts a thread's hold: ``{thread, released}``."""
        return self.call("release", {"thread": thread})

    def lift(
        self, scope: str | None = None, *, since: int | None = None, judged: bool | None = None
    ) -> dict[str, Any]:
        """Rewarded sessions served memory against the holdout arm's: ``{sessions,
        rewarded, by_run, judged, served, withheld, difference, z, p, verdict,
        min_per_arm}``. ``judged=False`` leaves out the judge's verdicts."""
        return self.call("lift", _drop_none({"scope": scope, "since": since, "judged": judged}))

    # -- runs -----------------------------------------------------------------------

    def run_record(
        self,
        agent: str,
        task: str | None = None,
        *,
        scope: str | None = None,
        trace: str | None = None,
        used: Iterable[str] | None = None,
        outcome: str | None = None,
        advice: Iterable[str] | None = None,
        runs: Iterable[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Records one run (``task``, ...) or a batch (``runs``: up to 1,000 dicts with
        ``task``, ``trace?``, ``used?``, ``outcome?``, ``advice?``; all or nothing):
        ``{scope, results: [{id, created}]}``. Ids derive from content."""
        return self.call(
            "run_record",
            _drop_none(
                {
                    "agent": agent,
                    "scope": scope,
                    "task": task,
                    "trace": trace,
                    "used": list(used) if used is not None else None,
                    "outcome": outcome,
                    "advice": list(advice) if advice is not None else None,
                    "runs": list(runs) if runs is not None else None,
                }
            ),
        )

    def run_reward(
        self,
        agent: str,
        run_id: str | None = None,
        reward: float | None = None,
        *,
        reason: str | None = None,
        rewards: Iterable[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Rewards a run (-1..1) or a batch (``rewards``: ``{run_id, reward, reason?}``);
        only the agent that recorded a run may reward it (:class:`NotPermitted`).
        ``{rewarded, weights_moved}``."""
        return self.call(
            "run_reward",
            _drop_none(
                {
                    "agent": agent,
                    "run_id": run_id,
                    "reward": reward,
                    "reason": reason,
                    "rewards": list(rewards) if rewards is not None else None,
                }
            ),
        )

    def runs(self, scope: str | None = None, *, agent: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """The newest runs: ``{runs}``."""
        return self.call("runs", _drop_none({"scope": scope, "agent": agent, "limit": limit}))

    def run_show(self, id: str) -> dict[str, Any]:
        """One run and its rewards: ``{run, rewards}``."""
        return self.call("run_show", {"id": id})

    def review(self, files: Iterable[str], scope: str | None = None, *, k: int | None = None) -> dict[str, Any]:
        """Memories and runs that touched these files, rare files weighing more:
        ``{memories: [{memory, score, files}], runs: [{run, score, files}], df}``."""
        return self.call("review", _drop_none({"files": list(files), "scope": scope, "k": k}))

    # -- advice (needs a model: [learn]; NoModel otherwise) ------------------------

    def get_advice(
        self,
        task: str,
        session_id: str | None = None,
        *,
        moment: str | None = None,
        scope: str | None = None,
        agent: str | None = None,
        timeout_ms: int | None = None,
    ) -> dict[str, Any]:
        """The note of the situation (or the skill) the model routes ``task`` to:
        ``{scope, situation, line, note, text, version, runs, personal, given_earlier,
        moment, message, considered, session_id, opened, from, skills, part,
        withheld}``. A session is given a note once; asked again, ``given_earlier`` is
        true and ``note`` absent. Without ``session_id`` a session is opened (its id is
        returned: pass it next time). ``moment`` ``fork``/``stuck`` re-read the given
        note's Pitfalls (a skill's If lines), ``done`` its Steps, with no model call.
        :class:`NoModel` when no model is configured, :class:`ModelFailed` when it fails."""
        return self.call(
            "get_advice",
            _drop_none(
                {
                    "task": task,
                    "session_id": session_id,
                    "moment": moment,
                    "scope": scope,
                    "agent": agent,
                    "timeout_ms": timeout_ms,
                }
            ),
        )

    def compile(
        self,
        cwd: str | os.PathLike[str],
        *,
        scope: str | None = None,
        full: bool | None = None,
        cache: bool | None = None,
    ) -> dict[str, Any]:
        """Compiles the project's chosen documents into skills with the configured
        model: ``{scope, sources, documents, sent, skills, dropped, failed, retired,
        calls, message}``. Only a person chooses the documents (``amber compile
        --sources``); a library compiles what was chosen."""
        return self.call(
            "compile",
            _drop_none({"cwd": os.path.abspath(cwd), "scope": scope, "full": full, "cache": cache}),
        )

    def advice_learn(self, scope: str, *, cache: bool | None = None) -> dict[str, Any]:
        """Sorts the scope's runs into situations and writes or edits their notes:
        ``{scope, sorted, unsorted, new_situations, written, skipped, failed, withheld,
        merged, calls}``. ``cache`` answers repeated model calls from disk."""
        return self.call("advice_learn", _drop_none({"scope": scope, "cache": cache}))

    def advice_show(self, scope: str, situation: str) -> dict[str, Any]:
        """A situation (by key or alias) and every version of its notes: ``{situation, notes}``."""
        return self.call("advice_show", {"scope": scope, "situation": situation})

    def advice_list(self, scope: str) -> dict[str, Any]:
        """A scope's situations with their run counts and newest notes: ``{scope, situations}``."""
        return self.call("advice_list", {"scope": scope})

    def judge_runs(self, scope: str, *, limit: int | None = None) -> dict[str, Any]:
        """The model judges unrewarded runs older than ``[learn] judge_delay_s``, then
        the notes served in ended sessions: ``{judged, failed, notes, notes_failed}``."""
        return self.call("judge_runs", _drop_none({"scope": scope, "limit": limit}))

    def judgements(self, scope: str, *, limit: int | None = None) -> dict[str, Any]:
        """The model's judgements of a scope's runs, each with the recorder's own
        reward when one came (it counts instead): ``{judgements}``."""
        return self.call("judgements", _drop_none({"scope": scope, "limit": limit}))

    def doctor(self, scope: str | None = None, *, no_ping: bool | None = None) -> dict[str, Any]:
        """The learning loop's health: ``{scope?, checks: [{name, health, found, fix?,
        figures}]}`` for the model, runs, the judge's backlog, notes, skills and lift."""
        return self.call("doctor", _drop_none({"scope": scope, "no_ping": no_ping}))

    def ingest(
        self,
        files: list[str] | None = None,
        *,
        prune: str | None = None,
        cwd: str | None = None,
        scope: str | None = None,
        external: bool | None = None,
    ) -> dict[str, Any]:
        """Brings documents (absolute paths) in step with their files: ``{scope, files}``,
        each file ``{path, status, trust, chunks, added, retired, revived, redacted,
        reason}``. ``prune``: a folder whose deleted files' chunks are retired. What a
        library ingests is filed ``external`` (only a person's ``amber ingest`` is
        trusted as theirs)."""
        return self.call(
            "ingest",
            _drop_none({"files": files, "prune": prune, "cwd": cwd, "scope": scope, "external": external}),
        )

    def audit(self, sessions: int | None = None) -> dict[str, Any]:
        """``{sessions, unbacked_successes, unreported}`` over the most recent sessions."""
        return self.call("audit", _drop_none({"sessions": sessions}))

    def session_show(self, session_id: str) -> dict[str, Any]:
        """A session's record, live or ended: ``{session, live}``."""
        return self.call("session_show", {"session_id": session_id})

    def ui_start(self) -> dict[str, Any]:
        """The person's web view (``{url, port, started}``). A person's method: from the
        Python client it raises :class:`NotPermitted` (run ``amber ui`` yourself)."""
        return self.call("ui_start", {})

    def sessions(self, limit: int | None = None, *, served: str | None = None) -> dict[str, Any]:
        """Sessions, live first then stored, newest first: ``{sessions}``; with ``served``
        (a whole memory id) only those that were served it, each with its ``servings``."""
        return self.call("sessions", _drop_none({"limit": limit, "served": served}))

    # -- scopes ---------------------------------------------------------------------

    def resolve_scope(self, cwd: str | os.PathLike[str]) -> dict[str, Any]:
        """The scopes of a working directory (made absolute; it must exist): ``{scope,
        root, search}``. ``scope`` is the project scope (``project/<dir>-<8 hex>``, the
        project being the nearest ancestor with ``.git``, else the directory itself), or
        ``default`` outside any project (``/``, the home directory or an ancestor of it);
        ``root`` the project root or None; ``search`` the scopes a search from there
        covers (``[scope, "user"]``). Asked once per directory, then answered from
        :attr:`scope_cache`."""
        key = os.path.abspath(os.fspath(cwd))
        cached = self.scope_cache.get(key)
        if cached is None:
            cached = self.call("resolve_scope", {"cwd": key})
            self.scope_cache[key] = cached
        return {**cached, "search": list(cached["search"])}

    def _filing_scope(self, scope: str | None, cwd: str | os.PathLike[str] | None) -> str | None:
        """``scope``, else the project scope of ``cwd``, else None (the daemon's default)."""
        if scope is None and cwd is not None:
            return self.resolve_scope(cwd)["scope"]
        return scope

    def scopes(self) -> dict[str, Any]:
        """Every scope holding live memories or with a known project root: ``{scopes:
        [{scope, memories, root?}]}`` (``memories``: filed in it, not below it)."""
        return self.call("scopes")

    def scope_move(self, from_scope: str, to_scope: str) -> dict[str, Any]:
        """Re-files the memories of ``from_scope`` and the scopes under it into
        ``to_scope`` (the part below ``from_scope`` is kept): ``{moved, merged, memories:
        [{old_id, new_id, scope, merged}]}``. A memory's id changes with its scope; one
        whose content was already in the target is merged into that copy. A person's call:
        refused to a Python process (:class:`NotPermitted`); ``amber scope move FROM TO``
        does it."""
        return self.call("scope_move", {"from": from_scope, "to": to_scope})

    # -- the knowledge graph (times in ms since the epoch) ----------------------------

    def kg_add(
        self,
        facts: Iterable[dict[str, Any]] = (),
        entities: Iterable[dict[str, Any] | str] = (),
        *,
        scope: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> dict[str, Any]:
        """Adds entities and facts to a scope's graph in one transaction:
        ``{entities, facts, superseded}``. A fact is a dict ``{subject, predicate,
        object | literal, valid_from?, valid_to?, confidence?, sources?, supersede?}``
        (``sources``: memory ids); an entity ``{name, type?, aliases?}`` or just its name.
        Entities named by facts are created; an identical fact comes back with its id.
        The scope: ``scope``, else the project scope of ``cwd``, else ``default``."""
        es = [{"name": e} if isinstance(e, str) else _drop_none(dict(e)) for e in entities]
        fs = [_drop_none(dict(f)) for f in facts]
        return self.call("kg_add", _drop_none({"scope": self._filing_scope(scope, cwd), "entities": es or None, "facts": fs or None}))

    def kg_invalidate(self, fact: int, *, at: int | None = None, reason: str | None = None) -> dict[str, Any]:
        """Ends a fact's window at ``at`` (default now): ``{fact}``. Raises
        :class:`FactNotFound` for an unknown id."""
        return self.call("kg_invalidate", _drop_none({"fact": fact, "at": at, "reason": reason}))

    def kg_query(
        self,
        entity: str,
        scope: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        as_of: int | None = None,
    ) -> dict[str, Any]:
        """The facts about an entity (name or alias) valid at ``as_of`` (default now):
        ``{entity, as_of, facts}``; ``entity`` is None for an unknown name. The graph of
        ``scope``, else of ``cwd``'s project scope, else ``default``."""
        return self.call(
            "kg_query", _drop_none({"entity": entity, "scope": self._filing_scope(scope, cwd), "as_of": as_of})
        )

    def kg_timeline(
        self, entity: str, scope: str | None = None, *, cwd: str | os.PathLike[str] | None = None
    ) -> dict[str, Any]:
        """Every fact about an entity, valid or not, by start of validity: ``{entity,
        facts}``. The scope as for :meth:`kg_query`."""
        return self.call("kg_timeline", _drop_none({"entity": entity, "scope": self._filing_scope(scope, cwd)}))

    def kg_traverse(
        self,
        start: str,
        scope: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        max_hops: int | None = None,
        as_of: int | None = None,
        predicates: Iterable[str] | None = None,
        limit: int | None = None,
        memories_per_node: int | None = None,
    ) -> dict[str, Any]:
        """Walks from an entity by facts valid at ``as_of`` (default now), up to
        ``max_hops`` (default 2, at most 4): ``{start, as_of, max_hops, paths: [{hops, end,
        steps: [{fact, forward}]}], nodes: [{entity, hops, mentioned_in}], memories,
        truncated}``; ``memories`` holds every memory the paths and nodes refer to. The
        scope as for :meth:`kg_query`."""
        return self.call(
            "kg_traverse",
            _drop_none(
                {
                    "start": start,
                    "scope": self._filing_scope(scope, cwd),
                    "max_hops": max_hops,
                    "as_of": as_of,
                    "predicates": list(predicates) if predicates is not None else None,
                    "limit": limit,
                    "memories_per_node": memories_per_node,
                }
            ),
        )

    def kg_stats(self, scope: str | None = None) -> dict[str, Any]:
        """Counts over one scope's graph (default all): ``{scope, entities, aliases,
        facts, invalidated, valid_now, mentions, predicates}``."""
        return self.call("kg_stats", _drop_none({"scope": scope}))
