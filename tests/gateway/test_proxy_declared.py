"""What a request a proxy forwards declares upstream: on a 2026-07-28 upstream connection each
request declares its client's capabilities (``_meta`` clientCapabilities), so a forwarded one
declares the extensions of the proxy's client it is forwarded for, as that client would without
the proxy (``_gateway._forwarded.declared_by``). The real ``extended_upstream.py`` (a subprocess)
tells what the request's client declared for ``com.acme/push``, in a tool call (relayed, and
awaited when it carries a progress token) and a custom request."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpio import Client, Server
from tests.client.support import arun

HERE = Path(__file__).parent


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_forwarded_request_declares_its_clients_extensions_upstream(era):
    proxy = Server.proxy([sys.executable, str(HERE / "extended_upstream.py")], era="modern")

    async def go():
        async with (
            Client(proxy, era=era, timeout=60, extensions={"com.acme/push": {"v": 2}}) as declaring,
            Client(proxy, era=era, timeout=60) as plain,
        ):
            for c, settings in ((declaring, {"v": 2}), (plain, None)):
                assert (await c.call_tool("declared", {})).data == {"settings": settings}
                progressed = await c.call_tool("declared", {}, on_progress=lambda *args: None)
                assert progressed.data == {"settings": settings}
                assert (await c.request("acme/declared", {}))["settings"] == settings

    arun(go(), timeout=90)
