"""The client cache (``Client(cache=…)``), against a real mcpio server over stdio (a subprocess)
and Streamable HTTP (127.0.0.1), in both eras. Whether a request reached the server is read from
the server itself (its ``get_hits`` tool counts the requests it served)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

from mcpio import Client, MemoryCache
from tests.cache.conftest import BOB, SERVER, hits, notified

LISTS = [
    ("list_tools", "tools/list"),
    ("list_resources", "resources/list"),
    ("list_resource_templates", "resources/templates/list"),
    ("list_prompts", "prompts/list"),
]


def run(coro):
    return asyncio.run(coro)


def test_a_second_list_or_read_within_the_ttl_does_not_reach_the_server(connect):
    async def main():
        async with connect(era="modern", cache=True) as c:
            for name, method in LISTS:
                before = await hits(c, method)
                first = await getattr(c, name)()
                assert await hits(c, method) == before + 1
                assert await getattr(c, name)() == first  # served from the cache
                assert await hits(c, method) == before + 1, name
            uri = f"note://{uuid.uuid4().hex}"
            first = await c.read_resource(uri)
            assert await c.read_resource(uri) == first
            assert await hits(c, f"read {uri}") == 1

    run(main())


def test_without_a_cache_every_list_reaches_the_server(connect):
    async def main():
        async with connect(era="modern") as c:
            before = await hits(c, "tools/list")
            await c.list_tools()
            await c.list_tools()
            assert await hits(c, "tools/list") == before + 2

    run(main())


def test_legacy_results_carry_no_hints_so_only_an_explicit_default_ttl_caches_them(connect):
    async def main():
        async with connect(era="legacy", cache=True) as c:
            before = await hits(c, "tools/list")
            await c.list_tools()
            await c.list_tools()
            assert await hits(c, "tools/list") == before + 2  # no ttlMs: not kept
        async with connect(era="legacy", cache=True, cache_ttl=60) as c:
            before = await hits(c, "tools/list")
            tools = await c.list_tools()
            assert await c.list_tools() == tools
            assert await hits(c, "tools/list") == before + 1

    run(main())


def test_a_caller_mutating_a_result_does_not_change_the_cache(connect):
    async def main():
        async with connect(era="modern", cache=True) as c:
            tools = await c.list_tools()
            pristine = json.loads(json.dumps(tools))
            tools[0]["name"] = "mutated"
            tools[0]["inputSchema"]["properties"] = {"evil": {}}
            tools.clear()
            assert json.loads(json.dumps(await c.list_tools())) == pristine
            uri = f"note://{uuid.uuid4().hex}"
            contents = await c.read_resource(uri)
            text = contents[0].text
            contents[0]["text"] = "mutated"
            assert (await c.read_resource(uri))[0].text == text
            assert await hits(c, f"read {uri}") == 1

    run(main())


def test_an_entry_expires_after_its_ttl(connect):
    """``short://`` answers ttlMs 1000: read again until the server is reached, no sooner."""

    async def main():
        async with connect(era="modern", cache=True, env={"SHORT_TTL_MS": "1000"}) as c:
            uri = f"short://{uuid.uuid4().hex}"
            start = time.monotonic()
            first = (await c.read_resource(uri))[0].text
            while (await c.read_resource(uri))[0].text == first:
                assert time.monotonic() - start < 20, "the entry never expired"
                await asyncio.sleep(0.05)
            assert time.monotonic() - start >= 1.0  # not before its ttlMs
            assert await hits(c, f"read {uri}") == 2

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_tools_list_changed_drops_the_cached_list(connect, era):
    async def main():
        changed, on_notification = notified("notifications/tools/list_changed")
        async with connect(era=era, cache=True, cache_ttl=60, on_notification=on_notification) as c:
            await c.list_tools()
            before = await hits(c, "tools/list")
            await c.list_tools()
            assert await hits(c, "tools/list") == before  # cached
            await c.subscribe("note://settled")  # modern: returns once a listen stream is acknowledged
            name = "t" + uuid.uuid4().hex[:12]
            await c.call_tool("add_tool", {"name": name})
            await asyncio.wait_for(changed.wait(), 20)
            assert name in {t.name for t in await c.list_tools()}
            assert await hits(c, "tools/list") == before + 1

    run(main())


