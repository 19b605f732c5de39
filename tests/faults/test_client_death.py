"""The client dies with a call in flight: the server must not linger (pain point #1).

Idle servers exiting on EOF, SIGTERM and parent death are covered by
tests/stdio/test_stdio_transport.py; here a tool call is running (an async one that would
sleep for an hour, and a sync one stuck in a worker thread), which used to keep the server
alive for its 30 s drain: answers nobody can read are not waited for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.faults.support import FAULTS, ROOT
from tests.support.pipes import LineReader, init_lines, wait_pid_gone, wrapped_server

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux >= 5.3)")

# A host: an mcpio Client that starts the fault server, leaves a call running, prints the
# server's pid, and waits to be killed.
HOST = r"""
import asyncio, sys
import mcpio

async def main(tool):
    async with mcpio.Client(sys.argv[2:]) as client:
        task = asyncio.create_task(client.call_tool(tool, {"seconds": 3600}))
        if tool == "hang":
            while (await client.call_tool("alive"))["structuredContent"]["result"] != 1:
                pass
        else:
            await client.ping()  # served in order: the sync call is in its worker thread by now
        print(client._transport.pid, flush=True)
        await task

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.parametrize("tool", ["hang", "hang_sync"])
def test_the_server_exits_within_2_s_when_its_client_is_killed_mid_call(tool):
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, tool, *FAULTS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    server_pid = None
    try:
        server_pid = int(LineReader(host.stdout.fileno()).line(timeout=20))
        host.kill()  # SIGKILL: no cleanup of any kind on the client side
        host.wait(5)
        start = time.monotonic()
        assert wait_pid_gone(server_pid, 2.0), "the server outlived its client by 2 s"
        assert time.monotonic() - start < 2.0
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(5)
        if server_pid is not None and not wait_pid_gone(server_pid, 0):
            os.kill(server_pid, signal.SIGKILL)


@pytest.mark.parametrize("tool", ["hang", "hang_sync"])
def test_the_server_exits_within_2_s_when_a_wrapper_parent_dies_and_stdin_stays_open(tool, tmp_path):
    # The test holds both pipes (so stdin never reaches EOF and stdout stays readable); the
    # wrapper is the server's parent, and its death is all the server can see.
    with wrapped_server(FAULTS, tmp_path) as w:
        os.write(w.stdin, init_lines())
        assert w.out.message()["id"] == "init"
        os.write(
            w.stdin,
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{}}}\n' % tool.encode(),
        )
        os.write(w.stdin, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        assert w.out.message() == {"jsonrpc": "2.0", "id": 2, "result": {}}  # the call is running
        w.wrapper.kill()
        w.wrapper.wait(5)
        start = time.monotonic()
        assert wait_pid_gone(w.server_pid, 2.0), "the server outlived its parent by 2 s"
        assert time.monotonic() - start < 2.0
        rest = w.out.rest(timeout=2.0)
        # The call may be answered "cancelled" on the way out (the pipe is still readable); a
        # half line never is: everything written is whole JSON lines.
        assert not rest or rest.endswith(b"\n"), rest[-200:]


def test_a_polite_eof_still_answers_the_calls_in_flight(tmp_path):
    # The other side of the coin: stdin EOF from a live client is a request to finish up.
    done = subprocess.run(
        FAULTS,
        input=init_lines()
        + (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap","arguments":{"ms":300}}}\n'),
        capture_output=True,
        timeout=10,
    )
    assert done.returncode == 0
    assert b'"napped 300' in done.stdout.splitlines()[-1]


def test_sigterm_while_draining_after_eof_exits_at_once(tmp_path):
    # stdin EOF starts the drain (calls in flight may finish, up to 30 s); the client's next
    # step, SIGTERM after its grace, must end it at once — it used to wait out the drain.
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(FAULTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0)
    out = LineReader(proc.stdout.fileno())
    try:
        proc.stdin.write(init_lines())
        assert out.message()["id"] == "init"
        proc.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","arguments":{}}}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
        )
        assert out.message() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        proc.stdin.close()  # draining now: the hang would keep it 30 s
        assert proc.poll() is None
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(2.0) == 0
        assert time.monotonic() - start < 2.0
        assert out.rest() == b""  # and the cancelled call is not answered
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
