"""What ends a request of the peer's and what waits for the peer's answer to one of ours, for
the session engine (:mod:`mcpio._session`, which names them to the rest of the package).

* :func:`response_frame` builds every answer, on every route (:func:`error_object`);
* :class:`Answered` waits in ``Session._pending`` for a request answered by a call, and
  :class:`ProgressRoutes` takes the peer's progress for a request of ours to its callback;
* :class:`Relayed` stands for a request in flight that no task serves (``relay``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from . import _jsonrpc as rpc
from ._errors import INVALID_REQUEST, MCPError, to_error_object

log = logging.getLogger("mcpio.session")

OnAnswer = Callable[[Any, BaseException | None], None]
ProgressCallback = Callable[[float, float | None, str | None], Any]


class ProgressRoutes:
    """The progress tokens of a session's requests in flight, each to its callback: a token is
    opened with its request (:meth:`open`) and closed when the request ends (:meth:`close`);
    each ``notifications/progress`` for an open one goes to its callback (:meth:`route`)."""

    __slots__ = ("callbacks", "made")

    def __init__(self) -> None:
        self.callbacks: dict[Any, ProgressCallback] = {}
        self.made = 0  # tokens made so far

    def open(self, params: dict[str, Any] | None, callback: ProgressCallback) -> tuple[dict[str, Any], Any]:
        """``params`` with a progress token in their ``_meta`` (the caller's own, if it gave one,
        else a new one), routed to ``callback``; and that token."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        self.made += 1
        token = meta.setdefault("progressToken", f"mcpio-{self.made}")
        params["_meta"] = meta
        self.callbacks[token] = callback
        return params, token

    def close(self, token: Any) -> None:
        self.callbacks.pop(token, None)

    def route(self, params: Any) -> None:
        token = params.get("progressToken") if params else None
        if type(token) not in (int, str):  # the schema's ProgressToken; anything else matches nothing
            return
        callback = self.callbacks.get(token)
        if callback is not None:
            try:
                callback(params.get("progress"), params.get("total"), params.get("message"))
            except Exception:
                log.exception("progress callback failed")


class Answered:
    """A request of ours answered by a call, not awaited (:meth:`Session.request_nowait`): what
    ``_pending`` holds for it, taking the answer as a Future does. ``progress``: the session's
    routes, when this request carries the progress token ``token``: open until the request is
    answered or dropped (:meth:`drop`, the request given up)."""

    __slots__ = ("_on_answer", "progress", "token")

    def __init__(self, on_answer: OnAnswer, progress: ProgressRoutes | None = None, token: Any = None) -> None:
        self._on_answer: OnAnswer | None = on_answer
        self.progress, self.token = progress, token

    def done(self) -> bool:
        return self._on_answer is None

    def set_result(self, result: Any) -> None:
        self._end(result, None)

    def set_exception(self, exc: BaseException) -> None:
        self._end(None, exc)

    def drop(self) -> None:
        """Given up: ``on_answer`` is never called, and no progress is delivered for it any more."""
        self._on_answer = None
        if self.progress is not None:
            self.progress.close(self.token)

    def _end(self, result: Any, exc: BaseException | None) -> None:
        on_answer = self._on_answer
        self.drop()
        if on_answer is not None:
            try:
                on_answer(result, exc)
            except Exception:  # a bug there must not reach the transport's callback
                log.exception("the callback of a request failed")


class Relayed(asyncio.Future[None]):
    """A request in flight that no task serves (``relay``; :meth:`Session.settle` ends it):
    :meth:`cancel` (``notifications/cancelled``, the session's abort or end) calls ``on_cancel``
    at once, which ends it with a CancelledError."""

    def __init__(self, on_cancel: Callable[[], None], *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self._on_cancel = on_cancel

    def cancel(self, msg: Any = None) -> bool:
        if not super().cancel(msg):
            return False
        self._on_cancel()
        return True


def error_object(method: str, exc: BaseException, expose: bool) -> dict[str, Any]:
    """The JSON-RPC error object answering a request ``method`` whose handler raised ``exc`` (a
    CancelledError or an Exception), on every route: an MCPError as itself, a handler bug as
    -32603 (its text only with ``expose``; the traceback to the log)."""
    if isinstance(exc, asyncio.CancelledError):
        return {"code": INVALID_REQUEST, "message": "Request cancelled"}
    if isinstance(exc, MCPError):
        return exc.to_error_object()
    log.error("handler for %s failed", method, exc_info=exc)
    return to_error_object(exc, detail=expose)


def response_frame(id_: Any, method: str, result: Any, exc: BaseException | None, expose: bool) -> bytes:
    """The encoded response to request ``id_`` (``method``): ``result``, or the error object of
    ``exc`` (:func:`error_object`). A result that cannot be encoded is its handler's fault,
    answered as if the handler had raised the encoder's error (-32603)."""
    if exc is None:
        try:
            return rpc.encode(rpc.response(id_, result))
        except Exception as failure:
            exc = failure
    return rpc.encode(rpc.error_response(id_, error_object(method, exc, expose)))


def task_outcome(task: asyncio.Task[Any]) -> tuple[Any, BaseException | None]:
    """A finished task's (result, None), or (None, its exception): what an ``OnAnswer`` takes."""
    exc = task.exception()
    return (None, exc) if exc is not None else (task.result(), None)


def expire(fut: asyncio.Future[Any]) -> None:
    """A request's deadline: its wait ends with TimeoutError (``Session.request``)."""
    if not fut.done():
        fut.set_exception(TimeoutError())
