"""A URL that carries a credential never reaches the argv of a ``mcpio run`` that mcpio starts
(argv is readable by every local user: ``ps``, ``/proc/PID/cmdline``): ``mcpio doctor --openapi``
and the entry ``mcpio install URL`` writes pass it in the environment (``$MCPIO_TARGET``,
``$MCPIO_OPENAPI``, ``$MCPIO_BASE_URL``), where ``mcpio run`` reads it. Real subprocesses, real
servers on 127.0.0.1, the children's real ``/proc/PID/cmdline``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import mcpio
from mcpio import Client, Server
from tests.support.http import ServerThread

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")

SECRET = "pass-word-1234"
DOC = {
    "openapi": "3.1.0",
    "info": {"title": "Items", "version": "1"},
    "paths": {"/items": {"get": {"operationId": "list_items", "responses": {"200": {"description": "ok"}}}}},
}


def _descendants(pid: int) -> dict[int, str]:
    """The command line (NULs as spaces) of each living descendant of process ``pid``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # ended meanwhile
            parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for child in (p for p, pp in parents.items() if pp == parent):
            try:
                found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            todo.append(child)
    return found


def test_doctor_openapi_starts_its_server_with_the_urls_off_its_argv():
    """Each request for the document while ``mcpio doctor`` runs records its children's argv: the
    document's URL (userinfo, api_key) and the base URL's password are in none of them, and the
    doctor still checks the server they make."""
    doctor: list[int] = []
    argvs: list[str] = []

    async def doc(request: Request) -> Response:
        if doctor:
            argvs.extend(_descendants(doctor[0]).values())
        return JSONResponse(DOC)

    with ServerThread(Starlette(routes=[Route("/openapi.json", doc)])) as srv:
        url = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/openapi.json?api_key={SECRET}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpio", "doctor", "--json", "--openapi", url, "--base-url",
             f"http://bob:{SECRET}@127.0.0.1:{srv.port}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )  # fmt: skip
        doctor.append(proc.pid)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    report = json.loads(out)
    assert report["counts"]["tools"] == 1 and report["tools"][0]["name"] == "list_items", report
    assert report["target"].endswith(f"/openapi.json?api_key=[redacted]' --base-url http://127.0.0.1:{srv.port}")
    started = [argv for argv in argvs if " -m mcpio run" in argv]
    assert started, argvs  # the server doctor started asked for the document while it ran
    assert all(SECRET not in argv for argv in argvs), argvs
    assert SECRET not in out + err


def _keyed(app: Any) -> Any:
    """``app`` (ASGI) behind a check of the URL's ``api_key``: 401 without it."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and f"api_key={SECRET}".encode() not in scope["query_string"].split(b"&"):
            await Response("no key", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    return asgi


#: The mcpio under test, for the commands a host starts (from a safe environment, without ours).
SRC = {"PYTHONPATH": str(Path(mcpio.__file__).resolve().parents[1])}


def _install(tmp_path: Path, url: str, *options: str) -> dict[str, Any]:
    """``mcpio install URL --host claude`` into a config file under ``tmp_path``: the entry written."""
    config = tmp_path / "claude.json"
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "install", url, "--host", "claude", "--config", str(config), "--name", "keyed",
         "--force", "--env", f"PYTHONPATH={SRC['PYTHONPATH']}", *options],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr, done
    entry: dict[str, Any] = json.loads(config.read_text())["mcpServers"]["keyed"]
    return entry


def test_install_url_for_a_host_that_starts_commands_writes_its_credentials_into_env(tmp_path):
    """A URL with a key (``?api_key=…``), for Claude Desktop (it starts commands only): the entry's
    args are ``-m mcpio run`` alone, the URL is its ``env``'s ``MCPIO_TARGET``; started as the host
    starts it, it reaches the server that wants the key, and its argv never holds the key. A URL
    with nothing to hide is still written into the args."""
    server = Server("keyed")

    @server.tool
    def hello() -> str:
        return "hi"

    with ServerThread(_keyed(server.http_app())) as srv:
        url = f"{srv.url}?tenant=7&api_key={SECRET}"
        entry = _install(tmp_path, url)  # checked first: the entry started and listed the tool
        assert entry["args"] == ["-m", "mcpio", "run"], entry
        assert entry["env"] == {**SRC, "MCPIO_TARGET": url}, entry

        async def as_the_host() -> list[str]:
            async with Client([entry["command"], *entry["args"]], env={**os.environ, **entry["env"]}) as c:
                assert (await c.call_tool("hello", {})).data == "hi"
                return [argv for argv in _descendants(os.getpid()).values() if "-m mcpio run" in argv]

        argvs = asyncio.run(as_the_host())
    assert argvs and all(SECRET not in argv for argv in argvs), argvs
    plain = _install(tmp_path, "http://127.0.0.1:9/mcp?tenant=7", "--no-check")
    assert plain["args"] == ["-m", "mcpio", "run", "http://127.0.0.1:9/mcp?tenant=7"] and plain["env"] == SRC, plain


def test_mcpio_run_takes_its_target_from_the_environment_and_keeps_it_from_its_server(tmp_path):
    """``mcpio run`` alone serves ``$MCPIO_TARGET`` (here a command line, proxied) and removes the
    variable from its environment first: the server it starts does not inherit it."""
    upstream = tmp_path / "upstream.py"
    upstream.write_text(
        "import os\nfrom mcpio import Server\nserver = Server('envy')\n\n"
        "@server.tool\ndef variable(name: str) -> str:\n    return os.environ.get(name, '(unset)')\n\n"
        "server.run()\n"
    )
    target = f"{sys.executable} {upstream}"

    async def as_a_host() -> str:
        env = {**os.environ, "MCPIO_TARGET": target, "CANARY": "inherited"}
        async with Client([sys.executable, "-m", "mcpio", "run"], env=env, timeout=30) as c:
            assert (await c.call_tool("variable", {"name": "CANARY"})).data == "inherited"  # the upstream's own
            return str((await c.call_tool("variable", {"name": "MCPIO_TARGET"})).data)

    assert asyncio.run(as_a_host()) == "(unset)"
