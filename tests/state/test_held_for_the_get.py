"""What a legacy session's copy holds for the client's first GET stream reaches that stream on
whichever process it opens, with two real server processes (``held_server.py``) sharing one
real redis-server. The server sends, outside any request, a log message and ``roots/list`` on
``notifications/initialized`` (as the reference filesystem server does), which races the
client's GET (spec 2025-11-25, transports: such messages go on the GET stream). The GET may
reach the other process: the copy that holds hands its own messages over to it (on the bus),
and the client's answer reaches the copy that asked; a change told to every copy comes once.
What a copy sends on its own once the GET is open on the other process goes there too."""

from __future__ import annotations

import contextlib
import functools
import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.state.test_shared_sessions import RoundRobin, open_get
from tests.support.http import free_port, wait_port

SERVER = [sys.executable, "tests/state/held_server.py"]
ROOTS = {"roots": {"listChanged": True}}


@pytest.fixture
def urls(redis_url) -> Iterator[list[str]]:
    """Two ``held_server.py`` processes sharing ``redis_url``: A and B."""
    yield from two(redis_url)


def two(redis_url: str, *more: str) -> Iterator[list[str]]:
    ports = [free_port() for _ in range(2)]
    procs = [subprocess.Popen([*SERVER, str(p), redis_url, *more], stdin=subprocess.DEVNULL) for p in ports]
    try:
        for p, proc in zip(ports, procs, strict=True):
            wait_port(p, proc=proc)
        yield [f"http://127.0.0.1:{p}/mcp" for p in ports]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)


def until(s: RoundRobin, at: int, tool: str, want: object) -> None:
    """Call ``tool`` on process ``at`` until it gives ``want`` (what that process did meanwhile)."""
    deadline = time.monotonic() + 20
    while (got := s.call(tool, at=at)["structuredContent"]["result"]) != want:
        assert time.monotonic() < deadline, f"{tool} on process {at}: {got!r}, not {want!r}"
        time.sleep(0.05)


def answer(ask: dict, uri: str = "file:///r") -> dict:
    assert ask["method"] == "roots/list", ask
    return {"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": uri}]}}


def test_what_one_process_held_reaches_the_first_get_on_the_other(urls):
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[:1], capabilities=ROOTS)  # initialize and notifications/initialized on A
        s.urls = urls
        until(s, 0, "asked", True)  # A holds its log message and roots/list
        got = open_get(c, urls[1], s.headers)  # B, which holds nothing
        said, ask = got.get(timeout=10), got.get(timeout=10)
        assert said["method"] == "notifications/message" and said["params"]["data"] == "hello"
        assert s.send(answer(ask), at=1).status_code == 202  # through B, to A (which asked)
        until(s, 0, "learned", ["file:///r"])
        assert got.empty(), got.get()


def test_what_the_other_process_held_reaches_the_first_get_and_a_change_comes_once(urls):
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls, capabilities=ROOTS)  # initialize on A, notifications/initialized on B
        until(s, 1, "asked", True)  # B holds its log message and roots/list
        s.post("resources/subscribe", {"uri": "memo://a"}, at=0)
        other = RoundRobin(c, urls)  # another session, whose calls tell s only on its GET stream
        other.call("grow", at=1, name="sprout")  # tools/list_changed, told by the copies on A and on B
        got = open_get(c, urls[0], s.headers)  # A, which holds only the change
        first = {m["method"]: m for m in (got.get(timeout=10) for _ in range(3))}
        assert sorted(first) == ["notifications/message", "notifications/tools/list_changed", "roots/list"]
        assert first["notifications/message"]["params"]["data"] == "hello"
        other.call("touch", at=0, uri="memo://a")  # a marker: the next message (no second list_changed)
        assert got.get(timeout=10)["method"] == "notifications/resources/updated"
        assert s.send(answer(first["roots/list"]), at=0).status_code == 202  # through A, to B
        until(s, 1, "learned", ["file:///r"])
        assert got.empty(), got.get()


