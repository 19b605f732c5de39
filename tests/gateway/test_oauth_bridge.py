"""``mcpio run http://…/mcp`` (the stdio bridge a stdio-only host starts, what ``mcp-remote``
does) in front of a server protected by a real authorization server (oidc-provider,
scripts/setup-oidc): the bridge uses the token ``mcpio login`` stored, and says what to do when
there is none.

Everything is a real process: the provider, ``mcpio run -t http … --auth-issuer`` (the
server of tests/auth, whose ``whoami`` returns what the access token says), ``mcpio login
--no-browser`` (the scripted user opens the URL it prints, as tests/auth/test_client_oidc_e2e.py
does), and the bridge, spawned by mcpio's Client and by the official Python SDK's stdio client.
``BROWSER=false`` everywhere: no real browser can open.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from mcp import Client as SDKClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpio import Client, MCPError
from mcpio.auth import FileTokenStore
from tests.support.http import mcpio_http
from tests.support.oidc import OIDCProvider, missing
from tests.support.pipes import LineReader, init_lines

SERVER = Path(__file__).parents[1] / "auth" / "protected_server.py"


@pytest.fixture(scope="module")
def idp() -> Iterator[OIDCProvider]:
    why = missing()
    if why:
        pytest.fail(why)
    with OIDCProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def remote(idp: OIDCProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("remote") / "stderr.log"
    with mcpio_http(str(SERVER), "--auth-issuer", idp.issuer, "--auth-scopes", "mcp", log=log) as (url, _):
        yield url


def bridge_env(store: Path) -> dict[str, str]:
    return {**os.environ, "MCPIO_TOKEN_STORE": str(store), "BROWSER": "false", "PYTHONUNBUFFERED": "1"}


async def login(idp: OIDCProvider, url: str, env: dict[str, str], user: str) -> str:
    """``mcpio login URL --no-browser`` with ``user`` at the browser; returns what it printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpio",
        "login",
        url,
        "--no-browser",
        "--timeout",
        "30",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        said = b""
        while b"/auth?" not in said:  # "Open this URL in a browser to log in:\n  URL"
            line = await asyncio.wait_for(proc.stderr.readline(), 30)  # type: ignore[union-attr]
            assert line, said.decode()
            said += line
        authorize = said.decode().split()[-1]
        redirect, _ = await idp.interact(authorize, dict(parse_qsl(urlsplit(authorize).query))["redirect_uri"], user)
        async with httpx.AsyncClient(timeout=10) as browser:  # the browser lands on the CLI's listener
            assert (await browser.get(redirect)).status_code == 200
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, (said + err).decode()
        return (said + err + out).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_the_bridge_uses_the_token_mcpio_login_stored(idp, remote, tmp_path):
    store = tmp_path / "tokens.json"
    env = bridge_env(store)
    printed = asyncio.run(login(idp, remote, env, "bridge-user"))
    assert f"logged in: {remote}" in printed
    token = FileTokenStore(store).load(f"token {remote} {idp.issuer}")
    [client_key] = [k for k in FileTokenStore(store).keys() if k.startswith("client ")]  # noqa: SIM118 (a listing)
    client_id = FileTokenStore(store).load(client_key)["client_id"]
    secrets = [token["access_token"], token["refresh_token"]]
    bridge = [sys.executable, "-m", "mcpio", "run", remote]
    said: list[str] = []

    async def with_mcpio() -> dict:
        # a client that reads nothing but JSON-RPC on the bridge's stdout: one stray line fails it
        async with Client(bridge, env=env, on_stderr=said.append, timeout=30) as c:
            assert {t.name for t in await c.list_tools()} == {"whoami", "add_note"}
            return (await c.call_tool("whoami", {})).structured_content

    async def with_sdk() -> dict:
        params = StdioServerParameters(command=sys.executable, args=bridge[1:], env=env)
        with (tmp_path / "sdk-bridge-stderr.txt").open("w") as errlog:
            async with asyncio.timeout(30), SDKClient(stdio_client(params, errlog=errlog), mode="legacy") as c:
                assert {t.name for t in (await c.list_tools()).tools} == {"whoami", "add_note"}
                result = await c.call_tool("whoami", {})
                assert not result.is_error
                return result.structured_content

    # the upstream saw the stored login's token: its user and its registered client, its scope
    expected = {"subject": "bridge-user", "client": client_id, "scopes": ["mcp"]}
    assert asyncio.run(with_mcpio()) == expected
    assert asyncio.run(with_sdk()) == expected
    # no new login, no new code redeemed: the stored token served both bridges
    grants = idp.events(event="grant", client_id=client_id)
    assert [g["grant_type"] for g in grants] == ["authorization_code"]
    logged = "\n".join(said) + (tmp_path / "sdk-bridge-stderr.txt").read_text()
    assert all(s not in logged and s.split(".")[-1] not in logged for s in secrets)


