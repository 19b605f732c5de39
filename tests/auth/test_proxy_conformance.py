"""The official conformance suite's authorization-server scenarios against the OAuth proxy:
``authorization-server-metadata-endpoint`` and ``authorization-code-grant``. The suite prints the
authorization URL for a human; the test plays the human with a scripted user agent (the proxy's
authorize → oidc-provider's login → the proxy's consent → the suite's loopback callback)."""

from __future__ import annotations

import json
import subprocess

from tests.support.http import free_port
from tests.support.oauth_proxy import login, proxy_stack
from tests.support.peers import conformance_argv


def test_authorization_server_scenarios(idp, tmp_path):
    with proxy_stack(idp) as stack:
        # the suite's callback is http://127.0.0.1:PORT/callback: a loopback redirect, any port (RFC 8252)
        client = stack.register("http://127.0.0.1/callback")
        port = free_port()
        out = tmp_path / "results"
        proc = subprocess.Popen(
            [
                *conformance_argv(),
                "authorization",
                "--url",
                stack.base,
                "--client-id",
                client["client_id"],
                "--port",
                str(port),
                "--resource",
                stack.mcp_url,
                "-o",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            transcript = []
            for line in proc.stdout:
                transcript.append(line)
                if line.startswith(stack.proxy.url("authorize") + "?"):
                    with stack.http() as ua:
                        back = login(ua, line.strip(), f"http://127.0.0.1:{port}/callback")
                        assert ua.get(back).status_code == 200  # the suite's callback server takes it
            assert proc.wait(60) == 0, "".join(transcript)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    checks = {c["id"]: c for f in out.glob("*/checks.json") for c in json.loads(f.read_text())}
    assert set(checks) == {
        "authorization-server-metadata",
        "authorization-server-metadata-cimd",
        "authorization-code-grant",
    }, "".join(transcript)
    assert {c["status"] for c in checks.values()} == {"SUCCESS"}, checks
