"""The request checks remember the Host, Origin, Accept, Content-Type and MCP-Protocol-Version
values that passed (``_protocol._http_checks.RequestChecks``), seen through the app's answers
only: a request carrying remembered values answers exactly as the checks would have, a stream
of made-up Host values does not make the app hold more memory, and the allow-lists are fixed
when the app is made."""

from __future__ import annotations

import asyncio
import gc
import itertools
import tracemalloc
from typing import Any

import pytest

from mcpio import Server
from mcpio._protocol._http_checks import MEMO_MAX

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
        await remembering.aclose()

    asyncio.run(go())


@pytest.mark.parametrize("allowed", [None, ["*"]], ids=["loopback", "any-host"])
def test_a_stream_of_made_up_hosts_does_not_grow_memory(allowed: list[str] | None) -> None:
    """Every request carries a Host never seen before (allowed ones on ever new ports, made-up
    names): what the app holds after 2 x MEMO_MAX of them and after 10 x MEMO_MAX more differs by
    less than 200 bytes per MEMO_MAX; remembering each new value would take several hundred."""

    async def go() -> int:
        app = Server("m").http_app(allowed_hosts=allowed)
        counter = itertools.count()

        async def burst(n: int) -> None:
            for _ in range(n):
                i = next(counter)
                host = f"localhost:{i}" if i % 2 else f"made-up-{i:08d}.example"
                assert (await _post(app, _headers((host, None, None, "application/json"))))[0] in (400, 403)

        await burst(2 * MEMO_MAX)  # warm: every structure at its working size
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        await burst(10 * MEMO_MAX)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        await app.aclose()
        return grown

    tracemalloc.start()
    try:
        grown = asyncio.run(go())
    finally:
        tracemalloc.stop()
    # Each remembered Host costs well over 100 bytes (its string, its key, its verdict, a table slot).
    assert grown < 2 * MEMO_MAX * 100, f"{grown} bytes more after {10 * MEMO_MAX} new Host values"


def test_the_allow_lists_are_fixed_when_the_app_is_made() -> None:
    async def go() -> None:
        hosts = ["localhost"]
        app = Server("m").http_app(allowed_hosts=hosts)
        ok, other = _headers(("localhost", None, None, "application/json")), _headers(("example.com", None, None, None))
        assert (await _post(app, ok))[0] == 400  # passed the checks: no session
        hosts[:] = ["example.com"]  # the caller's list, changed afterwards: the app's is a copy
        assert (await _post(app, ok))[0] == 400
        assert (await _post(app, other))[0] == 403
        assert app.allowed_hosts == ("localhost",)
        with pytest.raises(AttributeError):
            app.allowed_hosts = ("example.com",)  # type: ignore[misc]  # another list: another app
        await app.aclose()

    asyncio.run(go())
