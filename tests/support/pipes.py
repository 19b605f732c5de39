"""Raw pipes to server processes, for the stdio and fault tests: a line reader with a deadline,
the initialize handshake as bytes, a pidfd wait, and a server started behind a wrapper process.

Waiting is always on an event (a pipe, a pidfd) with a deadline, never a sleep.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

VERSION = "2025-11-25"
MiB = 1024 * 1024


class LineReader:
    """Reads newline-terminated lines from a file descriptor with a deadline; linear in size."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.scan = 0

    def line(self, timeout: float = 20.0) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n", self.scan)
            if nl >= 0:
                out = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                self.scan = 0
                return out
            self.scan = len(self.buf)
            if not self._fill(deadline):
                raise EOFError(f"EOF after {len(self.buf)} bytes of an unterminated line")

    def message(self, timeout: float = 20.0) -> dict:
        return json.loads(self.line(timeout))

    def rest(self, timeout: float = 10.0) -> bytes:
        """Everything up to EOF."""
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        out, self.buf = bytes(self.buf), bytearray()
        return out

    def _fill(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise AssertionError("timed out waiting for the server's output")
        chunk = os.read(self.fd, MiB)
        self.buf += chunk
        return bool(chunk)


def init_lines(version: str = VERSION) -> bytes:
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    return json.dumps(init).encode() + b"\n" + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def wait_pid_gone(pid: int, timeout: float) -> bool:
    """True when process ``pid`` (not necessarily our child) exits within ``timeout``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


# The wrapper spawns the server from a short-lived thread (which would trip PR_SET_PDEATHSIG),
# prints its pid and waits to be killed, as ``npx`` or ``uv run`` would sit between a host and
# its server.
WRAPPER = r"""
import subprocess, sys, threading
in_fd, out_fd, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
procs = []
t = threading.Thread(target=lambda: procs.append(subprocess.Popen(argv, stdin=in_fd, stdout=out_fd)))
t.start()
t.join()
print(procs[0].pid, flush=True)
sys.stdin.read()
"""


@dataclass
class Wrapped:
    wrapper: subprocess.Popen
    server_pid: int
    stdin: int  # the write end of the server's stdin: the test holds it, so it never reaches EOF
    out: LineReader  # the server's stdout
    stderr: Path  # the wrapper's and the server's stderr


@contextlib.contextmanager
def wrapped_server(argv: Sequence[str], tmp_path: Path) -> Iterator[Wrapped]:
    """Start ``argv`` as the child of a wrapper process, its stdin and stdout on pipes this test
    holds (so only the wrapper's death can end it); on exit kill whatever is left and close
    the pipes."""
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "wb") as err:
        wrapper = subprocess.Popen(
            [sys.executable, "-c", WRAPPER, str(r_in), str(w_out), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            pass_fds=(r_in, w_out),
        )
    os.close(r_in)
    os.close(w_out)
    server_pid = None
    try:
        server_pid = int(LineReader(wrapper.stdout.fileno()).line(timeout=10))
        yield Wrapped(wrapper, server_pid, w_in, LineReader(r_out), stderr)
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
        wrapper.wait(5)
        wrapper.stdin.close()
        wrapper.stdout.close()
        if server_pid is not None and not wait_pid_gone(server_pid, 0):
            os.kill(server_pid, signal.SIGKILL)
        os.close(w_in)
        os.close(r_out)
