"""What the client does with traffic from the server, and how server errors become typed.

* :func:`typed_error` turns a JSON-RPC error from the server into the most specific
  :class:`MCPError` subclass (same code, message and data).
* :func:`answer_sampling`, :func:`answer_elicitation`, :func:`list_roots` call the user's
  handler and normalise what it returns into a valid result; elicitation fills in the
  ``default`` of every requested field the answer left out (SEP-1034).
* :func:`forward_log` sends ``notifications/message`` to the ``mcpio.server`` logger when no
  ``on_log`` callback was given.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from typing import Any

from .._errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    HeaderMismatch,
    InvalidParams,
    MCPError,
    MethodNotFound,
    MissingRequiredClientCapability,
    RemoteProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)

server_log = logging.getLogger("mcpio.server")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


_TYPED: dict[int, type[MCPError]] = {
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INVALID_REQUEST: RemoteProtocolError,
    HEADER_MISMATCH: HeaderMismatch,
    MISSING_REQUIRED_CLIENT_CAPABILITY: MissingRequiredClientCapability,
    UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersion,
    URL_ELICITATION_REQUIRED: URLElicitationRequired,
}


def typed_error(exc: MCPError, method: str, params: dict[str, Any] | None = None) -> MCPError:
    """The most specific MCPError for an error the server sent (code, message, data kept)."""
    if type(exc) is not MCPError:
        return exc
    code, data = exc.code, exc.data
    uri = data.get("uri") if isinstance(data, dict) else None
    if code == RESOURCE_NOT_FOUND or (code == INVALID_PARAMS and method == "resources/read" and isinstance(uri, str)):
        # -32002 in the legacy era, -32602 with data.uri in 2026-07-28: the same failure.
        out: MCPError = ResourceNotFound(uri if isinstance(uri, str) else str((params or {}).get("uri")), exc.message)
        out.code, out.data = code, data
        return out
    cls = _TYPED.get(code)
    if cls is None:
        return exc
    return cls(exc.message, code, data)


async def call(handler: Callable[..., Any], *args: Any) -> Any:
    """Call a sync or async handler."""
    r = handler(*args)
    if inspect.isawaitable(r):
        r = await r
    return r


async def answer_sampling(handler: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    """``sampling/createMessage``: the handler returns a result dict, or just the reply text."""
    r = await call(handler, params)
    if isinstance(r, str):
        return {
            "role": "assistant",
            "content": {"type": "text", "text": r},
            "model": "unknown",
            "stopReason": "endTurn",
        }
    if not isinstance(r, dict):
        raise MCPError(f"the sampling handler returned {type(r).__name__}; return a CreateMessageResult dict or a str")
    return r


def fill_defaults(schema: Any, content: dict[str, Any] | None) -> dict[str, Any]:
    """``content`` plus the ``default`` of every property of ``schema`` it does not set."""
    out = dict(content or {})
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict):
        for key, prop in props.items():
            if key not in out and isinstance(prop, dict) and "default" in prop:
                out[key] = prop["default"]
    return out


async def answer_elicitation(
    handler: Callable[..., Any], params: dict[str, Any], modes: tuple[str, ...] = ("form",)
) -> dict[str, Any]:
    """``elicitation/create``. The handler returns an ElicitResult dict, or the content dict
    alone (meaning accept), or None (meaning decline). Accepted form content gets the
    schema's defaults for the fields it leaves out. A URL-mode request (``mode: "url"``: show
    ``url`` to the user, spec 2025-11-25) reaches the handler only when ``modes`` has "url"
    (what the client declared); its answer carries the action alone (no content)."""
    mode = params.get("mode", "form")
    if mode not in modes:
        raise InvalidParams(
            f"Invalid params: this client did not declare {mode}-mode elicitation "
            f"(it declared {', '.join(modes)}); ask in a mode it declared"
        )
    r = await call(handler, params)
    if r is None:
        return {"action": "decline"}
    if not isinstance(r, dict):
        raise MCPError(f"the elicitation handler returned {type(r).__name__}; return a dict or None")
    if r.get("action") not in ("accept", "decline", "cancel"):
        r = {"action": "accept", "content": r}
    if mode == "url":
        return {"action": r["action"]}
    if r["action"] == "accept" and mode == "form":
        r = {**r, "content": fill_defaults(params.get("requestedSchema"), r.get("content"))}
    return r


def root(item: Any) -> dict[str, Any]:
    """A Root object from a dict, a ``file://`` URI, or a filesystem path."""
    if isinstance(item, dict):
        return item
    text = os.fspath(item) if isinstance(item, os.PathLike) else str(item)
    if "://" in text:
        return {"uri": text, "name": text.rstrip("/").rsplit("/", 1)[-1] or text}
    from pathlib import Path  # here: a client's boot does without it (a gateway's, say)

    path = Path(text).expanduser().resolve()
    return {"uri": path.as_uri(), "name": path.name or str(path)}


async def list_roots(roots: Any) -> dict[str, Any]:
    items = await call(roots) if callable(roots) else roots
    return {"roots": [root(r) for r in items or ()]}


def forwarded_level() -> str:
    """The MCP log level that matches what the ``mcpio.server`` logger lets through now."""
    effective = server_log.getEffectiveLevel()
    for name in ("debug", "info", "warning", "error"):
        if effective <= _LEVELS[name]:
            return name
    return "critical"


def forward_log(server_name: str, params: dict[str, Any]) -> None:
    level = _LEVELS.get(str(params.get("level")), logging.INFO)
    logger = server_log.getChild(server_name) if server_name else server_log
    name = params.get("logger")
    logger.log(level, "%s%s", f"[{name}] " if name else "", params.get("data"))


#: An async ``on_progress``'s calls running at once for one request; past it, the newest waits
PROGRESS_IN_FLIGHT = 8


def progress_deliverer(on_progress: Any, pending: set[Any]) -> Any:
    """The session's progress callback for a caller's ``on_progress`` (None for None), for one
    request. A sync callback is called at once. An async one runs in a task (kept in ``pending``
    until done), started in order of arrival, up to :data:`PROGRESS_IN_FLIGHT` at once; progress
    that comes while that many run waits, the newest only, for the next to end: progress only
    grows (spec: MUST increase), so the newest says what those it replaced did, and a server's
    flood of progress makes a few tasks, not one each. What a callback raises goes to the loop's
    exception handler."""
    if on_progress is None:
        return None
    newest: list[tuple[float, float | None, str | None]] = []  # came while the most ran
    running = 0

    def start(awaiting: Any) -> None:
        import asyncio

        nonlocal running
        running += 1
        task = asyncio.ensure_future(awaiting)
        pending.add(task)
        task.add_done_callback(ended)

    def ended(task: Any) -> None:  # (a done callback: called even for a task cancelled before it began)
        nonlocal running
        running -= 1
        pending.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None and isinstance(exc, Exception):
            _callback_failed(exc)
        if newest:
            deliver(*newest.pop())

    def deliver(progress: float, total: float | None, message: str | None) -> None:
        if running >= PROGRESS_IN_FLIGHT:
            newest[:] = [(progress, total, message)]
            return
        r = on_progress(progress, total, message)
        if inspect.isawaitable(r):
            start(r)

    return deliver


def _callback_failed(exc: Exception) -> None:
    import asyncio

    asyncio.get_running_loop().call_exception_handler({"message": "an on_progress callback failed", "exception": exc})