def roots_learned_with_the_get_on_a(c: httpx.Client, urls: list[str], copy_on_b: str) -> tuple[RoundRobin, Any]:
    """A session initialized on A, with B's copy started before the GET or not (``copy_on_b``),
    its GET stream opened on A, where the hello A held and its roots/list come first; A learns
    ``file:///r``. The session and the GET stream's frames."""
    s = RoundRobin(c, urls[:1], capabilities=ROOTS)  # on A
    s.urls = urls
    until(s, 0, "asked", True)
    if copy_on_b == "before the GET":
        assert s.call("learned", at=1)["structuredContent"]["result"] == []
    got = open_get(c, urls[0], s.headers)  # on A: what A held, then live
    said, ask = got.get(timeout=10), got.get(timeout=10)
    assert said["params"]["data"] == "hello"
    assert s.send(answer(ask), at=0).status_code == 202
    until(s, 0, "learned", ["file:///r"])
    return s, got


@pytest.mark.parametrize("copy_on_b", ["before the GET", "after the GET"])
def test_what_a_process_sends_on_its_own_after_the_get_opened_on_the_other_reaches_it(urls, copy_on_b):
    """B's copy hears where the GET opened (on the bus), or, started later, reads it in the record."""
    with httpx.Client(timeout=30) as c:
        s, got = roots_learned_with_the_get_on_a(c, urls, copy_on_b)
        # The roots change, told to B: B asks outside any request, while the GET stream is A's.
        assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=1).status_code == 202
        said, ask = got.get(timeout=10), got.get(timeout=10)
        assert said["params"]["data"] == "hello"
        assert s.send(answer(ask, "file:///s"), at=0).status_code == 202  # through A, to B
        until(s, 1, "learned", ["file:///s"])
        assert got.empty(), got.get()


@pytest.mark.parametrize("answers_at", [(0, 1), (1, 0), (0, 0), (1, 1)], ids=["own", "crossed", "both-A", "both-B"])
def test_requests_both_processes_have_outstanding_each_get_their_own_answer(urls, answers_at):
    """A's roots/list and B's, outstanding at once on the one GET stream, carry different ids (a
    request id is unique within the session, JSON-RPC 2.0 §4): each answer reaches the copy that
    asked, whichever process it is POSTed to."""
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[:1], capabilities=ROOTS)  # on A: A asks
        s.urls = urls
        until(s, 0, "asked", True)
        got = open_get(c, urls[0], s.headers)
        said, ask_a = got.get(timeout=10), got.get(timeout=10)
        assert said["params"]["data"] == "hello"
        assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=1).status_code == 202
        said, ask_b = got.get(timeout=10), got.get(timeout=10)  # B asks, A's still unanswered
        assert said["params"]["data"] == "hello"
        assert ask_a["id"] != ask_b["id"], (ask_a, ask_b)
        at_a, at_b = answers_at
        assert s.send(answer(ask_b, "file:///b"), at=at_b).status_code == 202
        assert s.send(answer(ask_a, "file:///a"), at=at_a).status_code == 202
        until(s, 0, "learned", ["file:///a"])
        until(s, 1, "learned", ["file:///b"])
        assert got.empty(), got.get()


@pytest.mark.parametrize("copy_on_b", [True, False], ids=["copy on B", "no copy on B"])
def test_an_extension_notification_from_either_process_reaches_the_get_stream_once(urls, copy_on_b):
    """``notify_extension`` on B reaches the client whose GET stream is on A, once, whether or not
    B has a copy of its session: it is told to every copy, as a list change is."""
    pushed = {"jsonrpc": "2.0", "method": "acme/pushed", "params": {"x": 1}}
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[:1], capabilities={"extensions": {"com.acme/push": {}}})  # on A
        s.urls = urls
        assert s.post("resources/subscribe", {"uri": "memo://a"}, at=0).status_code == 200
        if copy_on_b:
            assert s.call("asked", at=1)["structuredContent"]["result"] is False
        got = open_get(c, urls[0], s.headers)
        other = RoundRobin(c, urls)  # another session (no extension), whose calls tell s
        for at in (1, 0):
            other.call("push", at=at)
            assert got.get(timeout=10) == pushed
            other.call("touch", at=at, uri="memo://a")  # a marker: the next message (no second acme/pushed)
            assert got.get(timeout=10)["method"] == "notifications/resources/updated"
        assert got.empty(), got.get()


