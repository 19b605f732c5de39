"""What a stdio server has imported by the time it has answered ``initialize`` (issue 17: cold
start is a feature; hosts spawn stdio servers and wait). A real server process — the stdio
benchmark's ``benchmarks/servers/mcpio_server.py`` — answers one ``initialize``, sees stdin close,
and writes ``sys.modules`` at exit; none of the heavy or unrelated modules below may be among
them. Add a module here when a change must never bring it onto the stdio start-up path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "benchmarks" / "servers" / "mcpio_server.py"

# third-party packages, and parts of mcpio, that answering initialize over stdio never needs
FORBIDDEN_PACKAGES = {
    "httpx",
    "httpcore",
    "uvicorn",
    "h11",
    "starlette",
    "anyio",
    "pydantic",
    "jwt",
    "cryptography",
    "redis",
    "mcp",
    "jsonschema",
    "opentelemetry",
}
FORBIDDEN_MODULES = {"argparse", "email", "http.client", "urllib.request", "mcpio.cli", "mcpio.auth", "mcpio.types"}
FORBIDDEN_PREFIXES = (
    "mcpio._cli",
    "mcpio._auth",
    "mcpio._inspect",
    "mcpio._state",
    "mcpio._client",
    "mcpio._transports._http",
    "mcpio._transports._uvicorn",
    "mcpio._host",
    "mcpio._otel._",  # the instrumentation itself (mcpio._otel, the seam, imports nothing of it)
)

WRAPPER = """
import atexit, json, runpy, sys
out = sys.argv[2]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_answering_initialize_over_stdio_loads_nothing_heavy(tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(SERVER), str(out)],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and "result" in answer, done.stdout + done.stderr
    modules = json.loads(out.read_text())
    assert "mcpio._server._server" in modules  # the list is the server's own
    loaded = [
        m
        for m in modules
        if m.split(".")[0] in FORBIDDEN_PACKAGES or m in FORBIDDEN_MODULES or m.startswith(FORBIDDEN_PREFIXES)
    ]
    assert not loaded, f"on the stdio start-up path: {loaded}"
