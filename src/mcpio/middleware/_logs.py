"""``StructuredLogging``: one JSON line per request, with nothing secret in it.

A line (``logger``, ``level``; the message is the JSON object itself)::

    {"event": "mcp.request", "method": "tools/call", "name": "search", "outcome": "ok",
     "durationMs": 2.417, "requestId": 3, "protocolVersion": "2025-11-25",
     "client": "claude-code", "principal": "3f1c0a9b2e4d", "session": "9a0e77c1d2f3"}

``outcome``: ``ok``, ``tool_error`` (an ``isError`` tool result), ``error`` (with ``errorCode``,
the JSON-RPC code sent, and ``errorType`` for an unexpected exception), ``input_required`` (a
2026-07-28 round asking the client for input) or ``cancelled``. ``principal`` and ``session``
are one-way digests (:func:`._identity.digest`: stable across processes, so lines of one caller
can be grouped, but neither the principal nor the session id, which is a credential, is written).

Never written: tokens, the ``Authorization``, ``Proxy-Authorization``, ``Cookie`` and
``Mcp-Session-Id`` headers (no header is logged), exception messages (they may quote anything), a resource URI's user info and
query (``name`` keeps scheme, host and path), and argument values, unless ``include_arguments=True``:
then the arguments are logged with the value of every key that looks secret (``password``,
``token``, ``secret``, ``api_key``, ``authorization``, ``cookie``, ``credential``, ``private_key``,
``session``, ``key``…: :data:`mcpio._shown.SECRET_KEY`, at any depth) and every string that looks like a bearer token, a JWT or a state
handle (``mcpio.StateHandle``: without auth, holding one is the authority to use it) replaced by
``"[redacted]"``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import TYPE_CHECKING, Any

from .._errors import INTERNAL_ERROR, MCPError
from .._handle import HANDLE_PATTERN
from .._shown import REDACTED, SECRET_KEY
from . import _identity

if TYPE_CHECKING:
    from .._server._middleware import CallNext, Request

SECRET_VALUE = re.compile(
    r"^\s*(bearer|basic)\s+\S+|^eyJ[\w-]+\.[\w-]+\.|^" + HANDLE_PATTERN + "$",  # a token, a JWT, a state handle
    re.IGNORECASE,
)


def shown_name(request: Request) -> str | None:
    """The tool or prompt name, or the resource URI without user info, query and fragment."""
    name = request.name
    if name is None or request.method not in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return name
    scheme, sep, rest = name.partition("://")
    if sep:
        host, slash, path = rest.partition("/")
        rest = host.rpartition("@")[2] + slash + path
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    return scheme + sep + (rest if cut < 0 else rest[:cut] + "?" + REDACTED)


def redact(value: Any, depth: int = 0) -> Any:
    """``value`` (arguments) with secret-looking keys' values and bearer-like strings replaced."""
    if depth > 32:
        return REDACTED
    if isinstance(value, dict):
        return {str(k): REDACTED if SECRET_KEY.search(str(k)) else redact(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, depth + 1) for v in value]
    if isinstance(value, str) and SECRET_VALUE.search(value):
        return REDACTED
    return value


class StructuredLogging:
    """Middleware: one JSON log line per request (see the module docstring). ``logger``: a name
    or a :class:`logging.Logger` (default ``mcpio.requests``); ``level``: of every line."""

    def __init__(
        self,
        logger: str | logging.Logger = "mcpio.requests",
        level: int = logging.INFO,
        *,
        include_arguments: bool = False,
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        if self.logger.level == logging.NOTSET:  # its lines pass even where "mcpio" logs warnings only
            self.logger.setLevel(level)
        self.level = level
        self.include_arguments = include_arguments

    def __repr__(self) -> str:
        return f"StructuredLogging({self.logger.name!r}, include_arguments={self.include_arguments})"

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        if not self.logger.isEnabledFor(self.level):
            return await call_next(request)
        started = time.perf_counter()
        line: dict[str, Any] = {"event": "mcp.request", "method": request.method}
        name = shown_name(request)
        if name is not None:
            line["name"] = name
        try:
            result = await call_next(request)
        except MCPError as exc:
            line.update(outcome="error", errorCode=exc.code)
            raise
        except asyncio.CancelledError:
            line["outcome"] = "cancelled"
            raise
        except Exception as exc:
            line.update(outcome="error", errorCode=INTERNAL_ERROR, errorType=type(exc).__name__)
            raise
        except BaseException as exc:  # the 2026-07-28 InputRequired: a round, not a failure
            line["outcome"] = "input_required" if type(exc).__name__ == "InputRequired" else "cancelled"
            raise
        else:
            tool_error = request.method == "tools/call" and isinstance(result, dict) and result.get("isError")
            line["outcome"] = "tool_error" if tool_error else "ok"
            return result
        finally:
            line["durationMs"] = round((time.perf_counter() - started) * 1000, 3)
            try:
                self._emit(request, line)
            except Exception:  # a log line never changes the answer
                self.logger.exception("StructuredLogging could not write the line of a %s request", request.method)

    def _emit(self, request: Request, line: dict[str, Any]) -> None:
        ctx = request.context
        rid = ctx.request_id
        line["requestId"] = rid[:64] if isinstance(rid, str) else rid  # the client's choice: bounded
        if ctx.protocol_version is not None:
            line["protocolVersion"] = ctx.protocol_version
        client = ctx.client_info.get("name")
        if isinstance(client, str):
            line["client"] = client[:64]
        if ctx.principal is not None:
            line["principal"] = _identity.digest(ctx.principal)
        http = ctx.http
        sid = http.secret_header("mcp-session-id") if http is not None else None
        if sid:
            line["session"] = _identity.digest(sid)
        if self.include_arguments and request.method in ("tools/call", "prompts/get"):
            line["arguments"] = redact(request.arguments)
        self.logger.log(self.level, json.dumps(line, default=repr, ensure_ascii=False, separators=(",", ":")))
