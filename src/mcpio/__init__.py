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
    "Arg": "._server._catalog",
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
    from importlib.machinery import ModuleSpec

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
    from ._server._catalog import Arg
    from ._server._context import ClientCapabilityError, Context
    from ._server._middleware import Request
    from ._server._resources import Message
    from ._server._server import Server
    from ._server._tools import ToolError
    from ._skills import SkillVerificationError
    from ._transports._subprocess import ServerExited, ServerNotFound


class _MsgspecImport:
    """The meta path finder of msgspec's import (see _import_msgspec), for one thread: it refuses
    ``typing_extensions``, and (on Linux) serves ``platform`` as a stand-in made for uuid."""

    thread = -1
    standin: object = None  # the stand-in served, if any

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> "ModuleSpec | None":
        if _thread.get_ident() != cls.thread:
            return None
        if name == "typing_extensions":
            raise ModuleNotFoundError("typing_extensions: not needed by msgspec on Python 3.11+")
        if name == "platform" and _sys.platform == "linux":
            return type(__spec__)("platform", cls)  # type: ignore[arg-type]  # a ModuleSpec, without importlib
        return None

    @classmethod
    def create_module(cls, spec: object) -> object:
        cls.standin = _PlatformForUuid("platform")
        return cls.standin

    @staticmethod
    def exec_module(module: object) -> None:
        pass


class _PlatformForUuid(type(_sys)):  # type: ignore[misc]  # a module
    """``platform`` as uuid's import reads it (issue 17: cold start). uuid imports platform only
    to call ``platform.system()`` once, at import, telling Linux from AIX (CPython 3.11-3.13:
    nothing else of it, then or later); importing the real module costs ~8 M instructions (~2.5
    ms, 6 % of a stdio server's start-up: its module-level regular expressions), more than the
    rest of uuid. On Linux (``sys.platform == "linux"``), ``platform.system()`` is the kernel's
    ``uname`` name, as here. Any other name loads the real module, privately, and gives its
    attribute: a thread that imports platform during msgspec's import gets a working module.
    Out of ``sys.modules`` as soon as msgspec is imported: a later ``import platform`` loads the
    real one (tests/unit/test_msgspec_import.py)."""

    def system(self) -> str:
        import os
        import sys  # by this name: the type checker reads `sys.platform`, not an alias's

        if sys.platform != "linux":  # never served there (find_spec)
            raise AttributeError("system")
        return os.uname().sysname

    def __getattr__(self, name: str) -> object:
        if name[:2] == "__":  # the import system's look-ups (__loader__, __path__, ...), as on a module
            raise AttributeError(name)  # (so __version__ too: only in the window, only for another thread)
        real = self.__dict__.get("_real")
        if real is None:
            import importlib.machinery
            import importlib.util

            spec = importlib.machinery.PathFinder.find_spec("platform")
            assert spec is not None and spec.loader is not None
            real = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(real)
            self.__dict__["_real"] = real
        return getattr(real, name)


def _import_msgspec() -> None:
    """``import msgspec`` without letting it import typing_extensions, and with uuid's
    ``platform`` a stand-in (issue 17: cold start; :class:`_PlatformForUuid`).

    msgspec's ``_utils`` takes ``get_type_hints``, ``Required`` and ``NotRequired`` from
    typing_extensions when it is installed, else from typing. On Python 3.11+ (mcpio's floor)
    they are the same: typing_extensions' ``Required``/``NotRequired`` *are* typing's, and its
    ``get_type_hints(..., include_extras=True)`` (the only call msgspec makes) returns
    ``typing.get_type_hints``'s result unchanged. Importing typing_extensions 4.x costs ~33 M
    instructions (~9 ms), half the floor server's whole start-up, in nearly every real
    environment (pydantic, httpx and most SDKs install it). Refused to this thread only, for the
    time of the import; an application that imports it later gets it as usual, and when it is
    already imported msgspec takes it as always (``sys.modules`` is read before any finder;
    tests/unit/test_msgspec_import.py). The stand-in is served only to an import of platform
    made during msgspec's (none when uuid or platform was imported before: both are then taken
    from ``sys.modules``)."""
    if "msgspec" in _sys.modules:
        return
    finder = _MsgspecImport
    finder.thread = _thread.get_ident()
    finder.standin = None
    # New lists, never the one in place changed: another thread's import may be iterating it by
    # index, and an insert or remove would make it see a finder twice or skip one.
    _sys.meta_path = [finder, *_sys.meta_path]
    try:
        import msgspec  # noqa: F401
    finally:
        finder.thread = -1
        _sys.meta_path = [f for f in _sys.meta_path if f is not finder]
        if finder.standin is not None and _sys.modules.get("platform") is finder.standin:
            del _sys.modules["platform"]  # uuid has read it; a later import loads the real one
        finder.standin = None


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
    "Arg",
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
