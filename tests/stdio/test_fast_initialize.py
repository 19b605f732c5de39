"""The stdio start-up answers a first legacy ``initialize`` before asyncio is imported
(``mcpio._server._stdio``, issue 17: cold start), and everything else exactly as the async engine
always did. Each case runs a real server process twice on the same bytes: as it starts by default,
and with ``MCPIO_TRACE`` set — which keeps the synchronous start-up out, so the engine serves from
the first byte — and the two stdouts must hold the same answers, and the exit statuses be the same."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import uncovered_env
from tests.support.pipes import LineReader

SERVER = '''
import sys
from mcpio import Context, Server

server = Server("fast", version="1.0", max_message_size=4096, instructions="Say hi.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def who(ctx: Context) -> str:
    """What the session recorded at initialize."""
    return f"{ctx.protocol_version} {ctx.client_info} {ctx.client_capabilities}"


@server.on_notification("notifications/initialized")
async def initialized(ctx: Context, params: dict) -> None:
    print("hook: initialized", file=sys.stderr, flush=True)


if __name__ == "__main__":
    server.run()
'''


def msg(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def init(id_: object = 1, version: str = "2025-06-18", **extra: object) -> dict:
    params = {"protocolVersion": version, "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "9"}}
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": {**params, **extra}}


INITIALIZED = msg({"jsonrpc": "2.0", "method": "notifications/initialized"})
CALLS = (
    msg({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    + msg({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}})
    + msg({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "who", "arguments": {}}})
)
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LEGACY_META = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
DISCOVER = msg({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}})
MODERN_CALLS = msg({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}}) + msg(
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": MODERN_META},
    }
)

CASES = {
    # answered by the synchronous start-up, then the engine continues the session
    "initialize, pipelined": msg(init()) + INITIALIZED + CALLS,
    "initialize, CRLF": msg(init())[:-1] + b"\r\n" + INITIALIZED + CALLS,
    "initialize, unknown version": msg(init(version="1999-01-01")) + INITIALIZED + CALLS,
    "initialize, 2024-11-05": msg(init(id_="a", version="2024-11-05")) + INITIALIZED + CALLS,
    "initialize twice": msg(init()) + msg(init(id_=7)) + INITIALIZED + CALLS,
    "initialize, then garbage": msg(init()) + b"{nope\n" + INITIALIZED + CALLS,
    "initialize, then ping": msg(init()) + msg({"jsonrpc": "2.0", "id": 5, "method": "ping"}) + INITIALIZED + CALLS,
    "initialize, no newline before EOF": msg(init())[:-1],
    "server/discover": DISCOVER + CALLS,
    "server/discover, then modern calls": DISCOVER + MODERN_CALLS,
    # handed to the engine untouched
    "server/discover without _meta": msg({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}) + MODERN_CALLS,
    "server/discover, legacy version": msg(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": LEGACY_META}}
    )
    + CALLS,
    "initialize with modern _meta": msg(init(_meta=MODERN_META)) + CALLS,
    "garbage first": b"not json at all\n" + msg(init()) + INITIALIZED + CALLS,
    "garbage naming initialize": b'{"method": "initialize", \n' + msg(init()) + INITIALIZED,
    "blank lines first": b"\n \r\n" + msg(init()) + INITIALIZED + CALLS,
    "notification first": INITIALIZED + msg(init()) + INITIALIZED + CALLS,
    "batch first": b"[" + msg(init())[:-1] + b"]\n" + msg(init()) + INITIALIZED + CALLS,
    "request before initialize": CALLS + msg(init()) + INITIALIZED,
    "initialize without params": msg({"jsonrpc": "2.0", "id": 1, "method": "initialize"}) + msg(init(8)) + CALLS,
    "initialize notification": msg({"jsonrpc": "2.0", "method": "initialize", "params": init()["params"]})
    + msg(init())
    + CALLS,
    "oversized first line": msg(init(clientInfo={"name": "x" * 5000, "version": "1"})) + msg(init()) + INITIALIZED,
    "first line over 64 KiB": b'{"method":"initialize"' + b" " * 70000 + b"}\n" + msg(init()) + INITIALIZED,
    "EOF before any line": b"",
    "EOF inside the first line": msg(init())[:20],
}


def serve(script: Path, data: bytes, *, engine_only: bool, tmp_path: Path) -> tuple[bytes, int]:
    env = dict(os.environ)
    env.pop("MCPIO_TRACE", None)
    if engine_only:
        env["MCPIO_TRACE"] = str(tmp_path / "trace.jsonl")
    done = subprocess.run([sys.executable, str(script)], input=data, capture_output=True, timeout=60, env=env)
    return done.stdout, done.returncode


@pytest.mark.parametrize("case", list(CASES))
def test_same_bytes_out_as_the_engine(case: str, tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    fast = serve(script, CASES[case], engine_only=False, tmp_path=tmp_path)
    engine = serve(script, CASES[case], engine_only=True, tmp_path=tmp_path)
    # The same answers and status. Their order may differ where the engine's is not defined: it
    # answers requests concurrently, so a refusal made on arrival (a second initialize) may pass
    # the first initialize's answer; the synchronous start-up has sent that answer already. (For
    # the same reason a request pipelined behind initialize with initialize's own id is refused
    # by the engine only when it arrives before that answer is sent: timing, not tested here.)
    assert sorted(fast[0].splitlines()) == sorted(engine[0].splitlines()), (fast, engine)
    assert fast[1] == engine[1] == 0
    if case == "server/discover, then modern calls":
        answers = [json.loads(line) for line in fast[0].splitlines()]
        assert [a["id"] for a in answers] == [1, 2, 3] and all("result" in a for a in answers), answers
        assert answers[0]["result"]["resultType"] == "complete" and "supportedVersions" in answers[0]["result"]
    if case.startswith("initialize,"):  # the session continued: initialize answered first, then every request
        ids = [json.loads(line).get("id") for line in fast[0].splitlines()]
        assert ids[0] in (1, "a") and "result" in json.loads(fast[0].splitlines()[0])
        if CALLS in CASES[case]:  # concurrent requests: answered in any order (worker threads)
            assert sorted(ids[-3:]) == [2, 3, 4]


def test_split_initialize_then_more_in_one_write(tmp_path: Path) -> None:
    """A partial first line, then its end with the next messages in one write: initialize
    answered first, then every request (concurrent: in any order), and the session state
    recorded at initialize is the engine's."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        first = msg(init())
        proc.stdin.write(first[:37])
        proc.stdin.flush()
        proc.stdin.write(first[37:] + INITIALIZED + CALLS)
        proc.stdin.flush()
        reader = LineReader(proc.stdout.fileno())
        answers = [json.loads(reader.line()) for _ in range(4)]
        assert answers[0]["id"] == 1 and sorted(a["id"] for a in answers[1:]) == [2, 3, 4]
        assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
        assert answers[0]["result"]["instructions"] == "Say hi."
        who = next(a for a in answers if a["id"] == 4)["result"]["content"][0]["text"]
        assert who == "2025-06-18 {'name': 't', 'version': '9'} {'roots': {}}"
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


