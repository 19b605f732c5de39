"""The stdio server transport as a client sees it: real server subprocesses over real pipes.

Covers the contract in ``mcpio/_transports/_stdio.py``: fd 1 carries protocol bytes only;
stdin EOF, SIGTERM and the parent's death each end the process promptly (SIGTERM: exit status
0, nothing more written); 100 MiB lines; parse errors answered and survived; ``MCPIO_TRACE``;
bounded memory when the client stops reading (backpressure); ttys and regular files as stdin.

Waiting is always on an event (a pipe, a pidfd, ``proc.wait``) with a deadline, never a sleep.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import termios
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.pipes import LineReader, init_lines, wait_pid_gone, wrapped_server
from tests.support.stdio_peer import StdioPeer

ROOT = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(ROOT / "tests/servers/echo_server.py")]
VERSION = "2025-11-25"
MiB = 1024 * 1024

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process semantics")

# A server that misbehaves on purpose: everything it writes outside the protocol must end up on
# stderr. Written to a temp dir by the ``probe`` fixture.
PROBE_SERVER = r'''
import asyncio, atexit, contextlib, ctypes, logging, os, subprocess, sys
from mcpio import Server

print("buffered print at import")  # still in sys.stdout's buffer when serving starts
to_stdout = logging.getLogger("probe.stdout")
to_stdout.addHandler(logging.StreamHandler(sys.stdout))  # bound to the original sys.stdout
to_stdout.setLevel(logging.INFO)
original_stdout = sys.stdout
atexit.register(lambda: (print("atexit print"), os.write(1, b"atexit raw write\n")))


@contextlib.asynccontextmanager
async def lifespan(server):
    print("lifespan enter", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        print("lifespan exit", file=sys.stderr, flush=True)


server = Server("probe", version="1.0.0", lifespan=lifespan)


@server.tool
def noisy() -> str:
    """Write to stdout every way there is; return what a child reading stdin got."""
    print("print from a tool")
    sys.stdout.write("sys.stdout.write from a tool\n")
    original_stdout.write("the original sys.stdout object\n")
    original_stdout.flush()
    sys.__stdout__.write("sys.__stdout__ from a tool\n")
    sys.__stdout__.flush()
    os.write(1, b"os.write to fd 1\n")
    to_stdout.info("logging to a stdout handler")
    subprocess.run([sys.executable, "-c", "print('python child stdout')"], check=True)
    os.system("echo shell child stdout")
    libc = ctypes.CDLL(None)
    libc.printf(b"C printf\n")
    libc.fflush(None)
    child = subprocess.run([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"],
                           stdout=subprocess.PIPE, text=True, timeout=10)
    return "child read " + child.stdout.strip()


@server.tool
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


if __name__ == "__main__":
    server.run()
    print("print after run()")
    os.write(1, b"raw write after run()\n")
'''

PROBE_STRAYS = (
    "buffered print at import",
    "print from a tool",
    "sys.stdout.write from a tool",
    "the original sys.stdout object",
    "sys.__stdout__ from a tool",
    "os.write to fd 1",
    "logging to a stdout handler",
    "python child stdout",
    "shell child stdout",
    "C printf",
    "print after run()",
    "raw write after run()",
    "atexit print",
    "atexit raw write",
)


# The probe prints at import; unbuffered, that would reach the wire before serving starts.
BUFFERED = {"PYTHONUNBUFFERED": ""}


@pytest.fixture
def probe(tmp_path) -> list[str]:
    path = tmp_path / "probe_server.py"
    path.write_text(PROBE_SERVER)
    return [sys.executable, str(path)]


# ---------------------------------------------------------------------------- helpers
class RawClient:
    """A client without a reader thread: it reads the server's stdout only when asked to."""

    def __init__(self, argv: list[str], tmp_path: Path) -> None:
        self.err_path = tmp_path / "server-stderr.txt"
        with open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0)
        self.out = LineReader(self.proc.stdout.fileno())

    def initialize(self) -> dict:
        self.proc.stdin.write(init_lines())
        msg = self.out.message()
        assert msg["id"] == "init" and "result" in msg, msg
        return msg

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def echo_request(i: int, payload: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"' % i
        + payload
        + b'"}}}\n'
    )


