"""``Server.proxy(URL)`` names its upstream after the URL (its last path segment, else its host):
the URL's ``user:password@`` is no part of that name, which every log line and error about the
upstream quotes."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mcpio import Client, MCPError, Server
from tests.support.http import free_port

SECRET = "pass-word-1234"


def test_an_unreachable_proxied_url_is_logged_without_its_credentials(caplog):
    port = free_port()  # closed again: nothing listens there

    async def go() -> str:
        with pytest.raises(MCPError) as refused:
            async with Client(Server.proxy(f"http://ada:{SECRET}@127.0.0.1:{port}?token={SECRET}")):
                pass
        return str(refused.value)

    with caplog.at_level(logging.INFO, logger="mcpio"):
        message = asyncio.run(go())
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("mcpio")]
    assert (
        f"upstream '127.0.0.1:{port}' did not start: ConnectionClosed: cannot reach the MCP server at "
        f"http://127.0.0.1:{port}?token=[redacted]: All connection attempts failed"
    ) in logged, logged
    assert SECRET not in message and not [line for line in logged if SECRET in line], (message, logged)
