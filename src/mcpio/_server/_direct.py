"""A 2026-07-28 ``tools/call`` over HTTP answered without a Session (issue 17: HTTP per request).

A stateless POST's request needs none of what a :class:`~mcpio._session.Session` and its
:class:`~mcpio._protocol._connection.Connection` keep — ids in flight, cancellations, a
lifecycle, requests to the client — when the tool cannot wait and reaches nothing of them: a
sync tool run inline that takes no Context, with no middleware (``_tools.answers_at_once``). For
those, :func:`answer` does what the session would, in the same order and with the same
functions: the request's ``_meta`` admitted (``modern_admission``: version, capabilities,
method), the handler and the era's decorations (``_handlers.tools_call_now``, as the session's
plain-function answer: capability gate, arguments, the tool, its result and size cap), and the same error objects
(an ``MCPError`` as itself; anything else as -32603, its text only with ``expose_errors=True``).
The message was classified once, by the app (``rpc.classify`` in ``_protocol._http.kinds``).

:func:`~._http.direct` keeps on the session what needs it: telemetry (its span wraps the session's
request handler), a progress token (heartbeats), a subclass's own ``_on_request``; an MRTR retry
(``requestState``: its state is verified by the request's Context) never ``answers_at_once``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .. import _jsonrpc as rpc
from .. import _log
from .._errors import MCPError, TransportError, to_error_object
from .._protocol._connection import modern_admission
from .._versions import RULES
from ._handlers import tools_call_now

if TYPE_CHECKING:
    from .._session import Session
    from ._server import Server
    from ._tools import Tool

log = _log.logger("mcpio.server", globals())


class _Stateless:
    """What a Context of a request answered without a session reads of its session."""

    __slots__ = ("expose_errors",)

    def __init__(self, expose_errors: bool) -> None:
        self.expose_errors = expose_errors


# The session of a Context answered directly, by ``expose_errors`` (made once: no per-request object)
_SESSIONS = {True: cast("Session", _Stateless(True)), False: cast("Session", _Stateless(False))}


_NO_META: dict[str, Any] = {}  # the _meta of a request without one (read only)
_PLAIN: Any = None  # Server._on_request, looked up once (_server imports this module)


def plain(server: Server) -> bool:
    """Whether the server's sessions run ``Server._on_request`` itself: telemetry does not wrap
    it, and no subclass serves requests its own way."""
    handler = _PLAIN if _PLAIN is not None else _plain_handler()
    return getattr(server._on_request_hook, "__func__", None) is handler


def _plain_handler() -> Any:
    global _PLAIN
    if _PLAIN is None:
        from ._server import Server

        _PLAIN = Server._on_request
    return _PLAIN


def answer(server: Server, message: dict[str, Any], tool: Tool) -> dict[str, Any]:
    """The answer to ``message`` (a decoded request that ``_http.direct`` admits; ``tool``, the one
    it calls, as ``answers_at_once`` gave it), as a stateless session would give it: the JSON-RPC
    response or error, not yet encoded. A plain call (issue 17: no coroutine to start and finish
    per request); the caller encodes and sends it (:func:`send`, when it cannot be the whole
    response at once)."""
    id_ = message["id"]
    params: dict[str, Any] = message["params"]
    meta = params.get("_meta")
    admitted = modern_admission("tools/call", meta if type(meta) is dict else _NO_META)
    if not isinstance(admitted, str):  # the error object
        return rpc.error_response(id_, admitted)
    expose = server.expose_errors is True  # remote clients get the type only (serve_session)
    try:
        return rpc.response(id_, tools_call_now(server, _SESSIONS[expose], RULES[admitted], params, tool))  # no Context
    except MCPError as exc:
        return rpc.error_response(id_, exc.to_error_object())
    except Exception as exc:  # a handler bug: internal error, details to stderr only
        log.exception("handler for tools/call failed")
        return rpc.error_response(id_, to_error_object(exc, detail=expose))


async def send(transport: Any, frame: bytes) -> None:
    """Send ``frame``, :func:`answer`'s answer, on the stream of ``transport`` (a
    ``RequestTransport``) when something went out before it (it cannot be the whole response)."""
    try:
        await transport.answer(frame)
    except TransportError as exc:
        log.debug("could not send the answer to %r: %s", transport.message.get("id"), exc)
