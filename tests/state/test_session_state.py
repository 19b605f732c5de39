"""``ctx.session_state`` and ``mcpio.StateHandle`` on the wire (examples/session_state.py).

Real processes: the example over stdio (the mcpio Client spawns it) and served by
``mcpio run -t http`` on 127.0.0.1, both eras; two ``mcpio run --redis`` processes on one real
redis-server share the state. Scoping: two legacy sessions do not see each other's state; a
handle carries state across calls and processes; a handle the server did not mint is refused.
"""

from __future__ import annotations

import asyncio
import functools
import runpy
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcpio import Client, Context, Server, StateHandle
from tests.support.http import free_port, wait_port

EXAMPLE = "examples/session_state.py"


def sync(fn):
    """Run the async test ``fn`` on its own event loop (the suite's tests are plain functions)."""

    @functools.wraps(fn)
    def test(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return test


def serve(*more: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", "-t", "http", "--port", str(port), *more, EXAMPLE],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port, proc=proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    proc, url = serve()
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


async def cart_round_trip(target: str, era: str) -> None:
    async with Client(target, era=era) as c:
        first = await c.call_tool("add_to_cart", {"item": "apple"})
        cart = first.data["cart"]
        assert cart.startswith("sh_") and first.data["items"] == ["apple"]
        second = await c.call_tool("add_to_cart", {"item": "pear", "cart": cart})
        assert second.data == {"cart": cart, "items": ["apple", "pear"]}
        other = await c.call_tool("add_to_cart", {"item": "fig"})  # no handle: new state
        assert other.data["cart"] != cart and other.data["items"] == ["fig"]
        forged = await c.call_tool("view_cart", {"cart": "sh_" + "A" * 32})
        assert forged.is_error and "unknown or expired state handle" in forged.text


@pytest.mark.parametrize("era", ["legacy", "modern"])
@sync
async def test_handle_round_trip_over_stdio_and_http(era, http_url):
    await cart_round_trip(EXAMPLE, era)
    await cart_round_trip(http_url, era)


@sync
async def test_the_handle_parameter_in_the_schema(http_url):
    async with Client(http_url, era="modern") as c:
        tool = next(t for t in await c.list_tools() if t.name == "add_to_cart")
        schema = tool.input_schema
        assert schema["required"] == ["item"]  # minted when absent
        assert schema["properties"]["cart"]["type"] == "string"
        assert "pass back" in schema["properties"]["cart"]["description"]


@sync
async def test_legacy_sessions_do_not_see_each_other(http_url):
    for target in (EXAMPLE, http_url):
        async with Client(target, era="legacy") as a, Client(target, era="legacy") as b:
            assert (await a.call_tool("remember", {"key": "k", "value": "from a"})).text == "kept k"
            assert (await a.call_tool("recall", {"key": "k"})).data == "from a"
            assert (await b.call_tool("recall", {"key": "k"})).data is None
            await b.call_tool("remember", {"key": "k", "value": "from b"})
            assert (await a.call_tool("recall", {"key": "k"})).data == "from a"
            assert (await b.call_tool("forget", {"key": "k"})).data is True
            assert (await b.call_tool("recall", {"key": "k"})).data is None


@sync
async def test_no_scope_in_the_stateless_era_says_how_to_get_one(http_url):
    for target in (EXAMPLE, http_url):
        async with Client(target, era="modern") as c:
            r = await c.call_tool("remember", {"key": "k", "value": "v"})
            assert r.is_error and "mcpio.StateHandle" in r.text and "auth=" in r.text


async def wait_gone(c: Client, tool: str, args: dict, expect_gone: object, within: float = 15.0) -> None:
    """Poll ``tool`` until it answers ``expect_gone`` (the value expired)."""
    deadline = time.monotonic() + within
    while (await c.call_tool(tool, args)).data != expect_gone:
        assert time.monotonic() < deadline, f"{tool} still answers the value after {within} s"


@sync
async def test_ttl_expiry(http_url):
    async with Client(http_url, era="legacy") as c:
        await c.call_tool("remember", {"key": "short", "value": "v", "ttl": 0.5})
        await c.call_tool("remember", {"key": "long", "value": "w"})
        assert (await c.call_tool("recall", {"key": "short"})).data == "v"
        await wait_gone(c, "recall", {"key": "short"}, None)
        assert (await c.call_tool("recall", {"key": "long"})).data == "w"  # its own ttl: still there
        bad = await c.call_tool("remember", {"key": "k", "value": "v", "ttl": -1})
        assert bad.is_error and "ValueError" in bad.text  # the tool's bug: its text only in the log over HTTP


@sync
async def test_size_caps_name_the_limit(http_url):
    await size_caps(http_url)


async def size_caps(url: str) -> None:
    async with Client(url, era="legacy") as c:
        big = await c.call_tool("remember", {"key": "big", "value": "x" * 300_000})
        assert big.is_error and "limit of 262144 bytes per value (max_value_bytes)" in big.text
        for i in range(5):  # 5 x 200 kB fit the scope's 1 MiB
            assert not (await c.call_tool("remember", {"key": f"k{i}", "value": "x" * 200_000})).is_error
        full = await c.call_tool("remember", {"key": "k5", "value": "x" * 200_000})
        assert full.is_error and "limit of 1048576 bytes per scope (max_scope_bytes)" in full.text
        await c.call_tool("forget", {"key": "k0"})  # room again
        assert not (await c.call_tool("remember", {"key": "k5", "value": "x" * 200_000})).is_error


@sync
async def test_two_processes_on_one_redis_share_the_state(redis_url):
    a, url_a = serve("--redis", redis_url)
    b, url_b = serve("--redis", redis_url)
    try:
        async with Client(url_a, era="modern") as on_a, Client(url_b, era="modern") as on_b:
            cart = (await on_a.call_tool("add_to_cart", {"item": "apple"})).data["cart"]
            got = await on_b.call_tool("add_to_cart", {"item": "pear", "cart": cart})
            assert got.data["items"] == ["apple", "pear"]
            assert (await on_a.call_tool("view_cart", {"cart": cart})).data["items"] == ["apple", "pear"]
            short = (await on_a.call_tool("add_to_cart", {"item": "fig", "ttl": 0.5})).data["cart"]
            assert (await on_b.call_tool("view_cart", {"cart": short})).data["items"] == ["fig"]
            deadline = time.monotonic() + 15
            while (await on_b.call_tool("view_cart", {"cart": short})).data["items"]:
                assert time.monotonic() < deadline, "the value set with ttl=0.5 never expired on Redis"
        for url in (url_a, url_b):  # a legacy session's state, on the process that serves it
            async with Client(url, era="legacy") as c:
                await c.call_tool("remember", {"key": "k", "value": url})
                assert (await c.call_tool("recall", {"key": "k"})).data == url
        await size_caps(url_b)  # the same bounds on Redis (one Lua script counts the scope)
    finally:
        for proc in (a, b):
            proc.terminate()
            proc.wait(10)


@sync
async def test_deleting_an_expired_key_says_it_was_not_there_in_memory_and_on_redis(http_url, redis_url):
    # A one-time code kept with a ttl: "was it there?" must be False once it expired, on every
    # store (a tool that consumes the code by deleting it would otherwise accept an expired one).
    proc, on_redis = serve("--redis", redis_url)
    try:
        for url in (http_url, on_redis):
            async with Client(url, era="legacy") as c:
                await c.call_tool("remember", {"key": "name", "value": "kept"})  # the scope lives on
                await c.call_tool("remember", {"key": "code", "value": "123456", "ttl": 0.5})
                await c.call_tool("remember", {"key": "clock", "value": "x", "ttl": 0.5})  # expires after code
                await wait_gone(c, "recall", {"key": "clock"}, None)  # code is gone too, never read
                assert (await c.call_tool("forget", {"key": "code"})).data is False, url
                await c.call_tool("remember", {"key": "code", "value": "654321"})
                assert (await c.call_tool("forget", {"key": "code"})).data is True
                assert (await c.call_tool("forget", {"key": "code"})).data is False
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def guarded() -> Iterator[tuple[str, Callable[[str], dict[str, str]]]]:
    """The example behind ``auth=ResourceServer`` (a real issuer), in a uvicorn thread on
    127.0.0.1; yields its URL and ``headers(subject, **claims)``: a valid bearer token's header
    (``subject`` None: a token without ``sub``, as for a client-credentials grant)."""
    from mcpio.auth import ResourceServer
    from tests.support.http import ServerThread
    from tests.support.issuer import Issuer

    resource = "https://mcp.test/mcp"
    server = runpy.run_path(EXAMPLE)["server"]
    with Issuer() as issuer:
        app = server.http_app(auth=ResourceServer(resource=resource, issuer=issuer.url, required_scopes=["mcp"]))
        with ServerThread(app) as srv:
            yield (
                srv.url,
                lambda sub, **claims: {
                    "authorization": "Bearer " + issuer.mint(aud=resource, scope="mcp", sub=sub, **claims)
                },
            )


@sync
async def test_a_principal_keeps_its_state_across_stateless_calls(guarded):
    url, headers = guarded
    async with Client(url, era="modern", headers=headers("alice")) as alice:
        assert (await alice.call_tool("remember", {"key": "k", "value": "alice's"})).text == "kept k"
    async with Client(url, era="modern", headers=headers("alice")) as again:  # new client, same principal
        assert (await again.call_tool("recall", {"key": "k"})).data == "alice's"
    async with Client(url, era="modern", headers=headers("bob")) as bob:
        assert (await bob.call_tool("recall", {"key": "k"})).data is None


@sync
async def test_a_user_named_like_a_client_does_not_share_that_clients_state(guarded):
    """A token without ``sub`` names its client (``client_id`` svc); a user whose subject is
    literally ``client:svc`` is another principal: it sees none of the client's state."""
    url, headers = guarded
    async with Client(url, era="modern", headers=headers(None, client_id="svc")) as svc:
        assert (await svc.call_tool("remember", {"key": "k", "value": "svc's"})).text == "kept k"
        assert (await svc.call_tool("recall", {"key": "k"})).data == "svc's"
    async with Client(url, era="modern", headers=headers("client:svc")) as user:
        assert (await user.call_tool("recall", {"key": "k"})).data is None


@sync
async def test_a_handle_minted_for_one_principal_is_refused_for_another(guarded):
    url, headers = guarded
    async with Client(url, era="modern", headers=headers("alice")) as alice:
        cart = (await alice.call_tool("add_to_cart", {"item": "apple"})).data["cart"]
        assert (await alice.call_tool("view_cart", {"cart": cart})).data["items"] == ["apple"]
    async with Client(url, era="modern", headers=headers("bob")) as bob:
        stolen = await bob.call_tool("view_cart", {"cart": cart})
        assert stolen.is_error and "unknown or expired state handle" in stolen.text
        assert "apple" not in stolen.text
    async with Client(url, era="legacy", headers=headers("alice")) as alice:  # any era: the handle is hers
        assert (await alice.call_tool("add_to_cart", {"item": "pear", "cart": cart})).data["items"] == ["apple", "pear"]


def capped_cart_server(where: str, request: pytest.FixtureRequest) -> tuple[Server, dict]:
    """A server whose ``add_to_cart`` mints a handle per cart, at most 3 live per owner, and the
    ``http_app`` options keeping its state ``where`` ("memory", or the test Redis)."""
    from mcpio._state import RedisState

    server = Server("capped", "1.0.0", max_state_handles=3)

    @server.tool
    async def add_to_cart(item: str, cart: StateHandle, ctx: Context) -> dict:
        items = [*await ctx.session_state.get("items", []), item]
        await ctx.session_state.set("items", items)
        return {"cart": cart, "items": items}

    options = {"state": RedisState(request.getfixturevalue("redis_url"))} if where == "redis" else {}
    return server, options


@pytest.mark.parametrize("where", ["memory", "redis"])
@sync
async def test_state_handles_are_capped_per_caller(where, request):
    """Each new handle keeps an owner record for an hour: ``Server(max_state_handles=)`` caps the
    live ones per principal (in memory and on Redis alike); the caller over it gets an isError
    naming the bound, another principal is not affected, and a handle in use still works."""
    from mcpio.auth import ResourceServer
    from tests.support.http import ServerThread
    from tests.support.issuer import Issuer

    resource = "https://mcp.test/mcp"
    server, options = capped_cart_server(where, request)
    with Issuer() as issuer:
        auth = ResourceServer(resource=resource, issuer=issuer.url, required_scopes=["mcp"])
        app = server.http_app(auth=auth, **options)

        def headers(sub):
            return {"authorization": "Bearer " + issuer.mint(aud=resource, scope="mcp", sub=sub)}

        with ServerThread(app) as srv:
            async with Client(srv.url, era="modern", headers=headers("alice")) as alice:
                carts = [(await alice.call_tool("add_to_cart", {"item": str(i)})).data["cart"] for i in range(3)]
                over = await alice.call_tool("add_to_cart", {"item": "one too many"})
                assert over.is_error and "max_state_handles" in over.text and "3" in over.text, over.text
                kept = await alice.call_tool("add_to_cart", {"item": "more", "cart": carts[0]})
                assert kept.data["items"] == ["0", "more"]
            async with Client(srv.url, era="modern", headers=headers("bob")) as bob:
                assert not (await bob.call_tool("add_to_cart", {"item": "x"})).is_error


@pytest.mark.parametrize("where", ["memory", "redis"])
def test_anonymous_callers_on_other_networks_do_not_share_a_share_of_state_handles(where, request):
    """Without auth a handle's owner is the caller's network (an IPv4 address, an IPv6 /64): one
    anonymous client filling ``max_state_handles`` locks out no client elsewhere, and any
    anonymous caller may still present any anonymous handle (a bearer value)."""
    import httpx

    from tests.state.test_shared_sessions import RoundRobin
    from tests.support.http import ServerThread

    server, options = capped_cart_server(where, request)
    with ServerThread(server.http_app(**options)) as srv:
        local = httpx.HTTPTransport(local_address="127.0.0.2")  # another client host, on loopback
        with httpx.Client(timeout=30) as a, httpx.Client(timeout=30, transport=local) as b:
            greedy, other = RoundRobin(a, [srv.url]), RoundRobin(b, [srv.url])
            carts = [greedy.call("add_to_cart", item=str(i))["structuredContent"]["cart"] for i in range(3)]
            over = greedy.call("add_to_cart", item="one too many")
            assert over["isError"] and "max_state_handles" in over["content"][0]["text"], over
            mine = other.call("add_to_cart", item="x")  # 127.0.0.2: its own share
            assert not mine.get("isError"), mine
            shared = other.call("add_to_cart", item="more", cart=carts[0])["structuredContent"]
            assert shared["items"] == ["0", "more"]


def bounded_state(where: str, request: pytest.FixtureRequest, budget: int) -> tuple[Any, str]:
    """A state backend whose session state is bounded at ``budget`` bytes in all, ``where``
    ("memory", or the test Redis), and the option that names the bound in its refusal (the
    server's own ``MemoryKV`` has the default, 256 MiB)."""
    from mcpio._state import MemoryState, RedisState
    from mcpio._state._kv import MemoryKV

    if where == "redis":
        return RedisState(request.getfixturevalue("redis_url"), max_state_bytes=budget), "max_state_bytes"
    state = MemoryState()
    state.kv = MemoryKV(max_total_bytes=budget)  # type: ignore[attr-defined]
    return state, "max_total_bytes"


def blob_server(name: str, **options: Any) -> Server:
    """A server whose tools ``put(blob, cart)`` and ``drop(cart)`` set and delete key "b" of the
    state of handle ``cart`` (a new one when absent): what the bounds of session state are
    tested with."""
    server = Server(name, "1.0.0", **options)

    @server.tool
    async def put(blob: str, cart: StateHandle, ctx: Context, ttl: float = 3600) -> dict:
        await ctx.session_state.set("b", blob, ttl=ttl)
        return {"cart": cart}

    @server.tool
    async def drop(cart: StateHandle, ctx: Context) -> bool:
        return await ctx.session_state.delete("b")

    return server


@pytest.mark.parametrize("where", ["memory", "redis"])
@sync
async def test_session_state_is_bounded_in_all(where, request):
    """All scopes together are bounded, by ``MemoryKV(max_total_bytes=)`` in memory and by
    ``RedisState(max_state_bytes=)`` on the database: a ``set`` over it is refused (and changes
    nothing); a delete frees its bytes, and so does a scope that has expired, at once (not at
    the next periodic sweep)."""
    from tests.support.http import ServerThread

    server = blob_server("bounded", max_state_bytes_per_caller=10**6)  # over the total: one caller may fill it

    # A blob costs 1 + 1002 + 64 bytes of its scope, each handle's owner record about 84: two
    # blobs fit in 2800 bytes, not three; after a delete and an expiry, one and then another.
    blob = "x" * 1000
    state, option = bounded_state(where, request, 2800)
    with ServerThread(server.http_app(state=state)) as srv:
        async with Client(srv.url, era="modern") as c:
            first = (await c.call_tool("put", {"blob": blob})).data["cart"]
            (await c.call_tool("put", {"blob": blob, "ttl": 1})).data["cart"]  # another scope, short-lived
            expired_at = time.monotonic() + 1
            over = await c.call_tool("put", {"blob": blob})
            assert over.is_error and option in over.text and "2800" in over.text, over.text
            assert (await c.call_tool("drop", {"cart": first})).data is True
            third = (await c.call_tool("put", {"blob": blob})).data["cart"]  # in the room the delete made
            await asyncio.sleep(max(0.0, expired_at - time.monotonic()) + 0.2)  # the short one has expired
            fourth = await c.call_tool("put", {"blob": blob})  # in the room it left
            assert not fourth.is_error, fourth.text
            assert (await c.call_tool("put", {"blob": blob[:10], "cart": third})).data["cart"] == third


@pytest.mark.parametrize("where", ["memory", "redis"])
@sync
async def test_state_handles_count_against_the_bound_of_all_session_state(where, request):
    """A new handle keeps an owner record for an hour: it counts against the bound of all
    session state (its owner's name and 64 bytes), so callers from many networks (each under
    ``max_state_handles``) cannot keep records without bound; handles already held keep working."""
    from tests.support.http import ServerThread

    server = Server("bounded", "1.0.0", max_state_bytes_per_caller=10**6)  # over the total: one caller may fill it

    @server.tool
    async def mint(cart: StateHandle, ctx: Context) -> dict:
        return {"cart": cart, "n": await ctx.session_state.get("n", 0)}

    state, option = bounded_state(where, request, 2500)
    with ServerThread(server.http_app(state=state)) as srv:
        async with Client(srv.url, era="modern") as c:
            carts = []
            for _ in range(100):  # 2500 bytes hold fewer than 40 records of 64 bytes and more
                got = await c.call_tool("mint", {})
                if got.is_error:
                    break
                carts.append(got.data["cart"])
            assert got.is_error and option in got.text and "2500" in got.text, (len(carts), got.text)
            assert 20 < len(carts) < 40, len(carts)
            assert (await c.call_tool("mint", {"cart": carts[0]})).data["cart"] == carts[0]


@sync
async def test_redis_down_is_the_clean_error_and_service_resumes():
    """Redis stopped under a serving ``mcpio run --redis``: the call is answered with an error
    that says the store is unreachable and the request was fine; Redis back, it works again."""
    from mcpio import MCPError
    from tests.support.redis import RedisServer

    redis = RedisServer()
    redis.start()
    proc, url = serve("--redis", redis.url)
    try:
        async with Client(url, era="modern") as c:
            cart = (await c.call_tool("add_to_cart", {"item": "apple"})).data["cart"]
            redis.stop()
            with pytest.raises(MCPError) as down:
                await c.call_tool("view_cart", {"cart": cart})
            assert "session-state store is unreachable" in down.value.message
            assert "the request was fine, retry it" in down.value.message
            redis.start()  # empty: it ran without persistence; the old handle is gone, new state works
            deadline = time.monotonic() + 30
            while True:
                try:
                    fresh = await c.call_tool("add_to_cart", {"item": "pear"})
                    break
                except MCPError:
                    assert time.monotonic() < deadline, "service did not resume after Redis came back"
            assert fresh.data["items"] == ["pear"]
    finally:
        proc.terminate()
        proc.wait(10)
        redis.close()
