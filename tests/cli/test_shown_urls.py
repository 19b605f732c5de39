"""The command line names a URL it was given without its credentials (``mcpio._shown.shown``):
``mcpio list/doctor/auth URL`` and ``mcpio run/doctor --openapi URL``, real subprocesses, a
closed port or a real server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from mcpio import Server
from tests.support.http import ServerThread, free_port

SECRET = "pass-word-1234"


def mcpio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpio", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip


def test_unreachable_url_commands_name_it_without_its_credentials():
    port = free_port()  # closed again: nothing listens there
    url, plain = (
        f"http://ada:{SECRET}@127.0.0.1:{port}/mcp?token={SECRET}",
        f"http://127.0.0.1:{port}/mcp?token=[redacted]",
    )
    listed, doctored, explained = mcpio("list", url), mcpio("doctor", "--json", url), mcpio("auth", url)
    assert f"check that an MCP server is running at {plain}" in listed.stderr, listed.stderr
    assert json.loads(doctored.stdout)["target"] == plain, doctored.stdout
    assert f"mcpio: cannot reach {plain}: ConnectError" in explained.stderr, explained.stderr
    for done in (listed, doctored, explained):
        assert SECRET not in done.stdout + done.stderr, done


def test_doctor_names_a_url_as_given_but_for_its_encoded_and_repeated_credentials():
    """A parameter's name is matched as the server decodes it (``%74oken`` is ``token``), each of a
    repeated one is redacted, and every other character of the report's URL is the one given."""
    port = free_port()  # closed again: nothing listens there
    url = f"http://ada:{SECRET}@127.0.0.1:{port}/mcp?%74oken={SECRET}&api%5Fkey={SECRET}&=7&token={SECRET}#"
    done = mcpio("doctor", "--json", url)
    assert json.loads(done.stdout)["target"] == (
        f"http://127.0.0.1:{port}/mcp?%74oken=[redacted]&api%5Fkey=[redacted]&=7&token=[redacted]#"
    ), done.stdout
    assert SECRET not in done.stdout + done.stderr, done


def test_a_command_line_target_names_its_urls_without_their_userinfo():
    """``mcpio doctor/list "COMMAND … URL"`` (a bridge such as ``npx mcp-remote URL``): the report's
    target and the hint name the command with each URL's userinfo dropped, every other word as given."""
    command = f"{sys.executable} -c pass https://ada:{SECRET}@127.0.0.1:9/mcp"
    doctored, listed = mcpio("doctor", "--json", command), mcpio("list", command)
    assert json.loads(doctored.stdout)["target"] == f"{sys.executable} -c pass https://127.0.0.1:9/mcp", doctored
    assert f"check that {sys.executable} -c pass https://127.0.0.1:9/mcp starts an MCP server" in listed.stderr
    for done in (doctored, listed):
        assert SECRET not in done.stdout + done.stderr, done


def test_doctor_openapi_shows_the_document_url_without_its_credentials():
    """The command it checks downloads the document with the URL's Basic credentials (as given);
    the report names that command with the URL shown."""
    seen: list[str] = []

    async def doc(request: Request) -> Response:
        seen.append(request.headers.get("authorization", ""))
        return JSONResponse({"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {}})

    with ServerThread(Starlette(routes=[Route("/openapi.json", doc)])) as srv:
        url = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/openapi.json?api_key={SECRET}"
        done = mcpio("doctor", "--json", "--openapi", url, "--base-url", f"http://bob:{SECRET}@127.0.0.1:9")
    target = json.loads(done.stdout)["target"]
    assert target.endswith(
        f"-m mcpio run --openapi 'http://127.0.0.1:{srv.port}/openapi.json?api_key=[redacted]' "
        "--base-url http://127.0.0.1:9"
    ), target
    assert SECRET not in done.stdout + done.stderr, done
    basic = "Basic " + base64.b64encode(f"ada:{SECRET}".encode()).decode()
    assert len(seen) >= 2 and set(seen) == {basic}, seen  # doctor's own read, and each `mcpio run`'s


def _banner(*args: str) -> str:
    """What ``mcpio run ARGS`` over stdio says at a terminal (a pty for stdin and stderr)."""
    import pty
    import select
    import signal

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", *args],
        stdin=follower, stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    os.close(follower)
    seen = b""
    try:
        while b"add it to a host" not in seen and select.select([leader], [], [], 60)[0]:
            seen += os.read(leader, 4096)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        os.close(leader)
    return seen.decode()


def test_run_banners_name_the_urls_without_their_credentials():
    """``mcpio run --openapi URL`` and ``mcpio run URL`` (a proxy) over stdio say how to try them,
    naming their own target: with the URLs shown."""
    upstream = Server("up")

    async def doc(request: Request) -> Response:
        return JSONResponse({"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {}})

    app = Starlette(routes=[Route("/openapi.json", doc), Mount("/up", upstream.http_app(path="/"))])
    with ServerThread(app) as srv:
        at = f"http://ada:{SECRET}@127.0.0.1:{srv.port}"
        api = _banner("--openapi", f"{at}/openapi.json", "--base-url", f"http://bob:{SECRET}@127.0.0.1:9")
        proxy = _banner(f"{at}/up/?token={SECRET}")
    assert f"mcpio run --openapi http://127.0.0.1:{srv.port}/openapi.json --base-url http://127.0.0.1:9" in api, api
    assert f"serving 'http://127.0.0.1:{srv.port}/up/?token=[redacted]'" in proxy, proxy
    assert f"mcpio list 'http://127.0.0.1:{srv.port}/up/?token=[redacted]' " in proxy, proxy  # quoted: ? and [ ] glob
    assert SECRET not in api + proxy, (api, proxy)


def test_install_refusal_names_the_url_without_its_credentials(tmp_path):
    """``mcpio install URL`` checks the entry first; its refusal and its hint name the URL shown
    (the entry it would write keeps the URL as given: the host connects with it)."""
    port = free_port()  # closed again: nothing listens there
    url = f"http://ada:{SECRET}@127.0.0.1:{port}/mcp?token={SECRET}"
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "install", url, "--host", "cursor"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode != 0
    assert f"run 'mcpio doctor http://127.0.0.1:{port}/mcp?token=[redacted]' to see more" in done.stderr, done.stderr
    assert SECRET not in done.stdout + done.stderr, done.stderr


def test_config_and_tap_name_a_configured_url_without_its_credentials(tmp_path):
    """``mcpio config FILE`` lists each entry's URL, and ``mcpio tap`` refuses a URL, shown."""
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"remote": {"url": f"https://ada:{SECRET}@mcp.test/mcp?key={SECRET}"}}})
    )
    listed = mcpio("config", str(config), "--json")
    assert [row["run"] for row in json.loads(listed.stdout)] == ["https://mcp.test/mcp?key=[redacted]"], listed.stdout
    tapped = mcpio("tap", "-o", str(tmp_path / "t.jsonl"), "--", f"https://ada:{SECRET}@mcp.test/mcp")
    assert "https://mcp.test/mcp is a URL; tap and replay work with a server started over stdio" in tapped.stderr
    assert SECRET not in listed.stdout + listed.stderr + tapped.stdout + tapped.stderr


