"""Across processes, on a real redis-server: a resource update notified on one process
reaches the subscribers of every process sharing the Redis state, exactly once each."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

import httpx

from tests.faults.test_event_store import Session
from tests.state.test_redis_http import wait_ready
from tests.support.http import free_port, wait_port
from tests.support.redis import RedisServer

SERVER = [sys.executable, "tests/state/bus_server.py"]


def open_get_stream(url: str, headers: dict[str, str]) -> tuple[queue.Queue, threading.Event, threading.Thread]:
    """Read a session's GET stream in a thread; its JSON messages arrive on the queue."""
    got: queue.Queue = queue.Queue()
    opened = threading.Event()

    def read() -> None:
        with (
            httpx.Client(timeout=30) as g,
            g.stream("GET", url, headers={**headers, "accept": "text/event-stream"}) as r,
        ):
            opened.set()
            for line in r.iter_lines():
                if line.startswith("data:") and line[5:].strip():
                    got.put(json.loads(line[5:]))

    t = threading.Thread(target=read, daemon=True)
    t.start()
    assert opened.wait(10)
    return got, opened, t


def test_resource_updated_reaches_subscribers_on_every_process_also_after_a_redis_restart():
    own = RedisServer()  # its own: this test restarts it
    own.start()
    redis_url = own.url
    ports = [free_port(), free_port()]
    procs = [subprocess.Popen([*SERVER, str(p), redis_url], stdin=subprocess.DEVNULL) for p in ports]
    try:
        for p, proc in zip(ports, procs, strict=True):
            wait_port(p, proc=proc)
        urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
        with httpx.Client(timeout=30) as c:
            a, b = Session(c, urls[0]), Session(c, urls[1])
            streams = []
            for s, url in ((a, urls[0]), (b, urls[1])):
                for uri in ("memo://a", "memo://b"):
                    s.post("resources/subscribe", {"uri": uri})
                streams.append(open_get_stream(url, s.headers)[0])
            # Another session touches (a subscriber's own call would carry the update on its POST stream).
            toucher_a, toucher_b = Session(c, urls[0]), Session(c, urls[1])
            assert toucher_a.call("touch", uri="memo://a")[1]["content"][0]["text"] == "touched"  # on A
            assert toucher_b.call("touch", uri="memo://b")[1]["content"][0]["text"] == "touched"  # on B
            for got in streams:  # each process's subscriber: a then b, once each (b's marks the end)
                seen = [got.get(timeout=10) for _ in range(2)]
                assert [(m["method"], m["params"]["uri"]) for m in seen] == [
                    ("notifications/resources/updated", "memo://a"),
                    ("notifications/resources/updated", "memo://b"),
                ]
            own.restart()  # both processes resubscribe by themselves
            for p in ports:
                wait_ready(c, f"http://127.0.0.1:{p}")
            toucher_b.call("touch", uri="memo://a")
            for got in streams:
                assert got.get(timeout=10)["params"]["uri"] == "memo://a"
                assert got.empty()
            for s, url in ((a, urls[0]), (b, urls[1])):
                c.delete(url, headers=s.headers)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        own.close()


def test_the_stateless_era_does_not_touch_redis_on_a_plain_tools_call(redis_url):
    """Issue 14: 2026-07-28 requests carry everything they need; a plain tools/call on a
    Redis-backed server sends Redis no command at all (counted by Redis itself)."""
    import redis

    from tests.http.conftest import modern, modern_headers

    port = free_port()
    proc = subprocess.Popen([*SERVER, str(port), redis_url], stdin=subprocess.DEVNULL)
    watch = redis.Redis.from_url(redis_url)
    try:
        wait_port(port, proc=proc)
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=30) as c:

            def calls(n: int) -> None:
                for i in range(n):
                    r = c.post(
                        url,
                        headers=modern_headers("tools/call", "hello"),
                        json=modern(i, "tools/call", {"name": "hello", "arguments": {"name": "x"}}),
                    )
                    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "Hello, x"

            calls(1)  # warm up

            def processed() -> int:
                return int(watch.info("stats")["total_commands_processed"])

            before = processed()
            calls(50)
            after = processed()
        assert after - before == 1, after - before  # the INFO that read the count, nothing else
    finally:
        watch.close()
        proc.terminate()
        proc.wait(10)
