"""Legacy sessions shared by several server processes on one real redis-server (issue 14).

Two real server processes (``shared_server.py``) share one Redis; the test client sends each
request of one session to the next process in turn (round robin, no affinity), as a load
balancer without sticky sessions does. What must hold: the session made on A serves on B
(primed from its record, no handshake), ``logging/setLevel`` and subscriptions made on one
process are honoured on the other, DELETE on A is 404 everywhere, the cap and the idle
expiry count over all processes, the client's answer to a server-to-client request and its
``notifications/cancelled`` reach the process running that request, and no key is left in
Redis once the sessions are gone (``DBSIZE`` back to the baseline: the epoch key).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from tests.faults.test_event_store import sse_events
from tests.http.conftest import modern, modern_headers
from tests.state.test_redis_http import wait_ready
from tests.support.http import free_port, wait_port
from tests.support.redis import RedisServer

SERVER = [sys.executable, "tests/state/shared_server.py"]
VERSION = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream"}


# the permanent keys: the epoch (_state/_redis_sessions.py) and the bus's secret (_state/_redis.py)
BASELINE = [b"mcpio:bus:key", b"mcpio:epoch"]


def wait_baseline(db: redis.Redis, within: float) -> None:
    """Poll Redis (not the servers: a request would keep sessions alive) until only the
    baseline is left."""
    deadline = time.monotonic() + within
    while db.dbsize() != len(BASELINE) or sorted(db.keys()) != BASELINE:
        assert time.monotonic() < deadline, db.keys()
        time.sleep(0.05)


def start(redis_url: str, n: int, *extra: str) -> tuple[list[str], list[subprocess.Popen]]:
    ports = [free_port() for _ in range(n)]
    procs = [subprocess.Popen([*SERVER, str(p), redis_url, *extra], stdin=subprocess.DEVNULL) for p in ports]
    for p, proc in zip(ports, procs, strict=True):
        wait_port(p, proc=proc)
    return [f"http://127.0.0.1:{p}/mcp" for p in ports], procs


@pytest.fixture
def cluster(redis_url) -> Iterator[tuple[list[str], redis.Redis]]:
    urls, procs = start(redis_url, 2)
    db = redis.Redis.from_url(redis_url)
    try:
        yield urls, db
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)
        db.close()


class RoundRobin:
    """One legacy session whose requests go to each process in turn (or to ``at``)."""

    def __init__(self, c: httpx.Client, urls: list[str], capabilities: dict | None = None) -> None:
        self.c, self.urls, self.next_id = c, urls, 0
        self.turn = itertools.cycle(range(len(urls)))
        r = self.post("initialize", {"protocolVersion": VERSION, "capabilities": capabilities or {},
                                     "clientInfo": {"name": "rr", "version": "1"}}, sid=False)  # fmt: skip
        assert r.status_code == 200, r.text
        self.sid = r.headers["mcp-session-id"]
        self.headers = {"mcp-session-id": self.sid, "mcp-protocol-version": VERSION}
        assert self.send({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def url(self, at: int | None) -> str:
        return self.urls[next(self.turn) if at is None else at]

    def send(self, message: dict, at: int | None = None, sid: bool = True) -> httpx.Response:
        headers = {**ACCEPT, **(self.headers if sid else {})}
        return self.c.post(self.url(at), json=message, headers=headers)

    def post(self, method: str, params: dict | None = None, at: int | None = None, sid: bool = True) -> httpx.Response:
        self.next_id += 1
        return self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}, at, sid)

    def messages(self, method: str, params: dict | None = None, at: int | None = None) -> list[dict]:
        """Everything the POST's response carried (JSON or SSE), in order."""
        r = self.post(method, params, at)
        assert r.status_code == 200, r.text
        if r.headers["content-type"].startswith("application/json"):
            return [r.json()]
        return [json.loads(e["data"]) for e in sse_events(r.text) if e.get("data")]

    def call(self, name: str, /, at: int | None = None, **arguments) -> dict:
        answer = self.messages("tools/call", {"name": name, "arguments": arguments}, at)[-1]
        assert "result" in answer, answer
        return answer["result"]