def proc_status(pid: int, key: str) -> int:
    """A memory figure of /proc/<pid>/status in bytes: "VmRSS" (now) or "VmHWM" (peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} for {pid}")


def write_until_stalled(fd: int, requests, stall: float = 1.0, on_progress=None) -> tuple[int, bytes]:
    """Write requests non-blockingly until the server has not read for ``stall`` seconds.

    Returns how many were written completely and the unwritten rest of a partly written one.
    """
    os.set_blocking(fd, False)
    sent = 0
    try:
        for data in requests:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    if not select.select([], [fd], [], stall)[1]:
                        return sent, bytes(view) if len(view) < len(data) else b""
            sent += 1
            if on_progress is not None:
                on_progress(sent)
        return sent, b""
    finally:
        os.set_blocking(fd, True)


# ---------------------------------------------------------------------------- 1. fd 1 is the wire
def test_stray_output_of_every_kind_goes_to_stderr(probe, wire_validator):
    # PYTHONUNBUFFERED unset (BUFFERED): the print at import waits in sys.stdout's buffer, and
    # open() must flush it to stderr, not onto the wire.
    with StdioPeer.spawn(probe, env=BUFFERED) as p:
        p.initialize(VERSION)
        result = p.call("tools/call", {"name": "noisy", "arguments": {}})
        assert result["content"][0]["text"] == "child read ''", "a child must not read protocol bytes from fd 0"
        assert p.call("tools/call", {"name": "noisy", "arguments": {}})["content"][0]["text"] == "child read ''"
        p.ping()
        assert p.close() == 0
    assert p.stdout_garbage == []  # every line of stdout, to EOF, parsed as JSON
    err = p.stderr()
    missing = [s for s in PROBE_STRAYS if s not in err]
    assert not missing, f"not on stderr: {missing}\nstderr:\n{err}"


# ---------------------------------------------------------------------------- 2. stdin EOF
def test_exits_promptly_on_eof_when_idle(wire_validator):
    with StdioPeer.spawn(ECHO) as p:
        p.initialize(VERSION)
        p.ping()
        start = time.monotonic()
        assert p.close(timeout=2.0) == 0
        assert time.monotonic() - start < 2.0


def test_exits_promptly_on_eof_before_initialize():
    proc = subprocess.Popen(ECHO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(b"", timeout=5)
    assert proc.returncode == 0 and out == b"", err


def test_eof_with_requests_in_flight_answers_them_then_exits(wire_validator):
    with StdioPeer.spawn(ECHO) as p:
        p.initialize(VERSION)
        ids = []
        for seconds in (0.3, 0.5, 0.4):
            msg = p.request_msg("tools/call", {"name": "sleep", "arguments": {"seconds": seconds}})
            p.send(msg)
            ids.append(msg["id"])
        msg = p.request_msg("tools/call", {"name": "echo", "arguments": {"text": "last"}})
        p.send(msg)
        ids.append(msg["id"])
        start = time.monotonic()
        p.proc.stdin.close()  # EOF right behind the requests
        answers = {}
        while len(answers) < len(ids):
            m = p.recv(timeout=5)
            answers[m["id"]] = m
        assert p.proc.wait(2.0) == 0
        assert time.monotonic() - start < 2.0
        assert [answers[i]["result"]["content"][0]["text"] for i in ids] == [
            "slept 0.3",
            "slept 0.5",
            "slept 0.4",
            "last",
        ]
        with pytest.raises(EOFError):
            p.recv(timeout=5)


def test_one_write_of_requests_and_notifications_is_served_in_its_order(wire_validator):
    """Frames read together are served in the order written, whether the transport hands them to
    the engine on its read callback (requests, answers) or queues them for its reader (from the
    first notification on): a request cancelled in the same write is never answered; the requests
    after the cancellation are; a request sent before initialize in the same write as initialize
    is refused, and the one after ``initialized`` served."""
    with StdioPeer.spawn(ECHO) as p:
        slow = p.request_msg("tools/call", {"name": "sleep", "arguments": {"seconds": 30}}, id_="slow")
        early = p.request_msg("tools/list", id_="early")
        init = p.request_msg(
            "initialize",
            {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            id_="init",
        )
        p.version = VERSION
        after = p.request_msg("tools/call", {"name": "echo", "arguments": {"text": "after"}}, id_="after")
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}}
        ping = p.request_msg("ping", id_="ping")
        frames = [early, init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, slow, cancel, after, ping]
        p.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in frames))
        answers = {}
        while not {"early", "init", "after", "ping"} <= answers.keys():  # answers come in any order
            m = p.recv(timeout=10)
            answers[m["id"]] = m
        assert answers["early"]["error"]["code"] == -32600  # before initialize: refused
        assert answers["init"]["result"]["protocolVersion"] == VERSION
        assert answers["after"]["result"]["content"][0]["text"] == "after"
        assert "slow" not in answers  # cancelled: no answer (spec: basic/utilities/cancellation)
        assert p.call("ping") == {}  # still serving
        p.proc.stdin.close()  # at EOF the server answers what is in flight, then exits
        rest = []
        with pytest.raises(EOFError):
            while True:
                rest.append(p.recv(timeout=10))
        assert all(m.get("id") != "slow" for m in rest), rest
        assert p.proc.wait(5) == 0


# ---------------------------------------------------------------------------- 3. SIGTERM
def test_sigterm_when_idle_exits_0_promptly(probe, wire_validator):
    with StdioPeer.spawn(probe, env=BUFFERED) as p:
        p.initialize(VERSION)
        p.ping()
        start = time.monotonic()
        p.proc.send_signal(signal.SIGTERM)  # stdin stays open
        assert p.proc.wait(2.0) == 0
        assert time.monotonic() - start < 2.0
        with pytest.raises(EOFError):
            p.recv(timeout=5)
        p.close()
    assert "lifespan exit" in p.stderr() and "Traceback" not in p.stderr()


def test_sigterm_with_request_in_flight_answers_nothing_more(probe, wire_validator):
    with StdioPeer.spawn(probe, env=BUFFERED) as p:
        p.initialize(VERSION)
        p.send(p.request_msg("tools/call", {"name": "slow", "arguments": {"seconds": 30}}))
        p.ping()  # answered in order: the slow call is in flight now
        start = time.monotonic()
        p.proc.send_signal(signal.SIGTERM)
        assert p.proc.wait(2.0) == 0
        assert time.monotonic() - start < 2.0
        with pytest.raises(EOFError):  # no answer, no notification: the stream just ends
            p.recv(timeout=5)
        p.close()
    err = p.stderr()
    assert "lifespan exit" in err and "Traceback" not in err, err


def test_sigterm_while_the_client_is_not_reading_exits_promptly(tmp_path):
    c = RawClient(ECHO, tmp_path)
    try:
        c.initialize()
        payload = b"s" * 10240
        sent, _ = write_until_stalled(c.proc.stdin.fileno(), (echo_request(i, payload) for i in range(5000)))
        assert sent < 5000, "the server should have stopped reading (backpressure)"
        start = time.monotonic()
        c.proc.send_signal(signal.SIGTERM)
        assert c.proc.wait(2.0) == 0, c.stderr()
        assert time.monotonic() - start < 2.0
        assert "Traceback" not in c.stderr()
    finally:
        c.kill()


# ---------------------------------------------------------------------------- 4. parent death
def test_exits_when_its_parent_dies_while_stdin_stays_open(tmp_path):
    # The test holds the write end of the server's stdin, so stdin never reaches EOF: only the
    # death of its parent (a wrapper, as npx or uv would be) can end the server.
    with wrapped_server(ECHO, tmp_path) as w:
        os.write(w.stdin, init_lines())
        assert w.out.message()["id"] == "init"
        os.write(w.stdin, b'{"jsonrpc":"2.0","id":"p1","method":"ping"}\n')
        assert w.out.message() == {"jsonrpc": "2.0", "id": "p1", "result": {}}  # alive after the thread ended

        w.wrapper.kill()
        w.wrapper.wait(5)
        start = time.monotonic()
        assert w.out.rest(timeout=3.0) == b""  # stdout closes: the server shut down...
        assert wait_pid_gone(w.server_pid, 3.0 - (time.monotonic() - start))  # ...and exited
        assert time.monotonic() - start < 3.0
        assert "parent process" in w.stderr.read_text()


# ---------------------------------------------------------------------------- 5. 100 MiB
def test_100_mib_line_round_trips(tmp_path):
    c = RawClient(ECHO, tmp_path)
    try:
        c.initialize()
        size = 100 * MiB
        request = echo_request(7, b"z" * size)
        writer = threading.Thread(target=c.proc.stdin.write, args=(request,), daemon=True)
        writer.start()
        line = c.out.line(timeout=60)
        writer.join(10)
        del request
        peak = proc_status(c.proc.pid, "VmHWM")
        msg = json.loads(line)
        del line
        assert msg["id"] == 7
        assert len(msg["result"]["content"][0]["text"]) == size
        del msg
        # The message passes through a buffer, a str, and its encoding (twice the text: content
        # and structuredContent); anything near 10x would mean needless copies.
        assert peak < 8 * size, f"peak RSS {peak / MiB:.0f} MiB for a {size // MiB} MiB message"
        c.proc.stdin.write(b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
        assert c.out.message() == {"jsonrpc": "2.0", "id": 8, "result": {}}
        c.proc.stdin.close()
        assert c.proc.wait(5) == 0
    finally:
        c.kill()


# ---------------------------------------------------------------------------- 6. bad bytes
@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}\n',  # invalid UTF-8
        b"\xc3\x28\n",  # invalid 2-byte sequence
        b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xed\xa0\x80"}}\n',  # a UTF-8 encoded surrogate
        b'{"jsonrpc":"2.0","id":3,"method":"ping"\n',  # truncated JSON
        b"{'single': 'quotes'}\n",
        b'{"jsonrpc":"2.0","id":4,"method":"ping"} trailing\n',
        b"\x00\n",
    ],
    ids=["utf8-in-string", "utf8-bare", "surrogate", "truncated", "single-quotes", "trailing", "nul"],
)
def test_parse_errors_get_32700_with_null_id_and_service_goes_on(line, wire_validator):
    with StdioPeer.spawn(ECHO) as p:
        p.initialize(VERSION)
        for _ in range(2):
            p.send_raw(line)
            err = p.recv()
            assert err["id"] is None and err["error"]["code"] == -32700, err
        # a CRLF line right after still works
        p.send_raw(b'{"jsonrpc":"2.0","id":"after","method":"ping"}\r\n')
        assert p.recv() == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert (
            p.call("tools/call", {"name": "echo", "arguments": {"text": "ünïcödé ✓"}})["content"][0]["text"]
            == "ünïcödé ✓"
        )
        assert p.close() == 0


# ---------------------------------------------------------------------------- 7. MCPIO_TRACE
TRACE_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (in|out) (.*)$")


def parse_trace(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        m = TRACE_LINE.match(line)
        assert m, f"bad trace line: {line[:200]!r}"
        out.append((m.group(2), m.group(3)))
    return out


def test_mcpio_trace_appends_every_message_in_and_out(tmp_path, wire_validator):
    trace = tmp_path / "trace.log"
    before = '2000-01-01T00:00:00.000Z in {"earlier":"session"}\n'
    trace.write_text(before)  # appended to, never truncated
    with StdioPeer.spawn(ECHO, env={"MCPIO_TRACE": str(trace)}) as p:
        p.initialize(VERSION)
        p.call("tools/call", {"name": "echo", "arguments": {"text": "traced"}})
        p.send_raw(b"not json\n")
        assert p.recv()["error"]["code"] == -32700
        p.ping()
        assert p.close() == 0
    assert p.stdout_garbage == []
    text = trace.read_text()
    assert text.startswith(before)
    entries = parse_trace(text[len(before) :])
    ins = [payload for d, payload in entries if d == "in"]
    outs = [json.loads(payload) for d, payload in entries if d == "out"]
    assert outs == p.received  # every message out, in order, exactly as the client got it
    assert len(ins) == 5 and ins[3] == "not json"
    assert [json.loads(x)["method"] for x in ins if x != "not json"] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "ping",
    ]
    assert "traced" not in p.stderr()


def test_mcpio_trace_to_dev_stdout_stays_off_the_wire(wire_validator):
    with StdioPeer.spawn(ECHO, env={"MCPIO_TRACE": "/dev/stdout"}) as p:
        p.initialize(VERSION)
        p.ping()
        assert p.close() == 0
    assert p.stdout_garbage == []
    assert len([line for line in p.stderr_lines if TRACE_LINE.match(line)]) >= 4


# ---------------------------------------------------------------------------- 8. backpressure
def test_slow_reader_memory_stays_bounded_and_every_request_is_answered_once(tmp_path):
    total, payload = 20_000, b"b" * 10240
    c = RawClient(ECHO, tmp_path)
    try:
        c.initialize()
        baseline = proc_status(c.proc.pid, "VmRSS")
        samples = [baseline]

        def sample(sent: int) -> None:
            if sent % 500 == 0:
                samples.append(proc_status(c.proc.pid, "VmRSS"))

        requests = (echo_request(i, payload) for i in range(total))
        sent, rest = write_until_stalled(c.proc.stdin.fileno(), requests, on_progress=sample)
        samples.append(proc_status(c.proc.pid, "VmRSS"))
        assert sent < total // 2, f"the server read {sent} requests without anyone reading its answers"
        peak = max(samples)
        assert peak < 300 * MiB, f"RSS grew from {baseline / MiB:.0f} to {peak / MiB:.0f} MiB"

        # Resume reading; send the rest.
        ids: Counter = Counter()
        bad: list = []

        def read_all() -> None:
            while True:
                try:
                    msg = json.loads(c.out.line(timeout=60))
                except EOFError:
                    return
                ids[msg["id"]] += 1
                if len(msg.get("result", {}).get("content", [{}])[0].get("text", "")) != len(payload):
                    bad.append(msg)

        reader = threading.Thread(target=read_all, daemon=True)
        reader.start()
        stdin = c.proc.stdin
        if rest:
            stdin.write(rest)
            sent += 1
        for i in range(sent, total):
            stdin.write(echo_request(i, payload))
        stdin.close()
        reader.join(60)
        assert not reader.is_alive()
        assert c.proc.wait(10) == 0
        assert not bad, bad[:1]
        assert len(ids) == total and set(ids.values()) == {1}
        assert set(ids) == set(range(total))
    finally:
        c.kill()


# ---------------------------------------------------------------------------- other stdin kinds
def test_tty_stdin_is_read_without_touching_its_flags_and_ctrl_d_is_eof(wire_validator):
    import pty

    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # keep canonical mode (so ^D is EOF), drop the echo
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(ECHO, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    proc.stdin = open(master, "wb", buffering=0)
    p = StdioPeer(proc)
    try:
        p.initialize(VERSION)
        p.ping()
        assert os.get_blocking(slave), "the server made the terminal non-blocking"
        os.write(master, b"\x04")  # ^D at the start of a line
        assert proc.wait(2.0) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        os.close(slave)
        proc.stdin.close()


def test_regular_file_as_stdin(tmp_path):
    requests = tmp_path / "requests.jsonl"
    # The last line has no newline: end of file ends it.
    requests.write_bytes(
        init_lines() + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}'
    )
    with open(requests, "rb") as stdin:
        done = subprocess.run(ECHO, stdin=stdin, capture_output=True, timeout=10)
    assert done.returncode == 0, done.stderr
    msgs = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(str(m["id"]) for m in msgs) == ["2", "3", "init"]
    assert all("result" in m for m in msgs)


def test_a_second_transport_in_the_same_process_finds_the_wire_again(tmp_path):
    script = tmp_path / "twice.py"
    script.write_text(
        "import asyncio\n"
        "from mcpio._transports._stdio import StdioServerTransport\n"
        "async def main():\n"
        "    for i in range(2):\n"
        "        t = StdioServerTransport(parent_poll=None)\n"
        "        await t.open()\n"
        '        await t.send(b\'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}\' % i)\n'
        "        print('stray', i)\n"
        "        await t.aclose()\n"
        "asyncio.run(main())\n"
        "print('after both')\n"
    )
    done = subprocess.run([sys.executable, str(script)], stdin=subprocess.PIPE, capture_output=True, timeout=10)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["params"]["data"] for line in done.stdout.splitlines()] == [0, 1]
    assert done.stderr.decode().split() == ["stray", "0", "stray", "1", "after", "both"]
