"""What ends a request of the peer's and what waits for the peer's answer to one of ours, for
the session engine (:mod:`mcpio._session`, which names them to the rest of the package).

* :func:`response_frame` builds every answer, on every route (:func:`error_object`);
* :class:`Answered` waits in ``Session._pending`` for a request answered by a call;
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


class Answered:
    """A request of ours answered by a call, not awaited (:meth:`Session.request_nowait`): what
    ``_pending`` holds for it, taking the answer as a Future does."""

    __slots__ = ("_on_answer",)

    def __init__(self, on_answer: OnAnswer) -> None:
        self._on_answer: OnAnswer | None = on_answer

    def done(self) -> bool:
        return self._on_answer is None

    def set_result(self, result: Any) -> None:
        self._end(result, None)

    def set_exception(self, exc: BaseException) -> None:
        self._end(None, exc)

    def _end(self, result: Any, exc: BaseException | None) -> None:
        on_answer, self._on_answer = self._on_answer, None
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
