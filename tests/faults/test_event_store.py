"""Issue 12, break 1: the SSE event store is bounded by bytes per session and in total.

A real server process (``event_store_server.py``) with a small store, in memory or on a real
redis-server (the same bounds must hold for both); sessions at protocol
2025-11-25, whose POST responses are SSE streams with event ids (priming events, SEP-1699),
so every answer passes through the store. Before the fix, one session POSTing 2,000 calls
with 1 MB results held 1.9 GiB; here the store's own counter (read through a tool) must stay
under the configured bounds, delivered answers must not be kept at all, and a client that
resumes after its events were evicted gets a clear 404 (never a replay with a hole).
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.faults.support import HERE
from tests.support.http import script_http
from tests.support.redis import redis_server, redis_url  # noqa: F401  (fixtures: a real redis-server)

SESSION_BYTES = 1024 * 1024
TOTAL_BYTES = 5 * SESSION_BYTES // 2
RESULT = 200_000
VERSION = "2025-11-25"


@pytest.fixture(params=["memory", "redis"])
def url(request):
    extra = [request.getfixturevalue("redis_url")] if request.param == "redis" else []
    with script_http(HERE / "event_store_server.py", str(SESSION_BYTES), str(TOTAL_BYTES), *extra) as (url, _):
        yield url


def sse_events(text: str) -> list[dict[str, str]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        ev: dict[str, str] = {}
        for line in block.split("\n"):
            key, _, value = line.partition(":")
            if key in ("id", "data", "retry"):
                ev[key] = ev.get(key, "") + value.removeprefix(" ")
        if ev:
            events.append(ev)
    return events


class Session:
    def __init__(self, client: httpx.Client, url: str) -> None:
        self.c, self.url, self.next_id = client, url, 0
        r = self.post(
            "initialize",
            {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            sid=False,
        )
        self.sid = r.headers["mcp-session-id"]
        self.headers = {"mcp-session-id": self.sid, "mcp-protocol-version": VERSION}
        self.c.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**self.headers, "accept": "application/json, text/event-stream"},
        )

    def post(self, method: str, params: dict, sid: bool = True) -> httpx.Response:
        self.next_id += 1
        headers = {"accept": "application/json, text/event-stream", **(self.headers if sid else {})}
        r = self.c.post(
            self.url, json={"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, headers=headers
        )
        assert r.status_code == 200, r.text
        return r

    def call(self, name: str, **arguments) -> tuple[list[dict[str, str]], dict | None]:
        """The SSE events of one tools/call and its result (None when the stream ended first)."""
        r = self.post("tools/call", {"name": name, "arguments": arguments})
        if r.headers["content-type"].startswith("application/json"):
            return [], r.json()["result"]
        events = sse_events(r.text)
        answers = [json.loads(e["data"]) for e in events if e.get("data")]
        return events, (answers[-1]["result"] if answers else None)

    def stats(self) -> dict[str, int]:
        return self.call("store_stats")[1]["structuredContent"]

    def resume(self, last_event_id: str) -> httpx.Response:
        return self.c.get(
            self.url, headers={**self.headers, "accept": "text/event-stream", "last-event-id": last_event_id}
        )


def test_the_event_store_is_bounded_per_session_and_in_total_and_late_resumers_get_404(url):
    with httpx.Client(timeout=30) as c:
        a = Session(c, url)
        # Answers delivered on their own stream are not kept: 30 x 200 kB through, nothing left.
        for _ in range(30):
            events, result = a.call("big", n=RESULT)
            assert len(result["content"][0]["text"]) == RESULT and len(events) == 3 and events[0]["id"]
        assert a.stats()["bytes"] < 4096  # only store_stats' own priming event is in flight

        # Answers whose connection ended first wait in the store, at most SESSION_BYTES of them.
        primed = []
        for _ in range(30):
            events, result = a.call("abandoned", n=RESULT)
            assert result is None and events[0]["id"]  # the priming event only: the answer waits
            primed.append(events[0]["id"])
        stats = a.stats()
        assert SESSION_BYTES - 2 * RESULT < stats["bytes"] <= SESSION_BYTES, stats  # 30 x 200 kB = 6 MB asked
        assert stats["evicted"] >= 25

        # Too late: the answer after that id was evicted. No replay with a hole: 404, and why.
        late = a.resume(primed[0])
        assert late.status_code == 404 and "discarded" in late.json()["error"]["message"]
        # In time: the last stream replays its answer, which is then delivered and dropped.
        on_time = a.resume(primed[-1])
        assert on_time.status_code == 200
        [answer] = [json.loads(e["data"]) for e in sse_events(on_time.text) if e.get("data")]
        assert len(answer["result"]["content"][0]["text"]) == RESULT
        assert a.stats()["bytes"] <= stats["bytes"] - RESULT
        assert a.resume(primed[-1]).status_code == 404  # delivered once, then gone

        # Many sessions: the total bound holds across them (oldest first).
        others = [Session(c, url) for _ in range(3)]
        for s in others:
            for _ in range(8):
                s.call("abandoned", n=RESULT)
        stats = a.stats()
        assert TOTAL_BYTES - 2 * RESULT < stats["bytes"] <= TOTAL_BYTES, stats

        # Ending the sessions frees everything.
        for s in [a, *others]:
            assert c.delete(url, headers=s.headers).status_code == 200
        assert Session(c, url).stats()["bytes"] < 4096


def rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_the_issue_reproduction_with_default_bounds_keeps_the_server_small():
    """The issue's attack at a tenth of its size: one session, 200 calls whose 1 MB answers
    wait for a resumption. Before: all 200 MB retained. Now: the default 8 MiB per session;
    the server's resident memory grows by far less than what was sent."""
    from mcpio._transports._http_events import DEFAULT_MAX_SESSION_BYTES, DEFAULT_MAX_TOTAL_BYTES

    script = HERE / "event_store_server.py"
    with script_http(script, str(DEFAULT_MAX_SESSION_BYTES), str(DEFAULT_MAX_TOTAL_BYTES)) as (url, proc):
        with httpx.Client(timeout=60) as c:
            s = Session(c, url)
            for _ in range(3):  # warm up: imports, buffers, one stored answer
                s.call("abandoned", n=1_000_000)
            before = rss(proc.pid)
            for _ in range(200):
                events, result = s.call("abandoned", n=1_000_000)
                assert result is None and events[0]["id"]
            stats = s.stats()
            assert stats["bytes"] <= DEFAULT_MAX_SESSION_BYTES and stats["evicted"] >= 190, stats
            grown = rss(proc.pid) - before
            print(f"event store: {stats}; server RSS grew by {grown / 2**20:.1f} MiB")
            assert grown < 48 * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MiB for 200 MB of answers"
