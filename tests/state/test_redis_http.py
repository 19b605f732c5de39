"""The HTTP server on a real redis-server: Redis down at start, Redis restarted mid-session
(503 with Retry-After while it is down, nothing hangs, service resumes by itself), the
readiness probe. The server is a real process (``tests/faults/event_store_server.py``)."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from tests.faults.test_event_store import RESULT, SESSION_BYTES, TOTAL_BYTES, Session
from tests.support.http import free_port, wait_port
from tests.support.redis import RedisServer

SERVER = [sys.executable, "tests/faults/event_store_server.py"]


def wait_ready(c: httpx.Client, base: str, within: float = 10.0) -> None:
    """Poll /readyz as a load balancer does, until 200 (Redis reachable, the bus listening)."""
    deadline = time.monotonic() + within
    while c.get(base + "/readyz").status_code != 200:
        assert time.monotonic() < deadline, f"not ready within {within} s"
        time.sleep(0.05)


def test_redis_down_at_start_is_one_line_and_exit_status_1():
    dead = f"redis://127.0.0.1:{free_port()}/0"
    proc = subprocess.run(
        [*SERVER, str(free_port()), str(SESSION_BYTES), str(TOTAL_BYTES), dead],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"mcpio: cannot reach Redis at {dead}; start it or fix --redis"]


@pytest.fixture
def own_redis():
    server = RedisServer()  # its own: this test restarts it
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_redis_restarted_mid_session_503_then_service_resumes(own_redis):
    port = free_port()
    proc = subprocess.Popen(
        [*SERVER, str(port), str(SESSION_BYTES), str(TOTAL_BYTES), own_redis.url], stdin=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_port(port, proc=proc)
        with httpx.Client(timeout=30) as c:
            assert c.get(base + "/healthz").status_code == 200 and c.get(base + "/readyz").status_code == 200
            s = Session(c, base + "/mcp")
            events, _ = s.call("abandoned", n=RESULT)
            primed = events[0]["id"]
            deadline = time.monotonic() + 10  # the abandoned answer is stored after its stream ended
            while s.stats()["bytes"] <= RESULT:
                assert time.monotonic() < deadline, "the waiting answer never reached Redis"
                time.sleep(0.02)

            own_redis.stop()
            ready = c.get(base + "/readyz")
            assert ready.status_code == 503 and ready.headers["retry-after"] == "2"
            assert c.get(base + "/healthz").status_code == 200  # the process itself is fine
            resume = s.resume(primed)
            assert resume.status_code == 503 and resume.headers["retry-after"] == "2"
            assert "state store is unavailable (Redis is unreachable" in resume.json()["error"]["message"]
            # A call still gets its answer (its events just cannot be resumed).
            _, result = s.call("big", n=10)
            assert result["content"][0]["text"] == "b" * 10

            own_redis.start()  # empty: Redis ran without persistence
            wait_ready(c, base)  # by itself: nobody restarts the server
            assert s.resume(primed).status_code == 404  # what Redis held is gone, and said so
            events, result = s.call("big", n=10)
            assert result["content"][0]["text"] == "b" * 10 and events[0]["id"]
            assert s.stats()["bytes"] < 4096
    finally:
        proc.terminate()
        proc.wait(10)


def test_mcpio_run_with_redis(redis_url, tmp_path):
    """`mcpio run -t http --redis URL`: down, one line and exit 1; up, it serves, ready."""
    app = tmp_path / "srv.py"
    app.write_text(
        "from mcpio import Server\nserver = Server('x')\n\n@server.tool\ndef hi() -> str:\n    return 'hi'\n"
    )
    cli = [sys.executable, "-m", "mcpio", "run", "-t", "http", str(app)]
    closed = free_port()
    for dead in (f"redis://127.0.0.1:{closed}/0?password=secret", f"redis://:secret@127.0.0.1:{closed}/0"):
        down = subprocess.run(
            [*cli, "--port", str(free_port()), "--redis", dead],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert down.returncode == 1 and "secret" not in down.stderr, down.stderr
        shown = f"redis://127.0.0.1:{closed}/0" + ("?password=[redacted]" if "?" in dead else "")
        assert down.stderr.strip().splitlines() == [f"mcpio: cannot reach Redis at {shown}; start it or fix --redis"]
    port = free_port()
    proc = subprocess.Popen(
        [*cli, "--port", str(port), "--redis", redis_url], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port, proc=proc)
        with httpx.Client(timeout=30) as c:
            assert c.get(f"http://127.0.0.1:{port}/readyz").status_code == 200
            s = Session(c, f"http://127.0.0.1:{port}/mcp")
            assert s.call("hi")[1]["content"][0]["text"] == "hi"
    finally:
        proc.terminate()
        proc.wait(10)