def test_one_session_round_robin_over_two_processes(cluster):
    urls, db = cluster
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls)  # initialize on A, notifications/initialized on B
        # Both processes serve it, as the same session.
        pids = {s.call("where", at=i)["structuredContent"]["result"] for i in (0, 1)}
        assert len(pids) == 2
        tools = s.messages("tools/list")[-1]["result"]["tools"]
        assert "chatty" in {t["name"] for t in tools}

        # logging/setLevel on A is honoured by a request on B (and the other way round).
        assert s.post("logging/setLevel", {"level": "warning"}, at=0).json() == {"jsonrpc": "2.0", "id": s.next_id,
                                                                               "result": {}}  # fmt: skip
        said = [m["params"]["level"] for m in s.messages("tools/call", {"name": "chatty", "arguments": {}}, at=1)
                if m.get("method") == "notifications/message"]  # fmt: skip
        assert said == ["warning", "error"]
        s.post("logging/setLevel", {"level": "error"}, at=1)
        said = [m["params"]["level"] for m in s.messages("tools/call", {"name": "chatty", "arguments": {}}, at=0)
                if m.get("method") == "notifications/message"]  # fmt: skip
        assert said == ["error"]

        # Subscribed on A, GET stream on B: an update notified on A reaches B's stream once.
        assert s.post("resources/subscribe", {"uri": "memo://a"}, at=0).status_code == 200
        got = open_get(c, urls[1], s.headers)
        other = RoundRobin(c, urls)
        assert other.call("touch", at=0, uri="memo://a")["content"][0]["text"] == "touched"
        assert got.get(timeout=10) == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                       "params": {"uri": "memo://a"}}  # fmt: skip
        # Unsubscribed on A: the next update is not sent; subscribed again on B: it is (once).
        s.post("resources/unsubscribe", {"uri": "memo://a"}, at=0)
        other.call("touch", at=1, uri="memo://a")
        s.post("resources/subscribe", {"uri": "memo://a"}, at=1)
        other.call("touch", at=0, uri="memo://a")
        assert got.get(timeout=10)["params"] == {"uri": "memo://a"}
        other.call("where", at=1)  # one more round trip on each process: nothing else arrived
        other.call("where", at=0)
        assert got.empty()

        # DELETE on A: 404 on B and on A from then on; nothing left in Redis.
        assert c.delete(urls[0], headers=s.headers).status_code == 200
        for at in (1, 0):
            r = s.post("tools/list", at=at)
            assert r.status_code == 404 and "session unknown or ended" in r.json()["error"]["message"]
        assert c.delete(urls[1], headers=other.headers).status_code == 200
    wait_baseline(db, 10)  # the GET stream's end is processed after the DELETE's answer


def test_the_cap_counts_sessions_on_every_process(redis_url):
    urls, procs = start(redis_url, 2, "1800", "2")
    try:
        with httpx.Client(timeout=30) as c:
            first = RoundRobin(c, urls[:1])  # on A
            RoundRobin(c, urls[1:])  # on B: two sessions in all
            r = c.post(urls[0], json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                      "params": {"protocolVersion": VERSION, "capabilities": {},
                                                 "clientInfo": {"name": "x", "version": "1"}}},
                       headers=ACCEPT)  # fmt: skip
            assert r.status_code == 503 and r.headers["retry-after"] == "5"
            assert "maximum of 2 sessions" in r.json()["error"]["message"]
            assert c.delete(urls[1], headers=first.headers).status_code == 200  # made on A, ended on B
            RoundRobin(c, urls)  # room again
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def test_an_idle_session_expires_on_every_process_and_leaves_no_key(redis_url):
    urls, procs = start(redis_url, 2, "1")
    db = redis.Redis.from_url(redis_url)
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            s.call("where", at=1)
            assert db.exists(f"mcpio:s:{s.sid}")
            wait_baseline(db, 20)  # Redis expires the record (and the count) after 1 s idle
            for at in (0, 1):
                assert s.post("tools/list", at=at).status_code == 404
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        db.close()


def open_get(c: httpx.Client, url: str, headers: dict) -> queue.Queue:
    """Open the session's GET stream and read it in a thread: its messages arrive on the queue."""
    got: queue.Queue = queue.Queue()
    opened = threading.Event()

    def read() -> None:
        get = {**headers, "accept": "text/event-stream"}
        with contextlib.suppress(httpx.HTTPError), c.stream("GET", url, headers=get) as r:
            assert r.status_code == 200
            opened.set()
            for line in r.iter_lines():  # until the server or the test ends it
                if line.startswith("data:") and line[5:].strip():
                    got.put(json.loads(line[5:]))

    threading.Thread(target=read, daemon=True).start()
    assert opened.wait(10)
    return got


