"""Sharing a server with a teammate: shared-secret bearer tokens, as a user meets them.

A real ``mcpio run -t http --auth-token-env VAR`` process, driven by a real Client, httpx and
the real CLI; the Python equivalent (``http_app(auth=StaticTokens(...))``) on a real uvicorn."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mcpio import Client, Context, Server
from mcpio.auth import StaticTokens
from tests.support.http import ServerThread, free_port, mcpio_http

HERE = Path(__file__).parent
ALICE = "alice-s3cret-team-token-0001"
BOB = "bob-s3cret-team-token-00002"
ACCEPT = "application/json, text/event-stream"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def mcpio(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpio", *argv],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """``mcpio run -t http --auth-token-env TEAM_TOKENS`` with two tokens (comma and newline)."""
    log = tmp_path_factory.mktemp("static") / "stderr.log"
    with mcpio_http(
        *(str(HERE / "protected_server.py"), "--auth-token-env", "TEAM_TOKENS"),
        env={"TEAM_TOKENS": f"{ALICE},\n{BOB}\n", "MCPIO_LOG_LEVEL": "DEBUG"},
        log=log,
    ) as running:
        yield running
    text = log.read_text()
    assert "Traceback" not in text and ALICE not in text and BOB not in text


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_teammate_with_a_token_lists_and_calls(shared, era):
    url, proc = shared

    async def main():
        async with Client(url, era=era, headers={"Authorization": f"Bearer {BOB}"}, timeout=20) as c:
            return {t["name"] for t in await c.list_tools()}, await c.call_tool("whoami", {})

    tools, who = asyncio.run(main())
    assert tools == {"whoami", "add_note"}
    assert who["structuredContent"] == {"subject": "token-2", "client": None, "scopes": []}
    cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes() if Path("/proc").is_dir() else b""
    assert ALICE.encode() not in cmdline and BOB.encode() not in cmdline  # the name is in argv, never a token


def test_no_oauth_metadata_and_a_plain_bearer_challenge(shared):
    url, _ = shared
    base = url.rsplit("/mcp", 1)[0]
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        assert httpx.get(base + path, timeout=10).status_code == 401
    r = httpx.post(url, json=INIT, headers={"accept": ACCEPT}, timeout=10)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer <token>" in r.json()["error_description"]


def test_a_wrong_token_is_401_invalid_token(shared):
    url, _ = shared
    r = httpx.post(
        url, json=INIT, headers={"accept": ACCEPT, "authorization": "Bearer " + ALICE[:-1] + "2"}, timeout=10
    )
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


def test_a_token_without_the_bearer_prefix_is_never_echoed(shared):
    url, _ = shared
    r = httpx.post(url, json=INIT, headers={"accept": ACCEPT, "authorization": ALICE}, timeout=10)
    assert r.status_code == 401
    assert ALICE not in r.text and ALICE[:20] not in r.text and ALICE[:20] not in r.headers["www-authenticate"]
    assert "'Bearer <token>'" in r.json()["error_description"]
    cli = mcpio("list", url, "-H", f"Authorization: {ALICE}")
    assert cli.returncode == 1 and ALICE[:10] not in cli.stderr
    assert cli.stderr.startswith("mcpio: error: the server refused the Authorization header (HTTP 401)")
    assert cli.stderr.count("\n") == 2, cli.stderr  # one error, one hint: not the refusal three times


def test_an_empty_bearer_token_is_401_with_the_challenge(shared):
    """Issue 32: ``Authorization: Bearer `` is an invalid token (401 + WWW-Authenticate: clients
    re-authenticate on 401 only), not a malformed request (400)."""
    url, _ = shared
    for value in (b"Bearer ", b"Bearer", b"bearer \t "):  # sent as is (httpx refuses trailing spaces)
        status, head = raw_post(url, value)
        assert status == 401, value
        assert head["www-authenticate"].startswith('Bearer error="invalid_token"')


def raw_post(url: str, authorization: bytes) -> tuple[int, dict[str, str]]:
    """POST ``INIT`` with this exact ``Authorization`` value, over a plain socket."""
    import json
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    body = json.dumps(INIT).encode()
    request = (
        (
            f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: {ACCEPT}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
        ).encode()
        + b"Authorization: "
        + authorization
        + b"\r\n\r\n"
        + body
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in head[1:])
    return int(head[0].split()[1]), {k.lower(): v for k, v in fields.items()}


def test_the_cli_says_in_one_line_that_a_token_is_wanted(shared):
    url, _ = shared
    r = mcpio("list", url)
    assert r.returncode == 1
    first, *rest = r.stderr.splitlines()
    assert first == "mcpio: error: this server wants a bearer token: -H 'Authorization: Bearer …'"
    assert len(rest) == 1 and len(r.stderr) < 200, r.stderr
    verbose = mcpio("list", url, "-v")
    assert "default registration endpoint" in verbose.stderr  # the details, with -v
    ok = mcpio("call", url, "whoami", "-H", f"Authorization: Bearer {ALICE}", "--json")
    assert ok.returncode == 0 and '"token-1"' in ok.stdout


@pytest.mark.parametrize(
    ("env", "flags", "said"),
    [
        ({}, [], "$TEAM_TOKENS is not set"),
        ({"TEAM_TOKENS": " , "}, [], "$TEAM_TOKENS is empty"),
        ({"TEAM_TOKENS": "short"}, [], "16 or more"),
        ({"TEAM_TOKENS": ALICE + ",caf\u00e9-" + ALICE}, [], "token 2 cannot be sent"),
        ({"TEAM_TOKENS": ALICE}, ["--auth-issuer", "https://idp.example.com"], "do not go together"),
    ],
)
def test_usage_errors_name_the_variable_never_a_token(env, flags, said):
    base = {k: v for k, v in os.environ.items() if k != "TEAM_TOKENS"}
    r = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", str(HERE / "protected_server.py"), "-t", "http"]
        + ["--port", str(free_port()), "--auth-token-env", "TEAM_TOKENS", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 2 and said in r.stderr, r.stderr
    assert ALICE not in r.stderr and "short" not in r.stderr.replace("shorter", "")


def test_a_token_in_argv_is_refused():
    r = mcpio("run", str(HERE / "protected_server.py"), "-t", "http", "--auth-token-env", "$TEAM")
    assert r.returncode == 2 and "the NAME of an environment variable" in r.stderr


def test_python_equivalent_binds_a_legacy_session_to_its_token():
    server = Server("shared")

    @server.tool
    def who(ctx: Context) -> str:
        return ctx.auth.subject

    app = server.http_app(auth=StaticTokens({ALICE: "alice", BOB: "bob"}))
    with ServerThread(app) as srv, httpx.Client(timeout=10) as http:
        opened = http.post(srv.url, json=INIT, headers={"accept": ACCEPT, "authorization": f"Bearer {ALICE}"})
        assert opened.status_code == 200
        sid = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "who", "arguments": {}}}
        headers = {"accept": ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        stolen = http.post(srv.url, json=call, headers={**headers, "authorization": f"Bearer {BOB}"})
        assert stolen.status_code in (403, 404) and "alice" not in stolen.text  # refused: another principal
        mine = http.post(srv.url, json=call, headers={**headers, "authorization": f"Bearer {ALICE}"})
        assert mine.status_code == 200 and '"alice"' in mine.text


def test_static_tokens_refuse_weak_or_unsendable_tokens_without_showing_them():
    with pytest.raises(ValueError, match="16 or more") as e:
        StaticTokens(["hunter2"])
    assert "hunter2" not in str(e.value)
    with pytest.raises(TypeError):
        StaticTokens(ALICE)  # type: ignore[arg-type]
    assert ALICE not in repr(StaticTokens([ALICE]))
