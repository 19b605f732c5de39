"""What a Client connects to: turn a target into a transport (one small function, no I/O).

Targets: an mcpio ``Server`` object (in memory, for tests), a ``.py`` file (served as
``mcpio run`` serves it, :func:`python_file`), a command line (a string split with :func:`shlex.split`, or a list of argv; never a
shell), or an ``http(s)://`` URL (Streamable HTTP, both eras; httpx is imported only then).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._errors import ConnectionClosed, MCPError
from .._pyfile import SOURCE_SUFFIXES, python_file
from .._shown import shown

if TYPE_CHECKING:  # asyncio is imported for an in-memory server: `mcpio run "CMD"` resolves its target without it
    import asyncio

    from .._transports._base import Transport  # `mcpio run server.py` reads python_file before its first answer

_HTTP_OPTIONS = ("headers", "auth", "verify")  # Client options for a URL; the others are for a subprocess


class UnsupportedTarget(ValueError):
    """The target names a transport this version cannot speak (or nothing we recognise)."""


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def endpoint_hint(url: str, error: BaseException) -> str | None:
    """What to try when ``url`` answered HTTP 404 (``error``, the client's) and its path names no
    ``mcp`` segment: that URL with ``/mcp``, where mcpio and most servers serve their endpoint,
    shown without its credentials; None for any other failure or URL."""
    from urllib.parse import urlsplit, urlunsplit

    data = getattr(error, "data", None)
    if not is_url(url) or not isinstance(data, dict) or data.get("status") != 404:
        return None
    parts = urlsplit(url)
    if "mcp" in parts.path.split("/"):
        return None
    guess = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/mcp"))
    return f"nothing serves MCP at that path; most servers do at /mcp: try {shown(guess)}"


def is_server(obj: Any) -> bool:
    """An mcpio Server (duck-typed: the client layer must not import the server layer)."""
    return callable(getattr(obj, "serve", None)) and callable(getattr(obj, "session", None))


def serve_argv(app: str, verbose: bool = False) -> list[str]:
    """The argv serving ``app`` (``FILE.py[:OBJECT]`` or ``MODULE:OBJECT``) over stdio with this
    Python: ``python -m mcpio run [-v] APP`` (``-v``: full tracebacks of an import error)."""
    return [sys.executable, "-m", "mcpio", "run", *(("-v",) if verbose else ()), app]


def command_for(target: str | os.PathLike[str] | Sequence[str]) -> list[str]:
    """The argv to spawn for a ``.py`` path (:func:`python_file`), a command line or an argv list."""
    if isinstance(target, (str, os.PathLike)):
        text = os.fspath(target)
        if python_file(text) is not None:
            return serve_argv(text)
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise UnsupportedTarget(f"cannot parse the command line {text!r}: {exc}") from None
    else:  # an argv: a list, a tuple (or any other sequence of str)
        argv = [os.fspath(a) for a in target]
    if not argv:
        raise UnsupportedTarget("the command line is empty")
    if len(argv) == 1 and argv[0].endswith(SOURCE_SUFFIXES) and not os.path.exists(argv[0]):
        raise UnsupportedTarget(f"{argv[0]}: no such file")
    return argv


def closed_error(what: str, exc: BaseException, tasks: list[asyncio.Task[Any]]) -> MCPError:
    """The error for ``what`` failing because the connection ended with ``exc``, for a transport
    that cannot tell why: an in-memory server's error, if its task (``make_transport``) failed."""
    for task in tasks:
        if task.done() and not task.cancelled() and (error := task.exception()) is not None:
            return ConnectionClosed(f"{what} failed: the server stopped: {type(error).__name__}: {error}")
    return exc if isinstance(exc, MCPError) else ConnectionClosed(f"{what} failed: {exc}")


def make_transport(target: Any, spawn: dict[str, Any], tasks: list[asyncio.Task[Any]]) -> Transport:
    """A transport for ``target``; an in-memory server's task is appended to ``tasks``."""
    if is_server(target):
        import asyncio

        from .._transports._memory import memory_pair

        ours, theirs = memory_pair(key=f"memory:{id(target)}")
        tasks.append(asyncio.get_running_loop().create_task(target.serve(theirs)))
        return ours
    if isinstance(target, (str, os.PathLike)) and is_url(os.fspath(target)):
        try:
            from .._transports._http_client import HTTPClientTransport
        except ImportError as exc:  # httpx is the optional extra "http"
            raise UnsupportedTarget(
                f"cannot connect to {shown(os.fspath(target))}: Streamable HTTP needs httpx ({exc}); "
                "install it with: pip install 'mcpio[http]'"
            ) from None
        options = {k: spec for k in _HTTP_OPTIONS if (spec := spawn.get(k)) is not None}
        return HTTPClientTransport(os.fspath(target), **options)
    if isinstance(target, (str, os.PathLike, list, tuple)):
        from .._transports._subprocess import SubprocessTransport

        argv = command_for(target)
        options = {k: v for k, v in spawn.items() if v is not None and k not in _HTTP_OPTIONS}
        return SubprocessTransport(argv[0], argv[1:], **options)
    raise UnsupportedTarget(
        f"cannot connect to {target!r}: give an mcpio Server, a .py path, a command line or a transport"
    )
