"""Fixtures of the client-cache tests: the cache server over stdio (a subprocess per Client) and
over Streamable HTTP (one ``mcpio run -t http … --auth-token-env`` process, two static tokens)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mcpio import Client
from tests.support.http import mcpio_http
from tests.support.redis import redis_server, redis_url  # noqa: F401  (fixtures)

SERVER = Path(__file__).parent / "cache_server.py"
ALICE = "alice-cache-team-token-000001"
BOB = "bob-cache-team-token-0000002"


@pytest.fixture(scope="module")
def http_url(tmp_path_factory):
    """The cache server on 127.0.0.1 (``token-1`` is Alice, ``token-2`` Bob)."""
    log = tmp_path_factory.mktemp("cache") / "stderr.log"
    tokens = {"TEAM_TOKENS": f"{ALICE},{BOB}", "SHORT_TTL_MS": "1000"}
    with mcpio_http(str(SERVER), "--auth-token-env", "TEAM_TOKENS", env=tokens, log=log) as (url, _):
        yield url
    assert "Traceback" not in log.read_text()


@pytest.fixture(params=["stdio", "http"])
def connect(request, http_url):
    """``connect(token=ALICE, **options)``: a Client of the cache server over this transport."""

    def make(token: str = ALICE, **options: Any) -> Client:
        options.setdefault("timeout", 30)
        if request.param == "http":
            return Client(http_url, headers={"Authorization": f"Bearer {token}"}, **options)
        return Client(str(SERVER), **options)

    make.transport = request.param  # type: ignore[attr-defined]
    return make


async def hits(client: Client, what: str) -> int:
    """How many ``what`` requests the server has served (``"tools/list"``, ``"read note://a"`` …)."""
    return int((await client.call_tool("get_hits", {})).data.get(what, 0))


def notified(method: str, uri: str | None = None) -> tuple[asyncio.Event, Any]:
    """An event set when the client receives ``method`` (about ``uri``), and the callback."""
    event = asyncio.Event()

    def on_notification(m: str, params: Any) -> None:
        if m == method and (uri is None or (params or {}).get("uri") == uri):
            event.set()

    return event, on_notification