def stream_post(c: httpx.Client, url: str, headers: dict, message: dict) -> queue.Queue:
    """POST ``message`` and read its SSE response in a thread: its messages arrive on the queue."""
    got: queue.Queue = queue.Queue()

    def read() -> None:
        with (
            contextlib.suppress(httpx.HTTPError),
            c.stream("POST", url, json=message, headers={**ACCEPT, **headers}) as r,
        ):
            for line in r.iter_lines():  # a stream still open when the test ends is closed under it
                if line.startswith("data:") and line[5:].strip():
                    got.put(json.loads(line[5:]))

    threading.Thread(target=read, daemon=True).start()
    return got


def test_answers_and_cancellations_reach_the_process_running_the_request(cluster):
    urls, _ = cluster
    with httpx.Client(timeout=30) as c, httpx.Client(timeout=30) as streaming:
        s = RoundRobin(c, urls, capabilities={"roots": {"listChanged": False}})
        # roots runs on A and asks the client; the client answers through B.
        call = {"jsonrpc": "2.0", "id": "r1", "method": "tools/call", "params": {"name": "roots", "arguments": {}}}
        got = stream_post(streaming, urls[0], s.headers, call)
        ask = got.get(timeout=10)
        assert ask["method"] == "roots/list"
        answer = {"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///tmp/x"}]}}
        assert s.send(answer, at=1).status_code == 202
        done = got.get(timeout=10)
        assert done["id"] == "r1" and done["result"]["content"][0]["text"] == "file:///tmp/x"
        # Answered through A itself: taken there (not sent on the bus), the same result.
        got = stream_post(streaming, urls[0], s.headers, {**call, "id": "r2"})
        ask = got.get(timeout=10)
        assert s.send({**answer, "id": ask["id"]}, at=0).status_code == 202
        assert got.get(timeout=10)["result"]["content"][0]["text"] == "file:///tmp/x"

        # slow runs on A; notifications/cancelled POSTed to B cancels it there: no answer comes.
        call = {"jsonrpc": "2.0", "id": "s1", "method": "tools/call", "params": {"name": "slow", "arguments":
                {"steps": 1, "wait": 30}, "_meta": {"progressToken": "p"}}}  # fmt: skip
        got = stream_post(streaming, urls[0], s.headers, call)
        assert got.get(timeout=10)["method"] == "notifications/progress"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s1"}}
        assert s.send(cancel, at=1).status_code == 202
        deadline = time.monotonic() + 10
        while s.call("cancelled", at=0)["structuredContent"]["result"] != ["s1"]:  # on A, where it ran
            assert time.monotonic() < deadline, "the cancellation did not reach A"
            time.sleep(0.05)
        assert s.call("cancelled", at=1)["structuredContent"]["result"] == []
        assert got.empty()  # the cancelled request was never answered


