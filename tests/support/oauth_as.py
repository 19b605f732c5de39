"""A small, real OAuth 2.1 authorization server and a protected MCP server, for client tests.

:class:`TestAS` is an ASGI app (serve it with ``ServerThread``): RFC 8414 metadata,
``/authorize`` (approves at once: 302 to the redirect URI with ``code``, ``state``, ``iss``),
``/token`` (authorization_code with PKCE S256 checked, one-time codes; refresh_token, rotated;
client_credentials with client_secret_basic/post), ``/register`` (RFC 7591). Knobs on
``self.cfg`` make it misbehave the ways the bad-input tests need (wrong or missing ``iss``, a
wrong ``state``, HTML, huge or never-answered metadata, DCR refused, no S256), or behave like
oidc-provider (``dcr_scope``: a registration's ``scope`` bounds what the client may request;
``scopes_supported``). Every request is recorded in
``self.log``.

:func:`protect` wraps an MCP ASGI app as a resource server that accepts this AS's tokens:
Protected Resource Metadata at the path-inserted well-known URI, 401 with
``WWW-Authenticate: Bearer resource_metadata=…, scope=…``, and 403 ``insufficient_scope`` for a
``tools/call`` without the ``write`` scope (step-up).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = dict[str, Any]


async def _body(receive: Any) -> bytes:
    out = b""
    while True:
        msg = await receive()
        out += msg.get("body", b"")
        if not msg.get("more_body"):
            return out


async def _send(
    send: Any,
    status: int,
    body: bytes | dict[str, Any],
    headers: dict[str, str] | None = None,
    ctype: str = "application/json",
) -> None:
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    hs = [(b"content-type", ctype.encode()), (b"content-length", str(len(raw)).encode())]
    hs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": hs})
    await send({"type": "http.response.body", "body": raw})


class TestAS:
    """The authorization server (see the module docstring). ``issuer`` is set once served."""

    __test__ = False

    def __init__(self, **cfg: Any) -> None:
        self.issuer = ""
        self.cfg = {
            "iss": "correct",
            "state": "echo",
            "metadata": "json",
            "dcr": True,
            "pkce": ["S256"],
            "expires_in": 3600,
            "refresh": True,
            "auth_methods": ["none", "client_secret_basic"],
            "iss_supported": True,
            **cfg,
        }
        self.clients: dict[str, dict[str, Any]] = dict(cfg.get("clients") or {})
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}  # access token -> {scope, resource, exp}
        self.refresh_tokens: dict[str, dict[str, Any]] = {}
        self.log: list[dict[str, Any]] = []

    def count(self, path: str, **match: Any) -> int:
        return sum(1 for e in self.log if e["path"] == path and all(e.get(k) == v for k, v in match.items()))

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": self.cfg["auth_methods"],
            "authorization_response_iss_parameter_supported": self.cfg["iss_supported"],
        }
        if self.cfg["pkce"] is not None:
            doc["code_challenge_methods_supported"] = self.cfg["pkce"]
        if self.cfg["dcr"] is not False:
            doc["registration_endpoint"] = self.issuer + "/register"
        if self.cfg.get("scopes_supported"):
            doc["scopes_supported"] = self.cfg["scopes_supported"]
        return doc

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return None
        path = scope["path"]
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = await _body(receive)
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()} if path == "/token" else {}
        entry = {"path": path, **query, **form}
        self.log.append(entry)
        if path == "/.well-known/oauth-authorization-server":
            mode = self.cfg["metadata"]
            if mode == "html":
                return await _send(send, 200, b"<html><body>Sign in</body></html>", ctype="text/html")
            if mode == "slow":  # never answers (until the server shuts down)
                await asyncio.Event().wait()
            if mode == "huge":
                return await _send(send, 200, b'{"issuer": "' + b"x" * 2_000_000 + b'"}')
            return await _send(send, 200, self.metadata())
        if path == "/authorize":
            return await self._authorize(send, query)
        if path == "/token":
            return await self._token(send, form, headers)
        if path == "/register" and self.cfg["dcr"] is not False:
            if self.cfg["dcr"] == "refuse":
                return await _send(
                    send, 400, {"error": "invalid_client_metadata", "error_description": "registration is closed"}
                )
            doc = json.loads(body)
            cid = "dcr-" + secrets.token_hex(4)
            self.clients[cid] = {
                "redirect_uris": doc.get("redirect_uris", []),
                "secret": None,
                "application_type": doc.get("application_type"),
            }
            answer = {
                "client_id": cid,
                "redirect_uris": doc.get("redirect_uris", []),
                "token_endpoint_auth_method": "none",
            }
            if self.cfg.get("dcr_scope") and doc.get("scope"):  # like oidc-provider: the scope bounds the client
                self.clients[cid]["scope"] = answer["scope"] = doc["scope"]
            return await _send(send, 201, answer)
        await _send(send, 404, {"error": "not_found"})

    async def _authorize(self, send: Any, q: dict[str, str]) -> None:
        client = self.clients.get(q.get("client_id", ""))
        if client is None or q.get("redirect_uri") not in client["redirect_uris"]:
            return await _send(send, 400, {"error": "invalid_request", "error_description": "unknown client"})
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return await _send(send, 400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
        allowed = client.get("scope")
        if allowed is not None and set(q.get("scope", "").split()) - set(allowed.split()):
            return await _send(
                send,
                302,
                b"",
                {
                    "location": q["redirect_uri"]
                    + "?"
                    + urlencode({"error": "invalid_scope", "state": q.get("state"), "iss": self.issuer})
                },
            )
        code = secrets.token_urlsafe(12)
        self.codes[code] = {
            "challenge": q["code_challenge"],
            "client_id": q["client_id"],
            "resource": q.get("resource"),
            "scope": q.get("scope", ""),
            "redirect_uri": q["redirect_uri"],
        }
        out = {"code": code}
        state = {"echo": q.get("state"), "wrong": "forged-state", "omit": None}[self.cfg["state"]]
        if state is not None:
            out["state"] = state
        iss = {"correct": self.issuer, "wrong": "https://evil.example", "omit": None}[self.cfg["iss"]]
        if iss is not None:
            out["iss"] = iss
        await _send(send, 302, b"", {"location": q["redirect_uri"] + "?" + urlencode(out)})

    def _issue(self, scope: str, resource: str | None, refresh: bool) -> dict[str, Any]:
        token = "at-" + secrets.token_urlsafe(16)
        self.tokens[token] = {"scope": scope, "resource": resource, "exp": time.time() + self.cfg["expires_in"]}
        out: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.cfg["expires_in"],
            "scope": scope,
        }
        if refresh and self.cfg["refresh"]:
            rt = "rt-" + secrets.token_urlsafe(16)
            self.refresh_tokens[rt] = {"scope": scope, "resource": resource}
            out["refresh_token"] = rt
        return out

    async def _token(self, send: Any, f: dict[str, str], headers: dict[str, str]) -> None:
        grant = f.get("grant_type")
        if grant == "authorization_code":
            code = self.codes.pop(f.get("code", ""), None)  # one-time: a replay finds nothing
            if code is None:
                return await _send(send, 400, {"error": "invalid_grant", "error_description": "unknown or used code"})
            verifier = f.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != code["challenge"] or f.get("resource") != code["resource"]:
                return await _send(
                    send, 400, {"error": "invalid_grant", "error_description": "PKCE or resource mismatch"}
                )
            return await _send(send, 200, self._issue(code["scope"], code["resource"], True))
        if grant == "refresh_token":
            old = self.refresh_tokens.pop(f.get("refresh_token", ""), None)
            if old is None or f.get("resource") != old["resource"]:
                return await _send(send, 400, {"error": "invalid_grant"})
            return await _send(send, 200, self._issue(old["scope"], old["resource"], True))
        if grant == "client_credentials":
            auth = headers.get("authorization", "")
            cid, _, secret = (
                base64.b64decode(auth[6:]).decode().partition(":")
                if auth.startswith("Basic ")
                else (f.get("client_id", ""), "", f.get("client_secret", ""))
            )
            client = self.clients.get(cid)
            if client is None or not client.get("secret") or client["secret"] != secret:
                return await _send(send, 401, {"error": "invalid_client"})
            return await _send(send, 200, self._issue(f.get("scope", ""), f.get("resource"), False))
        await _send(send, 400, {"error": "unsupported_grant_type"})


def protect(app: Any, auth_server: TestAS, *, scope: str = "read", step_up: str = "write") -> Any:
    """The MCP ASGI ``app`` as a resource server for ``auth_server``'s tokens (module docstring)."""

    async def wrapped(sc: Scope, receive: Any, send: Any) -> None:
        if sc["type"] != "http":
            return await app(sc, receive, send)
        host = dict(sc["headers"]).get(b"host", b"").decode()
        base = f"http://{host}"
        prm_url = base + "/.well-known/oauth-protected-resource/mcp"
        if sc["path"] == "/.well-known/oauth-protected-resource/mcp":
            return await _send(
                send,
                200,
                {
                    "resource": base + "/mcp",
                    "authorization_servers": [auth_server.issuer],
                    "scopes_supported": [scope, step_up],
                },
            )
        body = await _body(receive)
        auth = dict(sc["headers"]).get(b"authorization", b"").decode()
        token = auth_server.tokens.get(auth[7:]) if auth.startswith("Bearer ") else None
        if token is None or token["exp"] < time.time() or token["resource"] != base + "/mcp":
            return await _send(
                send,
                401,
                {"error": "invalid_token"},
                {"www-authenticate": f'Bearer resource_metadata="{prm_url}", scope="{scope}"'},
            )
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        if method == "tools/call" and step_up not in token["scope"].split():
            return await _send(
                send,
                403,
                {"error": "insufficient_scope"},
                {
                    "www-authenticate": f'Bearer error="insufficient_scope", scope="{step_up}", resource_metadata="{prm_url}"'
                },
            )
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(sc, replay, send)

    return wrapped
