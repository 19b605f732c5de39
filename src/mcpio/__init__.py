"""mcpio: the Model Context Protocol, from the specification.

Public API (everything else lives in private ``_modules``)::

    from mcpio import Server, Context, Image
"""

import _thread
import sys as _sys

from ._version import __version__

# typing.TYPE_CHECKING (type checkers read this name as True) without importing typing here:
# msgspec imports it in __getattr__, where the collector is off (issue 17: cold start).
TYPE_CHECKING = False

# Names load on first use (PEP 562): ``import mcpio`` stays cheap, and a host that spawns a
# server pays only for what that server touches.
_EXPORTS = {
    "Audio": "._content",
    "EmbeddedResource": "._content",
    "Image": "._content",
    "ResourceLink": "._content",
    "Text": "._content",
    "ToolResult": "._content",
    "ConnectionClosed": "._errors",
    "EndOfStream": "._errors",
    "LocalProtocolError": "._errors",
    "MCPError": "._errors",
    "ProtocolError": "._errors",
    "RemoteProtocolError": "._errors",
    "RequestTimeout": "._errors",
    "ResourceNotFound": "._errors",
    "TransportError": "._errors",
    "ClientCapabilityError": "._server._context",
    "Context": "._server._context",
    "Message": "._server._resources",
    "Server": "._server._server",
    "Request": "._server._middleware",
    "ToolError": "._server._tools",
    "Client": "._client._client",
    "TaskCancelled": "._client._tasks",
    "InvalidParams": "._errors",
    "MethodNotFound": "._errors",
    "HeaderMismatch": "._errors",
    "MissingRequiredClientCapability": "._errors",
    "UnsupportedProtocolVersion": "._errors",
    "ServerExited": "._transports._subprocess",
    "ServerNotFound": "._transports._subprocess",
    "ConfigError": "._host._config",
    "ServerSpec": "._host._config",
    "load_config": "._host._config",
    "Host": "._host._host",
    "PathParam": "._safepath",
    "SafePath": "._safepath",
    "SafePathError": "._safepath",
    "SkillVerificationError": "._skills",
}

if TYPE_CHECKING:
    from ._client._client import Client
    from ._client._tasks import TaskCancelled
    from ._content import Audio, EmbeddedResource, Image, ResourceLink, Text, ToolResult
    from ._errors import (
        ConnectionClosed,
        EndOfStream,
        HeaderMismatch,
        InvalidParams,
        LocalProtocolError,
        MCPError,
        MethodNotFound,
        MissingRequiredClientCapability,
        ProtocolError,
        RemoteProtocolError,
        RequestTimeout,
        ResourceNotFound,
        TransportError,
        UnsupportedProtocolVersion,
    )
    from ._host._config import ConfigError, ServerSpec, load_config
    from ._host._host import Host
    from ._safepath import PathParam, SafePath, SafePathError
    from ._server._context import ClientCapabilityError, Context
    from ._server._middleware import Request
    from ._server._resources import Message
    from ._server._server import Server
    from ._server._tools import ToolError
    from ._skills import SkillVerificationError
    from ._transports._subprocess import ServerExited, ServerNotFound


class _NoTypingExtensions:
    """A meta path finder that refuses ``typing_extensions`` to one thread (see _import_msgspec)."""

    thread = -1

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> None:
        if name == "typing_extensions" and _thread.get_ident() == cls.thread:
            raise ModuleNotFoundError("typing_extensions: not needed by msgspec on Python 3.11+")


def _import_msgspec() -> None:
    """``import msgspec`` without letting it import typing_extensions (issue 17: cold start).

    msgspec's ``_utils`` takes ``get_type_hints``, ``Required`` and ``NotRequired`` from
    typing_extensions when it is installed, else from typing. On Python 3.11+ (mcpio's floor)
    they are the same: typing_extensions' ``Required``/``NotRequired`` *are* typing's, and its
    ``get_type_hints(..., include_extras=True)`` (the only call msgspec makes) returns
    ``typing.get_type_hints``'s result unchanged. Importing typing_extensions 4.x costs ~33 M
    instructions (~9 ms), half the floor server's whole start-up, in nearly every real
    environment (pydantic, httpx and most SDKs install it). Refused to this thread only, for the
    time of the import; an application that imports it later gets it as usual, and when it is
    already imported msgspec takes it as always (tests/unit/test_msgspec_import.py)."""
    if "msgspec" in _sys.modules or "typing_extensions" in _sys.modules:
        return  # the import below takes what is there, as always
    _NoTypingExtensions.thread = _thread.get_ident()
    # New lists, never the one in place changed: another thread's import may be iterating it by
    # index, and an insert or remove would make it see a finder twice or skip one.
    _sys.meta_path = [_NoTypingExtensions, *_sys.meta_path]
    try:
        import msgspec  # noqa: F401
    finally:
        _sys.meta_path = [f for f in _sys.meta_path if f is not _NoTypingExtensions]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpio' has no attribute {name!r}")
    import gc

    # No collections while mcpio's modules load (issue 17: cold start): an import makes only
    # long-lived objects (modules, classes, functions), so the collector's passes over them
    # (several million instructions for the server's modules and msgspec) find nothing to free.
    # Afterwards they go straight to the oldest generation, still collectable (into the permanent
    # generation and back: two list splices), instead of being scanned young by the next
    # collections (~4 M instructions; ~7 M in a server registering 200 tools). Not when the
    # application has frozen objects itself (a pre-fork server): unfreeze would release them.
    # The collector's previous state is back afterwards, whatever the import did.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _import_msgspec()
        # `from .module import name`, without importing importlib (~0.5 M instructions at start-up)
        obj = getattr(__import__(module[1:], globals(), None, (name,), 1), name)
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()
    try:
        obj.__module__ = "mcpio"
    except (AttributeError, TypeError):
        pass
    globals()[name] = obj
    return obj


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Audio",
    "Client",
    "ClientCapabilityError",
    "ConfigError",
    "ConnectionClosed",
    "Context",
    "EmbeddedResource",
    "EndOfStream",
    "HeaderMismatch",
    "Host",
    "Image",
    "InvalidParams",
    "LocalProtocolError",
    "MCPError",
    "Message",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "PathParam",
    "ProtocolError",
    "RemoteProtocolError",
    "Request",
    "RequestTimeout",
    "ResourceLink",
    "ResourceNotFound",
    "SafePath",
    "SafePathError",
    "Server",
    "ServerExited",
    "ServerNotFound",
    "ServerSpec",
    "SkillVerificationError",
    "TaskCancelled",
    "Text",
    "ToolError",
    "ToolResult",
    "TransportError",
    "UnsupportedProtocolVersion",
    "__version__",
    "load_config",
]
