"""An upstream that asks its client's roots outside any call, as the reference filesystem server
does: right after initialization, and again on ``notifications/roots/list_changed``. The URIs it
got last are the description of its tool ``roots`` (a change of it is a ``tools/list_changed``),
so a client of a proxy sees on the wire what the upstream learned. Like that server it speaks
the legacy era only (2026-07-28 has no requests to the client outside a request): it answers
``server/discover`` with -32601, and a client opens with ``initialize`` instead."""

from __future__ import annotations

import json

from mcpio import Context, MethodNotFound, Server


def roots_server() -> Server:
    server = Server("roots-upstream", version="1.0.0")

    def learned(roots: list[dict]) -> None:
        said = json.dumps(sorted(r["uri"] for r in roots))
        server.add_tool(lambda: said, name="roots", description=said)

    learned([])

    @server.middleware
    async def legacy_only(request, call_next):
        if request.context.stateless:
            raise MethodNotFound(f"Method not found: {request.method!r} (this server speaks the legacy era only)")
        return await call_next(request)

    @server.on_notification("notifications/initialized")
    @server.on_notification("notifications/roots/list_changed")
    async def ask(ctx: Context, params: dict) -> None:
        learned(await ctx.list_roots())

    return server


if __name__ == "__main__":
    roots_server().run()
