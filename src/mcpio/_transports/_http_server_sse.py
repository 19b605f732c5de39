"""The deprecated HTTP+SSE transport of 2024-11-05, for old clients (opt-in: ``legacy_sse=True``).

``GET /sse`` opens an event stream whose first event, ``endpoint``, names the URL to POST to
(``/messages?session_id=…``). Each POST carries one JSON-RPC message and gets ``202
Accepted``; everything the server sends — responses included — goes on the event stream as
``message`` events. The session lives as long as that stream: when the client disconnects, the
session ends. Host/Origin checks and the body size cap are those of the Streamable HTTP app.
With auth, a session belongs to the principal that opened its event stream: a POST of any other
principal gets the 404 of an unknown session (``_http_legacy.admits``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from .._protocol import _http as h
from .._protocol._http_checks import Verdict, read_post
from ._base import Abilities
from ._http_legacy import admits, current
from ._http_server_streams import SSE_HEADERS, TooLarge, plain, read_body, refuse, send_part, watch_disconnect
from ._memory import MemoryTransport, end_queue

if TYPE_CHECKING:
    from ._http_server import Scope, StreamableHTTPApp
    from ._http_server_streams import Receive, Send


class SSETransport(MemoryTransport):
    """One HTTP+SSE session: a memory transport whose other end is HTTP, POSTed messages in
    (``inbox``), SSE ``message`` events out (``outbox``)."""

    owns_events = False  # it keeps none in the event store (HTTP+SSE has no resumption)

    def __init__(self, session_id: str, owner: str | None = None, caller: Any = None) -> None:
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue(256)
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue(256)
        super().__init__(self.inbox, self.outbox)
        self.id = session_id
        self.abilities = Abilities(session_id=session_id)
        self.owner = owner  # the principal that opened it (with auth; admits)
        self.caller = caller  # the Caller its task holds (with auth; admits)

    async def aclose(self) -> None:
        self.terminate()

    def terminate(self) -> None:
        """End the session: its engine reads end of stream, and so does its event stream."""
        if not self.closed:
            self.closed = True
            end_queue(self.inbox)
            end_queue(self.outbox)

    end_streams = terminate


class LegacySSE:
    def __init__(self, app: StreamableHTTPApp, sse_path: str, message_path: str) -> None:
        self.app = app
        self.sse_path = "/" + sse_path.strip("/")
        self.message_path = "/" + message_path.strip("/")
        self.sessions: dict[str, SSETransport] = {}

    async def handle(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], route: str) -> None:
        method = scope.get("method")
        if route == self.sse_path:
            if method != "GET":
                await refuse(
                    send, h.refuse(405, "Method Not Allowed: GET opens the event stream", headers=(("allow", "GET"),))
                )
                return
            await self._stream(scope, receive, send)
            return
        if method != "POST":
            await refuse(send, h.refuse(405, "Method Not Allowed: POST messages here", headers=(("allow", "POST"),)))
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        sid = (query.get("session_id") or query.get("sessionId") or [None])[0]
        transport = self.sessions.get(sid) if sid else None
        if transport is None or transport.closed or not admits(self.app.caller, transport):
            await refuse(send, h.refuse(404, "Not Found: unknown or ended session; open the event stream again"))
            return
        verdict = self.app.checks.post(headers)
        if not isinstance(verdict, Verdict):  # the refusal
            await refuse(send, verdict)
            return
        try:
            body = await read_body(receive, headers, self.app.max_body_size)
            read_post(body, headers, verdict)  # BadBody: not JSON-RPC
        except TooLarge:
            await refuse(send, h.refuse(413, f"Payload Too Large: the limit is {self.app.max_body_size} bytes"))
            return
        except h.BadBody as exc:
            await refuse(send, exc.refusal)
            return
        await transport.inbox.put(body)
        await plain(send, 202, b"Accepted")

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        sid = h.new_session_id()
        caller = current(self.app.caller)
        transport = SSETransport(sid, caller.principal if caller is not None else None, caller)
        self.sessions[sid] = transport
        self.app.run_session(transport, sid)
        watcher = self.app._spawn(watch_disconnect(receive, transport.terminate))
        endpoint = f"{scope.get('root_path', '')}{self.message_path}?session_id={sid}"
        try:
            await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
            await send_part(send, h.sse_event(endpoint.encode(), event="endpoint"))
            while True:
                try:
                    async with asyncio.timeout(self.app.keepalive):
                        item = await transport.outbox.get()
                except TimeoutError:
                    await send_part(send, h.sse_comment())
                    continue
                if item is None:  # the end (end_queue)
                    break
                await send_part(send, h.sse_event(item, event="message"))
            if not transport.closed or not watcher.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()
            transport.terminate()
            self.sessions.pop(sid, None)

    def close_all(self) -> None:
        for t in list(self.sessions.values()):
            t.terminate()