def test_a_cache_alone_asks_for_list_changed_in_the_modern_era(connect):
    """No on_notification: the client's listen stream still asks for list_changed, for the cache."""

    async def main():
        async with connect(era="modern", cache=True) as c:
            await c.list_tools()
            await c.subscribe("note://settled")  # returns once a listen stream is acknowledged
            name = "t" + uuid.uuid4().hex[:12]
            await c.call_tool("add_tool", {"name": name})
            start = time.monotonic()
            while name not in {t.name for t in await c.list_tools()}:  # the list is kept 60 s unless dropped
                assert time.monotonic() - start < 15, "list_changed never dropped the cached list"
                await asyncio.sleep(0.05)

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_resources_updated_drops_the_reads_of_that_uri_only(connect, era):
    async def main():
        a, b = f"note://{uuid.uuid4().hex}", f"note://{uuid.uuid4().hex}"
        updated, on_notification = notified("notifications/resources/updated", a)
        async with connect(era=era, cache=True, cache_ttl=60, on_notification=on_notification) as c:
            await c.subscribe(a)
            assert " v0 " in (await c.read_resource(a))[0].text
            await c.read_resource(b)
            await c.call_tool("touch", {"uri": a})
            await asyncio.wait_for(updated.wait(), 20)
            assert " v1 " in (await c.read_resource(a))[0].text
            await c.read_resource(b)
            assert (await hits(c, f"read {a}"), await hits(c, f"read {b}")) == (2, 1)

    run(main())


def test_refresh_fetches_and_stores_bypass_neither_reads_nor_stores(connect):
    async def main():
        async with connect(era="modern", cache=True) as c:
            uri = f"note://{uuid.uuid4().hex}"
            assert (await c.read_resource(uri, cache_mode="bypass"))[0].text.endswith("read #1")
            assert (await c.read_resource(uri))[0].text.endswith("read #2")  # bypass stored nothing
            assert (await c.read_resource(uri, cache_mode="bypass"))[0].text.endswith("read #3")  # nor read
            assert (await c.read_resource(uri))[0].text.endswith("read #2")  # what "use" stored
            assert (await c.read_resource(uri, cache_mode="refresh"))[0].text.endswith("read #4")
            assert (await c.read_resource(uri))[0].text.endswith("read #4")  # refresh stored it
            assert await hits(c, f"read {uri}") == 4
            before = await hits(c, "tools/list")
            await c.list_tools(cache_mode="refresh")
            await c.list_tools(cache_mode="bypass")
            await c.list_tools()
            assert await hits(c, "tools/list") == before + 2

    run(main())


def test_private_answers_are_partitioned_by_credentials_public_ones_shared(http_url):
    """Alice and Bob share one cache object; ``secret://mine`` is private, the lists public."""
    from tests.cache.conftest import ALICE

    cache = MemoryCache()

    def client(token: str, **options):
        return Client(http_url, headers={"Authorization": f"Bearer {token}"}, cache=cache, timeout=30, **options)

    async def main():
        async with client(ALICE, era="modern") as alice, client(BOB, era="modern") as bob:
            assert (await alice.read_resource("secret://mine"))[0].text == "the secret of token-1"
            assert (await bob.read_resource("secret://mine"))[0].text == "the secret of token-2"
            assert (await alice.read_resource("secret://mine"))[0].text == "the secret of token-1"
            assert await hits(bob, "read secret://mine") == 2  # Alice's second read was cached
            await alice.list_tools()
            before = await hits(bob, "tools/list")
            await bob.list_tools()  # public: Alice's answer serves Bob
            assert await hits(bob, "tools/list") == before
        # legacy results carry no scope: private, so Bob never gets Alice's list
        async with client(ALICE, era="legacy", cache_ttl=60) as alice, client(BOB, era="legacy", cache_ttl=60) as bob:
            before = await hits(bob, "tools/list")
            await alice.list_tools()
            await bob.list_tools()
            await alice.list_tools()
            assert await hits(bob, "tools/list") == before + 2

    run(main())


