"""``mcpio login``, ``mcpio auth``, a URL command with the stored token, and ``mcpio logout``:
the CLI as a subprocess against a real (small) authorization server and a protected mcpio
server on 127.0.0.1 (tests/support/oauth_as.py). The "browser" is this test: it reads the
login URL the CLI prints (--no-browser) and follows it, which lands on the CLI's loopback
redirect listener."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.client.test_oauth_client import protected

SECRET = "pass-word-1234"


def _mcpio(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpio", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("userinfo", ["", f"ada:{SECRET}@"])
def test_login_auth_list_logout(tmp_path, userinfo):
    """Also with a URL holding user:password: the commands work as with the bare URL (the OAuth
    client knows the server without it) and none of them prints it."""
    env = {**os.environ, "MCPIO_TOKEN_STORE": str(tmp_path / "tokens.json")}
    with protected() as (auth_server, url):
        url = url.replace("://", "://" + userinfo, 1)
        explained = _mcpio("auth", url, env=env)
        printed = [explained.stdout + explained.stderr]
        assert explained.returncode == 0, explained.stderr
        out = explained.stdout
        assert "HTTP 401" in out and "resource_metadata" in out
        assert "protected resource metadata: accepted" in out and "authorization server metadata: accepted" in out
        assert "S256 supported" in out and "no token for this URL" in out

        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpio", "login", url, "--no-browser", "--scopes", "read,write"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        try:
            assert proc.stderr is not None
            line = ""
            while "http" not in line:
                line = proc.stderr.readline()
                assert line, "the CLI printed no login URL"
            login_url = line.strip()
            assert login_url.startswith(auth_server.issuer + "/authorize?")
            assert httpx.get(login_url, follow_redirects=True).status_code == 200  # lands on the listener
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, stderr
        assert "logged in" in stdout and "scopes: read write" in stdout
        assert all(token not in stdout + stderr for token in auth_server.tokens)

        listed = _mcpio("list", url, "tools", "--json", env=env)  # uses (and may refresh) the stored token
        assert listed.returncode == 0, listed.stderr
        assert [t["name"] for t in json.loads(listed.stdout)] == ["add"]
        called = _mcpio("call", url, "add", "a=2", "b=3", env=env)  # write scope held: no step-up
        assert called.returncode == 0 and "5" in called.stdout, called.stderr
        assert auth_server.count("/authorize") == 1

        again = _mcpio("auth", url, env=env)
        assert "scopes: read write" in again.stdout
        gone = _mcpio("logout", url, env=env)
        assert gone.returncode == 0 and "forgot 1 token(s)" in gone.stdout
        twice = _mcpio("logout", url, env=env)
        assert "no stored token" in twice.stdout
    printed += [stdout + stderr, *(p.stdout + p.stderr for p in (listed, called, again, gone, twice))]
    assert not [text for text in printed if SECRET in text], printed
