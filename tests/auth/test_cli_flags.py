"""``mcpio run … --auth-*``: the flags become a ResourceServer, or a usage error that says what to add."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcpio._cli._auth_flags import resource_server_from
from mcpio._cli._targets import UsageError
from mcpio.auth import IntrospectionVerifier, JWTVerifier
from mcpio.cli import build_parser


def parse(*flags: str):
    return build_parser().parse_args(["run", "server.py", "-t", "http", *flags])


def test_no_flags_no_auth():
    assert resource_server_from(parse()) is None


def test_issuer_alone_defaults_the_audience_on_loopback():
    rs = resource_server_from(
        parse("--port", "9123", "--auth-issuer", "https://idp.example.com", "--auth-scopes", "mcp, notes:read")
    )
    assert rs.resource == "http://127.0.0.1:9123/mcp"
    assert rs.required_scopes == {"mcp", "notes:read"}
    assert isinstance(rs.verifier, JWTVerifier) and rs.verifier.issuer == "https://idp.example.com"
    assert rs.metadata()["authorization_servers"] == ["https://idp.example.com"]


def test_jwks_and_introspection(monkeypatch):
    rs = resource_server_from(
        parse(
            "--auth-issuer",
            "https://idp.example.com",
            "--auth-audience",
            "https://mcp.example.com/mcp",
            "--auth-jwks",
            "https://idp.example.com/keys",
        )
    )
    assert rs.verifier.jwks.jwks_url == "https://idp.example.com/keys"
    monkeypatch.setenv("MCPIO_AUTH_CLIENT_SECRET", "s3cret")
    rs = resource_server_from(
        parse(
            "--auth-issuer",
            "https://idp.example.com",
            "--auth-introspect",
            "https://idp.example.com/introspect",
            "--auth-client-id",
            "rs",
        )
    )
    assert isinstance(rs.verifier, IntrospectionVerifier) and rs.verifier._auth == ("rs", "s3cret")


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--auth-scopes", "a"], "needs --auth-issuer"),
        (["--auth-issuer", "http://idp.example.com"], "http:// on a non-loopback host"),
        (["--auth-issuer", "https://idp.example.com", "--host", "0.0.0.0"], "--auth-audience URL is required"),
        (["--auth-issuer", "https://idp.example.com", "--auth-audience", "mcp.example.com"], "absolute"),
        (["--auth-issuer", "https://idp.example.com", "--auth-client-id", "x"], "--auth-introspect"),
    ],
)
def test_usage_errors(flags, why):
    with pytest.raises(UsageError, match=why):
        resource_server_from(parse(*flags))


def test_stdio_with_auth_is_a_usage_error():
    r = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", "nothing.py", "--auth-issuer", "https://idp.example.com"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "-t http" in r.stderr


def test_a_remote_bind_without_auth_still_refuses():
    r = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", "tests/auth/protected_server.py", "-t", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "--auth-issuer" in r.stderr and "--allow-remote" in r.stderr


def test_the_audience_host_is_an_allowed_host():
    from mcpio._cli._auth_flags import serve_options

    assert serve_options(None) == {}
    rs = resource_server_from(
        parse(
            "--host",
            "0.0.0.0",
            "--auth-issuer",
            "https://idp.example.com",
            "--auth-audience",
            "https://mcp.example.com/mcp",
        )
    )
    options = serve_options(rs)
    assert options["auth"] is rs and options["allowed_hosts"] == ["localhost", "127.0.0.1", "[::1]", "mcp.example.com"]
    assert "allowed_hosts" not in serve_options(resource_server_from(parse("--auth-issuer", "https://idp.example.com")))
