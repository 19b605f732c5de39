"""A live stdio server under arbitrary byte streams (hypothesis).

Each example writes a hostile mix of lines (tests/fuzz/strategies.py: valid requests of both
eras, garbage, partial JSON, invalid UTF-8, huge and unicode ids, deep nesting, batches, CRLF,
oversized lines), cut into random chunks, to a real ``tests/servers/echo_server.py`` process.
The properties:

* the server never crashes (it is alive after every example, and exits 0 on stdin EOF);
* every byte on its stdout is JSON: each line an object (or a batch array), each response
  well-formed JSON-RPC;
* every request with a readable id (a string or integer ``id`` and a non-null ``method``) gets
  exactly one response with that id (a batch: all of its requests, or none when batches are
  refused, with one error instead); no response carries an id nobody sent.

One server process serves ``EXAMPLES_PER_SERVER`` examples (a fresh process costs more than an
example); each new one starts in a different lifecycle state (uninitialized, or initialized
with each legacy version, 2025-03-26 accepting batches). ``MCPIO_FUZZ_EXAMPLES`` raises the
example count for long runs.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import strategies as S
from tests.fuzz.corpus import CORPUS

ROOT = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(ROOT / "tests/servers/echo_server.py")]
LIMIT = 256 * 1024  # the server's max_message_size: oversized lines are cheap to make
EXAMPLES = int(os.environ.get("MCPIO_FUZZ_EXAMPLES", "150"))
EXAMPLES_PER_SERVER = 20
START_STATES = ["2025-03-26", "2025-11-25", None, "2024-11-05", "2025-06-18"]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")

_decode = msgspec.json.Decoder().decode


def expected_ids(raw_line: bytes) -> tuple[list[Any], list[list[Any]], int]:
    """What the server must answer for one line: (ids answered exactly once, batches answered
    all-or-none, how many id-null errors it may cause at most). Framing as the server does it:
    one trailing CR stripped, blank lines dropped, oversized lines refused without an id."""
    line = raw_line[:-1] if raw_line.endswith(b"\r") else raw_line
    if not line or line.isspace():
        return [], [], 0
    if len(raw_line) > LIMIT:
        return [], [], 1
    try:
        value = _decode(line)
    except (ValueError, RecursionError):  # msgspec.DecodeError, UnicodeDecodeError, too deep
        return [], [], 1
    if type(value) is list:  # refused whole (one error) or item by item
        group = [id_ for ok, id_ in map(S.readable_request_id, value) if ok]
        return [], [group] if group else [], max(1, len(value))
    ok, id_ = S.readable_request_id(value)
    return ([id_] if ok else []), [], 1


class LiveServer:
    """One echo server process; a thread reads and checks every line of its stdout."""

    def __init__(self, start_version: str | None) -> None:
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            ECHO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            env={**os.environ, "ECHO_MAX_MESSAGE": str(LIMIT)},
            bufsize=0,
        )
        self.ids = S.Ids()
        self.counts: collections.Counter = collections.Counter()  # responses per (type, id)
        self.null_errors = 0
        self.problems: list[str] = []
        self.cond = threading.Condition()
        self.eof = False
        self.expected: collections.Counter = collections.Counter()  # id -> requests sent with it
        self.batches: list[list[Any]] = []
        self.null_budget = 0  # id-null errors the lines sent may cause, at most
        self.examples = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if start_version is not None:
            init = {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": start_version,
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "1"},
                },
            }
            self.write([S.encode(init), b'{"jsonrpc":"2.0","method":"notifications/initialized"}'])

    # -------------------------------------------------------------- stdout, checked line by line
    def _read(self) -> None:
        buf = b""
        out = self.proc.stdout
        while True:
            chunk = out.read(1 << 16)
            if not chunk:
                break
            buf += chunk
            *complete, buf = buf.split(b"\n")
            for raw in complete:
                self._take(raw)
        with self.cond:
            if buf:
                self.problems.append(f"unterminated output at EOF: {buf[:200]!r}")
            self.eof = True
            self.cond.notify_all()

    def _take(self, raw: bytes) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            msg, problem = None, f"a non-JSON line on stdout: {raw[:200]!r}"
        else:
            problem = None
        items = msg if isinstance(msg, list) else [msg]
        with self.cond:
            if problem:
                self.problems.append(problem)
            for m in items if msg is not None else []:
                if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
                    self.problems.append(f"not a JSON-RPC message: {raw[:200]!r}")
                elif "method" in m:
                    continue  # something the server sends on its own (none expected, all allowed)
                elif "id" not in m or (("result" in m) == ("error" in m)):
                    self.problems.append(f"malformed response: {raw[:200]!r}")
                elif "error" in m and not (
                    type(m["error"].get("code")) is int and isinstance(m["error"].get("message"), str)
                ):
                    self.problems.append(f"malformed error object: {raw[:200]!r}")
                elif m["id"] is None:
                    self.null_errors += 1
                else:
                    self.counts[S.hashable_id(m["id"])] += 1
            self.cond.notify_all()

    # -------------------------------------------------------------- stdin
    def write(self, lines: list[bytes], cuts: list[int] = ()) -> None:
        stream = b"".join(line + b"\n" for line in lines)
        for raw in lines:
            single, groups, nulls = expected_ids(raw)
            self.expected.update(S.hashable_id(i) for i in single)  # (Counter.update counts)
            self.batches.extend([S.hashable_id(i) for i in g] for g in groups)
            self.null_budget += nulls
        for chunk in S.chunked(stream, list(cuts)):
            self.proc.stdin.write(chunk)

    def settle(self, timeout: float = 20.0) -> None:
        """Wait until every expected id is answered (a sentinel ping proves the server read it all)."""
        sentinel = f"sentinel-{self.examples}"
        self.write([S.encode({"jsonrpc": "2.0", "id": sentinel, "method": "ping"})])
        deadline = time.monotonic() + timeout
        with self.cond:
            while not self.eof and not self.problems:
                if all(self.counts[i] >= n for i, n in self.expected.items()):
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [i for i, n in self.expected.items() if self.counts[i] < n]
                    raise AssertionError(
                        f"no response within {timeout}s for {len(missing)} requests, e.g. "
                        f"{str(missing[:3])[:300]}\n{self.stderr()}"
                    )
                self.cond.wait(left)
            self.check()

    def check(self) -> None:
        assert not self.problems, "\n".join(self.problems[:5]) + "\n" + self.stderr()
        assert not self.eof, f"the server exited (code {self.proc.poll()})\n{self.stderr()}"
        twice = {i: n for i, n in self.counts.items() if n > max(1, self.expected[i])}
        assert not twice, f"answered more than once: {str(twice)[:300]}"
        for group in self.batches:
            got = {self.counts[i] for i in group}
            assert len(got) == 1, f"a batch was answered in part: {str(group)[:300]}"
        unknown = [i for i in self.counts if i not in self.expected and not any(i in g for g in self.batches)]
        assert not unknown, f"responses to ids nobody sent: {str(unknown)[:300]}"
        assert self.null_errors <= self.null_budget, (self.null_errors, self.null_budget)

    def close(self) -> None:
        """stdin EOF: the server answers what it read and exits 0."""
        self.proc.stdin.close()
        try:
            code = self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
        self.reader.join(10)
        with self.cond:
            assert not self.problems, "\n".join(self.problems[:5])
        assert code == 0, f"exit code {code} on EOF\n{self.stderr()}"
        missing = [i for i, n in self.expected.items() if self.counts[i] != n]
        assert not missing, f"not answered exactly once by EOF: {str([(i, self.counts[i]) for i in missing[:3]])[:300]}"
        self.err.close()

    def stderr(self) -> str:
        self.err.seek(0)
        return "server stderr (tail):\n" + self.err.read().decode("utf-8", "replace")[-3000:]


class Pool:
    """Hands out a live server, replacing it every ``EXAMPLES_PER_SERVER`` examples or after a failure."""

    def __init__(self) -> None:
        self.server: LiveServer | None = None
        self.spawned = 0

    def get(self) -> LiveServer:
        s = self.server
        if s is not None and (s.examples >= EXAMPLES_PER_SERVER or s.proc.poll() is not None or s.problems):
            self.retire()
        if self.server is None:
            self.server = LiveServer(START_STATES[self.spawned % len(START_STATES)])
            self.spawned += 1
        return self.server

    def retire(self) -> None:
        s, self.server = self.server, None
        if s is None:
            return
        if s.proc.poll() is None and not s.problems:
            s.close()  # checks the clean exit too
        else:
            s.proc.kill()
            s.proc.wait(5)


@pytest.fixture(scope="module")
def pool():
    p = Pool()
    yield p
    p.retire()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_arbitrary_byte_streams_never_crash_and_every_request_is_answered_once(pool, data):
    server = pool.get()
    lines = data.draw(S.lines(server.ids), label="lines")
    cuts = data.draw(st.lists(st.integers(0, 1000), max_size=12), label="cuts")
    server.examples += 1
    server.write(lines, cuts)
    server.settle()


@pytest.mark.parametrize("version", [None, "2025-03-26", "2025-11-25"])
def test_the_regression_corpus_is_answered_exactly_as_expected(version):
    server = LiveServer(version)
    try:
        for line, id_ in CORPUS:
            single, _, _ = expected_ids(line)
            assert single == ([] if id_ is None else [id_]), line[:100]  # the oracle agrees with the corpus
        server.write([line for line, _ in CORPUS] * 2, cuts=[1, 2, 3, 500, 999])
        server.settle()
        for line, id_ in CORPUS:
            if id_ is not None:
                assert server.counts[S.hashable_id(id_)] == 2, line[:100]  # the corpus went twice
        server.close()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait(5)


def test_the_last_server_exits_cleanly_on_eof(pool):
    # The final check of the run: the server in use answers everything and exits 0 on EOF.
    server = pool.get()
    server.write(
        [b'{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"sleep","arguments":{"seconds":0.05}}}']
    )
    pool.retire()
    assert server.counts[S.hashable_id("last")] == 1
