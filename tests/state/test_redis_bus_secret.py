"""The Redis bus against other clients of the same Redis server (issue 32, item 9). Pub/sub
ignores database numbers: a client of database 1 hears and publishes on the channels of
database 0. Two real server processes (``shared_server.py``) share database 0; an attacker on
database 1 ``PSUBSCRIBE``s to everything, lists the channels, forges messages, and replays what
it captured. It must see no session id or record, and nothing it publishes may be obeyed (the
dropped messages are logged once per process). A process with another secret does not share the
bus either."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.support.http import free_port, wait_port

SERVER = [sys.executable, "tests/state/shared_server.py"]
VERSION = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream"}
INIT = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bus-victim", "version": "1"}}
FRAME = "mcpio/session-frame"


class Eavesdropper:
    """A client of another database that hears every message of the Redis server."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe("*")
        self.heard: list[tuple[bytes, bytes]] = []  # (channel, data)
        self._stop = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop:
            m = self.pubsub.get_message(timeout=0.1)
            if m is not None and m["type"] == "pmessage":
                self.heard.append((m["channel"], m["data"]))

    def channels(self) -> list[bytes]:
        return list(self.client.pubsub_channels("*"))

    def inject(self, data: bytes | str) -> None:
        """Publish ``data`` on every channel anyone listens to, and on the default bus name."""
        for channel in {*self.channels(), b"mcpio:bus"}:
            self.client.publish(channel, data)

    def close(self) -> None:
        self._stop = True
        self._thread.join(5)
        self.pubsub.close()
        self.client.close()


@pytest.fixture
def two(redis_url: str, tmp_path: Path) -> Iterator[tuple[list[str], list[Path]]]:
    procs, urls, logs = [], [], []
    try:
        for n in range(2):
            port = free_port()
            log = tmp_path / f"server{n}.log"
            with log.open("wb") as err:
                procs.append(subprocess.Popen([*SERVER, str(port), redis_url], stdin=subprocess.DEVNULL, stderr=err))
            wait_port(port, proc=procs[-1])
            urls.append(f"http://127.0.0.1:{port}/mcp")
            logs.append(log)
        with httpx.Client() as c:  # both buses subscribed
            for url in urls:
                deadline = time.monotonic() + 10
                while c.get(url.replace("/mcp", "/readyz")).status_code != 200:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
        yield urls, logs
    finally:
        for p in procs:
            p.terminate()
            p.wait(30)


def rpc(i: int, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params or {}}


def sse(r: httpx.Response) -> Iterator[dict]:
    data = ""
    for line in r.iter_lines():
        if line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield json.loads(data)
            data = ""


def cancelled(c: httpx.Client, url: str, headers: dict, i: int) -> list[str]:
    """The ids of the ``slow`` calls cancelled on that process."""
    r = c.post(url, json=rpc(i, "tools/call", {"name": "cancelled"}), headers=headers)
    answers = [r.json()] if r.headers["content-type"].startswith("application/json") else list(sse(r))
    result = next(m for m in answers if "result" in m)["result"]
    return json.loads(result["content"][0]["text"])


