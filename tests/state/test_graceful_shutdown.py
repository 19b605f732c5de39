"""Graceful shutdown of a real ``mcpio run -t http --redis`` process on SIGTERM: it stops
accepting, ``/readyz`` answers 503 to a load balancer's kept-alive connection, the idle GET
stream is handed over at once (it ends with the SSE ``retry:`` field, so the client resumes
elsewhere with Last-Event-ID), a tool call in flight finishes within ``--grace`` and gets its
answer, and the process exits 0. A call that outlasts the grace period has its stream handed
over the same way, and the process still exits."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading

import httpx
import pytest

from tests.faults.test_event_store import Session
from tests.support.http import free_port, wait_port

MCPIO = [sys.executable, "-m", "mcpio"]
APP = "tests/state/scale_server.py"


class Reader:
    """Reads one streamed HTTP response's lines in a thread (``lines``; ``done`` once it ended)."""

    def __init__(self, method: str, url: str, headers: dict[str, str], body: dict | None = None) -> None:
        self.lines: list[str] = []
        self.status = 0
        self.first_event = threading.Event()
        self.started = threading.Event()  # the response began (status known)
        self.primed = threading.Event()  # an event id arrived
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(method, url, headers, body), daemon=True)
        self.thread.start()

    def _read(self, method: str, url: str, headers: dict[str, str], body: dict | None) -> None:
        try:
            with httpx.Client(timeout=60) as c, c.stream(method, url, headers=headers, json=body) as r:
                self.status = r.status_code
                self.started.set()
                for line in r.iter_lines():
                    self.lines.append(line)
                    if line.startswith("id:"):
                        self.primed.set()
                    if line.startswith("data:") and line[5:].strip():
                        self.first_event.set()
        except httpx.HTTPError as exc:  # the stream ended abruptly: recorded, the test says if it may
            self.lines.append(f"!{type(exc).__name__}")
        finally:
            self.first_event.set()
            self.started.set()
            self.primed.set()
            self.done.set()

    def last_id(self) -> str:
        return [line[3:].strip() for line in self.lines if line.startswith("id:")][-1]

    def messages(self) -> list[dict]:
        return [json.loads(line[5:]) for line in self.lines if line.startswith("data:") and line[5:].strip()]


def readyz(sock: socket.socket) -> int:
    """GET /readyz on an open keep-alive connection (as a load balancer probes); the status."""
    sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "the connection closed"
        head += chunk
    length = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")][0].split(b":")[1])
    body = head.split(b"\r\n\r\n", 1)[1]
    while len(body) < length:
        body += sock.recv(4096)
    return int(head.split(b" ", 2)[1])


@pytest.fixture
def serve(redis_url, tmp_path):
    procs: list[subprocess.Popen] = []

    def start(grace: str, *options: str) -> tuple[subprocess.Popen, int]:
        port = free_port()
        proc = subprocess.Popen(
            [*MCPIO, "run", APP, "-t", "http", "--port", str(port), "--redis", redis_url, "--grace", grace, *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        wait_port(port, proc=proc)
        assert proc.stderr is not None and proc.stderr.readline().startswith("serving scale")
        return proc, port

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def call_body(rid: int, path: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "wait_for", "arguments": {"path": path}, "_meta": {"progressToken": "p"}},
    }


@pytest.mark.parametrize("options", [(), ("--otel",)], ids=["plain", "telemetry"])
def test_sigterm_drains_hands_streams_over_and_lets_the_call_in_flight_finish(serve, tmp_path, options):
    """With telemetry the app is wrapped (``_otel._asgi.TracedApp``): the app under it drains."""
    proc, port = serve("60", *options)
    url = f"http://127.0.0.1:{port}/mcp"
    flag = tmp_path / "release"
    with httpx.Client(timeout=30) as c:
        s = Session(c, url)
    sse = {**s.headers, "accept": "text/event-stream"}
    get = Reader("GET", url, sse)
    assert get.primed.wait(30) and get.status == 200  # the GET stream is open (its priming event came)
    both = {**s.headers, "accept": "application/json, text/event-stream"}
    call = Reader("POST", url, both, call_body(100, str(flag)))
    assert call.first_event.wait(30) and call.messages()[0]["method"] == "notifications/progress"
    probe = socket.create_connection(("127.0.0.1", port))
    try:
        assert readyz(probe) == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.stderr is not None
        for line in proc.stderr:  # the server says it started draining (other log lines may come first)
            if line.startswith("mcpio: draining"):
                break
        else:
            raise AssertionError("the server never said it was draining")
        assert readyz(probe) == 503  # taken out of rotation while it drains ...
        assert probe.recv(1) == b""  # ... and a kept-alive connection carries no more requests
        assert get.done.wait(30)  # the idle GET stream was handed over at once ...
        assert get.status == 200 and any(line.startswith("retry:") for line in get.lines)  # ... resumable
        assert any(line.startswith("id:") for line in get.lines)
        with pytest.raises(OSError):  # no new connections
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert not call.done.is_set()  # the call in flight is still being served
        flag.touch()
        assert call.done.wait(30)
    finally:
        probe.close()
    answers = call.messages()
    assert answers[-1]["id"] == 100 and answers[-1]["result"]["content"][0]["text"] == "released"
    assert [m["params"]["progress"] for m in answers if m.get("method") == "notifications/progress"] == [1, 2]
    assert proc.wait(30) == 0


def test_a_call_outlasting_the_grace_period_is_handed_over_and_the_process_exits(serve, tmp_path):
    proc, port = serve("0.2")
    url = f"http://127.0.0.1:{port}/mcp"
    with httpx.Client(timeout=30) as c:
        s = Session(c, url)
    both = {**s.headers, "accept": "application/json, text/event-stream"}
    call = Reader("POST", url, both, call_body(7, str(tmp_path / "never")))
    assert call.first_event.wait(30)
    proc.send_signal(signal.SIGTERM)
    assert call.done.wait(60)
    assert any(line.startswith("retry:") for line in call.lines)  # resume elsewhere with Last-Event-ID
    assert not [m for m in call.messages() if "result" in m]
    assert proc.wait(60) == 0
    assert proc.stderr is not None and "still running after 0.2 s" in proc.stderr.read()


def test_a_get_stream_handed_over_on_sigterm_resumes_live_on_another_process(serve):
    """SIGTERM to the process holding a legacy session's GET stream: the stream ends with
    ``retry:``; the client resumes with Last-Event-ID on another process (the session is shared
    on Redis) and receives there what happens next: a resource update notified on that process."""
    a, port_a = serve("10")
    _, port_b = serve("10")
    url_a, url_b = f"http://127.0.0.1:{port_a}/mcp", f"http://127.0.0.1:{port_b}/mcp"
    with httpx.Client(timeout=30) as c:
        s = Session(c, url_a)
        s.post("resources/subscribe", {"uri": "memo://a"})
        sse = {**s.headers, "accept": "text/event-stream"}
        first = Reader("GET", url_a, sse)
        assert first.primed.wait(30) and first.status == 200
        a.send_signal(signal.SIGTERM)
        assert first.done.wait(30) and any(line.startswith("retry:") for line in first.lines)
        resumed = Reader("GET", url_b, {**sse, "last-event-id": first.last_id()})
        assert resumed.started.wait(30) and resumed.status == 200
        toucher = Session(c, url_b)
        assert toucher.call("touch", uri="memo://a")[1]["content"][0]["text"] == "touched"
        assert resumed.first_event.wait(30)
        assert resumed.messages()[0] == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "memo://a"},
        }
        c.delete(url_b, headers=s.headers)
    assert a.wait(30) == 0
