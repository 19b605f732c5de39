"""The resource server side of MCP authorization over Streamable HTTP (both eras).

:class:`ResourceServer` is the configuration users pass as ``http_app(auth=…)``; the app calls
its :class:`Guard` at the top of every HTTP request (the one seam, before routing):

* serves Protected Resource Metadata (RFC 9728) at the path-inserted well-known URI
  (``/.well-known/oauth-protected-resource/mcp``) and at the root one;
* **401** + ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"`` when the token is
  missing, or (``error="invalid_token"``) invalid (spec basic/authorization, "Error Handling",
  RFC 6750 §3.1; an empty Bearer token too); **400** ``invalid_request`` for a malformed one;
  **403** ``error="insufficient_scope"`` with every scope the operation needs, in one challenge
  ("Scope Challenge Handling"), for the server-wide scopes and for a ``tools/call``,
  ``prompts/get`` or ``resources/read`` of an item registered with ``scopes=`` — the body is
  peeked before dispatch, so the refusal is an HTTP 403 in both eras; **503** when the
  authorization server cannot be reached to verify. Never a 500.
* makes the verified token the request's own (a fresh :class:`~._info.Slot` per request,
  ``_info.slot()``); the HTTP app binds a legacy session to the principal that opened it
  and refuses every other principal's request for it as an unknown session (404), on every
  process (``mcpio._transports._http_server``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import msgspec

from . import _info
from ._info import Slot
from ._jwks import AuthUnavailable, check_url
from ._verify import InvalidToken, JWTVerifier, TokenVerifier

log = logging.getLogger("mcpio.auth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
SCOPED_METHODS = ("tools/call", "prompts/get", "resources/read")
# RFC 6750 §2.1 b64token
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
RETRY_AFTER = "5"

ScopesFor = Callable[[str, str], Iterable[str]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class ResourceServer:
    """Protect an MCP server with OAuth 2.1 bearer tokens (``server.http_app(auth=…)``,
    ``server.run("http", auth=…)``).

    ``resource``: this server's canonical URI (``https://mcp.example.com/mcp``): the ``resource``
    of its metadata and the audience tokens must carry. ``issuer``: the authorization server;
    with no ``verifier``, tokens are JWTs checked against its JWKS (:class:`JWTVerifier`).
    ``verifier``: any :class:`TokenVerifier` (e.g. :class:`IntrospectionVerifier`).
    ``authorization_servers``: advertised in the metadata (default ``[issuer]``).
    ``required_scopes``: scopes every request needs. ``scopes_supported``: advertised (default:
    ``required_scopes``; the spec wants the minimal set there, more come by step-up).
    ``resource_name``/``resource_documentation``: optional metadata fields.
    ``implied_scopes``: scope hierarchies (``{"notes:admin": ["notes:write", "notes:read"]}``):
    a token granted a broader scope satisfies the narrower ones it implies, transitively
    (spec basic/authorization, "Step-Up Authorization Flow": servers MUST account for them).
    """

    resource: str
    issuer: str | None = None
    verifier: TokenVerifier | None = None
    authorization_servers: list[str] | None = None
    required_scopes: Iterable[str] = ()
    scopes_supported: Iterable[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    extra_metadata: dict[str, Any] = field(default_factory=dict)
    implied_scopes: Mapping[str, Iterable[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(
                f"resource must be this server's absolute URI without a #fragment "
                f"(e.g. https://mcp.example.com/mcp), not {self.resource!r}"
            )
        if self.resource.endswith("/") and parts.path not in ("", "/"):
            self.resource = self.resource.rstrip("/")  # canonical form: no trailing slash
        if self.verifier is None:
            if self.issuer is None:
                raise ValueError(
                    "ResourceServer needs an issuer (JWT access tokens checked against its JWKS) or a verifier"
                )
            self.verifier = JWTVerifier(self.issuer, self.resource)
        servers = (
            self.authorization_servers
            if self.authorization_servers is not None
            else ([self.issuer] if self.issuer else [])
        )
        if not servers:
            raise ValueError("ResourceServer needs authorization_servers (or an issuer) for its metadata")
        for s in servers:
            check_url(s, "an authorization server")
        self.authorization_servers = list(servers)
        self.required_scopes = frozenset(self.required_scopes)
        self.scopes_supported = (
            list(self.scopes_supported) if self.scopes_supported is not None else sorted(self.required_scopes)
        )

    # ------------------------------------------------------------------ metadata
    @property
    def metadata_path(self) -> str:
        """The path-inserted well-known path of this resource's metadata (RFC 9728 §3.1)."""
        path = urlsplit(self.resource).path.rstrip("/")
        return WELL_KNOWN + path

    @property
    def metadata_url(self) -> str:
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 §2)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation:
            doc["resource_documentation"] = self.resource_documentation
        doc.update(self.extra_metadata)
        return doc

    def guard(
        self,
        *,
        scopes_for: ScopesFor | None = None,
        scoped: Callable[[], bool] | None = None,
        max_body_size: int = 16 * 1024 * 1024,
        state: Any = None,
    ) -> Guard:
        """The per-request check for an app; ``scopes_for(method, name)`` names the scopes an
        item needs (the server's ``scopes=`` registrations; for a method of no item, ``name``
        ``""``: the method's own, ``proxy(method_scopes=)``), ``scoped()`` says whether any
        item has some (when not, request bodies are not peeked). ``state``: the server's state
        backend (an :class:`~mcpio.auth.OAuthProxy` keeps its grants there; unused here)."""
        return Guard(self, scopes_for=scopes_for, scoped=scoped, max_body_size=max_body_size)


