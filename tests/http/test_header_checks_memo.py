"""The app remembers the Host, Origin, Accept and Content-Type values that passed the request
checks (``StreamableHTTPApp._pass``, issue 17): a request carrying them again answers exactly
as the checks would have, only passes are kept, the memory is bounded, and it holds only for the
allow lists it was made under."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from mcpio import Server
from mcpio._transports import _http_server

from .test_http_cost import Client, scope

HOSTS = [None, "127.0.0.1:8000", "localhost", "evil.example", "LOCALHOST:1"]
ORIGINS = [None, "http://localhost:3000", "https://evil.example", "null"]
ACCEPTS = [None, "application/json, text/event-stream", "text/event-stream", "text/html", "*/*;q=0"]
CTYPES = [None, "application/json", "text/plain", "application/json; charset=utf-8"]
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}  # no session: 400 once the checks pass


def _headers(values: tuple[str | None, ...]) -> list[tuple[bytes, bytes]]:
    names = (b"host", b"origin", b"accept", b"content-type")
    return [(n, v.encode()) for n, v in zip(names, values, strict=True) if v is not None]


async def _post(app: Any, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    c = Client(PING)
    await app(scope(headers), c.receive, c.send)
    return c.status(), c.json()


def test_a_remembered_pass_answers_as_the_checks_do() -> None:
    async def go() -> None:
        remembering = Server("m").http_app()
        for values in itertools.product(HOSTS, ORIGINS, ACCEPTS, CTYPES):
            headers = _headers(values)
            fresh = await _post(Server("f").http_app(), headers)  # nothing remembered: the checks
            first, again = await _post(remembering, headers), await _post(remembering, headers)
            assert first == fresh and again == fresh, values
            assert (values in remembering._passed) is (fresh[0] == 400), values  # passes only
        await remembering.aclose()

    asyncio.run(go())


def test_the_memory_is_bounded_and_kept_for_its_allow_lists_only() -> None:
    async def go() -> None:
        app = Server("m").http_app()
        ok = ("localhost", None, None, "application/json")
        for port in range(_http_server.PASSED_MAX + 10):
            status, _ = await _post(app, _headers((f"localhost:{port}", None, None, "application/json")))
            assert status == 400 and len(app._passed) <= _http_server.PASSED_MAX
        assert await _post(app, _headers(ok)) == (400, (await _post(app, _headers(ok)))[1])
        assert ok in app._passed
        app.allowed_hosts = ("example.com",)  # what passed under the old list is checked again
        status, body = await _post(app, _headers(ok))
        assert status == 403 and "Host" in body["error"]["message"]
        assert (await _post(app, _headers(("example.com", None, None, "application/json"))))[0] == 400
        assert list(app._passed) == [("example.com", None, None, "application/json")]  # the old ones dropped
        await app.aclose()

    asyncio.run(go())


def test_allow_lists_that_can_change_in_place_are_checked_every_time() -> None:
    async def go() -> None:
        app = Server("m").http_app()
        app.allowed_hosts = ["localhost"]  # a list: it may change under a remembered verdict
        ok = _headers(("localhost", None, None, "application/json"))
        assert (await _post(app, ok))[0] == 400 and not app._passed
        app.allowed_hosts[:] = ["example.com"]
        status, body = await _post(app, ok)
        assert status == 403 and "Host" in body["error"]["message"]
        await app.aclose()

    asyncio.run(go())
