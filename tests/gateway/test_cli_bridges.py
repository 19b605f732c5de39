"""``mcpio run TARGET`` as a bridge, driven by clients nobody here wrote:

- ``mcpio run http://…/mcp`` over stdio (what ``mcp-remote`` does), driven by the official
  Python SDK's stdio client, with a real mcpio server on 127.0.0.1 behind it;
- ``mcpio run "python upstream.py" -t http`` (what ``mcp-proxy``/``supergateway`` do), driven by
  the official SDK's Streamable HTTP client and by the MCP Inspector's CLI (TypeScript SDK);
- ``mcpio run mcp.json -t http``: a gateway of several servers, driven by mcpio's client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from mcpio import Client, Server
from tests.client.support import arun
from tests.gateway.support import tools_changed, upstream_learns
from tests.support import peers
from tests.support.http import ServerThread, free_port, wait_port

HERE = Path(__file__).parent
UPSTREAM = HERE / "upstream.py"
TIMEOUT = 60.0


def remote_server() -> Server:
    server = Server("remote", version="2.0.0", instructions="Add with add.")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    return server


@contextlib.contextmanager
def mcpio_run(*args: str, log: Path) -> Iterator[str]:
    """``mcpio run ARGS -t http --port P`` as a subprocess; yields its URL."""
    port = free_port()
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpio", "run", *args, "-t", "http", "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            wait_port(port, proc=proc)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            assert proc.wait(30) is not None


def test_mcpio_run_url_is_a_stdio_bridge_for_the_official_sdk(tmp_path):
    with ServerThread(remote_server().http_app()) as remote:
        params = StdioServerParameters(command=sys.executable, args=["-m", "mcpio", "run", remote.url])

        async def main():
            with (tmp_path / "bridge-stderr.txt").open("w") as errlog:
                async with asyncio.timeout(TIMEOUT):
                    async with SDKClient(stdio_client(params, errlog=errlog), mode="legacy") as client:
                        tools = await client.list_tools()
                        assert [t.name for t in tools.tools] == ["add"]
                        result = await client.call_tool("add", {"a": 2, "b": 40})
                        assert result.content[0].text == "42"
                        read = await client.read_resource("notes://7")
                        assert read.contents[0].text == "note 7"

        asyncio.run(main())


def test_mcpio_run_command_over_http_for_the_sdk_and_the_inspector(tmp_path):
    command = f"{sys.executable} {UPSTREAM}"
    with mcpio_run(command, log=tmp_path / "stderr.txt") as url:

        async def main():
            async with asyncio.timeout(TIMEOUT):
                async with SDKClient(streamable_http_client(url)) as client:
                    names = {t.name for t in (await client.list_tools()).tools}
                    assert {"pid", "block", "grow"} <= names
                    pid = await client.call_tool("pid", {})
                    assert int(pid.content[0].text) > 0

        asyncio.run(main())
        env = peers.peers_env()
        env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")
        env["MCP_CLIENT_CONFIG_PATH"] = str(tmp_path / "inspector-client.json")
        proc = subprocess.run(
            [*peers.inspector_cli_argv(), url, "--transport", "http", "--format", "json", "--method", "tools/list"],
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, proc.stderr
        line = next(x for x in proc.stdout.splitlines() if x.startswith('{"result"'))
        assert "pid" in {t["name"] for t in json.loads(line)["result"]["tools"]}


def test_mcpio_run_config_file_is_a_gateway_over_http(tmp_path):
    # Two entries of one server (third-party upstreams through a gateway: test_proxy.py, over stdio).
    config = tmp_path / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "mine": {"command": sys.executable, "args": [str(UPSTREAM)]},
                    "yours": {"command": sys.executable, "args": [str(UPSTREAM)], "tools": {"allow": ["pid"]}},
                }
            }
        )
    )
    with mcpio_run(str(config), log=tmp_path / "stderr.txt") as url:

        async def go():
            async with Client(url, timeout=30) as c:
                assert c.server_info["name"] == "team"
                names = {t.name for t in await c.list_tools()}
                assert {"mine__pid", "mine__grow", "yours__pid"} <= names and "yours__grow" not in names
                # "tools": {"allow": …} chooses tools only: the entry's resources are served all the same
                templates = {t.uri_template for t in await c.list_resource_templates()}
                assert {"note://mine/{id}", "note://yours/{id}"} <= templates
                assert (await c.read_resource("note://yours/7"))[0].text == "note 7"
                pids = {(await c.call_tool(f"{who}__pid", {})).data for who in ("mine", "yours")}
                assert len(pids) == 2  # one process per entry

        arun(go(), timeout=90)


def test_mcpio_run_of_one_entry_serves_the_tools_it_allows_and_all_its_resources(tmp_path):
    """``mcpio run mcp.json:NAME`` (a proxy of one entry) serves the tools its ``"tools"`` allow
    list names and every resource template; it served every tool."""
    config = tmp_path / "team.json"
    entry = {"command": sys.executable, "args": [str(UPSTREAM)], "tools": {"allow": ["pid"]}}
    config.write_text(json.dumps({"mcpServers": {"yours": entry}}))

    async def go():
        async with Client([sys.executable, "-m", "mcpio", "run", f"{config}:yours"], timeout=30) as c:
            assert [t.name for t in await c.list_tools()] == ["pid"]
            assert "note://{id}" in {t.uri_template for t in await c.list_resource_templates()}

    arun(go(), timeout=90)


def test_install_url_in_a_host_that_starts_commands_only_writes_the_bridge(tmp_path):
    """`mcpio install URL --host claude --header ...`: Claude Desktop starts commands only, so the
    entry runs `mcpio run URL`; the header (a bearer token from the environment) is in the
    entry's env, never its argv; run as the host runs it, the bridge reaches the protected server."""
    token = "team-token-0123456789abcdef"
    port = free_port()
    env = {**os.environ, "TEAM_TOKEN": token}
    with (tmp_path / "server.txt").open("w") as err:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcpio",
                "run",
                str(UPSTREAM),
                "-t",
                "http",
                "--port",
                str(port),
                "--auth-token-env",
                "TEAM_TOKEN",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_port(port, proc=server)
        url = f"http://127.0.0.1:{port}/mcp"
        config = tmp_path / "claude.json"
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcpio",
                "install",
                url,
                "--host",
                "claude",
                "--config",
                str(config),
                "--name",
                "team",
                "--header",
                "Authorization: Bearer ${TEAM_TOKEN}",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert out.returncode == 0, out.stderr
        entry = json.loads(config.read_text())["mcpServers"]["team"]
        assert entry["args"] == ["-m", "mcpio", "run", url] and token not in json.dumps(entry["args"])
        assert token in entry["env"]["MCPIO_HEADERS"]

        async def as_the_host():
            host_env = {k: v for k, v in os.environ.items() if k != "TEAM_TOKEN"}
            async with Client(
                [entry["command"], *entry["args"]], env={**host_env, **entry["env"]}, env_mode="exact", timeout=30
            ) as c:
                assert (await c.call_tool("pid", {})).data > 0

        arun(as_the_host(), timeout=60)
    finally:
        server.terminate()
        server.wait(30)


