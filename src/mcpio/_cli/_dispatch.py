"""Running a command (:func:`dispatch`) and the one mapping from failures to messages and exit
statuses (:func:`report`). Imports only what every command needs, so ``mcpio run`` reaches the
server without loading the client, the host configs or the HTTP stack."""

from __future__ import annotations

import importlib
import re
import sys
from types import CoroutineType
from typing import Any

from .. import _log
from .._errors import ConnectionClosed, MCPError, RemoteProtocolError, RequestTimeout, TransportError
from ._exit import FAILED, INTERRUPTED, PROTOCOL, UNAVAILABLE, USAGE, CLIFailure, UsageError


def dispatch(args: Any, handler: str) -> int:
    """Run ``handler`` (``module:function``) with ``args``; returns the exit status. Every
    failure goes through :func:`report`."""
    _logging(bool(getattr(args, "verbose", False)), getattr(args, "command", None) == "run")
    module, _, name = handler.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name)
        result = fn(args)
        if isinstance(result, CoroutineType):
            import asyncio  # only for an async command: `run` serves before asyncio loads

            result = asyncio.run(result)
        return int(result)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:
        return report(exc, args)


def _logging(verbose: bool, serving: bool) -> None:
    """mcpio's log records go to stderr, cleaned (:mod:`._logs`): at once, or when ``serving``
    (``mcpio run``) from when the server loads :mod:`logging` (a stdio server: after its first
    answer; ``Server.run`` loads it through ``_log``)."""

    def configure() -> None:
        from ._logs import clean_logs  # with logging, which it configures

        clean_logs(verbose)

    if serving:
        _log.configure(configure)
    else:
        configure()


def with_code(exc: MCPError) -> str:
    """The error's message with its code, once (servers often put the code in the message)."""
    from ._output import clean

    message = clean(exc.message, multiline=False)
    said = re.search(rf"(?<![\d-]){re.escape(str(exc.code))}(?!\d)", message)
    return message if said else f"{message} (error {exc.code})"


def _child_failure(text: str) -> tuple[str, str | None] | None:
    """A Python target spawned as ``mcpio run`` that failed prints ``mcpio: error: …`` lines:
    those are the message to show (and its hint), not "the process exited"."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("mcpio: error: "):
            hint = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("  ") else None
            return line[len("mcpio: error: ") :], hint
    return None


def report(exc: BaseException, args: Any) -> int:
    """Print one or two lines for ``exc`` (whose fault, what to do) and return its exit status."""
    from .._shown import shown
    from ._output import clean, dump_json, err, error  # on failure only: `run` never prints through it

    target = getattr(args, "target", None) or getattr(args, "app", None) or "TARGET"
    hint: str | None = None
    details: str | None = getattr(exc, "details", None)
    if isinstance(exc, CLIFailure):
        message, status, hint = exc.message, exc.status, exc.hint
    elif isinstance(exc, UsageError):
        message, status = str(exc), USAGE
    elif isinstance(exc, _loaded("mcpio._host._config", "ConfigError")):
        message, status = str(exc), USAGE
        hint = (
            "the file was left as it was: fix it, or write to another file with --config FILE"
            if getattr(args, "command", None) == "install"  # the file install writes, not a TARGET
            else "fix the configuration file, or name the server another way (mcpio --help lists the TARGET forms)"
        )
    elif isinstance(exc, RemoteProtocolError):
        message, status = f"the server broke the protocol: {clean(exc.message, multiline=False)}", PROTOCOL
        hint = (
            "this is a bug in the server; tell its authors (--trace FILE records the messages, mcpio doctor checks it)"
        )
    elif isinstance(exc, (ConnectionClosed, RequestTimeout)):
        status = UNAVAILABLE
        child = _child_failure(exc.message)
        if child is not None:
            message, hint = child[0], child[1]
            message = f"the server did not start: {message}"
        elif isinstance(exc, RequestTimeout):
            message = f"the server did not answer in time: {clean(exc.message)}"
            hint = "raise --timeout, or add -v to see what the server prints"
        else:
            message = f"lost the server: {clean(exc.message)}"
            hint = (
                "trust the CA that signed its certificate: SSL_CERT_FILE=ca.pem mcpio …"
                if "TLS certificate is not trusted" in message
                else f"check that an MCP server is running at {shown(target)}"
                if str(target).startswith(("http://", "https://"))  # _client._target.is_url
                else f"check that {shown(str(target))} starts an MCP server (run its command yourself; -v shows its stderr)"
            )
    elif isinstance(exc, MCPError) and (refusal := _advice().unauthorized(exc, args)) is not None:
        (message, hint, details), status = refusal, FAILED
    elif isinstance(exc, MCPError):
        message, status = f"the server answered with an error: {with_code(exc)}", FAILED
        hint = _advice().not_found(exc, args) or getattr(exc, "hint", None)  # a command's own (cmd_read)
    elif isinstance(exc, (_loaded("mcpio._client._target", "UnsupportedTarget"), TransportError, OSError)):
        status = UNAVAILABLE
        text = clean(str(exc))
        message = text if text.startswith("cannot") else f"cannot start or reach the server: {text}"
        if isinstance(exc, FileNotFoundError) or "not found" in str(exc):
            hint = "check the command (is it installed and on PATH?) or give a .py file, a URL or a host:NAME"
        else:
            hint = "-v shows the server's stderr"
    elif isinstance(exc, ModuleNotFoundError) and (extra := _extra_missing(exc)) is not None:
        message, status = (
            f"mcpio {getattr(args, 'command', None) or ''} needs {exc.name}, which is not installed",
            USAGE,
        )
        hint = f"install mcpio with its {extra!r} extra: pip install 'mcpio[{extra}]'"
    else:
        raise exc
    words = _advice().in_cli_words  # flags, not the Python API's keywords
    message, hint = words(message), words(hint) if hint else hint
    if getattr(args, "json", False):
        body: dict[str, Any] = {"message": message, "status": status}
        if isinstance(exc, MCPError):
            body.update(exc.to_error_object())
            body["message"] = message
        if hint:
            body["hint"] = hint
        dump_json({"error": body})
    if details and getattr(args, "verbose", False):
        err(details.rstrip())
    error(message, hint)
    return status


#: The optional dependencies, by top-level module, and the extra of pyproject.toml that brings each.
EXTRAS = {
    "httpx": "http",
    "uvicorn": "http",
    "httptools": "http",
    "jwt": "auth",
    "redis": "redis",
    "yaml": "openapi",
    "hypercorn": "http2",
    "h2": "http2",
    "opentelemetry": "otel",
}


def _extra_missing(exc: ModuleNotFoundError) -> str | None:
    """The extra that brings the module ``exc`` did not find, when mcpio's own code imported it
    (a user's code that fails to import is :class:`._run.UserCodeError`), else None."""
    import os
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    if not frames or not os.path.abspath(frames[-1].filename).startswith(ours):
        return None
    return EXTRAS.get((exc.name or "").partition(".")[0])


def _loaded(module: str, name: str) -> type[BaseException] | tuple[()]:
    """The exception class ``name`` of ``module`` when that module is loaded, else ``()`` (which
    ``isinstance`` matches with nothing): an exception of a module never loaded was not raised."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else ()


def _advice() -> Any:
    """``_advice`` (what a command line says instead of the library), loaded on a failure only."""
    from . import _advice

    return _advice