def test_an_extension_notification_with_what_the_wire_encodes_reaches_the_other_process(urls):
    """``notify_extension``'s params are encoded as on the wire (a datetime as an RFC 3339
    string) on the bus too: told on B, it reaches the GET stream on A, and the tool succeeds."""
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[:1], capabilities={"extensions": {"com.acme/push": {}}})  # on A
        s.urls = urls
        assert s.post("resources/subscribe", {"uri": "memo://a"}, at=0).status_code == 200
        got = open_get(c, urls[0], s.headers)
        other = RoundRobin(c, urls)
        told = other.call("push_when", at=1)
        assert not told.get("isError"), told
        assert got.get(timeout=10) == {
            "jsonrpc": "2.0",
            "method": "acme/pushed",
            "params": {"at": "2026-12-01T00:00:00Z"},
        }
        other.call("touch", at=1, uri="memo://a")  # a marker: the next message (no second acme/pushed)
        assert got.get(timeout=10)["method"] == "notifications/resources/updated"
        assert got.empty(), got.get()


@pytest.mark.parametrize("change", ["list change", "extension notification"])
def test_a_change_told_before_the_first_get_reaches_a_get_on_a_process_that_had_no_copy(urls, change):
    """Told to every copy while only B had one: the copy A starts for the GET (from the record)
    was not told it, so B's copy hands it over; once (the copy on A sends each change once)."""
    ext = {"extensions": {"com.acme/push": {}}}
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[1:], capabilities=ext)  # initialize and notifications/initialized on B
        s.urls = urls
        assert s.post("resources/subscribe", {"uri": "memo://a"}, at=1).status_code == 200
        other = RoundRobin(c, urls)  # another session, whose calls tell s only on its GET stream
        if change == "list change":
            other.call("grow", at=1, name="sprout")  # tools/list_changed, held by B's copy (A has none)
            want = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        else:
            other.call("push", at=1)
            want = {"jsonrpc": "2.0", "method": "acme/pushed", "params": {"x": 1}}
        got = open_get(c, urls[0], s.headers)  # A: its copy starts now
        assert got.get(timeout=10) == want
        other.call("touch", at=0, uri="memo://a")  # a marker: the next message (no second)
        assert got.get(timeout=10)["method"] == "notifications/resources/updated"
        assert got.empty(), got.get()


def test_each_process_names_its_requests_with_a_tag_of_64_random_bits(urls):
    """A process's tag prefixes its copies' request ids and stream ids (unique within the session:
    JSON-RPC 2.0 §4), so two processes must never draw the same: 16 hex digits (as the bus's node)."""
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls[:1], capabilities=ROOTS)
        s.urls = urls
        until(s, 0, "asked", True)
        got = open_get(c, urls[0], s.headers)
        got.get(timeout=10)
        ask_a = got.get(timeout=10)
        assert s.send(answer(ask_a), at=0).status_code == 202
        assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=1).status_code == 202
        got.get(timeout=10)
        ask_b = got.get(timeout=10)
        tags = [ask["id"].partition(".")[0] for ask in (ask_a, ask_b)]
        assert all(len(t) >= 16 and int(t, 16) >= 0 for t in tags), tags
        assert tags[0] != tags[1], tags
        assert s.send(answer(ask_b), at=0).status_code == 202


def sse(lines: Iterator[bytes]) -> Iterator[tuple[str, dict]]:
    """(event id, message) of each message event of an SSE response read line by line."""
    last = ""
    for line in lines:
        if line.startswith(b"id:"):
            last = line[3:].strip().decode()
        elif line.startswith(b"data:") and line[5:].strip():
            yield last, json.loads(line[5:])


