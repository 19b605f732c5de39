"""A small real issuer for resource-server tests: RFC 8414 metadata, a JWKS and RFC 7662
introspection served over HTTP on 127.0.0.1 (a thread), with keys generated per test session.

``mode`` switches how the documents are served, to test what a resource server does when its
authorization server misbehaves: "ok", "down" (503), "html", "huge" (a 2 MiB body), "hang"
(never answers until the issuer is closed), "wrong-issuer" (metadata naming another issuer);
"jwks-500" and "jwks-hang" break the JWKS only (the metadata is served).
``mint(...)`` signs access tokens with the issuer's keys (or any other key, for forgeries).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

_KEYS: list[dict[str, Any]] = []


def new_keys(fresh: bool = False) -> dict[str, Any]:
    """An RSA and an EC key; the same pair for every issuer of the test session unless ``fresh``."""
    if _KEYS and not fresh:
        return _KEYS[0]
    keys = {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ec": ec.generate_private_key(ec.SECP256R1()),
    }
    if not _KEYS:
        _KEYS.append(keys)
    return keys


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (the "hang" mode) is expected


def public_jwks(keys: dict[str, Any], kids: dict[str, str]) -> dict[str, Any]:
    out = []
    for name, key in keys.items():
        algo = RSAAlgorithm if name == "rsa" else ECAlgorithm
        jwk = json.loads(algo.to_jwk(key.public_key()))
        jwk.update(kid=kids[name], use="sig", alg="RS256" if name == "rsa" else "ES256")
        out.append(jwk)
    return {"keys": out}


class Issuer:
    """``with Issuer() as iss: token = iss.mint(aud=…)`` — see the module docstring."""

    def __init__(self, path: str = "") -> None:
        self.keys = new_keys()
        self.kids = {"rsa": "rsa-1", "ec": "ec-1"}
        self.mode = "ok"
        self.hits: list[str] = []
        self.active_tokens: dict[str, dict[str, Any]] = {}
        self._release = threading.Event()
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                issuer.hits.append(self.path)
                mode = issuer.mode
                if mode == "hang" or (mode == "jwks-hang" and self.path == "/jwks"):
                    issuer._release.wait(30)
                    return
                if mode == "jwks-500" and self.path == "/jwks":
                    self._send(500, b'{"error": "server_error"}')
                    return
                if mode == "down":
                    self._send(503, b"down")
                    return
                if mode == "html":
                    self._send(200, b"<html>login</html>", "text/html")
                    return
                if mode == "huge":
                    self._send(200, b"[" + b"0," * (1 << 20) + b"0]")
                    return
                if self.path == "/.well-known/oauth-authorization-server" + issuer.path:
                    meta = {
                        "issuer": issuer.url if mode != "wrong-issuer" else "https://evil.example",
                        "jwks_uri": issuer.base + "/jwks",
                        "introspection_endpoint": issuer.base + "/introspect",
                    }
                    self._send(200, json.dumps(meta).encode())
                elif self.path == "/jwks":
                    self._send(200, json.dumps(public_jwks(issuer.keys, issuer.kids)).encode())
                else:
                    self._send(404, b"{}")

            def do_POST(self) -> None:
                issuer.hits.append(self.path)
                length = int(self.headers.get("content-length", "0"))
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                token = form.get("token", [""])[0]
                doc = issuer.active_tokens.get(token, {"active": False})
                self._send(200, json.dumps(doc).encode())

        self.server = _Quiet(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.path = path
        self.url = self.base + path
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Issuer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def rotate(self) -> None:
        """New keys under new kids (the old ones disappear from the JWKS)."""
        self.keys = new_keys(fresh=True)
        self.kids = {k: v + "x" for k, v in self.kids.items()}

    def mint(
        self,
        *,
        aud: Any,
        scope: str = "",
        sub: str = "alice",
        alg: str = "RS256",
        key: Any = None,
        kid: str | None = None,
        lifetime: int = 300,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.url,
            "aud": aud,
            "sub": sub,
            "iat": now,
            "exp": now + lifetime,
            "client_id": "app-1",
        }
        if scope:
            body["scope"] = scope
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        if key is None:
            key = self.keys["rsa" if alg.startswith(("RS", "PS")) else "ec"]
        if kid is None:
            kid = self.kids["rsa" if alg.startswith(("RS", "PS")) else "ec"]
        return jwt.encode(body, key, alg, headers={"kid": kid})
