"""Load faults over real stdio: 1,000 calls in flight at once, cancellation storms, and a
100 MiB message each way through the mcpio client."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from collections import Counter

import pytest

from mcpio import Client
from tests.client.support import arun
from tests.faults.support import FAULTS, ROOT, MiB
from tests.support.pipes import LineReader, init_lines

N = 1000


# ============================================================================ 1,000 in flight
def test_1000_concurrent_calls_are_in_flight_together_and_each_is_answered_once():
    async def go():
        async with Client(FAULTS, timeout=60) as client:
            # gate(n) returns only once n gate calls are running at the same time: 1,000 results
            # of 1,000 prove all were in flight together (the server's max_in_flight is 1,024).
            results = await asyncio.gather(*(client.call_tool("gate", {"n": N}) for _ in range(N)))
            assert [r["structuredContent"]["result"] for r in results] == [N] * N
            # Sync tools (worker threads) too: every answer is the caller's own.
            texts = [f"call {i} " + "é" * (i % 50) for i in range(N)]
            echoed = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            assert [r["content"][0]["text"] for r in echoed] == texts
            assert not client.session._pending
            await client.ping()

    arun(go(), timeout=120)


# ============================================================================ cancellation storms
def storm_lines(rng: random.Random) -> tuple[bytes, set[int], set[int], set[int]]:
    """N requests, half that hang forever and half that nap 0–20 ms, with a cancellation for
    every hanging one and a third of the naps, each placed at a random later point; plus
    cancellations of unknown, finished and already cancelled ids. Returns the stream and the
    ids of the hangs, the cancelled naps and the other naps."""
    events: list[tuple[float, bytes]] = []
    hangs, cancelled_naps, naps = set(), set(), set()
    for i in range(1, N + 1):
        at = i + rng.random()
        if i % 2:
            hangs.add(i)
            call = {"name": "hang", "arguments": {}}
        else:
            call = {"name": "nap", "arguments": {"ms": rng.uniform(0, 20)}}
            (cancelled_naps if rng.random() < 1 / 3 else naps).add(i)
        events.append((at, json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}).encode()))
        if i in hangs or i in cancelled_naps:
            for _ in range(rng.choice([1, 1, 1, 2])):  # sometimes cancelled twice
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": i, "reason": "storm"},
                }
                events.append((at + rng.expovariate(1 / 30), json.dumps(cancel).encode()))
    for _ in range(100):  # ids that never existed
        bogus = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": rng.choice([10**9 + rng.randrange(1000), "nope", -1])},
        }
        events.append((rng.uniform(0, N), json.dumps(bogus).encode()))
    events.sort(key=lambda e: e[0])
    return b"".join(line + b"\n" for _, line in events), hangs, cancelled_naps, naps


def assert_nothing_left_in_flight(proc: subprocess.Popen, out: LineReader) -> None:
    """The session and its Connection hold no request but the one asking (no leaked bookkeeping)."""
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"in_flight"}}\n')
    msg = json.loads(out.line())
    assert msg["id"] == "q" and msg["result"]["structuredContent"] == {"session": 1, "connection": 1}, msg
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n')
    assert json.loads(out.line()) == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_requests_cancelled_before_they_start_leave_nothing_behind(tmp_path):
    # Found by the soak: a request whose cancellation arrived in the same read as the request
    # was cancelled before its task first ran, so its bookkeeping stayed forever; 1,024 of them
    # (max_in_flight) stopped the server reading. Each pair here goes out in one write.
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(FAULTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0)
    out = LineReader(proc.stdout.fileno())
    try:
        proc.stdin.write(init_lines())
        assert out.message()["id"] == "init"
        for i in range(1, 1101):
            proc.stdin.write(
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nap","arguments":{"ms":50}}}\n'
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}\n' % (i, i)
            )
        proc.stdin.write(b'{"jsonrpc":"2.0","id":"ping","method":"ping"}\n')
        assert json.loads(out.line(timeout=10)) == {"jsonrpc": "2.0", "id": "ping", "result": {}}  # none answered
        assert_nothing_left_in_flight(proc, out)
        proc.stdin.close()
        assert proc.wait(5) == 0 and out.rest() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


@pytest.mark.parametrize("seed", [1, 2])
def test_cancellation_storm_raw(seed, tmp_path):
    rng = random.Random(seed)
    stream, hangs, cancelled_naps, naps = storm_lines(rng)
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(FAULTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0)
    out = LineReader(proc.stdout.fileno())
    try:
        proc.stdin.write(init_lines())
        assert out.message()["id"] == "init"
        # Written in random pieces with short pauses, so some naps finish before their
        # cancellation arrives and some cancellations catch requests not yet started.
        pos = 0
        while pos < len(stream):
            step = rng.randrange(1, 64 * 1024)
            proc.stdin.write(stream[pos : pos + step])
            pos += step
            if rng.random() < 0.3:
                time.sleep(rng.uniform(0, 0.01))
        proc.stdin.write(b'{"jsonrpc":"2.0","id":"alive","method":"tools/call","params":{"name":"alive"}}\n')
        answers: Counter = Counter()
        bodies: dict = {}
        deadline = time.monotonic() + 30
        while True:
            msg = json.loads(out.line(timeout=max(0.1, deadline - time.monotonic())))
            answers[msg["id"]] += 1
            bodies[msg["id"]] = msg
            if msg["id"] == "alive" and all(answers[i] for i in naps):
                break
            if msg["id"] == "alive":  # asked too early: some naps still running
                proc.stdin.write(b'{"jsonrpc":"2.0","id":"alive","method":"tools/call","params":{"name":"alive"}}\n')
        assert not [i for i in hangs if answers[i]], "a cancelled call was answered"
        assert all(answers[i] == 1 for i in naps), "a call was not answered exactly once"
        assert all(answers[i] <= 1 for i in cancelled_naps)
        for i in cancelled_naps:
            if answers[i]:  # it finished before its cancellation arrived: a normal result
                assert bodies[i]["result"]["content"][0]["text"].startswith("napped")
        unknown = set(answers) - hangs - cancelled_naps - naps - {"alive"}
        assert not unknown, unknown
        # The hanging handlers are gone (cancelled, not leaked), and the server is healthy.
        for _ in range(50):
            proc.stdin.write(b'{"jsonrpc":"2.0","id":"a2","method":"tools/call","params":{"name":"alive"}}\n')
            msg = json.loads(out.line())
            if msg["result"]["structuredContent"]["result"] == 0:
                break
        else:
            raise AssertionError(f"hang handlers still running: {msg}")
        assert_nothing_left_in_flight(proc, out)
        proc.stdin.close()
        assert proc.wait(5) == 0
        assert out.rest() == b""  # nothing more came: no late answer to a cancelled call
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_cancellation_storm_through_the_client():
    async def go():
        rng = random.Random(3)
        async with Client(FAULTS, timeout=60) as client:
            tasks = {}
            for i in range(N):
                if i % 2:
                    tasks[i] = asyncio.create_task(client.call_tool("hang"))
                else:
                    tasks[i] = asyncio.create_task(client.call_tool("nap", {"ms": rng.uniform(0, 20)}))
                if rng.random() < 0.05:
                    await asyncio.sleep(0)
            doomed = [i for i in tasks if i % 2 or rng.random() < 1 / 3]
            rng.shuffle(doomed)
            for n, i in enumerate(doomed):  # cancel at random moments while answers arrive
                tasks[i].cancel()
                if n % 17 == 0:
                    await asyncio.sleep(rng.uniform(0, 0.005))
            outcomes = await asyncio.gather(*tasks.values(), return_exceptions=True)
            for i, outcome in zip(tasks, outcomes, strict=True):
                if i in doomed:
                    assert isinstance(outcome, asyncio.CancelledError) or outcome["content"][0]["text"].startswith(
                        "napped"
                    )
                else:
                    assert outcome["content"][0]["text"].startswith("napped"), outcome
            assert not client.session._pending
            async with asyncio.timeout(10):
                while (await client.call_tool("alive"))["structuredContent"]["result"]:
                    await asyncio.sleep(0.01)
            in_flight = (await client.call_tool("in_flight"))["structuredContent"]
            assert in_flight == {"session": 1, "connection": 1}, in_flight
            await client.ping()

    arun(go(), timeout=120)


# ============================================================================ 100 MiB each way
BIG_CLIENT = r"""
import asyncio, json, resource, sys
import mcpio