def a_copy_dropped_on_a(c: httpx.Client, at: list[str]) -> tuple[RoundRobin, str, dict]:
    """A session whose GET stream was on A (where A asked roots/list, answered) and was hung up;
    then used on B until A dropped its copy, idle there for ``session_timeout`` (2 s; reaped
    every 0.5 s). Returns the session, the last event id its GET stream got, and A's roots/list."""
    s = RoundRobin(c, at[:1], capabilities=ROOTS)  # on A
    s.urls = at
    until(s, 0, "asked", True)
    url = httpx.URL(at[0])
    with socket.create_connection((url.host, url.port), timeout=10) as g:  # the first GET stream, on A
        head = {"host": f"{url.host}:{url.port}", "accept": "text/event-stream", **s.headers}
        request = f"GET {url.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
        g.sendall(request.encode())
        events = sse(g.makefile("rb"))
        (_, said), (last, ask) = next(events), next(events)
        assert said["params"]["data"] == "hello"
        assert s.send(answer(ask), at=0).status_code == 202
        until(s, 0, "learned", ["file:///r"])
        g.shutdown(socket.SHUT_RDWR)  # the client hangs up its GET stream
    quiet = time.monotonic() + 2 + 1.5  # A's copy idle for session_timeout, then reaped
    while time.monotonic() < quiet:
        assert s.call("learned", at=1)["structuredContent"]["result"] == []  # the session lives on B
        time.sleep(0.25)
    return s, last, ask


def test_what_a_process_sends_for_the_get_stream_reaches_it_after_that_process_dropped_its_idle_copy(redis_url):
    """The client's GET stream was on A and closed; A dropped its copy, idle there for
    ``session_timeout`` (2 s) while the client went on with B. What B sends on its own goes to A
    (where the record says the GET stream is): A starts a copy from the record and holds it for
    the GET, as a copy started there for a request would, and the client gets it when it resumes
    the GET stream (as it would have from A's copy, had it stayed: the event store keeps what a
    hung-up GET stream is sent, for Last-Event-ID)."""
    urls = two(redis_url, "2")
    with contextlib.closing(urls) as running, httpx.Client(timeout=30) as c:
        at = next(running)
        s, last, _ = a_copy_dropped_on_a(c, at)
        assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=1).status_code == 202
        until(s, 1, "asked", True)
        got = open_get(c, at[0], {**s.headers, "last-event-id": last})  # A again, resumed where it was
        said, ask = got.get(timeout=10), got.get(timeout=10)
        assert said["params"]["data"] == "hello"
        assert s.send(answer(ask, "file:///s"), at=1).status_code == 202
        until(s, 1, "learned", ["file:///s"])
        assert got.empty(), got.get()


def test_a_copy_started_again_on_a_process_never_reuses_the_ids_of_the_one_before(redis_url):
    """A request id is never used twice by the server within a session (MCP basic: "MUST NOT have
    been previously used by the requestor within the same session"), nor a stream id (the event
    store keeps a stream's events by it): a copy dropped on A and started again there numbers its
    requests and streams apart from the dropped one, though both have A's tag."""
    urls = two(redis_url, "2")
    with contextlib.closing(urls) as running, httpx.Client(timeout=30) as c:
        at = next(running)
        s, _, before = a_copy_dropped_on_a(c, at)
        assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=0).status_code == 202
        got = open_get(c, at[0], s.headers)  # A's new copy asked (held for this GET)
        said, ask = got.get(timeout=10), got.get(timeout=10)
        assert said["params"]["data"] == "hello"
        assert ask["id"] != before["id"], (ask, before)
        assert ask["id"].partition(".")[0] == before["id"].partition(".")[0]  # the same process
        assert s.send(answer(ask, "file:///s"), at=1).status_code == 202  # through B, to A
        until(s, 0, "learned", ["file:///s"])


