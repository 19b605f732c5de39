"""``mcpio run mcp.json`` starts its stdio upstreams right after it reads the file, before it
loads the rest of itself (``start_servers``, :func:`mcpio._transports._spawn.spawn`),
and the upstream's first connection adopts that process: one process per entry, the one that
serves. A process never adopted (the gateway fails, or is stopped, before it serves) is ended
with its whole group."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mcpio import Client, Server, ServerExited
from mcpio._gateway._config import from_config
from mcpio._host._config import load_config, start_servers
from mcpio._transports._spawn import spawn
from tests.client.support import arun, within
from tests.gateway.support import tools_changed
from tests.support.http import ServerThread

HERE = Path(__file__).parent
COUNTED = HERE / "counted_upstream.py"
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _config(folder: Path, *entries: tuple[str, list[str]]) -> Path:
    config = folder / "mcp.json"
    servers = {name: {"command": sys.executable, "args": args} for name, args in entries}
    config.write_text(json.dumps({"mcpServers": servers}))
    return config


def _pids(file: Path) -> list[int]:
    return [int(line) for line in file.read_text().split()] if file.exists() else []


def _running(marker: str) -> set[int]:
    """Live (non-zombie) processes whose command line holds ``marker``."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                out.add(int(entry))
    return out


def _gone(marker: str, seconds: float = 10.0) -> bool:
    """Whether every process holding ``marker`` has ended within ``seconds`` (those left are killed)."""
    deadline = time.monotonic() + seconds
    while left := _running(marker):
        if time.monotonic() > deadline:
            for pid in left:  # not left behind by the test either
                os.kill(pid, signal.SIGKILL)
            return False
        time.sleep(0.05)
    return True