async def main():
    n = int(sys.argv[1])
    async with mcpio.Client(sys.argv[2:], timeout=120) as client:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        up = (await client.call_tool("size", {"text": "u" * n}))["structuredContent"]["result"]
        down = await client.call_tool("big", {"n": n})
        text = down["content"][0]["text"]
        ok = len(text) == n and text == "b" * n
        del down, text
        await client.ping()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        status = open(f"/proc/{client._transport.pid}/status").read().split("VmHWM:")[1]
        server_peak = int(status.split()[0]) * 1024
        print(json.dumps({"up": up, "down_ok": ok, "before": before, "peak": peak, "server_peak": server_peak}),
              flush=True)
        capped = await client.call_tool("big_capped", {"n": 5 * 1024 * 1024})
        print(json.dumps({"capped": len(capped["content"][0]["text"].encode()),
                          "meta": capped["_meta"]["io.mcpio/truncated"]}), flush=True)

asyncio.run(main())
"""


def test_100_mib_each_way_through_the_client():
    size = 100 * MiB
    done = subprocess.run(
        [sys.executable, "-c", BIG_CLIENT, str(size), *FAULTS], capture_output=True, text=True, timeout=180, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["up"] == size and first["down_ok"] is True
    # The client holds the 100 MiB line, the decoded text and the test's own copy of the
    # request; anything near 10x the message would mean needless copies.
    assert first["peak"] - first["before"] < 6 * size, (
        f"client peak grew {(first['peak'] - first['before']) / MiB:.0f} MiB"
    )
    assert first["server_peak"] < 8 * size, f"server peak {first['server_peak'] / MiB:.0f} MiB"
    assert second["capped"] <= 1024 * 1024 and second["meta"]["textBytes"] == 5 * 1024 * 1024
    print(
        f"100 MiB each way: client peak +{(first['peak'] - first['before']) / MiB:.0f} MiB, "
        f"server peak {first['server_peak'] / MiB:.0f} MiB"
    )
