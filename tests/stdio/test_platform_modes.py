"""The stdio transport modes are really in effect (so the suite's two runs differ), and CRLF
line endings are accepted on both sides of stdio: a Windows peer may end lines with ``\\r\\n``.

Every test in tests/stdio runs in both modes (``stdio_mode``, tests/support/modes.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys

import pytest

from mcpio._transports._subprocess import SubprocessTransport
from mcpio._transports._threadpipes import ThreadSubprocess
from tests.support.pipes import init_lines
from tests.support.stdio_peer import StdioPeer

THREADS_SERVER = r'''
import threading
from mcpio import Server

server = Server("threads", version="1.0.0")


@server.tool
def threads() -> list[str]:
    """The names of this process's threads."""
    return sorted(t.name for t in threading.enumerate())


server.run()
'''

# A peer that answers each line it reads with two CRLF-terminated lines, as a Windows program
# writing text-mode output would.
CRLF_PEER = r"""
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(b'{"echo":' + line.rstrip(b"\r\n") + b'}\r\n{"n":2}\r\n')
    sys.stdout.buffer.flush()
"""


def test_the_server_runs_in_the_selected_mode(stdio_mode, tmp_path):
    script = tmp_path / "threads_server.py"
    script.write_text(THREADS_SERVER)
    with StdioPeer.spawn([sys.executable, str(script)]) as p:
        p.initialize()
        result = p.call("tools/call", {"name": "threads", "arguments": {}})
        names = json.loads(result["content"][0]["text"])
        if stdio_mode == "threads":
            assert {"mcpio-stdin", "mcpio-stdout"} <= set(names), names
        else:
            assert "mcpio-stdin" not in names and "mcpio-stdout" not in names, names
        assert p.close() == 0


def test_an_unknown_mode_is_one_line_naming_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("MCPIO_STDIO_MODE", "fibers")
    script = tmp_path / "threads_server.py"
    script.write_text(THREADS_SERVER)
    proc = subprocess.run([sys.executable, str(script)], input=b"", capture_output=True, timeout=30)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().strip().splitlines() == [
        "threads: cannot serve on stdio: the stdio mode must be one of loop, threads (MCPIO_STDIO_MODE), not 'fibers'"
    ]


def test_crlf_terminated_lines_are_a_whole_session_for_the_server(tmp_path):
    script = tmp_path / "threads_server.py"
    script.write_text(THREADS_SERVER)
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"threads","arguments":{}}}'
    # Every line CRLF-terminated, the CR and LF of the last one in two writes.
    proc.stdin.write(init_lines().replace(b"\n", b"\r\n") + call + b"\r")
    proc.stdin.flush()
    out, _ = proc.communicate(b"\n", timeout=30)
    assert proc.returncode == 0
    assert b"\r" not in out  # we answer with LF only (exact on output)
    answers = [json.loads(line) for line in out.split(b"\n") if line]
    assert [a["id"] for a in answers] == ["init", 2] and "result" in answers[1], answers


def test_crlf_terminated_lines_from_a_server_are_frames_for_the_client(stdio_mode):
    async def go() -> list[bytes]:
        t = SubprocessTransport(sys.executable, ["-c", CRLF_PEER], grace=1.0)
        await t.open()
        try:
            assert t.mode == stdio_mode
            assert isinstance(t._transport, ThreadSubprocess) == (stdio_mode == "threads")
            await t.send(b'{"a":1}')
            return [await t.receive(), await t.receive()]
        finally:
            await t.aclose()

    assert asyncio.run(asyncio.wait_for(go(), 30)) == [b'{"echo":{"a":1}}', b'{"n":2}']


def test_a_large_message_both_ways_through_the_client_transport():
    """Backpressure on the client's side: a frame larger than any pipe buffer goes out whole
    while the peer's answer (as large) comes back whole."""

    size = 3 * 1024 * 1024

    async def go() -> bytes:
        t = SubprocessTransport(sys.executable, ["-c", CRLF_PEER], grace=1.0)
        await t.open()
        try:
            await t.send(b'"' + b"x" * size + b'"')
            return await t.receive()
        finally:
            await t.aclose()

    frame = asyncio.run(asyncio.wait_for(go(), 60))
    assert len(frame) == size + 2 + len(b'{"echo":}') and frame.startswith(b'{"echo":"xxx')


# The server's parent: it starts the server with stdin on a pipe whose write end a holder
# process (a grandchild, as with npx or uv) keeps open, so only the parent's death can end it.
PARENT = r"""
import os, subprocess, sys
r, w = os.pipe()
server = subprocess.Popen(sys.argv[1:], stdin=r, stderr=subprocess.DEVNULL)
holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, pass_fds=(w,))  # outlives the parent (the test kills it)
os.close(r)
print(server.pid, holder.pid, flush=True)
os.write(w, INIT)  # the answer tells the test the server is serving (and watching its parent)
os.close(w)
sys.stdin.read()
""".replace("INIT", repr(init_lines()))


@pytest.mark.skipif(sys.platform == "win32", reason="pass_fds is POSIX; Windows watches a process handle")
def test_the_parents_death_ends_the_server_while_a_grandchild_holds_stdin(stdio_mode, tmp_path):
    """pidfd (Linux) or kqueue NOTE_EXIT (macOS) in loop mode, getppid() polling in threads mode."""
    script = tmp_path / "threads_server.py"
    script.write_text(THREADS_SERVER)
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    holder = None
    try:
        server, holder = map(int, parent.stdout.readline().split())
        assert json.loads(parent.stdout.readline())["id"] == "init"
        parent.kill()
        parent.wait(10)
        # The server shares the parent's stdout: it reaches EOF once the server has exited too.
        assert select.select([parent.stdout], [], [], 20)[0], "the server outlived its parent by 20 s"
        assert parent.stdout.read() == b""
    finally:
        parent.kill()
        parent.stdin.close()
        parent.stdout.close()
        if holder is not None:
            os.kill(holder, signal.SIGKILL)