def _started(file: Path, count: int, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while len(_pids(file)) < count:
        assert time.monotonic() < deadline, f"{count} upstream(s) did not start within {seconds} s"
        time.sleep(0.02)
    return _pids(file)


def test_the_upstream_started_before_serving_is_the_one_that_serves(tmp_path):
    starts = tmp_path / "starts"
    config = _config(tmp_path, ("counted", [str(COUNTED), str(starts)]))
    specs = load_config(config)
    gateway = from_config(specs, processes=start_servers(specs))
    (pid,) = _started(starts, 1)  # running before the gateway serves, before any event loop exists

    async def go():
        async with Client(gateway, timeout=60) as c:
            assert "counted__pid" in {t.name for t in await c.list_tools()}
            return (await c.call_tool("counted__pid", {})).data

    assert arun(go(), timeout=90) == pid
    assert _pids(starts) == [pid]  # one process for the entry: the one started early
    assert _gone(str(starts)), "the upstream outlived the gateway"


def test_mcpio_run_starts_one_process_per_entry_and_leaves_none(tmp_path):
    starts = tmp_path / "starts"
    config = _config(
        tmp_path, ("a", [str(COUNTED), str(starts)]), ("b", [str(COUNTED), str(starts)]), ("off", ["-c", "1/0"])
    )
    data = json.loads(config.read_text())
    data["mcpServers"]["off"]["disabled"] = True
    config.write_text(json.dumps(data))

    async def go():
        async with Client([sys.executable, "-m", "mcpio", "run", str(config)], timeout=60) as c:
            names = {t.name for t in await c.list_tools()}
            assert {"a__pid", "b__pid"} <= names
            return {(await c.call_tool(f"{e}__pid", {})).data for e in ("a", "b")}

    served = arun(go(), timeout=90)
    assert sorted(_pids(starts)) == sorted(served)  # exactly the two early processes served
    assert _gone(str(starts)), "an upstream outlived the gateway"


@pytest.mark.parametrize("kind", ["gateway", "proxy"])
def test_a_gateway_or_proxy_mounted_while_serving_ends_its_upstream_with_the_server(tmp_path, kind):
    """``outer.mount(...)`` from a tool of ``outer`` while it serves (over HTTP on 127.0.0.1): the
    mounted server's lifespan starts its upstream (a proxy's tools come with ``list_changed``), and
    ends it when ``outer`` stops: no upstream process outlives the server it was mounted in."""
    starts = tmp_path / "starts"
    config = _config(tmp_path, ("counted", [str(COUNTED), str(starts)]))
    outer = Server("outer")

    @outer.tool
    def attach() -> str:
        if kind == "gateway":
            outer.mount(Server.from_config(str(config)))
        else:
            outer.mount(Server.proxy([sys.executable, str(COUNTED), str(starts)]), namespace="counted")
        return "attached"

    async def go(url: str) -> int:
        changed = asyncio.Event()
        async with Client(url, era="legacy", timeout=60) as c:
            assert (await c.call_tool("attach", {})).text == "attached"
        async with Client(url, era="legacy", timeout=60, on_notification=tools_changed(changed)) as c:
            while "counted__pid" not in {t.name for t in await c.list_tools()}:
                await within(changed.wait(), 15)
                changed.clear()
            pid = (await c.call_tool("counted__pid", {})).data
            assert isinstance(pid, int)
            return pid

    with ServerThread(outer.http_app()) as served:
        pid = arun(go(served.url), timeout=90)
    assert _pids(starts) == [pid]
    assert _running(str(starts)) == set(), "the upstream outlived the server it was mounted in"
    assert _gone(str(starts))  # (none left behind by the test either)


def test_requests_wait_for_a_gateway_mounted_while_serving_on_every_session(tmp_path):
    """A legacy client's tool call mounts a gateway in the server it is served by (over HTTP on
    127.0.0.1); the next request on that same session (opened before the mount, and again after a
    first start has ended) waits for the gateway's upstream: its first ``tools/list`` lists it."""
    starts = tmp_path / "starts"
    outer = Server("outer")

    @outer.tool
    def attach(entry: str) -> str:
        outer.mount(Server.from_config(str(_config(tmp_path / entry, (entry, [str(COUNTED), str(starts)])))))
        return "attached"

    async def go(url: str) -> set[str]:
        async with Client(url, era="legacy", timeout=60) as c:
            assert (await c.call_tool("attach", {"entry": "a"})).text == "attached"
            assert "a__pid" in {t.name for t in await c.list_tools()}
            assert (await c.call_tool("attach", {"entry": "b"})).text == "attached"
            return {t.name for t in await c.list_tools()}

    for entry in ("a", "b"):
        (tmp_path / entry).mkdir()
    with ServerThread(outer.http_app()) as served:
        assert {"a__pid", "b__pid"} <= arun(go(served.url), timeout=90)
    assert _gone(str(starts)), "an upstream outlived the server it was mounted in"


def test_the_proxy_of_a_command_line_starts_its_upstream_once(tmp_path):
    starts = tmp_path / "starts"
    command = shlex.join([sys.executable, str(COUNTED), str(starts)])

    async def go():
        async with Client([sys.executable, "-m", "mcpio", "run", command], timeout=60) as c:
            return (await c.call_tool("pid", {})).data

    served = arun(go(), timeout=90)
    assert _pids(starts) == [served]  # started before the proxy served: the one process, serving
    assert _gone(str(starts)), "the upstream outlived the proxy"


def test_a_gateway_failing_before_it_serves_ends_what_it_started(tmp_path):
    """--reload is refused after the gateway was made (it reloads Python code): its upstream,
    which ignores the end of its stdin and SIGTERM, is killed with its group, not left behind."""
    starts = tmp_path / "starts"
    config = _config(tmp_path, ("stubborn", [str(COUNTED), str(starts), "stubborn"]))
    argv = [sys.executable, "-m", "mcpio", "run", str(config), "--reload"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stderr
    assert "--reload works with Python code" in result.stderr
    assert _gone(str(starts)), "the upstream started early outlived the gateway"


def test_sigterm_before_serving_ends_what_was_started(tmp_path):
    starts = tmp_path / "starts"
    config = _config(tmp_path, ("stubborn", [str(COUNTED), str(starts), "stubborn"]))
    script = tmp_path / "made.py"
    script.write_text(
        "import sys, time\n"
        "from mcpio._host._config import load_config, start_servers\n"
        f"start_servers(load_config({str(config)!r}))\n"
        "print('made', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "made\n"
        _started(starts, 1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0  # stopped as a server stopped with SIGTERM: exit status 0
    finally:
        proc.kill()
        proc.wait()
    assert _gone(str(starts)), "the upstream started early outlived the process stopped with SIGTERM"


@pytest.mark.parametrize("mode", ["loop", "threads"])
def test_a_client_adopts_a_process_started_by_spawn(tmp_path, monkeypatch, mode):
    """In either stdio mode (the loop's pipe transports, or threads) the process is served,
    then closed with the client."""
    monkeypatch.setenv("MCPIO_STDIO_MODE", mode)
    starts = tmp_path / "starts"
    argv = [sys.executable, str(COUNTED), str(starts)]
    process = spawn(argv[0], argv[1:])

    async def go():
        async with Client(argv, process=process, timeout=60) as c:
            return (await c.call_tool("pid", {})).data

    assert arun(go(), timeout=60) == process.pid
    assert _pids(starts) == [process.pid]
    assert process.returncode is not None or process.poll() is not None  # closed with the client


@pytest.mark.parametrize("mode", ["loop", "threads"])
def test_an_adopted_process_that_already_exited_is_reported_with_its_code_and_stderr(monkeypatch, mode):
    monkeypatch.setenv("MCPIO_STDIO_MODE", mode)
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('no config here\\n'); sys.exit(3)"]
    process = spawn(argv[0], argv[1:])
    process.wait()  # gone before the client adopts it

    async def go():
        with pytest.raises(ServerExited) as info:
            async with Client(argv, process=process, timeout=30):
                pass
        return info.value

    error = arun(go(), timeout=60)
    assert error.exit_code == 3
    assert "no config here" in error.stderr_tail


def test_forked_workers_each_start_their_own_upstream(tmp_path, redis_url):
    """``-t http --workers 2``: nothing is started before the fork (each worker would adopt the
    same pipes); each worker starts and serves its own upstream, and none is left after SIGTERM."""
    import httpx

    from tests.http.conftest import modern, modern_headers
    from tests.support.http import free_port, wait_port

    starts = tmp_path / "starts"
    config = _config(tmp_path, ("counted", [str(COUNTED), str(starts)]))
    port = free_port()
    argv = [sys.executable, "-m", "mcpio", "run", str(config), "-t", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [*argv, "--redis", redis_url, "--workers", "2"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_port(port, proc=proc)
        served = set()
        deadline = time.monotonic() + 60
        while len(served) < 2 and time.monotonic() < deadline:  # a new connection each time: either worker
            with httpx.Client(timeout=30) as c:
                r = c.post(
                    f"http://127.0.0.1:{port}/mcp",
                    headers=modern_headers("tools/call", "counted__pid", accept="application/json"),  # never SSE
                    json=modern(1, "tools/call", {"name": "counted__pid"}),
                )
            assert r.status_code == 200, r.text
            served.add(r.json()["result"]["structuredContent"]["result"])
        assert len(served) == 2, "both workers did not answer within 60 s"
        assert sorted(_pids(starts)) == sorted(served)  # one upstream per worker, none started before the fork
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _gone(str(starts)), "an upstream outlived the workers"


@pytest.mark.parametrize("run_by", ["application", "mcpio run"])
def test_a_proxy_freezes_the_collector_only_in_a_process_mcpio_runs(run_by):
    """A proxy takes what its upstream's start loaded out of the collector's sight (gc.freeze) only
    in a process mcpio's command line runs; served in an application's own process it leaves the
    collector as it was."""
    script = textwrap.dedent(
        f"""
        import asyncio, gc, sys
        {"import mcpio.cli, mcpio._collector" if run_by == "mcpio run" else ""}
        from mcpio import Client, Server

        async def main():
            proxy = Server.proxy({UPSTREAM!r}, name="up")
            async with Client(proxy, era="legacy") as c:
                await c.list_tools()
            print(gc.get_freeze_count())

        asyncio.run(main())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    frozen = int(out.stdout.split()[-1])
    assert (frozen > 0) == (run_by == "mcpio run"), frozen