def test_without_a_stored_login_and_no_browser_the_bridge_says_to_run_mcpio_login(idp, remote, tmp_path):
    """No token and no browser (``BROWSER=false`` fails): nobody reads the bridge's stderr (a
    host's log), so it does not wait for someone to open the login URL (it used to, for the
    browser timeout of 300 s, and the host's initialize timed out): it answers ``initialize`` at
    once with an error saying what to run (the host shows it; it used to serve an empty server,
    which hid the problem), says the same on stderr, and exits 1 when the host hangs up."""
    bridge = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", remote],
        env=bridge_env(tmp_path / "tokens.json"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert bridge.stdin is not None and bridge.stdout is not None and bridge.stderr is not None
    try:
        bridge.stdin.write(init_lines())
        bridge.stdin.flush()
        answer = LineReader(bridge.stdout.fileno()).message(20)  # at once; it used to take 300 s
        bridge.stdin.close()
        assert bridge.wait(20) == 1
        said = bridge.stderr.read().decode()
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait()
        bridge.stdout.close()
        bridge.stderr.close()
    line = (
        f"needs a login and no browser could be opened here: run `mcpio login {remote}` in a terminal, then try again"
    )
    assert answer["id"] == "init" and "result" not in answer
    message = answer["error"]["message"]
    assert message.startswith("the upstream server did not start: ") and message.endswith(f"{remote} {line}")
    assert line in said
    assert "/auth?" not in said  # no URL printed for nobody to open
    assert not (tmp_path / "tokens.json").exists() or not any(
        k.startswith("token ")
        for k in FileTokenStore(tmp_path / "tokens.json").keys()  # noqa: SIM118
    )


def test_through_mcpio_client_the_missing_login_is_the_connection_error(idp, remote, tmp_path):
    async def main() -> None:
        async with Client(
            [sys.executable, "-m", "mcpio", "run", remote], env=bridge_env(tmp_path / "t.json"), timeout=20
        ):
            pass

    with pytest.raises(MCPError, match=r"run `mcpio login .*` in a terminal, then try again"):
        asyncio.run(main())


def test_a_login_slower_than_the_era_probe_opens_one_browser_and_the_bridge_waits_for_it(idp, remote, tmp_path):
    """No stored token; the browser opens and the user takes longer than the bridge's
    ``server/discover`` probe (5 s) to log in. The probe gives up and the legacy ``initialize``
    goes instead: it waits for the login in progress. (It used to cancel that login with the
    probe, closing its redirect listener under the user's login page, and open a second one.)"""
    opened = tmp_path / "browser.log"
    env = {
        **bridge_env(tmp_path / "tokens.json"),
        "BROWSER": f"{sys.executable} {Path(__file__).with_name('slow_browser.py')} %s",
        "SLOW_BROWSER_LOG": str(opened),
        "SLOW_BROWSER_DELAY": "6",
        "SLOW_BROWSER_USER": "slow-user",
    }

    async def main() -> dict:
        async with Client([sys.executable, "-m", "mcpio", "run", remote], env=env, timeout=40) as c:
            return (await c.call_tool("whoami", {})).structured_content

    who = asyncio.run(main())
    [url] = opened.read_text().splitlines()  # one browser opened, once
    client_id = dict(parse_qsl(urlsplit(url).query))["client_id"]
    assert who == {"subject": "slow-user", "client": client_id, "scopes": ["mcp"]}
    assert len(idp.events(event="authorization", client_id=client_id)) == 1
