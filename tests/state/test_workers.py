"""``mcpio run -t http --workers N --redis URL``: N real worker processes on one port, a dead
worker restarted by the supervisor, SIGTERM and Ctrl-C stopping every process (no orphans),
and the usage error without ``--redis``."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.http.conftest import modern, modern_headers
from tests.support.http import free_port, wait_port

MCPIO = [sys.executable, "-m", "mcpio"]
APP = "tests/state/scale_server.py"


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = {int(x) for x in f.read().split()}
    except FileNotFoundError:
        return set()
    return {k for k in kids if alive(k)}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, not yet reaped
    except FileNotFoundError:
        return False


def wait_until(check, what: str, tries: int = 400) -> None:
    """Poll ``check()`` (a bounded number of looks, 25 ms apart) until it holds."""
    for _ in range(tries):
        if check():
            return
        time.sleep(0.025)
    raise AssertionError(f"never happened: {what}")


def start(port: int, redis_url: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*MCPIO, "run", APP, "-t", "http", "--port", str(port), "--redis", redis_url, *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: Ctrl-C is sent to the group, as a terminal does
    )


def call_pid(url: str) -> int:
    with httpx.Client(timeout=30) as c:  # a new connection each time: the kernel picks a worker
        r = c.post(url, headers=modern_headers("tools/call", "pid"), json=modern(1, "tools/call", {"name": "pid"}))
    assert r.status_code == 200, r.text
    return int(r.json()["result"]["structuredContent"]["result"])


def test_two_workers_serve_one_port_a_killed_one_is_restarted_and_sigterm_stops_all(redis_url):
    port = free_port()
    proc = start(port, redis_url, "--workers", "2")
    try:
        wait_port(port, proc=proc)
        wait_until(lambda: len(children(proc.pid)) == 2, "two workers")
        first = children(proc.pid)
        url = f"http://127.0.0.1:{port}/mcp"
        assert call_pid(url) in first  # a worker answers, not the supervisor
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(children(proc.pid)) == 2 and victim not in children(proc.pid), "a new worker")
        second = children(proc.pid)
        assert len(second - first) == 1
        wait_until(lambda: call_pid(url) in second, "the port served after the restart", tries=20)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert f"worker 0 (pid {victim}) exited" in err or f"worker 1 (pid {victim}) exited" in err
    assert "restarting it" in err
    assert not [p for p in first | second if alive(p)]  # no orphans


@pytest.mark.parametrize("when", ["serving", "starting"])
def test_ctrl_c_stops_the_supervisor_and_every_worker(redis_url, when):
    """Ctrl-C reaches the whole process group: the supervisor turns it into one SIGTERM per
    worker, which drains; a worker must not act on the SIGINT itself (a KeyboardInterrupt
    wherever it was, or uvicorn's "second signal" skipping the drain), even while starting."""
    port = free_port()
    proc = start(port, redis_url, "--workers", "3")
    try:
        wait_until(lambda: len(children(proc.pid)) == 3, "three workers")
        workers = children(proc.pid)
        if when == "serving":  # every worker has answered a call (new connections spread over them)
            wait_port(port, proc=proc)
            url = f"http://127.0.0.1:{port}/mcp"
            answered: set[int] = set()
            wait_until(lambda: answered.add(call_pid(url)) or answered == workers, "all three serving", tries=300)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "killing it" not in err, err  # every worker stopped by itself
    if when == "serving":
        assert err.count("mcpio: draining") == 3, err  # each worker drained: no forced exit
    assert not [p for p in workers if alive(p)]


def test_workers_without_redis_is_a_one_line_usage_error():
    proc = subprocess.run(
        [*MCPIO, "run", APP, "-t", "http", "--port", str(free_port()), "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "--workers 2 needs --redis" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_server_run_refuses_workers_without_a_shared_state():
    from mcpio import Server
    from mcpio._state import MemoryState

    with pytest.raises(ValueError, match="needs redis="):
        Server("x").run("http", port=free_port(), workers=2)
    with pytest.raises(ValueError, match="needs redis="):  # in-process state is not shared either
        Server("x").run("http", port=free_port(), workers=2, state=MemoryState())


def test_workers_stop_when_the_supervisor_is_killed(redis_url):
    port = free_port()
    proc = start(port, redis_url, "--workers", "2")
    try:
        wait_port(port, proc=proc)
        wait_until(lambda: len(children(proc.pid)) == 2, "two workers")
        workers = children(proc.pid)
        proc.kill()  # kill -9: no chance to stop its workers itself
        proc.wait()
        wait_until(lambda: not [p for p in workers if alive(p)], "the workers gone (PR_SET_PDEATHSIG)")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def test_shared_socket_answers_without_nagle_delay() -> None:
    """The workers' shared listening socket gives asyncio what it needs to set TCP_NODELAY on
    every connection it accepts (its proto must say TCP): without it Nagle and the client's
    delayed ACK held each keep-alive answer ~40 ms, and 2 workers served a fifth of 1 worker's
    calls/s (benchmarks/scale.py)."""
    import asyncio
    import socket

    from mcpio._server._workers import listen

    async def main() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        sock = listen("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            _r, w = await asyncio.open_connection(*sock.getsockname())
            nodelay = await asyncio.wait_for(accepted, 10)
            w.close()
        return nodelay

    assert asyncio.run(main()) != 0