POISON = """
import os, sys
POISONED = {"asyncio", "concurrent.futures", "ssl", "socket", "selectors", "subprocess"}
POISONED |= set(filter(None, os.environ.get("POISON_ALSO", "").split(",")))
class Poison:
    def find_spec(self, name, path=None, target=None):
        if name in POISONED:
            sys.stderr.write(f"poisoned import: {name}\\n")
            sys.stderr.flush()
            raise ImportError(f"{name} is poisoned")
        return None
sys.meta_path.insert(0, Poison())
sys.argv = sys.argv[1:]
import runpy
runpy.run_path(sys.argv[0], run_name="__main__")
"""


# What mcpio itself does not import before its first answer (issue 17: cold start), on top of
# asyncio's modules: inspect, threading, base64, binascii and signal (each where it is used, later), the
# method table, the HTTP glue, middleware, resources and prompts, the transport seam, the framing,
# docstring parsing and argument-error wording, and
# typing_extensions, which msgspec would import when installed (inspect with it): mcpio imports msgspec without it.
LATER = ",".join(
    ["typing_extensions", "inspect", "threading", "base64", "binascii", "signal"]
    + ["mcpio._server." + m for m in ("_handlers", "_http", "_middleware", "_resources")]
    + ["mcpio._transports._base", "mcpio._protocol._framing", "mcpio._docstrings", "mcpio._schema_errors"]
)


@pytest.mark.skipif(sys.platform == "win32", reason="the synchronous start-up is POSIX only (select on pipes)")
@pytest.mark.parametrize("also", ["", LATER])
@pytest.mark.parametrize("first", ["initialize", "server/discover"])
@pytest.mark.parametrize("server", ["benchmarks/servers/mcpio_server.py", "test"])
def test_initialize_is_answered_before_asyncio_is_imported(server: str, first: str, also: str, tmp_path: Path) -> None:
    """With asyncio (and what it drags in: ssl, socket, selectors, subprocess, concurrent.futures)
    made unimportable, and with ``also`` those named in LATER, the initialize answer still
    reaches stdout; only then does the server fail, at the first of them. Before the synchronous
    start-up, ``from mcpio import Server`` imported asyncio and no answer came."""
    if server == "test":
        script = tmp_path / "server.py"
        script.write_text(SERVER)
    else:
        script = Path(__file__).resolve().parents[2] / server
    env = uncovered_env()
    env.pop("MCPIO_TRACE", None)
    env["POISON_ALSO"] = also
    done = subprocess.run(
        [sys.executable, "-c", POISON, str(script)],
        input=msg(init()) + INITIALIZED if first == "initialize" else DISCOVER,
        capture_output=True,
        timeout=60,
        env=env,
    )
    lines = done.stdout.splitlines()
    assert lines, done.stderr.decode(errors="replace")
    answer = json.loads(lines[0])
    if first == "initialize":
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-06-18", answer
    else:
        assert answer["id"] == 1 and "2026-07-28" in answer["result"]["supportedVersions"], answer
    # one was needed after all, by the engine after the answer (typing_extensions never is: msgspec
    # does without it)
    needed = [ln for ln in done.stderr.splitlines() if ln.startswith(b"poisoned import: ")]
    assert b"poisoned import: asyncio" in needed if not also else set(needed) - {b"poisoned import: typing_extensions"}


def test_sigterm_while_waiting_for_the_first_line_exits_0(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    # The server says nothing while it waits for its first line: wait for the kernel to show it
    # asleep in select() (a SIGTERM during the imports before would kill it, as it always did).
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        wchan = Path(f"/proc/{proc.pid}/wchan")
        if not wchan.exists():
            pytest.skip("needs /proc/PID/wchan (Linux)")
        deadline = time.monotonic() + 30
        while wchan.read_text() not in ("poll_schedule_timeout", "do_select", "poll_schedule_timeout.constprop.0"):
            assert time.monotonic() < deadline, "the server never waited for its first line"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
