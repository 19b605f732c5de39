"""The middleware kit over Streamable HTTP with shared-secret bearer tokens: a real ``mcpio run -t
http --auth-token-env`` process, real Clients with two tokens, both eras. The principal is the
token's (``token-1``, ``token-2``): buckets and private cache entries are per principal, and the
request log never holds a token or a credential header."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpio import Client, MCPError
from mcpio.middleware import RATE_LIMITED
from tests.support.http import mcpio_http

KIT = str(Path(__file__).with_name("kit_server.py"))
ALICE = "alice-MW-token-4f7d1c0e9b2a"
BOB = "bob-MW-token-83e6a5d2c1f0"
COOKIE = "sid=COOKIE-MW-8b1e0f3a"
ERAS = ["legacy", "modern"]


class Kit:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log

    def client(self, token: str, era: str) -> Client:
        headers = {"Authorization": f"Bearer {token}", "Cookie": COOKIE}
        return Client(self.url, era=era, headers=headers, timeout=20)

    def lines(self) -> list[dict]:
        text = self.log.read_text()
        return [json.loads(line) for line in text.splitlines() if line.startswith('{"event":"mcp.request"')]


_KITS = itertools.count()


def start_kit(tmp: Path, *extra: str, **env: str) -> Iterator[Kit]:
    log = tmp / f"kit-{next(_KITS)}.log"
    with mcpio_http(KIT, *extra, env={"KIT_TOKENS": f"{ALICE},{BOB}", **env}, log=log) as (url, proc):
        yield Kit(url, proc, log)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    yield from start_kit(tmp_path_factory.mktemp("kit"), "--auth-token-env", "KIT_TOKENS")


@pytest.fixture
def tight(tmp_path):
    """A fresh process allowing 2 tool calls per principal, then one a minute."""
    yield from start_kit(tmp_path, "--auth-token-env", "KIT_TOKENS", KIT_RATE="1/minute", KIT_BURST="2")


def text(result: dict) -> str:
    return result["content"][0]["text"]


@pytest.mark.parametrize("era", ERAS)
def test_each_principal_has_its_own_bucket(tight, era):
    async def main():
        async with tight.client(ALICE, era) as alice, tight.client(BOB, era) as bob:
            assert [text(await alice.call_tool("echo", {"text": "a"})) for _ in range(2)] == ["a", "a"]
            with pytest.raises(MCPError) as refused:
                await alice.call_tool("echo", {"text": "a"})
            # Bob's bucket is his own: Alice draining hers costs him nothing.
            assert [text(await bob.call_tool("echo", {"text": "b"})) for _ in range(2)] == ["b", "b"]
            with pytest.raises(MCPError):
                await bob.call_tool("echo", {"text": "b"})
            return refused.value

    refused = asyncio.run(main())
    assert refused.code == RATE_LIMITED and refused.data["retryAfter"] > 50


@pytest.mark.parametrize("era", ERAS)
def test_the_cache_never_serves_one_principals_private_answer_to_another(kit, era):
    async def main():
        async with kit.client(ALICE, era) as alice, kit.client(BOB, era) as bob:
            a1, a2 = [text(await alice.call_tool("whoami", {})) for _ in range(2)]
            b1, b2 = [text(await bob.call_tool("whoami", {})) for _ in range(2)]
            ma = [(await alice.read_resource("memo://mine"))[0]["text"] for _ in range(2)]
            mb = [(await bob.read_resource("memo://mine"))[0]["text"] for _ in range(2)]
            pa = (await alice.read_resource("memo://public"))[0]["text"]
            pb = (await bob.read_resource("memo://public"))[0]["text"]
            return a1, a2, b1, b2, ma, mb, pa, pb

    a1, a2, b1, b2, ma, mb, pa, pb = asyncio.run(main())
    assert a1 == a2 and a1.startswith("token-1 #")  # Alice's answer, kept for Alice
    assert b1 == b2 and b1.startswith("token-2 #") and b1 != a1  # computed for Bob, not Alice's
    assert ma[0] == ma[1] and ma[0].startswith("memo of token-1 #")
    assert mb[0] == mb[1] and mb[0].startswith("memo of token-2 #")
    assert pa == pb  # cache_scope="public": one answer for everybody


@pytest.mark.parametrize(("era", "version"), [("legacy", "2025-11-25"), ("modern", "2026-07-28")])
def test_the_request_log_has_no_token_no_cookie_and_tells_principals_apart(kit, era, version):
    said = f"hi in {era}"

    async def main():
        results = []
        for token in (ALICE, BOB):
            async with kit.client(token, era) as c:
                results.append(await c.call_tool("echo", {"text": said, "api_key": ALICE}))
        return results

    results = asyncio.run(main())
    assert all(r["_meta"]["io.mcpio/durationMs"] >= 0 for r in results)  # Timing, over HTTP
    logged = kit.log.read_text()
    for secret in (ALICE, BOB, COOKIE, COOKIE.split("=")[1], ALICE[:16], BOB[:16]):
        assert secret not in logged
    echoes = [line for line in kit.lines() if line.get("name") == "echo" and line["arguments"]["text"] == said]
    assert len(echoes) == 2
    assert [line["arguments"]["api_key"] for line in echoes] == ["[redacted]", "[redacted]"]
    alice, bob = (line["principal"] for line in echoes)
    assert alice != bob and len(alice) == 12
    if era == "legacy":  # the session id: a digest, never the id (2026-07-28 has no sessions)
        assert all(len(line["session"]) == 12 for line in echoes)
        assert echoes[0]["session"] != echoes[1]["session"]  # two sessions, told apart
    else:
        assert all("session" not in line for line in echoes)
    assert all(line["outcome"] == "ok" and line["protocolVersion"] == version for line in echoes)


@pytest.fixture(scope="module")
def open_kit(tmp_path_factory):
    """The kit without auth: callers are told apart by their session, credentials or address."""
    yield from start_kit(tmp_path_factory.mktemp("open-kit"))


def test_a_private_answer_is_never_served_to_another_legacy_session(open_kit):
    # No auth, both sessions from 127.0.0.1: the read-only recall's answer is made of the
    # session's own state, and a session must never be handed another's.
    async def main():
        async with (
            Client(open_kit.url, era="legacy", timeout=20) as alice,
            Client(open_kit.url, era="legacy", timeout=20) as bob,
        ):
            await alice.call_tool("remember", {"note": "alice-private-note"})
            await bob.call_tool("remember", {"note": "bob-private-note"})
            a1, a2 = [text(await alice.call_tool("recall", {})) for _ in range(2)]
            return a1, a2, text(await bob.call_tool("recall", {}))

    a1, a2, b1 = asyncio.run(main())
    assert a1 == a2 and a1.startswith("alice-private-note #")  # cached for Alice's session
    assert b1.startswith("bob-private-note #")


@pytest.mark.parametrize("era", ERAS)
def test_without_auth_a_private_answer_is_kept_per_credentials_not_per_address(open_kit, era):
    # A server that tells its callers apart by a cookie of its own (no auth=): two callers at one
    # address with different cookies never get each other's answer; one caller gets its own again.
    def caller(cookie: str) -> Client:
        return Client(open_kit.url, era=era, headers={"Cookie": cookie}, timeout=20)

    async def main():
        async with caller(f"user=alice-{era}") as alice, caller(f"user=bob-{era}") as bob:
            a1, a2 = [text(await alice.call_tool("cookie_user", {})) for _ in range(2)]
            return a1, a2, text(await bob.call_tool("cookie_user", {}))

    a1, a2, b1 = asyncio.run(main())
    assert a1 == a2 and a1.startswith(f"user=alice-{era} #")
    assert b1.startswith(f"user=bob-{era} #")


@pytest.mark.parametrize("era", ERAS)
def test_a_cached_answer_is_kept_per_client_info_not_per_request_meta(open_kit, era):
    # One caller (no auth, one address, no credentials), two clients: a read-only tool answering
    # by clientInfo gives each client its own answer; per-request _meta (a progress token) does
    # not fragment the cache, so the first client's answer is served again from it.
    def client(name: str) -> Client:
        return Client(open_kit.url, era=era, name=name, timeout=20)

    async def main():
        async with client(f"app-a-{era}") as a, client(f"app-b-{era}") as b:
            a1 = text(await a.call_tool("client_name", {}))
            a2 = text(await a.call_tool("client_name", {}, on_progress=lambda *_: None))
            return a1, a2, text(await b.call_tool("client_name", {}))

    a1, a2, b1 = asyncio.run(main())
    assert a1 == a2 and a1.startswith(f"app-a-{era} #")
    assert b1.startswith(f"app-b-{era} #")


@pytest.fixture
def tight_open(tmp_path):
    """A fresh process without auth allowing 2 tool calls per address, then one a minute."""
    yield from start_kit(tmp_path, KIT_RATE="1/minute", KIT_BURST="2")


def test_a_client_cannot_choose_its_address_with_x_forwarded_for(tight_open):
    # No auth, 2 tool calls per address then one a minute. Each caller claims another address in
    # X-Forwarded-For: the request comes from 127.0.0.1, where nobody named a trusted proxy
    # (FORWARDED_ALLOW_IPS), so the header is the caller's word, not its address.
    def caller(n: int) -> Client:
        return Client(tight_open.url, era="modern", headers={"X-Forwarded-For": f"203.0.113.{n}"}, timeout=20)

    async def main():
        seen = []
        for n in range(2):
            async with caller(n) as c:
                seen.append(text(await c.call_tool("peer", {})))
        async with caller(2) as c:
            with pytest.raises(MCPError) as refused:
                await c.call_tool("peer", {})
        return seen, refused.value

    seen, refused = asyncio.run(main())
    assert seen == ["127.0.0.1", "127.0.0.1"]
    assert refused.code == RATE_LIMITED and "this caller" in str(refused)


@pytest.fixture
def behind_proxy(tmp_path):
    """As ``tight_open``, behind a trusted reverse proxy at 127.0.0.1 (FORWARDED_ALLOW_IPS): the
    client address is the one the proxy names in X-Forwarded-For."""
    yield from start_kit(tmp_path, KIT_RATE="1/minute", KIT_BURST="2", FORWARDED_ALLOW_IPS="127.0.0.1")


def test_an_ipv6_caller_is_limited_per_64_and_ipv4_mapped_as_ipv4(behind_proxy):
    # No auth, 2 tool calls per address then one a minute: three addresses of one IPv6 /64 are one
    # caller (a /64 holder must not rotate addresses for fresh buckets); another /64 is another.
    # An IPv4-mapped IPv6 address is the IPv4 address it maps.
    def caller(address: str) -> Client:
        return Client(behind_proxy.url, era="modern", headers={"X-Forwarded-For": address}, timeout=20)

    async def calls(*addresses: str) -> list[str]:
        seen = []
        for address in addresses:
            async with caller(address) as c:
                try:
                    seen.append(text(await c.call_tool("peer", {})))
                except MCPError as exc:
                    assert exc.code == RATE_LIMITED, exc
                    seen.append("refused")
        return seen

    net = "2001:db8:1:2:"
    assert asyncio.run(calls(net + ":1", net + "aa:bb:cc:dd", net + ":3", "2001:db8:1:3::1")) == [
        net + ":1",
        net + "aa:bb:cc:dd",
        "refused",
        "2001:db8:1:3::1",
    ]
    assert asyncio.run(calls("198.51.100.7", "::ffff:198.51.100.7", "::ffff:198.51.100.7")) == [
        "198.51.100.7",
        "::ffff:198.51.100.7",
        "refused",
    ]


@pytest.mark.parametrize("era", ERAS)
def test_the_request_log_never_holds_a_state_handle(open_kit, era):
    # Without auth a StateHandle is the authority to use its state: a log reader must not get it,
    # whatever the tool names the parameter.
    async def main():
        async with Client(open_kit.url, era=era, timeout=20) as c:
            first = (await c.call_tool("basket", {"item": f"apple-{era}"})).data
            again = (await c.call_tool("basket", {"item": f"pear-{era}", "cart": first["cart"]})).data
            return first["cart"], again

    cart, again = asyncio.run(main())
    assert again == {"cart": cart, "items": [f"apple-{era}", f"pear-{era}"]}
    assert cart not in open_kit.log.read_text()
    logged = [line["arguments"] for line in open_kit.lines() if line.get("name") == "basket"]
    assert {"item": f"pear-{era}", "cart": "[redacted]"} in logged
