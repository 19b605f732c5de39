"""A gateway's and a proxy's cold start (issue 35): the gateway answers ``initialize`` before it
imports asyncio (``Server.plain_for``: a plain server's synchronous start-up), and
each stdio upstream gets the Client's first request (``server/discover``, id 1) written into its
stdin right after it is started, before the gateway or proxy imports asyncio and the Client; the
Client then continues the handshake from it, and never sends it twice.

Observed from outside: the gateway runs with asyncio made unimportable by an import hook that,
at the first attempt, records what the upstream had received by then (its main thread is held in
the hook, so nothing more can be written meanwhile), then fails the import."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio import Client
from tests.client.support import arun

HERE = Path(__file__).parent
RECORDING = HERE / "recording_upstream.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the synchronous start-up is POSIX only")

# Runs ``python -m mcpio ARGS`` with asyncio unimportable: at the first attempt, waits (up to 30 s)
# for the upstream's record file RECORD to hold a line, copies what it holds to SEEN, then fails.
POISON = """
import os, runpy, sys, time
record, seen = sys.argv[1], sys.argv[2]
class Poison:
    def find_spec(self, name, path=None, target=None):
        if name != "asyncio":
            return None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (os.path.exists(record) and open(record).read().endswith("\\n")):
            time.sleep(0.01)
        with open(seen, "w") as f:
            f.write(open(record).read() if os.path.exists(record) else "")
        sys.stderr.write("poisoned import: asyncio\\n")
        raise ImportError("asyncio is poisoned")
sys.meta_path.insert(0, Poison())
sys.argv = ["mcpio", *sys.argv[3:]]
runpy.run_module("mcpio", run_name="__main__", alter_sys=True)
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _config(folder: Path, record: Path, era: str = "modern") -> Path:
    config = folder / "mcp.json"
    entry = {"command": sys.executable, "args": [str(RECORDING), str(record), era]}
    config.write_text(json.dumps({"mcpServers": {"rec": entry}}))
    return config


def _poisoned(tmp_path: Path, target: str, record: Path) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """``mcpio run TARGET`` with asyncio poisoned, sent one initialize: its run, and what the
    upstream had read when the gateway first tried to import asyncio."""
    seen = tmp_path / "seen"
    argv = [sys.executable, "-c", POISON, str(record), str(seen), "run", target]
    done = subprocess.run(argv, input=json.dumps(INITIALIZE).encode() + b"\n", capture_output=True, timeout=90)
    assert b"poisoned import: asyncio" in done.stderr, done.stderr.decode(errors="replace")
    return done, seen.read_text() if seen.exists() else ""


def test_the_gateway_answers_initialize_before_it_imports_asyncio(tmp_path):
    done, _ = _poisoned(tmp_path, str(_config(tmp_path, tmp_path / "record")), tmp_path / "record")
    lines = done.stdout.splitlines()
    assert lines, done.stderr.decode(errors="replace")
    answer = json.loads(lines[0])
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-11-25", answer
    assert "tools" in answer["result"]["capabilities"]  # what an upstream may bring, while it starts


@pytest.mark.parametrize("kind", ["gateway", "proxy"])
def test_the_upstream_gets_the_first_request_before_asyncio_is_imported(tmp_path, kind):
    record = tmp_path / "record"
    config = _config(tmp_path, record)
    target = str(config) if kind == "gateway" else shlex.join([sys.executable, str(RECORDING), str(record), "modern"])
    _, seen = _poisoned(tmp_path, target, record)
    assert seen, "the upstream had received nothing when the gateway first imported asyncio"
    (first,) = [json.loads(line) for line in seen.splitlines()]
    assert first["id"] == 1 and first["method"] == "server/discover"
    meta = first["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpio"


@pytest.mark.parametrize("mode", ["loop", "threads"])
@pytest.mark.parametrize("kind", ["gateway", "proxy"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_client_continues_from_the_early_request_and_never_sends_it_twice(tmp_path, kind, era, mode):
    """A legacy upstream refuses the early ``server/discover``: the Client falls back to
    ``initialize`` (id 2) as it always did; a modern one answers it: the Client goes on from it.
    Each request id is sent once, in either stdio mode of the adopting transport."""
    record = tmp_path / "record"
    config = _config(tmp_path, record, era)
    target = str(config) if kind == "gateway" else shlex.join([sys.executable, str(RECORDING), str(record), era])

    async def go():
        env = {"MCPIO_STDIO_MODE": mode}
        async with Client([sys.executable, "-m", "mcpio", "run", target], env=env, timeout=60) as c:
            return {t.name for t in await c.list_tools()}

    names = arun(go(), timeout=90)
    assert names == ({"rec__t"} if kind == "gateway" else {"t"})
    sent = [json.loads(line) for line in record.read_text().splitlines()]
    requests = [m for m in sent if "id" in m]
    assert [m["id"] for m in requests] == list(range(1, len(requests) + 1))  # each once, in order
    assert requests[0]["method"] == "server/discover"
    methods = [m["method"] for m in sent]
    if era == "legacy":
        assert methods[1:3] == ["initialize", "notifications/initialized"]
    else:
        assert "initialize" not in methods
    assert "tools/list" in methods


def test_an_upstream_exiting_on_its_early_request_fails_alone(tmp_path):
    """An upstream that reads the request written early, then exits: it is logged as failed to
    start, with its exit code and stderr; the other upstream serves."""
    record = tmp_path / "record"
    dies = "import sys; sys.stdin.readline(); sys.stderr.write('no config here\\n'); sys.exit(3)"
    servers = {
        "rec": {"command": sys.executable, "args": [str(RECORDING), str(record), "modern"]},
        "dies": {"command": sys.executable, "args": ["-c", dies]},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    said: list[str] = []

    async def go():
        async with Client([sys.executable, "-m", "mcpio", "run", str(config)], timeout=60, on_stderr=said.append) as c:
            return {t.name for t in await c.list_tools()}

    assert arun(go(), timeout=90) == {"rec__t"}
    log = "\n".join(said)
    assert "upstream 'dies' did not start: ServerExited" in log and "exited with code 3" in log, log
    assert "no config here" in log, log


def test_a_client_whose_first_request_differs_from_the_one_sent_ahead_says_so(tmp_path):
    """The adopting Client must open with the request written ahead (its options decide it): one
    that would open otherwise fails to connect, saying so, and never sends a second id 1."""
    from mcpio._client._opening import send_first
    from mcpio._transports._spawn import spawn

    record = tmp_path / "record"
    argv = [sys.executable, str(RECORDING), str(record), "legacy"]
    process = spawn(argv[0], argv[1:])
    send_first(process, {"era": "modern"})  # server/discover, whatever this process's era cache remembers

    async def go():
        with pytest.raises(Exception) as info:
            async with Client(argv, process=process, era="legacy", timeout=30):  # would open with initialize
                pass
        return info.value

    assert "different first message" in str(arun(go(), timeout=60))
    process.wait(30)
    assert [json.loads(line)["method"] for line in record.read_text().splitlines()] == ["server/discover"]
