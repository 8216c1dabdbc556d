"""Typed errors.

Every error the daemon sends carries ``error.data.kind``, a stable snake_case name; each
known kind has its own subclass of :class:`AmberError` (``NotFound``, ``Busy``, ...). A
kind this package does not know yet still raises :class:`AmberError`, with ``.kind`` set.

Errors on this side of the socket (no daemon, the connection dropped, no answer in
time) are :class:`AmberConnectionError` and its subclasses; they are ``AmberError`` too,
so ``except AmberError`` catches everything this package raises on purpose.
"""

from __future__ import annotations

from typing import Any


class AmberError(Exception):
    """An error from Amber: ``kind`` (the stable name), ``code`` (the JSON-RPC number,
    ``None`` for errors on the client side), ``message`` (for people) and ``data`` (the
    whole ``error.data`` object)."""

    KIND = "error"

    def __init__(self, kind: str, code: int | None, message: str, data: dict[str, Any] | None = None):
        super().__init__(kind, code, message)
        self.kind = kind
        self.code = code
        self.message = message
        self.data = data if data is not None else {"kind": kind}

    def __str__(self) -> str:
        return f"{self.message} ({self.kind})"

    @staticmethod
    def from_wire(error: Any) -> AmberError:
        """The exception for a JSON-RPC error object as the daemon sent it."""
        if not isinstance(error, dict):
            return ProtocolError(f"malformed error object: {error!r}")
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        kind = data.get("kind")
        kind = kind if isinstance(kind, str) and kind else "unknown"
        code = error.get("code")
        code = code if isinstance(code, int) else None
        message = error.get("message")
        message = message if isinstance(message, str) else ""
        cls = ERROR_KINDS.get(kind, AmberError)
        return cls(kind, code, message, data)


def _kind(name: str, kind: str, code: int, doc: str) -> type[AmberError]:
    cls = type(name, (AmberError,), {"KIND": kind, "CODE": code, "__doc__": doc})
    cls.__module__ = __name__
    return cls


# One class per kind of ipc/src/protocol.rs (`error_kinds!`), same names and codes.
ParseError = _kind("ParseError", "parse_error", -32700, "The line is not JSON.")
InvalidUtf8 = _kind("InvalidUtf8", "invalid_utf8", -32700, "The line is not valid UTF-8.")
InvalidRequest = _kind("InvalidRequest", "invalid_request", -32600, "Not a JSON-RPC 2.0 request (or a refused peer).")
MethodNotFound = _kind("MethodNotFound", "method_not_found", -32601, "No such method.")
InvalidParams = _kind("InvalidParams", "invalid_params", -32602, "Params missing, of the wrong type or refused by validation.")
InternalError = _kind("InternalError", "internal", -32603, "Something failed inside the daemon; see its log.")
FrameTooLarge = _kind("FrameTooLarge", "frame_too_large", -32001, "The request line is longer than the frame limit.")
Busy = _kind("Busy", "busy", -32002, "The write queue is full or indexing is far behind: retry shortly.")
NotFound = _kind("NotFound", "not_found", -32003, "No memory with that id.")
ModelUnavailable = _kind("ModelUnavailable", "model_unavailable", -32004, "The embedding model or runtime is missing (run scripts/setup.sh).")
UnsupportedProtocol = _kind("UnsupportedProtocol", "unsupported_protocol", -32005, "The daemon speaks another protocol version.")
ShuttingDown = _kind("ShuttingDown", "shutting_down", -32006, "The daemon is stopping and takes no new work.")
NotForgotten = _kind("NotForgotten", "not_forgotten", -32007, "`purge` of a memory that was not forgotten first.")
StorageFull = _kind("StorageFull", "storage_full", -32008, "The disk is full; nothing was written.")
StorageError = _kind("StorageError", "storage_error", -32009, "The store failed; see the daemon's log.")
TooManyConnections = _kind("TooManyConnections", "too_many_connections", -32010, "Too many connections.")
Timeout = _kind("Timeout", "timeout", -32011, "The daemon gave up waiting (e.g. for indexing).")
SessionNotFound = _kind("SessionNotFound", "session_not_found", -32012, "No live session with that id.")
FactNotFound = _kind("FactNotFound", "fact_not_found", -32013, "`kg_invalidate` of a fact that does not exist.")
Superseded = _kind("Superseded", "superseded", -32014, "`unarchive` of a memory an invalidation supersedes.")
RateLimited = _kind("RateLimited", "rate_limited", -32015, "An agent passed its daily limit of runs or rewards.")
NotPermitted = _kind("NotPermitted", "not_permitted", -32016, "Not allowed (e.g. rewarding another agent's run).")
NoModel = _kind("NoModel", "no_model", -32017, "Advice or the judge of runs needs a model: none is configured ([learn]).")
ModelFailed = _kind("ModelFailed", "model_failed", -32018, "The configured model failed: HTTP error, timeout or a malformed reply.")
TeamUnavailable = _kind(
    "TeamUnavailable",
    "team_unavailable",
    -32019,
    "The team database cannot be reached: nothing written to team scopes; local scopes work.",
)

ERROR_KINDS: dict[str, type[AmberError]] = {
    c.KIND: c
    for c in (
        ParseError,
        InvalidUtf8,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        FrameTooLarge,
        Busy,
        NotFound,
        ModelUnavailable,
        UnsupportedProtocol,
        ShuttingDown,
        NotForgotten,
        StorageFull,
        StorageError,
        TooManyConnections,
        Timeout,
        SessionNotFound,
        FactNotFound,
        Superseded,
        RateLimited,
        NotPermitted,
        NoModel,
        ModelFailed,
        TeamUnavailable,
    )
}
# parse_error and invalid_utf8 share -32700: the map goes by kind, never by code.


class AmberConnectionError(AmberError):
    """The daemon could not be reached or stopped answering (client side, ``code`` None)."""

    KIND = "connection"

    def __init__(self, message: str, socket: str | None = None):
        super().__init__(self.KIND, None, message, {"kind": self.KIND})
        self.socket = socket


class DaemonNotRunning(AmberConnectionError):
    """No daemon answers on the socket (and starting one was not allowed)."""

    KIND = "daemon_not_running"


class DaemonStartError(AmberConnectionError):
    """``amberd`` could not be started, or did not become ready in time."""

    KIND = "daemon_start_failed"


class ConnectionLost(AmberConnectionError):
    """The connection closed before the answer arrived."""

    KIND = "connection_lost"


class ResponseTimeout(AmberConnectionError):
    """No answer within the client's timeout. The connection is closed (a late answer
    would be out of step); the request may still have run."""

    KIND = "response_timeout"


class ProtocolError(AmberConnectionError):
    """The daemon sent something that is not a JSON-RPC response to our request."""

    KIND = "protocol_error"
