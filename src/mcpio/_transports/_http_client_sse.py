"""The deprecated HTTP+SSE transport of 2024-11-05, client side (the fallback of ``_http_client``).

A GET to the server URL opens an event stream whose first event, ``endpoint``, names the URL
to POST to (same origin only). Every message is POSTed there (202 Accepted or 200); every
message from the server — answers included — arrives on the event stream as a ``message``
event. The stream is the session: when it ends, the connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx

from .._protocol import _http as h
from .._protocol import _http_client_rules as rules
from .._shown import shown
from ._http_backend import Backend
from ._http_body import BodyTooLarge, read_capped

log = logging.getLogger("mcpio.client")


class HTTPSSEConnection:
    """One HTTP+SSE session: ``open`` finds the endpoint, ``send`` POSTs, events are delivered."""

    def __init__(
        self,
        http: Backend,
        url: str,
        deliver: Callable[[bytes | str], Any],
        ended: Callable[[str], None],
        max_message_size: int = h.DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        self._http = http
        self.max_message_size = max_message_size
        self.url = url
        self.endpoint: str | None = None
        self._deliver = deliver
        self._ended = ended
        self._task: asyncio.Task[None] | None = None

    async def open(self, timeout: float) -> bool:
        """GET the stream and wait for its ``endpoint`` event; False if the server has none."""
        ready: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._run(ready))
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(ready)
        except TimeoutError:
            self._task.cancel()
            return False

    async def _run(self, ready: asyncio.Future[bool]) -> None:
        reason = f"the HTTP+SSE event stream of {shown(self.url)} ended"
        try:
            async with self._http.stream("GET", self.url, headers={"accept": h.SSE}) as resp:
                if resp.status_code != 200 or not (resp.headers.get("content-type") or "").startswith(h.SSE):
                    ready.set_result(False)
                    return
                parser = h.SSEParser(self.max_message_size)
                async for chunk in resp.aiter_bytes():
                    for ev in parser.feed(chunk):
                        if self.endpoint is None:
                            if ev.event != "endpoint":
                                ready.set_result(False)
                                return
                            try:
                                self.endpoint = rules.endpoint_url(self.url, ev.data)
                            except ValueError as exc:
                                log.warning("%s: %s", shown(self.url), exc)
                                ready.set_result(False)
                                return
                            ready.set_result(True)
                        elif ev.event == "message":
                            self._deliver(ev.data)
        except httpx.HTTPError as exc:
            reason = f"the HTTP+SSE event stream of {shown(self.url)} failed: {str(exc) or type(exc).__name__}"
        except h.SSETooLarge as exc:
            reason = f"the HTTP+SSE event stream of {shown(self.url)} failed: {exc}"
        finally:
            if not ready.done():
                ready.set_result(False)
            elif self.endpoint is not None:
                self._ended(reason)

    async def send(self, msg: dict[str, Any], frame: bytes) -> None:
        assert self.endpoint is not None
        try:
            async with self._http.stream(
                "POST", self.endpoint, content=frame, headers={"content-type": h.JSON}
            ) as resp:
                status, reason = resp.status_code, resp.reason_phrase
                try:
                    body = await read_capped(resp, 65536)
                except BodyTooLarge as exc:
                    body = str(exc).encode()
        except httpx.HTTPError as exc:
            failure = rules.http_failure(None, f"POST {self.endpoint} failed: {str(exc) or type(exc).__name__}")
        else:
            if status < 300:
                return
            failure = rules.http_failure(status, reason, body)
        if "id" in msg and "method" in msg:  # a request: its caller gets the failure
            self._deliver(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": failure}))
        else:
            log.warning("%s: %s", self.endpoint, failure["message"])

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
