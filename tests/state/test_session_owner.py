"""A legacy session belongs to the principal that opened it, on every process (issue 32, items 1
and 2).

Two real uvicorn servers on 127.0.0.1 (two apps, each with its own ``RedisState`` on one real
redis-server: two processes of one deployment as far as the sessions go), protected by
``auth=ResourceServer`` with a real issuer (tests/support/issuer.py); principal A (subject
``alice``) opens a session, principal B (subject ``mallory``, another valid token) has A's
``Mcp-Session-Id``. What must hold on each process — the one that made the session, and the
other one before and after it holds a copy: B's POST, GET stream, resumption with
``Last-Event-ID`` and DELETE get the 404 of an unknown session and B's call never runs; A goes
on being served, and a tool sees the principal of the request it serves (``ctx.auth``). The
same for the deprecated HTTP+SSE transport (``legacy_sse=True``): B posting to A's
``/messages?session_id=…`` gets 404.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import httpx
import pytest

from mcpio import Context, Server
from mcpio._state import RedisState
from mcpio.auth import ResourceServer
from tests.support.http import ServerThread
from tests.support.issuer import Issuer

RESOURCE = "https://mcp.test/mcp"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
RAN: list[str] = []  # the subjects whoami ran for, every server of this module
_lock = threading.Lock()


def make_server() -> Server:
    server = Server("owned", "1.0.0")

    @server.tool
    def whoami(ctx: Context) -> dict:
        """Who the request's token says is calling."""
        with _lock:
            RAN.append(ctx.auth.subject)
        return {"subject": ctx.auth.subject, "scopes": sorted(ctx.auth.scopes)}

    return server


def auth(issuer: Issuer) -> ResourceServer:
    return ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"])


@pytest.fixture
def pair(issuer, redis_url) -> Iterator[list[ServerThread]]:
    """Two apps sharing one Redis (each its own RedisState, as two processes would)."""
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(ServerThread(make_server().http_app(auth=auth(issuer), state=RedisState(redis_url))))
            for _ in range(2)
        ]
        yield servers


def tok(issuer: Issuer, sub: str = "alice", scope: str = "mcp", **kw) -> str:
    return issuer.mint(aud=RESOURCE, scope=scope, sub=sub, **kw)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": "Bearer " + token}


