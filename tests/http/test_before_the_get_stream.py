"""What a legacy Streamable HTTP server sends outside any request before its client has opened
the GET stream (spec 2025-11-25, transports: the server sends such messages on that stream) is
held for it and written first when it opens, instead of being dropped: a server that asks the
client's ``roots/list`` on ``notifications/initialized`` (the reference filesystem server does)
races the client's GET, which follows that notification."""

from __future__ import annotations

import asyncio

from mcpio import Client
from tests.client.support import arun
from tests.gateway.roots_upstream import roots_server
from tests.gateway.support import tools_changed, upstream_learns
from tests.support.http import ServerThread


def test_a_request_sent_right_after_initialized_reaches_the_client_over_http():
    with ServerThread(roots_server().http_app()) as srv:

        async def go() -> None:
            changed = asyncio.Event()
            on = tools_changed(changed)
            async with Client(srv.url, era="legacy", roots=["file:///a"], on_notification=on, timeout=30) as c:
                await upstream_learns(c, changed, "roots", ["file:///a"])
                await c.set_roots(["file:///b"])
                await upstream_learns(c, changed, "roots", ["file:///b"])

        arun(go(), timeout=60)