class Guard:
    """The per-request check (see the module docstring). ``await guard(scope, receive, send)``
    answers the request itself and returns None (metadata, refusals), or returns the
    ``(receive, send)`` the app continues with, the verified :class:`AuthInfo` being current."""

    def __init__(
        self,
        config: ResourceServer,
        *,
        scopes_for: ScopesFor | None = None,
        scoped: Callable[[], bool] | None = None,
        max_body_size: int = 16 * 1024 * 1024,
    ) -> None:
        self.config = config
        self.verifier: TokenVerifier = config.verifier  # type: ignore[assignment]
        self.required = frozenset(config.required_scopes)
        self.implied = {k: frozenset(v) for k, v in config.implied_scopes.items()}
        self.scopes_for = scopes_for
        self.scoped = scoped if scoped is not None else (lambda: scopes_for is not None)
        self.max_body_size = max_body_size
        root = WELL_KNOWN
        path = config.metadata_path  # None: no OAuth metadata (StaticTokens), none served
        self.metadata_paths = {path, root, path + "/"} if path is not None else set()
        self._metadata = json.dumps(config.metadata()).encode()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> tuple[Receive, Send] | None:
        path = scope.get("path", "/")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        method = scope.get("method", "GET")
        if path in self.metadata_paths:
            await self._serve_metadata(send, method)
            return None
        raw: list[bytes] = []
        for k, v in scope.get("headers") or ():  # one pass; ASGI names are lower case, others tolerated
            if len(k) == 13 and k.lower() == b"authorization":
                raw.append(v)
        if not raw:
            await self._challenge(
                send,
                401,
                None,
                "this server requires a bearer token (Authorization: Bearer <token>); "
                + (
                    f"its authorization servers are listed at {self.config.metadata_url}"
                    if self.config.metadata_url  # None: no OAuth metadata (StaticTokens)
                    else "ask its operator for one"
                ),
            )
            return None
        if len(raw) > 1:
            await self._challenge(send, 400, "invalid_request", "send exactly one Authorization header")
            return None
        scheme, _, token = raw[0].decode("latin-1").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer":  # never quote the value: without "Bearer " it is often the token itself
            await self._challenge(
                send,
                401,
                None,
                "the Authorization header must be 'Bearer <token>' (the Bearer scheme, a space, the token)",
            )
            return None
        if not token:  # RFC 6750 §3.1: a Bearer header without a token is an invalid token (401: re-authenticate)
            await self._challenge(send, 401, "invalid_token", "the Bearer token is empty: send 'Bearer <token>'")
            return None
        if not _B64TOKEN.fullmatch(token):
            await self._challenge(
                send,
                400,
                "invalid_request",
                "the Authorization header is malformed: expected 'Bearer <token>' with a token of RFC 6750 characters",
            )
            return None
        try:
            info = await self.verifier.verify(token)
        except InvalidToken as exc:
            await self._challenge(send, 401, "invalid_token", str(exc))
            return None
        except AuthUnavailable as exc:
            log.warning("cannot verify a token now: %s", exc)
            await _json(
                send,
                503,
                {
                    "error": "temporarily_unavailable",
                    "error_description": f"the token cannot be verified now: {exc}; retry later",
                },
                [(b"retry-after", RETRY_AFTER.encode())],
            )
            return None
        except Exception as exc:  # a verifier's bug is still not a 500 with a token in a traceback
            log.error("the token verifier failed: %s", type(exc).__name__)
            await _json(
                send,
                503,
                {
                    "error": "temporarily_unavailable",
                    "error_description": "the token cannot be verified now (verifier error); retry later",
                },
                [(b"retry-after", RETRY_AFTER.encode())],
            )
            return None
        granted = self._effective(info.scopes)
        if not granted.issuperset(self.required):
            await self._insufficient(
                send, self.required, "this server needs the scopes " + " ".join(sorted(self.required))
            )
            return None
        if method == "POST" and self.scopes_for is not None and self.scoped():
            receive, needed = await self._peek(receive)
            if needed is not None:
                missing = needed - granted
                if missing:
                    await self._insufficient(
                        send, needed | self.required, "this operation needs the scopes " + " ".join(sorted(needed))
                    )
                    return None
        _info.enter(Slot(info))  # this request's own (a legacy session's follows it: _info)
        return receive, send

    async def aclose(self) -> None:
        """Close the verifier's HTTP client (JWKS, introspection); it reopens when needed."""
        close = getattr(self.verifier, "aclose", None)
        if close is not None:
            await close()

    def _effective(self, scopes: frozenset[str]) -> frozenset[str]:
        """``scopes`` and every scope they imply (``implied_scopes``), transitively."""
        if not self.implied or not any(s in self.implied for s in scopes):
            return scopes
        out, todo = set(scopes), list(scopes)
        while todo:
            for narrower in self.implied.get(todo.pop(), ()):
                if narrower not in out:
                    out.add(narrower)
                    todo.append(narrower)
        return frozenset(out)

    # ------------------------------------------------------------------ per-item scopes
    async def _peek(self, receive: Receive) -> tuple[Receive, frozenset[str] | None]:
        """Read the body (up to the size cap) to find the items called; hand it on unchanged."""
        messages: list[dict[str, Any]] = []
        chunks: list[bytes] = []
        size = 0
        complete = False
        while True:
            message = await receive()
            messages.append(message)
            if message.get("type") != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            if size > self.max_body_size:
                break
            if not message.get("more_body", False):
                complete = True
                break
        replay = iter(messages)

        async def replaying() -> dict[str, Any]:
            for m in replay:
                return m
            return await receive()

        if not complete:
            return replaying, None
        return replaying, self._needed(b"".join(chunks))

    def _needed(self, body: bytes) -> frozenset[str] | None:
        assert self.scopes_for is not None
        try:
            parsed = msgspec.json.decode(body)
        except Exception:
            return None
        needed: set[str] = set()
        for msg in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
                continue
            if msg["method"] not in SCOPED_METHODS:  # a method's own scopes (a custom one's), of no item
                needed.update(self.scopes_for(msg["method"], ""))
                continue
            params = msg.get("params")
            if not isinstance(params, dict):
                continue
            name = params.get("uri" if msg["method"] == "resources/read" else "name")
            if isinstance(name, str):
                needed.update(self.scopes_for(msg["method"], name))
        return frozenset(needed) if needed else None

    # ------------------------------------------------------------------ answers
    async def _serve_metadata(self, send: Send, method: str) -> None:
        cors = [(b"access-control-allow-origin", b"*")]
        if method == "OPTIONS":
            await _raw(
                send,
                204,
                b"",
                cors
                + [
                    (b"access-control-allow-methods", b"GET, OPTIONS"),
                    (b"access-control-allow-headers", b"mcp-protocol-version"),
                ],
            )
        elif method in ("GET", "HEAD"):
            await _raw(
                send,
                200,
                self._metadata if method == "GET" else b"",
                cors + [(b"content-type", b"application/json"), (b"cache-control", b"max-age=3600")],
                length=len(self._metadata),
            )
        else:
            await _json(
                send,
                405,
                {"error": "invalid_request", "error_description": "protected resource metadata is read with GET"},
                [(b"allow", b"GET, OPTIONS")],
            )

    def _www_authenticate(self, error: str | None, scopes: Iterable[str] | None, description: str | None) -> bytes:
        where = self.config.metadata_url
        parts = [f'resource_metadata="{where}"'] if where else []
        scope_list = (
            sorted(scopes) if scopes is not None else sorted(self.required) or list(self.config.scopes_supported or [])
        )
        if scope_list:
            parts.append(f'scope="{" ".join(scope_list)}"')
        if error:
            parts.insert(0, f'error="{error}"')
        if description:
            parts.append(f'error_description="{_quote(description)}"')
        return ("Bearer " + ", ".join(parts)).rstrip().encode("latin-1", "replace")

    async def _challenge(self, send: Send, status: int, error: str | None, description: str) -> None:
        # The operator's line for every refusal (never the token: the reason is the verifier's,
        # said without it). A request without a token is how OAuth clients start: INFO only.
        if error is None and status == 401:
            log.info("refused a request: 401, it carried no usable bearer token")
        else:
            log.warning(
                "refused a request: %d %s%s",
                status,
                error or "unauthorized",
                f" ({description})" if error == "invalid_token" else "",
            )
        header = self._www_authenticate(error, None, description if error else None)
        await _json(
            send,
            status,
            {"error": error or "unauthorized", "error_description": description},
            [(b"www-authenticate", header)],
        )

    async def _insufficient(self, send: Send, scopes: Iterable[str], description: str) -> None:
        log.warning("refused a request: 403 insufficient_scope (%s)", description)
        header = self._www_authenticate("insufficient_scope", scopes, description)
        await _json(
            send,
            403,
            {"error": "insufficient_scope", "error_description": description, "scope": " ".join(sorted(scopes))},
            [(b"www-authenticate", header)],
        )


def _quote(text: str) -> str:
    """A quoted-string body (RFC 9110 §5.6.4) in printable ASCII: no quotes, no backslashes."""
    return "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else "'" if c == '"' else " " for c in text)


async def _json(send: Send, status: int, doc: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(doc).encode()
    await _raw(
        send, status, body, [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *(headers or [])]
    )


async def _raw(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]], *, length: int | None = None
) -> None:
    headers = [*headers, (b"content-length", str(len(body) if length is None else length).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