def test_a_new_auth_object_never_reads_the_private_answers_of_an_old_one(http_url):
    """One cache serves Clients made one after the other, each with its user's ``auth=`` object.
    Bob's is made where Alice's lived (CPython gives a freed object's address to the next one):
    it must not inherit Alice's private partition."""
    import gc
    import weakref

    import httpx

    from tests.cache.conftest import ALICE

    class Bearer(httpx.Auth):
        __slots__ = ("token", *(f"pad{i}" for i in range(37)))  # a size few other objects have

        def __init__(self, token: str) -> None:
            self.token = token

        def auth_flow(self, request):
            request.headers["Authorization"] = f"Bearer {self.token}"
            yield request

    cache = MemoryCache()

    async def read(auth: Bearer) -> str:
        async with Client(http_url, era="modern", auth=auth, cache=cache, timeout=30) as c:
            return (await c.read_resource("secret://mine"))[0].text

    async def main():
        auth = Bearer(ALICE)
        where = id(auth)
        assert await read(auth) == "the secret of token-1"
        freed = weakref.ref(auth)
        del auth
        for _ in range(100):  # the Client's last tasks may still hold it for a turn or two
            gc.collect()
            if freed() is None:
                break
            await asyncio.sleep(0)
        assert freed() is None, gc.get_referrers(freed())
        made = [Bearer(BOB) for _ in range(1000)]  # kept alive: each takes a fresh address
        bobs = [a for a in made if id(a) == where]
        if not bobs:
            pytest.skip("this interpreter did not reuse the freed address")
        assert await read(bobs[0]) == "the secret of token-2"

    run(main())


def test_two_servers_sharing_a_cache_do_not_see_each_others_answers(http_url):
    from tests.cache.conftest import ALICE

    cache = MemoryCache()

    async def main():
        async with Client(str(SERVER), era="modern", cache=cache, env={"EXTRA_TOOL": "only_here"}) as one:
            assert "only_here" in {t.name for t in await one.list_tools()}
        async with Client(str(SERVER), era="modern", cache=cache) as two:
            assert "only_here" not in {t.name for t in await two.list_tools()}
        async with Client(http_url, era="modern", cache=cache, headers={"Authorization": f"Bearer {ALICE}"}) as three:
            assert "only_here" not in {t.name for t in await three.list_tools()}

    run(main())


def test_the_memory_cache_is_bounded_least_recently_used_first():
    from tests.cache import cache_server

    async def main():
        async with Client(cache_server.server, era="modern", cache=MemoryCache(max_entries=2)) as c:
            a, b, x = (f"note://{uuid.uuid4().hex}" for _ in range(3))
            await c.read_resource(a)
            await c.read_resource(b)
            await c.read_resource(a)  # a is now the most recently used
            await c.read_resource(x)  # evicts b
            await c.read_resource(a)
            await c.read_resource(b)
            assert [await hits(c, f"read {u}") for u in (a, b, x)] == [1, 2, 1]

    run(main())


def test_bad_cache_arguments_say_what_to_give():
    with pytest.raises(TypeError, match="cache must be True or a cache object"):
        Client(str(SERVER), cache="yes")
    with pytest.raises(ValueError, match="cache_ttl"):
        Client(str(SERVER), cache=True, cache_ttl=0)
    with pytest.raises(ValueError, match="max_entries"):
        MemoryCache(max_entries=0)

    async def main():
        async with Client(str(SERVER), cache=True) as c:
            with pytest.raises(ValueError, match="cache_mode must be one of use, refresh, bypass"):
                await c.list_tools(cache_mode="sometimes")

    run(main())