def read_get(url: str, headers: dict, go: threading.Barrier, got: queue.Queue, done: Callable[[], object]) -> None:
    """Open the session's GET stream once ``go`` lets every reader go; its messages to ``got``,
    then ``done()`` when it ends."""
    with httpx.Client(timeout=30) as own:
        go.wait()
        get = {**headers, "accept": "text/event-stream"}
        with contextlib.suppress(httpx.HTTPError), own.stream("GET", url, headers=get) as r:
            for line in r.iter_lines():
                if line.startswith("data:") and line[5:].strip():
                    got.put(json.loads(line[5:]))
    done()


def test_two_get_streams_opened_at_once_on_two_processes_leave_one_open(urls):
    """Two GETs of one session reach A and B at once: each process hears of the other's (the
    bus), and one stream must stay (the one the record names: it opened last), not both end
    (the client would lose what comes meanwhile). Repeated: the two race in either order."""
    with httpx.Client(timeout=30) as c:
        other = RoundRobin(c, urls)  # another session, whose calls tell each s
        for _ in range(8):
            s = RoundRobin(c, urls[:1])
            s.urls = urls
            assert s.post("resources/subscribe", {"uri": "memo://a"}, at=0).status_code == 200
            got: list[queue.Queue] = [queue.Queue(), queue.Queue()]
            ended: queue.Queue = queue.Queue()
            go = threading.Barrier(2)
            for i in (0, 1):
                args = (urls[i], s.headers, go, got[i], functools.partial(ended.put, i))
                threading.Thread(target=read_get, args=args, daemon=True).start()
            stays = 1 - ended.get(timeout=10)  # one ends
            other.call("touch", at=stays, uri="memo://a")
            assert got[stays].get(timeout=10)["method"] == "notifications/resources/updated"
            assert ended.empty(), "both GET streams ended"
            assert c.delete(urls[0], headers=s.headers).status_code == 200
            assert ended.get(timeout=10) == stays


@pytest.mark.parametrize("get_on_b", ["at once", "once B found A dead"])
@pytest.mark.parametrize("copy_on_b", ["before the GET", "after the GET"])
def test_what_a_process_sends_for_the_get_stream_of_a_process_killed_reaches_the_next_get(
    redis_url, copy_on_b, get_on_b
):
    """The GET stream is on A, and A is killed (kill -9: no goodbye; the record still names it).
    What B sends on its own meanwhile (a log message and roots/list, on a roots change) is not
    lost with A: B's copy finds A without its lease (1 s here) and holds it for the client's
    next GET, here on B, opened at once or once B found A dead (its INFO log says so), and B's
    request waits for its answer as usual."""
    ports = [free_port() for _ in range(2)]
    procs = [
        subprocess.Popen([*SERVER, str(p), redis_url, "1800", "1"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
        for p in ports
    ]  # fmt: skip
    logs: queue.Queue = queue.Queue()  # B's stderr
    threading.Thread(target=lambda: [logs.put(line) for line in procs[1].stderr], daemon=True).start()
    threading.Thread(target=lambda: [None for _ in procs[0].stderr], daemon=True).start()
    try:
        for p, proc in zip(ports, procs, strict=True):
            wait_port(p, proc=proc)
        urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
        with httpx.Client(timeout=30) as c:
            s, _ = roots_learned_with_the_get_on_a(c, urls, copy_on_b)
            procs[0].kill()
            procs[0].wait(10)
            assert s.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, at=1).status_code == 202
            until(s, 1, "asked", True)  # B sent its log message and roots/list for the GET stream
            if get_on_b == "once B found A dead":
                while "died;" not in (line := logs.get(timeout=10)):
                    pass
                assert "2 message(s) sent again" in line, line
            got = open_get(c, urls[1], s.headers)  # the client's next GET, on B
            said, ask = got.get(timeout=10), got.get(timeout=10)
            assert said["params"]["data"] == "hello"
            assert s.send(answer(ask, "file:///s"), at=1).status_code == 202
            until(s, 1, "learned", ["file:///s"])
            assert got.empty(), got.get()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)