def test_doctor_of_a_gateway_file_shows_each_upstreams_state(tmp_path):
    """`mcpio doctor mcp.json`: the gateway as a host runs it, and each upstream's state: started
    with its counts, or failed with its error (a problem: exit status 1)."""
    config = tmp_path / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "mine": {"command": sys.executable, "args": [str(UPSTREAM)]},
                    "broken": {"command": str(tmp_path / "no-such-server")},
                }
            }
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "mcpio", "doctor", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    mine, broken = report["upstreams"]
    assert (mine["name"], mine["state"], mine["error"]) == ("mine", "started", None)
    assert mine["tools"] >= 8 and mine["templates"] == 2  # note://{id}, gone://{id}
    assert (broken["name"], broken["state"]) == ("broken", "failed")
    assert "no-such-server" in broken["error"]
    assert any("upstream 'broken' did not start" in p for p in report["problems"])
    assert "mine__pid" in {t["name"] for t in report["tools"]}  # the gateway itself, as a host sees it


def test_mcpio_run_url_sends_concurrent_calls_at_once_over_several_connections():
    """Calls pipelined into the stdio bridge reach the upstream together, each on its own
    kept-alive connection: a tool that answers only once all of them are in proves nothing
    serialises them on the way (the OAuth client the bridge attaches included)."""
    n = 8
    arrived: list[int] = []
    all_in: list[asyncio.Event] = []  # made in the server's loop, by the first call
    peers_seen: set[object] = set()
    server = Server("meet")

    @server.tool
    async def meet(i: int) -> int:
        """Answer once ``n`` calls are in."""
        if not all_in:
            all_in.append(asyncio.Event())
        arrived.append(i)
        if len(arrived) == n:
            all_in[0].set()
        await asyncio.wait_for(all_in[0].wait(), 30)
        return i

    app = server.http_app()

    async def tapped(sc, receive, send):
        if sc["type"] == "http" and sc["method"] == "POST":
            peers_seen.add(tuple(sc["client"]))
        await app(sc, receive, send)

    with ServerThread(tapped) as remote:

        async def main() -> list[str]:
            async with Client([sys.executable, "-m", "mcpio", "run", remote.url], timeout=TIMEOUT) as c:
                results = await asyncio.gather(*(c.call_tool("meet", {"i": i}) for i in range(n)))
                return [r.text for r in results]

        assert arun(main(), TIMEOUT) == [str(i) for i in range(n)]
    assert len(peers_seen) >= n  # one connection per call in flight (HTTP/1.1 answers one at a time)