def test_list_changed_on_one_process_reaches_streams_on_every_process_once(cluster):
    urls, _ = cluster
    listen = modern(7, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    with httpx.Client(timeout=30) as c, httpx.Client(timeout=30) as streaming:
        s = RoundRobin(c, urls)  # made on A; its GET stream on B
        s.post("resources/subscribe", {"uri": "memo://a"}, at=1)
        got = open_get(c, urls[1], s.headers)
        listening = stream_post(streaming, urls[1], modern_headers("subscriptions/listen"), listen)  # 2026 era, on B
        assert listening.get(timeout=10)["method"] == "notifications/subscriptions/acknowledged"
        other = RoundRobin(c, urls)
        assert other.call("grow", at=0, name="sprout")["content"][0]["text"] == "sprout"  # on A
        assert got.get(timeout=10) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        changed = listening.get(timeout=10)
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
        other.call("touch", at=0, uri="memo://a")  # a marker: the next message on the GET stream
        assert got.get(timeout=10)["method"] == "notifications/resources/updated"  # no second list_changed
        assert got.empty() and listening.empty()


def sse_read(r: httpx.Response) -> Iterator[tuple[str, dict]]:
    """(event id, message) of each SSE event with data, as they arrive."""
    eid, data = "", ""
    for line in r.iter_lines():
        if line.startswith("id:"):
            eid = line[3:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield eid, json.loads(data)
            eid, data = "", ""


def test_a_stream_resumed_on_other_processes_survives_kill_9_of_the_one_holding_it(redis_url, tmp_path):
    """staged runs on A; the client reads two progress events there and drops the connection,
    resumes on B (which follows A's events in Redis), B is killed with SIGKILL mid-call, the
    client resumes on C: every progress event exactly once, then the result."""
    urls, procs = start(redis_url, 3)
    db = redis.Redis.from_url(redis_url)
    gate = str(tmp_path / "gate")
    seen: list[float] = []
    last = ""
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            call = {"jsonrpc": "2.0", "id": "k", "method": "tools/call",
                    "params": {"name": "staged", "arguments": {"gate": gate}, "_meta": {"progressToken": "t"}}}  # fmt: skip
            with c.stream("POST", urls[0], json=call, headers={**ACCEPT, **s.headers}) as r:  # on A
                for eid, m in sse_read(r):
                    last = eid
                    seen.append(m["params"]["progress"])
                    if len(seen) == 2:
                        break  # the connection to A ends here; staged goes on

            def resume(at: int) -> httpx.Response:
                headers = {**s.headers, "accept": "text/event-stream", "last-event-id": last}
                return c.send(c.build_request("GET", urls[at], headers=headers), stream=True)

            r = resume(1)  # on B
            assert r.status_code == 200
            open(gate + ".1", "w").close()
            with contextlib.suppress(httpx.HTTPError):
                for eid, m in sse_read(r):
                    last = eid
                    seen.append(m["params"]["progress"])
                    if len(seen) == 4:
                        procs[1].send_signal(signal.SIGKILL)  # B dies holding the client's stream
                        procs[1].wait(10)
            r.close()
            r = resume(2)  # on C
            assert r.status_code == 200
            open(gate + ".2", "w").close()
            answer = None
            for eid, m in sse_read(r):
                last = eid
                if "id" in m:
                    answer = m
                    break
                seen.append(m["params"]["progress"])
            r.close()
            assert seen == [1, 2, 3, 4, 5, 6]
            assert answer is not None and answer["id"] == "k" and answer["result"]["content"][0]["text"] == "staged"
            assert c.delete(urls[2], headers=s.headers).status_code == 200
        wait_baseline(db, 10)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            proc.wait(10)
        db.close()


def test_the_get_stream_resumed_on_another_process_replays_then_goes_on_live_there(cluster):
    urls, _ = cluster
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls)
        s.post("resources/subscribe", {"uri": "memo://a"}, at=0)
        other = RoundRobin(c, urls)
        get = {**s.headers, "accept": "text/event-stream"}
        r = c.send(c.build_request("GET", urls[0], headers=get), stream=True)  # on A
        other.call("touch", at=1, uri="memo://a")  # 1: live on A
        last, first = next(sse_read(r))
        assert first["method"] == "notifications/resources/updated"
        r.close()  # the connection to A ends; A keeps what comes for the stream in Redis
        other.call("touch", at=0, uri="memo://a")  # 2: stored by A before this call returns
        r = c.send(c.build_request("GET", urls[1], headers={**get, "last-event-id": last}), stream=True)  # on B
        assert r.status_code == 200
        events = sse_read(r)
        replayed_id, replayed = next(events)
        assert replayed["method"] == "notifications/resources/updated" and replayed_id != last
        other.call("touch", at=0, uri="memo://a")  # 3: live on B, whichever process notifies
        assert next(events)[1]["method"] == "notifications/resources/updated"
        other.call("touch", at=1, uri="memo://a")  # 4
        assert next(events)[1]["method"] == "notifications/resources/updated"
        other.call("grow", at=0, name="marker")  # the next event: no update came twice
        assert next(events)[1]["method"] == "notifications/tools/list_changed"
        r.close()
        assert c.delete(urls[0], headers=s.headers).status_code == 200


def levels(s: RoundRobin, at: int) -> list[str]:
    messages = s.messages("tools/call", {"name": "chatty", "arguments": {}}, at)
    return [m["params"]["level"] for m in messages if m.get("method") == "notifications/message"]


def test_sessions_survive_a_redis_restarted_empty(tmp_path):
    """Redis restarted without persistence loses every record; the processes that hold copies
    restore them (the epoch tells a lost record from an ended one), and changes made after
    that are shared again. A session no process held is gone."""
    own = RedisServer()  # its own: this test restarts it
    own.start()
    urls, procs = start(own.url, 2)
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            s.post("logging/setLevel", {"level": "warning"}, at=1)
            assert levels(s, 0) == levels(s, 1) == ["warning", "error"]  # copies on A and B
            own.restart()
            for url in urls:
                wait_ready(c, url.removesuffix("/mcp"))
            assert levels(s, 0) == ["warning", "error"]  # A restores the record from its copy
            assert levels(s, 1) == ["warning", "error"]
            s.post("logging/setLevel", {"level": "error"}, at=1)  # shared again
            assert levels(s, 0) == ["error"]
            assert c.delete(urls[0], headers=s.headers).status_code == 200
            assert s.post("tools/list", at=1).status_code == 404  # ended is ended, restart or not
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)
        own.close()