def test_config_names_a_commands_url_arguments_without_their_credentials(tmp_path):
    """``mcpio config FILE`` lists a command entry's line: a URL among its arguments (the stdio
    bridge, ``mcpio run URL``, as a host's file holds it) is shown, every other word as it is."""
    config = tmp_path / "claude.json"
    bridge = {
        "command": "/usr/bin/python3",
        "args": ["-m", "mcpio", "run", f"https://ada:{SECRET}@mcp.test/mcp?api_key={SECRET}"],
    }
    config.write_text(json.dumps({"mcpServers": {"bridge": bridge}}))
    listed = mcpio("config", str(config), "--json")
    assert [row["run"] for row in json.loads(listed.stdout)] == [
        "/usr/bin/python3 -m mcpio run https://mcp.test/mcp?api_key=[redacted]"
    ], listed.stdout
    assert SECRET not in listed.stdout + listed.stderr


def test_call_and_usage_errors_name_the_urls_without_their_credentials():
    """``mcpio call URL TOOL`` on a server without tools hints ``mcpio list URL``; a TARGET and
    ``--openapi`` together are refused naming both: each URL shown."""
    with ServerThread(Server("empty").http_app()) as srv:
        url = f"http://ada:{SECRET}@127.0.0.1:{srv.port}/mcp?token={SECRET}"
        called = mcpio("call", url, "nosuch")
    both = mcpio("doctor", url, "--openapi", f"http://bob:{SECRET}@127.0.0.1:9/openapi.json")
    served = mcpio("run", url, "--openapi", f"http://bob:{SECRET}@127.0.0.1:9/openapi.json")
    assert f"mcpio list http://127.0.0.1:{srv.port}/mcp?token=[redacted] shows what it has" in called.stderr
    shown = f"(http://127.0.0.1:{srv.port}/mcp?token=[redacted] and http://127.0.0.1:9/openapi.json)"
    assert f"give TARGET or --openapi SPEC, not both {shown}" in both.stderr, both.stderr
    assert f"give FILE[:OBJECT] or --openapi SPEC, not both {shown}" in served.stderr, served.stderr
    for done in (called, both, served):
        assert SECRET not in done.stdout + done.stderr, done.stderr


def test_doctor_of_a_gateway_names_an_unreachable_upstream_url_without_its_credentials(tmp_path):
    """``mcpio doctor mcp.json``: each upstream's state, a URL entry's failure with its URL shown."""
    port = free_port()  # closed again: nothing listens there
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"remote": {"url": f"http://ada:{SECRET}@127.0.0.1:{port}/mcp?key={SECRET}"}}})
    )
    done = mcpio("doctor", str(config))
    assert (
        f"PROBLEM: upstream 'remote' did not start: ConnectionClosed: cannot reach the MCP server at "
        f"http://127.0.0.1:{port}/mcp?key=[redacted]: "
    ) in done.stdout, done.stdout
    assert SECRET not in done.stdout + done.stderr