@pytest.mark.skipif(sys.platform == "win32", reason="a #! script: POSIX")
def test_mcpio_run_of_a_path_to_a_program_that_is_not_python_proxies_it(tmp_path):
    """``mcpio run ./bin/some-server`` (a path without ``.py``: an npm package's bin, a shell
    wrapper) serves that program, as ``mcpio call`` runs the same path; it was imported as
    Python ("cannot be imported as a Python module")."""
    script = tmp_path / "bin" / "upstream-server"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'upstream.py'))}\n")
    script.chmod(0o755)

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(script)], timeout=TIMEOUT) as c:
            assert (await c.call_tool("echo", {"text": "hi"})).text == "hi"

    arun(go(), timeout=90)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_bridge_says_what_its_upstream_says_of_itself(era):
    """A host takes a server's ``instructions`` (into the model's context) and ``serverInfo`` from
    its ``initialize`` (2026-07-28: ``server/discover``) answer. Through ``mcpio run URL`` and
    ``mcpio run "COMMAND"`` they are the upstream's; they were the bridge's own: no
    instructions, and the name of the command (``python``) or the URL, version 0.1.0."""
    with ServerThread(remote_server().http_app()) as remote:
        targets = {
            remote.url: ("Add with add.", "remote", "2.0.0", None),
            shlex.join([sys.executable, str(UPSTREAM)]): (
                "Call pid to learn who serves.",
                "upstream",
                "1.0.0",
                "The test upstream",
            ),
        }

        async def go() -> None:
            for target, said in targets.items():
                async with Client([sys.executable, "-m", "mcpio", "run", target], era=era, timeout=TIMEOUT) as c:
                    info = c.server_info
                    assert (c.instructions, info["name"], info["version"], info.get("title")) == said

        arun(go(), timeout=90)


def test_the_upstream_of_the_stdio_bridge_gets_the_hosts_roots():
    """``mcpio run "COMMAND"`` over stdio (its one client: the host): the upstream asks
    ``roots/list`` outside any call, right after initialize and on ``roots/list_changed`` (as
    the reference filesystem server does), and gets the host's roots, again after they change.
    It got none, and never heard of a change."""
    argv = [sys.executable, "-m", "mcpio", "run", shlex.join([sys.executable, str(HERE / "roots_upstream.py")])]
    changed = asyncio.Event()

    async def go() -> None:
        on = tools_changed(changed)
        async with Client(argv, era="legacy", roots=["file:///a"], on_notification=on, timeout=TIMEOUT) as c:
            await upstream_learns(c, changed, "roots", ["file:///a"])
            await c.set_roots(["file:///b"])
            await upstream_learns(c, changed, "roots", ["file:///b"])

    arun(go(), timeout=90)
