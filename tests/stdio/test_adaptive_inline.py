"""Adaptive inlining of plain ``def`` tools (issue 17), on the wire against a real stdio server
process: a fast tool moves onto the event loop; when it later blocks, the watchdog notices it
while it blocks (one WARNING line), and from then on it runs on worker threads, so a blocked
call no longer keeps the loop from serving others. Ordering and events only, never timings."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcpio._server._inline import PROMOTE_AFTER
from tests.support.stdio_peer import StdioPeer

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests/servers/adaptive_server.py")]
WORKER = "mcpio-worker-"


def where(peer: StdioPeer, **args) -> str:
    return peer.call("tools/call", {"name": "where", "arguments": args})["content"][0]["text"]


def promote(peer: StdioPeer) -> list[str]:
    """Call ``where`` until it runs on the loop's thread; the threads it ran on, in order."""
    seen = []
    for _ in range(50 * PROMOTE_AFTER):  # a loaded machine may make some calls look slow
        seen.append(where(peer))
        if not seen[-1].startswith(WORKER):
            return seen
    raise AssertionError(f"where never ran inline in {len(seen)} calls: {seen[-5:]}")


def test_a_fast_tool_that_starts_blocking_is_noticed_and_sent_back_to_worker_threads(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with StdioPeer.spawn(SERVER, env={"ADAPTIVE_FIFO": str(fifo)}) as peer:
        peer.initialize()
        seen = promote(peer)
        # Probation: at least PROMOTE_AFTER calls ran on worker threads before the first inline one.
        assert len(seen) > PROMOTE_AFTER and all(s.startswith(WORKER) for s in seen[:-1])
        assert seen[-1] == "MainThread"  # the event loop's thread
        # 1. It blocks while inline: the watchdog notices it while it blocks, and says so once.
        first = peer.request_msg("tools/call", {"name": "where", "arguments": {"block": True}})
        peer.send(first)
        line = peer.wait_stderr("blocked for over")
        assert "'where'" in line and "worker threads" in line and "inline=False" in line
        fifo.write_bytes(b"go")  # opens the FIFO for writing: the call returns
        assert peer.response(first["id"])["result"]["content"][0]["text"] == "MainThread"
        # 2. From now on it runs on a worker thread: blocked again, the loop serves the others.
        second = peer.request_msg("tools/call", {"name": "where", "arguments": {"block": True}})
        peer.send(second)
        others = []
        for _ in range(5):
            msg = peer.request_msg("tools/call", {"name": "quick", "arguments": {}})
            peer.send(msg)
            assert peer.response(msg["id"], others=others)["result"]["content"][0]["text"] == "quick"
        assert others == []  # the blocked call has not answered (nobody opened the FIFO yet)
        fifo.write_bytes(b"go")
        assert peer.response(second["id"])["result"]["content"][0]["text"].startswith(WORKER)
        assert where(peer).startswith(WORKER)  # for good
        assert sum("blocked for over" in x for x in peer.stderr_lines) == 1  # logged once


def test_inline_calls_whose_large_answers_must_wait_for_the_pipe(tmp_path):
    """Calls started on the reader's stack (no Task) whose answers fill the pipe and the
    transport's 4 MiB buffer wait for room as Tasks (the eager start's hand-over); every answer
    arrives whole and in order, and the loop goes on serving."""
    with StdioPeer.spawn(SERVER) as peer:
        peer.initialize()
        seen = []
        for _ in range(50 * PROMOTE_AFTER):
            seen.append(peer.call("tools/call", {"name": "text", "arguments": {}})["content"][0]["text"])
            if seen[-1] == "MainThread":
                break
        assert seen[-1] == "MainThread", seen[-3:]
        msgs = [peer.request_msg("tools/call", {"name": "text", "arguments": {"big": True}}) for _ in range(4)]
        msgs.append(peer.request_msg("tools/call", {"name": "quick", "arguments": {}}))
        peer.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        for m in msgs[:4]:
            assert peer.response(m["id"], timeout=60)["result"]["content"][0]["text"] == "x" * (3 * 1024 * 1024)
        assert peer.response(msgs[4]["id"])["result"]["content"][0]["text"] == "quick"
