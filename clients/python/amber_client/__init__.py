"""A Python client for Amber's daemon, ``amberd``.

Standard library only. It speaks the daemon's protocol (JSON-RPC 2.0, one request per
line, over a Unix socket; see ``docs/PROTOCOL.md``), finds the socket the way ``amber``
does, starts ``amberd`` when none answers, and raises one exception class per error
kind.

    import os

    from amber_client import Client, NotFound

    with Client() as amber:
        # cwd: this directory's project scope (its git root's); without scope or cwd, `default`
        amber.remember("The CI cache lives in target/", cwd=os.getcwd())
        # searches the project's scope and `user` as one ranking
        for hit in amber.recall("where is the build cache?", cwd=os.getcwd())["hits"]:
            print(hit["memory"]["content"])
"""

from .client import DEFAULT_START_TIMEOUT, DEFAULT_TIMEOUT, PROTOCOL_VERSION, Client
from .errors import (
    ERROR_KINDS,
    AmberConnectionError,
    AmberError,
    Busy,
    ConnectionLost,
    DaemonNotRunning,
    DaemonStartError,
    FactNotFound,
    Superseded,
    RateLimited,
    NotPermitted,
    NoModel,
    ModelFailed,
    TeamUnavailable,
    FrameTooLarge,
    InternalError,
    InvalidParams,
    InvalidRequest,
    InvalidUtf8,
    MethodNotFound,
    ModelUnavailable,
    NotForgotten,
    NotFound,
    ParseError,
    ProtocolError,
    ResponseTimeout,
    SessionNotFound,
    ShuttingDown,
    StorageError,
    StorageFull,
    Timeout,
    TooManyConnections,
    UnsupportedProtocol,
)
from .paths import default_config_path, default_socket_path, resolve_data_dir

__version__ = "0.1.0"

__all__ = [
    "Client",
    "PROTOCOL_VERSION",
    "DEFAULT_TIMEOUT",
    "DEFAULT_START_TIMEOUT",
    "default_socket_path",
    "default_config_path",
    "resolve_data_dir",
    "ERROR_KINDS",
    "AmberError",
    "AmberConnectionError",
    "DaemonNotRunning",
    "DaemonStartError",
    "ConnectionLost",
    "ResponseTimeout",
    "ProtocolError",
    "ParseError",
    "InvalidUtf8",
    "InvalidRequest",
    "MethodNotFound",
    "InvalidParams",
    "InternalError",
    "FrameTooLarge",
    "Busy",
    "NotFound",
    "ModelUnavailable",
    "UnsupportedProtocol",
    "ShuttingDown",
    "NotForgotten",
    "StorageFull",
    "StorageError",
    "TooManyConnections",
    "Timeout",
    "SessionNotFound",
    "FactNotFound",
    "Superseded",
    "RateLimited",
    "NotPermitted",
    "NoModel",
    "ModelFailed",
    "TeamUnavailable",
]
