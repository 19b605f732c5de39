"""``ctx.session_state``: each caller's share of the bound of all session state, on the wire.

A real server over Streamable HTTP on 127.0.0.1 keeps its session state in memory or on a
real redis-server, bounded in all (``MemoryKV(max_total_bytes=)``, ``RedisState(max_state_bytes=)``).
One caller (an anonymous client network, or a principal) opening legacy sessions and minting
handles that each hold a value fills its own share (``Server(max_state_bytes_per_caller=)``, by
default a sixteenth of the total), not the whole: another caller's ``set`` still succeeds.
"""

from __future__ import annotations

import pytest

from mcpio import Context, Server, StateHandle

TOTAL = 160_000  # the bound of all session state: a caller's default share is 10,000 bytes
VALUE = 9_000  # one value per scope: a scope holding it costs 9,000 + its key + 64 bytes


def fair_server() -> Server:
    """``put`` writes a value of ``size`` bytes in the caller's scope (the legacy session, else
    the principal); ``put_handle`` in a new handle's (minted when ``cart`` is left out)."""
    server = Server("fair", "1.0.0")

    @server.tool
    async def put(size: int, ctx: Context) -> int:
        await ctx.session_state.set("v", "x" * size)
        return size

    @server.tool
    async def put_handle(size: int, cart: StateHandle, ctx: Context) -> dict:
        await ctx.session_state.set("v", "x" * size)
        return {"cart": cart}

    return server


def flood(call) -> tuple[int, str]:
    """Call ``put`` and ``put_handle`` in turn (``call(tool)``: a new legacy session's call, or a
    new handle's) until one is refused: how many were stored, and the refusal's text."""
    for stored in range(40):  # 40 values of 9,064 bytes are over the total of 160,000
        got = call("put_handle" if stored % 2 else "put")
        if got.get("isError"):
            return stored, got["content"][0]["text"]
    raise AssertionError("40 values of 9,000 bytes were all stored: nothing bounds session state")


@pytest.mark.parametrize("where", ["memory", "redis"])
def test_an_anonymous_network_flooding_session_state_leaves_room_for_another(where, request):
    """Without auth a caller is its client network: 127.0.0.1 opening legacy sessions and minting
    handles (each scope under ``max_scope_bytes``) is refused at its own share, sessions and
    handles counted together, with an isError naming the bound; 127.0.0.2 still writes, in a
    legacy session and in a handle."""
    import httpx

    from tests.state.test_session_state import bounded_state
    from tests.state.test_shared_sessions import RoundRobin
    from tests.support.http import ServerThread

    state, _ = bounded_state(where, request, TOTAL)
    with ServerThread(fair_server().http_app(state=state)) as srv:
        local = httpx.HTTPTransport(local_address="127.0.0.2")  # another client host, on loopback
        with httpx.Client(timeout=30) as a, httpx.Client(timeout=30, transport=local) as b:
            stored, refusal = flood(lambda tool: RoundRobin(a, [srv.url]).call(tool, size=VALUE))
            other = RoundRobin(b, [srv.url])
            mine = other.call("put", size=VALUE)
            assert not mine.get("isError"), (stored, refusal, mine)
            assert "max_state_bytes_per_caller" in refusal and "10000" in refusal, refusal
            assert stored == 1, stored  # a second value (a handle's) is over 10,000 with the first
            assert not other.call("put_handle", size=500).get("isError")  # its handles share its share


@pytest.mark.parametrize("where", ["memory", "redis"])
def test_a_principal_flooding_session_state_leaves_room_for_another(where, request):
    """With auth a caller is its principal: alice's own scope and her handles together fill her
    share only; bob still writes."""
    import asyncio

    from mcpio import Client
    from mcpio.auth import ResourceServer
    from tests.state.test_session_state import bounded_state
    from tests.support.http import ServerThread
    from tests.support.issuer import Issuer

    resource = "https://mcp.test/mcp"
    state, _ = bounded_state(where, request, TOTAL)
    with Issuer() as issuer:
        auth = ResourceServer(resource=resource, issuer=issuer.url, required_scopes=["mcp"])

        def headers(sub: str) -> dict:
            return {"authorization": "Bearer " + issuer.mint(aud=resource, scope="mcp", sub=sub)}

        async def run(url: str) -> None:
            async with Client(url, era="modern", headers=headers("alice")) as alice:
                results = [await alice.call_tool("put", {"size": 5_000})]
                while not results[-1].is_error and len(results) < 50:  # 50 values are over the total
                    results.append(await alice.call_tool("put_handle", {"size": 4_000}))
            async with Client(url, era="modern", headers=headers("bob")) as bob:
                mine = await bob.call_tool("put", {"size": 9_000})
                assert not mine.is_error, (len(results), results[-1].text, mine.text)
            assert "max_state_bytes_per_caller" in results[-1].text, results[-1].text
            assert len(results) == 3, len(results)  # 5,065 + 4,065 fit in 10,000; another 4,065 does not

        with ServerThread(fair_server().http_app(auth=auth, state=state)) as srv:
            asyncio.run(run(srv.url))


@pytest.mark.parametrize("where", ["memory", "redis"])
def test_a_callers_share_is_freed_by_a_delete_and_by_an_expiry(where, request):
    """``Server(max_state_bytes_per_caller=)`` counts what the caller's scopes hold now: a delete
    frees its bytes at once, and so does a value that has expired (from the next write on)."""
    import asyncio
    import time

    from mcpio import Client
    from tests.state.test_session_state import blob_server, bounded_state
    from tests.support.http import ServerThread

    server = blob_server("fair", max_state_bytes_per_caller=2500)

    # A blob costs 1 + 1002 + 64 bytes of its handle's scope, the handle's owner record about 80:
    # two fit in the caller's 2500 bytes, not three; after a delete and an expiry, one and another.
    blob = "x" * 1000
    state, _ = bounded_state(where, request, TOTAL)

    async def run(url: str) -> None:
        async with Client(url, era="modern") as c:
            first = (await c.call_tool("put", {"blob": blob})).data["cart"]
            await c.call_tool("put", {"blob": blob, "ttl": 1})  # another scope, short-lived
            expired_at = time.monotonic() + 1
            over = await c.call_tool("put", {"blob": blob})
            assert over.is_error and "max_state_bytes_per_caller" in over.text and "2500" in over.text, over.text
            assert (await c.call_tool("drop", {"cart": first})).data is True
            third = await c.call_tool("put", {"blob": blob})  # in the room the delete made
            assert not third.is_error, third.text
            await asyncio.sleep(max(0.0, expired_at - time.monotonic()) + 0.2)  # the short one has expired
            fourth = await c.call_tool("put", {"blob": blob[:500]})  # in the room it left
            assert not fourth.is_error, fourth.text

    with ServerThread(server.http_app(state=state)) as srv:
        asyncio.run(run(srv.url))
