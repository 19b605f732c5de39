"""What a stdio server has imported by the time it has answered ``initialize`` (cold start is a
feature; hosts spawn stdio servers and wait). A real server process — the stdio benchmark's
``benchmarks/servers/mcpio_server.py``, run as a script and as ``mcpio run`` (the command
``mcpio install`` writes into host configs) — answers one ``initialize``, sees stdin close, and
writes ``sys.modules`` at exit; none of the heavy or unrelated modules below may be among them.
Add a module here when a change must never bring it onto the stdio start-up path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import uncovered_env

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
    "hypercorn",
    "h2",
    "hpack",
    "opentelemetry",
}
# installed here (as in most environments) and taken by msgspec when it may: `mcpio run` imports
# msgspec without it (mcpio._coldstart; tests/unit/test_msgspec_import.py); a script importing
# mcpio gets msgspec as msgspec imports itself (import mcpio changes nothing)
FORBIDDEN_WITH_RUN = {"typing_extensions"}
FORBIDDEN_MODULES = {"argparse", "email", "http.client", "urllib.request", "mcpio.cli", "mcpio.auth", "mcpio.types"}
# Standard-library modules the stdio start-up path once loaded and no longer does (issue 17: cold
# start), each now imported where it is used: json (msgspec does the wire), hashlib, hmac,
# secrets and random (requestState signing, task ids), pathlib with urllib.parse and ipaddress
# (SafePath, Image(path=...), URI templates), mimetypes, shutil with bz2, lzma, fnmatch and zlib
# (which_path), dataclasses (the schema's Parameter is a Struct), and the skills extension.
# What is still loaded, and why, is in docs/evidence/benchmarks.md (cold start): asyncio brings
# ssl, subprocess, socket, concurrent.futures, logging and inspect — since issue 17's synchronous
# start-up only after the initialize answer is written (tests/stdio/test_fast_initialize.py makes
# them unimportable and still gets the answer); msgspec brings typing, datetime, decimal and
# uuid.
FORBIDDEN_STDLIB = {"json", "hashlib", "hmac", "secrets", "pathlib", "urllib", "ipaddress", "mimetypes", "dataclasses"}
# uuid (through msgspec) reads platform.system() at import: on Linux `mcpio run` serves it a
# stand-in (mcpio._coldstart._PlatformForUuid) and platform is never imported
FORBIDDEN_STDLIB_LINUX_WITH_RUN = {"platform"}
# asyncio on Windows imports tempfile and with it these (asyncio.windows_utils): forbidden elsewhere
FORBIDDEN_STDLIB_POSIX = {"tempfile", "random", "shutil", "bz2", "lzma", "fnmatch", "zlib"}
FORBIDDEN_MCPIO = {"mcpio._skills", "mcpio._server._skills"}
FORBIDDEN_PREFIXES = (
    "mcpio._cli",
    "mcpio._auth",
    "mcpio._inspect",
    "mcpio._state",
    "mcpio._client",
    "mcpio._transports._http",
    "mcpio._transports._uvicorn",
    "mcpio._transports._hypercorn",
    "mcpio._host",
    "mcpio._otel._",  # the instrumentation itself (mcpio._otel, the seam, imports nothing of it)
)

# what `mcpio run` never imports before the answer: the other commands' modules, and for `run
# TARGET` alone the HTTP options' (auth, OAuth proxy, TLS: nothing to check when all are defaults)
RUN_NEVER = ("mcpio._cli._main", "mcpio._cli._targets", "mcpio._cli._call", "mcpio._cli._output")
RUN_NEVER += ("mcpio._cli._auth_flags", "mcpio._cli._proxy_flags", "mcpio._cli._tls_flags")

WRAPPER = """
import atexit, runpy, sys
out = sys.argv[2]
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))  # no json: it is on the list
if sys.argv[3] == "run":
    sys.argv = ["mcpio", "run", sys.argv[1]]
    from mcpio.cli import main
    sys.exit(main())
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("how", ["script", "run"])
def test_answering_initialize_over_stdio_loads_nothing_heavy(tmp_path: Path, how: str) -> None:
    out = tmp_path / "modules.json"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(SERVER), str(out), how],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        # not measured by coverage (scripts/test measures subprocesses): its start-up imports json,
        # pathlib, hashlib … into the server, which would be on the list for the wrong reason
        env=uncovered_env(),
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and "result" in answer, done.stdout + done.stderr
    modules = out.read_text().split("\n")
    assert "mcpio._server._server" in modules  # the list is the server's own
    stdlib = FORBIDDEN_STDLIB | (FORBIDDEN_STDLIB_POSIX if sys.platform != "win32" else set())
    packages, prefixes, modules_out = FORBIDDEN_PACKAGES, FORBIDDEN_PREFIXES, FORBIDDEN_MODULES
    if how == "run":  # the command's own modules, but none of the other commands'
        stdlib |= FORBIDDEN_STDLIB_LINUX_WITH_RUN if sys.platform == "linux" else set()
        packages = packages | FORBIDDEN_WITH_RUN
        prefixes = tuple(p for p in prefixes if p != "mcpio._cli") + RUN_NEVER
        modules_out = modules_out - {"mcpio.cli"}  # argparse not even then: `run FILE` alone needs no parser
    loaded = [
        m
        for m in modules
        if m.split(".")[0] in packages | stdlib or m in modules_out | FORBIDDEN_MCPIO or m.startswith(prefixes)
    ]
    assert not loaded, f"on the stdio start-up path: {loaded}"


BUILD = """
import sys
from mcpio import Context, Server

server = Server("s", instructions="hi")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@server.tool(task_support="optional")
async def slow(ctx: Context, n: int = 1) -> str:
    return "x" * n


@server.resource("file:///{name}")
def res(name: str) -> str:
    return name


@server.prompt
def hello(who: str) -> str:
    return f"hello {who}"


@server.middleware
async def mw(request, call_next):
    return await call_next(request)


@server.on_notification("notifications/initialized")
async def seen(ctx, params):
    pass


heavy = ["asyncio", "concurrent.futures", "ssl", "socket", "selectors", "subprocess", "logging"]
print(",".join(m for m in heavy if m in sys.modules))
"""


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="the synchronous stdio start-up is POSIX only (mcpio._platform._windows needs subprocess)",
)
def test_building_a_server_imports_no_asyncio() -> None:
    """``from mcpio import Server``, ``Server(...)`` and every registration decorator leave
    asyncio (and what it imports) unloaded: the stdio start-up answers ``initialize`` before it
    (``mcpio._server._stdio``; issue 17). logging too: mcpio's loggers load it at their first
    use (``mcpio._log``)."""
    done = subprocess.run(
        [sys.executable, "-c", BUILD], capture_output=True, text=True, timeout=60, env=uncovered_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"imported while building a server: {done.stdout.strip()}"
