"""The transport seam: ``send`` / ``receive`` / ``aclose`` (style rule 5).

A transport carries *frames*: the bytes of exactly one JSON-RPC message (or batch), without
the newline. ``receive`` returns the next frame, or an ``Oversized`` marker for a message that
exceeded the size limit (so the session can answer it and go on), and raises
:class:`~mcpio._errors.EndOfStream` once the peer has closed and every frame was delivered.
``send`` may wait (backpressure) but never reorders. ``aclose`` is idempotent and bounded.

:data:`serving` names the incoming request the current task is serving, as (transport, id):
the session engine sets it in each request's task, so a transport that carries several
streams (Streamable HTTP) can put what a handler sends — progress, logs, requests to the
client — on the stream of the request it belongs to.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

from .._protocol._framing import Oversized

Frame = bytes | Oversized

serving: ContextVar[tuple[Any, Any] | None] = ContextVar("mcpio_serving", default=None)


class Transport(Protocol):
    async def send(self, frame: bytes) -> None: ...

    async def receive(self) -> Frame: ...

    async def aclose(self) -> None: ...