def open_session(c: httpx.Client, url: str, token: str) -> dict[str, str]:
    r = c.post(
        url,
        headers={"accept": ACCEPT, **bearer(token)},
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        },
    )
    assert r.status_code == 200, r.text
    headers = {"accept": ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    r = c.post(
        url, headers={**headers, **bearer(token)}, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert r.status_code == 202, r.text
    return headers


def whoami(c: httpx.Client, url: str, headers: dict[str, str], token: str, rid: int) -> httpx.Response:
    return c.post(
        url,
        headers={**headers, **bearer(token)},
        json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
    )


def first_event_id(c: httpx.Client, url: str, headers: dict[str, str]) -> str:
    """Open the session's GET stream, read its first (priming) event's id, hang up."""
    with c.stream("GET", url, headers=headers) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("id:"):
                return line[3:].strip()
    raise AssertionError("no event id on the GET stream")


def result_of(r: httpx.Response) -> dict:
    assert r.status_code == 200, r.text
    text = r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"result"' in line)
    return httpx.Response(200, content=text).json()["result"]["structuredContent"]


def refused(r: httpx.Response) -> None:
    """The answer to an unknown session: 404, nothing that says it exists or whose it is."""
    assert r.status_code == 404, (r.status_code, r.text)
    assert "alice" not in r.text and "principal" not in r.text


def refused_stream(c: httpx.Client, url: str, headers: dict[str, str]) -> None:
    """A GET (a stream if it were served) answered as for an unknown session."""
    with c.stream("GET", url, headers=headers) as r:
        assert r.status_code == 404, r.status_code
        refused(httpx.Response(404, content=r.read()))


def test_another_principal_gets_404_on_every_process(pair, issuer):
    RAN.clear()
    one, two = (s.url for s in pair)
    alice, mallory = tok(issuer), tok(issuer, sub="mallory")
    with httpx.Client(timeout=10) as c:
        headers = open_session(c, one, alice)
        # B on the other process before it holds a copy, on the process that made it, then on
        # the other process once A's requests made a copy there: never served.
        refused(whoami(c, two, headers, mallory, 1))
        refused(whoami(c, one, headers, mallory, 2))
        assert result_of(whoami(c, two, headers, alice, 3))["subject"] == "alice"
        refused(whoami(c, two, headers, mallory, 4))
        get = {k: v for k, v in headers.items() if k != "accept"} | {"accept": "text/event-stream"}
        for url in (one, two):
            refused_stream(c, url, {**get, **bearer(mallory)})
            # resumption of A's GET stream at a real event id of it, on either process
            last = first_event_id(c, url, {**get, **bearer(alice)})
            refused_stream(c, url, {**get, **bearer(mallory), "last-event-id": last})
            with c.stream("GET", url, headers={**get, **bearer(alice), "last-event-id": last}) as r:
                assert r.status_code == 200
            refused(c.delete(url, headers={**headers, **bearer(mallory)}))
        assert "mallory" not in RAN  # B's calls never ran
        # A still has the session, everywhere; each call sees the principal that sent it
        assert result_of(whoami(c, one, headers, alice, 5))["subject"] == "alice"
        assert result_of(whoami(c, two, headers, alice, 6))["subject"] == "alice"
        # B's own session is B's (and A is a stranger to it)
        theirs = open_session(c, two, mallory)
        assert result_of(whoami(c, one, theirs, mallory, 1))["subject"] == "mallory"
        refused(whoami(c, one, theirs, alice, 2))
        # A ends its session: gone everywhere
        assert c.delete(two, headers={**headers, **bearer(alice)}).status_code == 200
        refused(whoami(c, one, headers, alice, 7))


def test_handlers_see_the_current_requests_token_on_every_process(pair, issuer):
    """``ctx.auth`` is the token of the request being served, on the copy of another process too
    (never the one the copy was started with)."""
    one, two = (s.url for s in pair)
    with httpx.Client(timeout=10) as c:
        headers = open_session(c, one, tok(issuer))
        assert result_of(whoami(c, two, headers, tok(issuer), 1))["scopes"] == ["mcp"]
        wider = tok(issuer, scope="mcp notes:read")
        for rid, url in enumerate((two, one, two), start=2):
            assert result_of(whoami(c, url, headers, wider, rid))["scopes"] == ["mcp", "notes:read"]


def test_single_process_refuses_another_principal_with_404(issuer):
    """The same rule without a state backend (one process, sessions in memory)."""
    RAN.clear()
    with ServerThread(make_server().http_app(auth=auth(issuer))) as srv, httpx.Client(timeout=10) as c:
        headers = open_session(c, srv.url, tok(issuer))
        refused(whoami(c, srv.url, headers, tok(issuer, sub="mallory"), 1))
        refused(c.delete(srv.url, headers={**headers, **bearer(tok(issuer, sub="mallory"))}))
        assert "mallory" not in RAN
        assert result_of(whoami(c, srv.url, headers, tok(issuer), 2))["subject"] == "alice"


def test_legacy_sse_session_belongs_to_its_principal(issuer):
    """HTTP+SSE (2024-11-05): B posting to A's ``/messages?session_id=…`` gets 404 and its
    message is never run; A's messages are."""
    RAN.clear()
    app = make_server().http_app(auth=auth(issuer), legacy_sse=True)
    alice, mallory = tok(issuer), tok(issuer, sub="mallory")
    with ServerThread(app) as srv, httpx.Client(timeout=10) as c:
        with c.stream("GET", srv.base + "/sse", headers={"accept": "text/event-stream", **bearer(alice)}) as events:
            assert events.status_code == 200
            lines = events.iter_lines()
            endpoint = next(line[5:].strip() for line in lines if line.startswith("data:"))
            post = srv.base + endpoint

            def send(message: dict, token: str) -> httpx.Response:
                return c.post(post, headers={"content-type": "application/json", **bearer(token)}, json=message)

            init = {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            assert send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, alice).status_code == 202
            assert send({"jsonrpc": "2.0", "method": "notifications/initialized"}, alice).status_code == 202
            call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
            refused(send({**call, "id": 1}, mallory))
            assert send({**call, "id": 2}, alice).status_code == 202
            answers = (line for line in lines if line.startswith("data:") and '"id":' in line)
            got = [next(answers), next(answers)]  # initialize's answer, then whoami's (id 2)
            assert '"id":2' in got[1].replace(" ", "") and "alice" in got[1]
    assert RAN == ["alice"]
