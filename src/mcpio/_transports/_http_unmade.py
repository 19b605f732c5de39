"""The response stream of a legacy POST carrying one request, until it is needed
(:meth:`~._http_legacy.LegacyTransport.post`): most such requests are
answered as they are delivered, and their answer is then the whole JSON response.
A request the Session answers at once (``answers_only``) to a JSON-accepting client
needs none while it is fed; this one routes the rest: what other feeders send on the
caller's stack, an SSE-only client's answer, and the protocol layer's refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from ._http_legacy import LegacyTransport
    from ._http_server_streams import Stream


class UnmadeStream(msgspec.Struct):
    """The stream of a POST carrying one request (:meth:`LegacyTransport.post`) until it is
    needed: routed to as the stream would be; keeps the request's answer if it comes first to
    a client that accepts JSON. A Struct: made per POST without a Python ``__init__``;
    never compared nor hashed (a Struct compares its fields)."""

    transport: LegacyTransport
    request_ids: set[Any]
    json_ok: bool
    sse_ok: bool
    priming: bool
    answered: bytes | None = None
    stream: Stream | None = None
    finished = False

    async def put(self, frame: bytes, final: bool) -> None:
        if not (final and self.take(frame)):
            await self.made().put(frame, final)

    def take(self, frame: bytes) -> bool:
        """Keep ``frame``, the request's answer, as the whole response if nothing came before it
        and the client accepts JSON (True); else nothing done (False: put it on the stream)."""
        if self.stream is None and self.json_ok:
            self.answered = frame
            return True
        return False

    def made(self) -> Stream:
        """The stream, made now if it is not yet (it takes this one's place in the routing)."""
        if self.stream is None:
            self.stream = self.transport.new_stream(
                self.request_ids, json_ok=self.json_ok, sse_ok=self.sse_ok, priming=self.priming
            )
        return self.stream
