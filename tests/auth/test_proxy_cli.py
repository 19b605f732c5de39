"""``mcpio run -t http … --auth-proxy-upstream ISSUER``: the OAuth proxy without code, a real
subprocess with oidc-provider upstream; and the usage errors of the flags."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mcpio import Client
from mcpio._cli._proxy_flags import proxy_from
from mcpio._cli._targets import UsageError
from mcpio.cli import build_parser
from tests.support.http import free_port, mcpio_http
from tests.support.oauth_proxy import login, pkce

HERE = Path(__file__).parent


def parse(*flags: str):
    return build_parser().parse_args(["run", "server.py", "-t", "http", *flags])


def test_no_flags_no_proxy():
    assert proxy_from(parse()) is None


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--auth-proxy-client-id", "x"], "needs --auth-proxy-upstream"),
        (["--auth-proxy-upstream", "https://idp.example.com"], "--auth-proxy-client-id is required"),
        (
            ["--auth-proxy-upstream", "https://idp.example.com", "--auth-issuer", "https://idp.example.com"],
            "exclude each other",
        ),
        (
            ["--auth-proxy-authorize-url", "https://github.com/login/oauth/authorize", "--auth-proxy-client-id", "x"],
            "go together",
        ),
        (
            [
                "--auth-proxy-upstream",
                "https://idp.example.com",
                "--auth-proxy-client-id",
                "x",
                "--auth-proxy-client-secret-env",
                "MCPIO_TEST_UNSET_SECRET",
            ],
            "named by --auth-proxy-client-secret-env",
        ),
        (
            ["--auth-proxy-upstream", "https://idp.example.com", "--auth-proxy-client-id", "x"],
            "$MCPIO_AUTH_PROXY_CLIENT_SECRET",
        ),
    ],
)
def test_usage_errors(flags, message):
    with pytest.raises(UsageError, match=message.replace("$", r"\$")):
        proxy_from(parse(*flags))


def test_github_style_endpoints_without_metadata(monkeypatch):
    monkeypatch.setenv("GH_SECRET", "s3cret")
    proxy = proxy_from(
        parse(
            "--port",
            "9200",
            "--auth-proxy-authorize-url",
            "https://github.com/login/oauth/authorize",
            "--auth-proxy-token-url",
            "https://github.com/login/oauth/access_token",
            "--auth-proxy-client-id",
            "Iv1.abc",
            "--auth-proxy-client-secret-env",
            "GH_SECRET",
            "--auth-proxy-upstream-scopes",
            "read:user",
            "--auth-proxy-userinfo",
            "https://api.github.com/user",
            "--auth-proxy-subject-claim",
            "id",
        )
    )
    assert proxy.issuer == "http://127.0.0.1:9200" and proxy.resource == "http://127.0.0.1:9200/mcp"
    assert proxy.callback_url == "http://127.0.0.1:9200/callback"
    assert proxy.upstream.scopes == ["read:user"] and proxy.upstream.subject_claim == "id"
    assert "s3cret" not in repr(proxy)


def test_a_secret_typed_on_the_command_line_is_not_echoed(monkeypatch):
    monkeypatch.delenv("MCPIO_AUTH_PROXY_CLIENT_SECRET", raising=False)
    # argparse reads --auth-proxy-client-secret as an abbreviation of --auth-proxy-client-secret-env
    args = parse(
        "--auth-proxy-upstream",
        "https://idp.example.com",
        "--auth-proxy-client-id",
        "x",
        "--auth-proxy-client-secret",
        "hunter2-s3cret",
    )
    with pytest.raises(UsageError) as info:
        proxy_from(args)
    assert "hunter2" not in str(info.value)


def test_mcpio_run_with_the_proxy_end_to_end(idp, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    r = httpx.post(
        idp.metadata()["registration_endpoint"],
        timeout=10,
        json={
            "redirect_uris": [base + "/callback"],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_post",
        },
    )
    upstream = r.json()
    log = tmp_path / "stderr.log"
    with mcpio_http(
        str(HERE / "protected_server.py"),
        "--auth-proxy-upstream",
        idp.issuer,
        # the "=" form: the identity provider's random client ids may start with "-",
        # which argparse would take for an option (it did, once in CI)
        f"--auth-proxy-client-id={upstream['client_id']}",
        *("--auth-proxy-scopes", "mcp,notes:write"),
        env={"PYTHONUNBUFFERED": "1", "MCPIO_AUTH_PROXY_CLIENT_SECRET": upstream["client_secret"]},
        log=log,
        port=port,
    ):
        meta = httpx.get(base + "/.well-known/oauth-authorization-server", timeout=10).json()
        assert meta["issuer"] == base
        redirect = "http://127.0.0.1:45678/cb"
        client = httpx.post(
            meta["registration_endpoint"],
            timeout=10,
            json={"redirect_uris": [redirect], "token_endpoint_auth_method": "none", "client_name": "cli test"},
        ).json()
        verifier, challenge = pkce()
        with httpx.Client(timeout=20) as ua:
            back = login(
                ua,
                str(
                    httpx.URL(
                        meta["authorization_endpoint"],
                        params={
                            "response_type": "code",
                            "client_id": client["client_id"],
                            "redirect_uri": redirect,
                            "state": "s",
                            "code_challenge": challenge,
                            "code_challenge_method": "S256",
                            "scope": "mcp notes:write",
                            "resource": base + "/mcp",
                        },
                    )
                ),
                redirect,
                user="grace",
            )
        code = httpx.URL(back).params["code"]
        tokens = httpx.post(
            meta["token_endpoint"],
            timeout=10,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect,
                "code_verifier": verifier,
                "client_id": client["client_id"],
            },
        ).json()

        async def main():
            async with Client(
                base + "/mcp", headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=20
            ) as c:
                return await c.call_tool("whoami", {})

        who = asyncio.run(main())
        assert who["structuredContent"]["subject"] == "grace"
    text = log.read_text()
    assert "Traceback" not in text and upstream["client_secret"] not in text


def test_an_unreachable_upstream_is_exit_3_not_a_usage_error(tmp_path):
    """Nothing listens at the upstream IdP: `mcpio run` says so in one line and exits 3 (could not
    reach), as the CLI's exit statuses document; the flags themselves were right."""
    (tmp_path / "server.py").write_text("from mcpio import Server\nserver = Server('x')\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpio",
            "run",
            "server.py",
            "-t",
            "http",
            "--port",
            str(free_port()),
            "--auth-proxy-upstream",
            f"http://127.0.0.1:{free_port()}",
            "--auth-proxy-client-id",
            "x",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MCPIO_AUTH_PROXY_CLIENT_SECRET": "s"},
    )
    assert done.returncode == 3, done.stderr
    assert "cannot read the upstream IdP's metadata" in done.stderr and "Traceback" not in done.stderr


def test_the_proxy_on_redis_needs_its_secret(monkeypatch):
    """On --redis the proxy's clients and grants outlive the process: its keys must too."""
    monkeypatch.setenv("GH_SECRET", "s3cret")
    monkeypatch.delenv("MCPIO_AUTH_PROXY_SECRET", raising=False)
    flags = [
        "--auth-proxy-authorize-url",
        "https://github.com/login/oauth/authorize",
        "--auth-proxy-token-url",
        "https://github.com/login/oauth/access_token",
        "--auth-proxy-client-id",
        "Iv1.abc",
        "--auth-proxy-client-secret-env",
        "GH_SECRET",
        "--redis",
        "redis://127.0.0.1:6379/0",
    ]
    with pytest.raises(UsageError, match=r"\$MCPIO_AUTH_PROXY_SECRET"):
        proxy_from(parse(*flags))
    monkeypatch.setenv("MCPIO_AUTH_PROXY_SECRET", "short")
    with pytest.raises(UsageError, match="at least 32"):
        proxy_from(parse(*flags))
    monkeypatch.setenv("MCPIO_AUTH_PROXY_SECRET", "k" * 40)
    assert proxy_from(parse(*flags)).issuer == "http://127.0.0.1:8000"