def test_another_database_neither_reads_the_bus_nor_is_obeyed(redis_url: str, two) -> None:
    urls, logs = two
    other_db = redis_url.rsplit("/", 1)[0] + "/1"
    spy = Eavesdropper(other_db)
    try:
        with httpx.Client(timeout=30) as c:
            r = c.post(urls[0], json=rpc(0, "initialize", INIT), headers=ACCEPT)
            sid = r.headers["mcp-session-id"]
            h = {**ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": VERSION}
            c.post(urls[0], json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
            # Traffic on the bus: a record change (setLevel), and a cancellation POSTed to the
            # process that does not run the request (carried to the one that does, on the bus).
            assert "result" in c.post(urls[1], json=rpc(1, "logging/setLevel", {"level": "error"}), headers=h).text
            slow = rpc(
                7, "tools/call", {"name": "slow", "arguments": {"steps": 1, "wait": 30}, "_meta": {"progressToken": 1}}
            )
            with c.stream("POST", urls[0], json=slow, headers=h) as r:
                messages = sse(r)
                assert next(messages)["method"] == "notifications/progress"  # running on process 0
                heard = len(spy.heard)
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                assert c.post(urls[1], json=cancel, headers=h).status_code == 202
                deadline = time.monotonic() + 10
                while cancelled(c, urls[0], h, 2) != ["7"]:  # obeyed: it came from the client, through process 1
                    assert time.monotonic() < deadline, "the real cancellation never reached process 0"
                    time.sleep(0.05)
            captured = [data for _, data in spy.heard[heard:]]  # among them, the sealed cancellation
            assert captured

            # The eavesdropper on database 1 heard every message, and learnt nothing from any.
            time.sleep(0.3)
            for channel, data in spy.heard:
                assert sid.encode() not in channel and sid.encode() not in data
                assert b"bus-victim" not in data and b"setLevel" not in data and b'"lvl"' not in data

            # Forged messages (on every channel it can list, and the old bus name) and replayed
            # ones are not obeyed: another call is neither cancelled nor is its session ended.
            again = rpc(8, "tools/call", {**slow["params"], "arguments": {"steps": 1, "wait": 2}})
            with c.stream("POST", urls[0], json=again, headers=h) as r:
                messages = sse(r)
                assert next(messages)["method"] == "notifications/progress"
                forged = {**cancel, "params": {"requestId": 8}}
                spy.inject(json.dumps({"type": FRAME, "sid": sid, "frame": json.dumps(forged), "from": "x"}))
                spy.inject(json.dumps({"type": "mcpio/session-ended", "sid": sid, "from": "x"}))
                for data in captured:
                    spy.inject(data)  # replays of what the processes sealed
                rest = list(messages)
            assert rest and rest[-1]["id"] == 8 and rest[-1]["result"]["content"][0]["text"] == "done"
            assert cancelled(c, urls[0], h, 3) == ["7"]  # the first, real one only
            assert c.post(urls[0], json=rpc(4, "tools/call", {"name": "where"}), headers=h).status_code == 200
    finally:
        spy.close()
    for log in logs:  # dropped and said so, once per process, however many came
        text = log.read_text()
        assert text.count("a message on the Redis bus was dropped") == 1, text


def test_processes_with_different_secrets_do_not_share_a_bus(redis_url: str) -> None:
    from mcpio._state import RedisState

    async def go() -> None:
        a = RedisState(redis_url, secret="a" * 32)
        b = RedisState(redis_url, secret="b" * 32)
        c = RedisState(redis_url, secret="a" * 32)
        got: dict[str, list[dict]] = {"b": [], "c": []}
        arrived = asyncio.Event()

        async def on_b(m: dict) -> None:
            got["b"].append(m)

        async def on_c(m: dict) -> None:
            got["c"].append(m)
            arrived.set()

        b.on_message(on_b)
        c.on_message(on_c)
        for s in (a, b, c):
            await s.start()
        spy = Eavesdropper(redis_url.rsplit("/", 1)[0] + "/1")
        try:
            await a.publish({"type": "hello"})
            async with asyncio.timeout(10):
                await arrived.wait()
            await asyncio.sleep(0.2)
            assert [m["type"] for m in got["c"]] == ["hello"]  # the same secret: one bus
            assert got["b"] == []  # another secret: another channel, nothing heard
            [(channel, sealed)] = spy.heard
            assert b"hello" not in sealed and channel != b"mcpio:bus"
            spy.client.publish(channel, sealed)  # a replay, byte for byte
            spy.client.publish(channel, json.dumps({"type": "forged", "from": "x"}))
            spy.client.publish(channel, sealed[:-1] + bytes([sealed[-1] ^ 1]))  # a tag that does not match
            async with asyncio.timeout(10):
                while c.bus_dropped < 3 or a.bus_dropped < 2:
                    await asyncio.sleep(0.02)
            assert [m["type"] for m in got["c"]] == ["hello"] and got["b"] == []
            # a: its own message, replayed, is ignored as its own ones are (not counted)
            assert (a.bus_dropped, b.bus_dropped, c.bus_dropped) == (2, 0, 3)
        finally:
            spy.close()
            for s in (a, b, c):
                await s.aclose()

    asyncio.run(go())
    with pytest.raises(ValueError, match="at least 16 bytes"):
        RedisState(redis_url, secret="short")


def test_workers_get_the_secret_from_the_environment_not_the_command_line(redis_url: str) -> None:
    """``mcpio run --workers 2 --redis-secret-env VAR``: both workers on the one channel of that
    secret (no key in Redis), and the secret on no process's command line (readable by every
    local user in /proc)."""
    secret = "s3cr3t-" + "7" * 30
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", "tests/state/scale_server.py", "-t", "http", "--port", str(port)]
        + ["--redis", redis_url, "--workers", "2", "--redis-secret-env", "MCPIO_TEST_BUS_SECRET"],
        stdin=subprocess.DEVNULL,
        env={**os.environ, "MCPIO_TEST_BUS_SECRET": secret},
    )
    db = redis.Redis.from_url(redis_url)
    try:
        wait_port(port, proc=proc)
        deadline = time.monotonic() + 20
        while not (subscribed := list(db.pubsub_channels("mcpio:bus:*"))) or db.pubsub_numsub(*subscribed)[0][1] != 2:
            assert time.monotonic() < deadline, subscribed
            time.sleep(0.05)
        assert len(subscribed) == 1 and db.keys("mcpio:bus*") == []  # one channel, the secret's
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            pids = [proc.pid, *map(int, f.read().split())]
        assert len(pids) == 3
        for pid in pids:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            assert b"MCPIO_TEST_BUS_SECRET" in cmdline or pid != proc.pid
            assert secret.encode() not in cmdline
    finally:
        proc.terminate()
        proc.wait(30)
        db.close()


def test_a_missing_or_short_bus_secret_is_a_usage_error(redis_url: str) -> None:
    for env in ({}, {"MCPIO_TEST_BUS_SECRET": "short"}):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcpio",
                "run",
                "tests/state/scale_server.py",
                "-t",
                "http",
                "--port",
                str(free_port()),
            ]
            + ["--redis", redis_url, "--redis-secret-env", "MCPIO_TEST_BUS_SECRET"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != "MCPIO_TEST_BUS_SECRET"} | env,
        )
        assert proc.returncode == 2, proc.stderr
        assert (
            "--redis-secret-env MCPIO_TEST_BUS_SECRET: the environment variable MCPIO_TEST_BUS_SECRET must hold"
            in proc.stderr
        )
        assert "short" not in proc.stderr  # the secret (even a bad one) is never echoed
