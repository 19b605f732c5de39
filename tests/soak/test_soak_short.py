"""The soak of benchmarks/soak.py, short: 20,000 tools/call over one stdio connection, 6,000
through a proxy of that server served over HTTP, and 500 in-memory connect/disconnect cycles.
Memory and file descriptors must stay flat (generous bounds: this machine is shared and RSS
moves by itself; a leak of even a few hundred bytes a call would show as megabytes here). No
timing is asserted; the long run's figures are in the reliability evidence
(docs/evidence/reliability.md)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys

import pytest

from tests.faults.support import ROOT, MiB

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

spec = importlib.util.spec_from_file_location("mcpio_soak", ROOT / "benchmarks" / "soak.py")
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)


def test_20000_calls_over_one_stdio_connection_stay_flat():
    out = asyncio.run(soak.soak_stdio(20_000, samples=5, window=32, echo=False))
    assert out["errors"] == 0 and out["exit_code"] == 0 and out["pending_after"] == 0
    assert out["in_flight_after"] == {"session": 1, "connection": 1}  # no bookkeeping left behind
    # no descriptor may leak (grow); the client is this test process, where others may close one
    assert out["server_fds"]["growth"] == 0 and out["client_fds"]["growth"] <= 0, out["samples"]
    assert out["server_rss"]["growth"] < 16 * MiB, out["samples"]
    assert out["client_rss"]["growth"] < 16 * MiB, out["samples"]
    assert out["tracemalloc"]["net_bytes"] < 2 * MiB, out["tracemalloc"]


def test_500_in_memory_connect_disconnect_cycles_stay_flat():
    out = asyncio.run(soak.soak_cycles(500, samples=5, echo=False))
    assert out["errors"] == 0 and out["sessions_after"] == 0
    assert out["fds"]["growth"] == 0, out["samples"]
    assert out["rss"]["growth"] < 16 * MiB, out["samples"]
    assert out["tracemalloc"]["net_bytes"] < MiB // 2, out["tracemalloc"]
    last = out["samples"][-1]
    assert last["tasks"] <= 2 and last["threads"] <= 40, last  # nothing left running per cycle


def test_6000_calls_through_a_proxy_over_http_stay_flat():
    """The same mix through ``Server.proxy`` of that server, served over Streamable HTTP; the
    proxy's process is sampled and traced. The calls are relayed by callback, half of them with a
    progress token (its route goes with the call), and those the proxy refuses are answered by
    its engine; what each allocates for a call is freed with it (a relayed call over HTTP once
    kept ~600 bytes for ever: over 1 MiB here). The stdio route is the
    benchmark's (``--proxy stdio``); tests/gateway/test_relay.py guards its relayed calls."""
    out = asyncio.run(soak.soak_stdio(6_000, samples=3, window=32, echo=False, via="http"))
    assert out["errors"] == 0 and out["exit_code"] == 0 and out["pending_after"] == 0
    assert out["in_flight_after"] == {"session": 1, "connection": 1}  # no bookkeeping left behind
    # The proxy's connection pool opens and closes connections with the calls in flight (at most
    # one each: 32): its descriptors move within that; a leak of one in a hundred calls would be
    # 40 more.
    assert out["server_fds"]["max"] - out["server_fds"]["first"] <= 32, out["samples"]
    assert out["client_fds"]["growth"] <= 0, out["samples"]
    assert out["server_rss"]["growth"] < 16 * MiB, out["samples"]
    assert out["tracemalloc"]["net_bytes"] < MiB // 2, out["tracemalloc"]
