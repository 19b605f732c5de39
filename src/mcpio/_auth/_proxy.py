"""An OAuth 2.1 authorization server facade for IdPs without DCR or CIMD (GitHub, Google, Entra).

:class:`OAuthProxy` is passed as ``server.http_app(auth=proxy)`` (the same seam as
:class:`ResourceServer`): its guard answers the authorization server endpoints below and hands
every other request to a :class:`ResourceServer` guard that verifies the proxy's own tokens.

The MCP client sees an authorization server (spec basic/authorization): RFC 8414 metadata at
``/.well-known/oauth-authorization-server``, Dynamic Client Registration (RFC 7591) at
``/register`` and Client ID Metadata Documents (an ``https://`` client_id), the authorization
code grant with PKCE S256 only, ``state``, RFC 9207 ``iss`` in every redirect, refresh tokens
rotated on each use. The user logs in at the upstream IdP (its own authorization code flow
with the proxy's PKCE and ``state``, the browser bound by a cookie), comes back to
``/callback``, and approves the MCP client on a consent screen (client name, redirect URI,
scopes). The upstream tokens stay in this process; the MCP client gets the proxy's tokens.

Access tokens are JWTs (ES256, key published at ``/jwks``) with ``aud`` = the MCP server's
canonical URI (RFC 8707): verified locally by :class:`JWTVerifier` with no round trip per
request, and by any other resource server that reads the proxy's JWKS. A replayed code or a
reused refresh token revokes every token of its grant (their ``jti`` are refused until expiry).
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ._info import AuthInfo
from ._jwks import AuthUnavailable, check_url, fetch_json, parse_keys
from ._proxy_endpoints import ProxyGuard
from ._proxy_rules import Bounded, ClientInfo, OAuthError, _Code, _Family, _Login, digest, token, validate_registration
from ._proxy_upstream import Upstream
from ._resource import ResourceServer
from ._verify import InvalidToken, JWTVerifier

log = logging.getLogger("mcpio.auth")

MAX_CIMD = 64 * 1024


@dataclass
class OAuthProxy:
    """The authorization server facade (see the module docstring).

    ``issuer``: this proxy's URL as clients reach it (``https://mcp.example.com``), the ``iss``
    of its tokens; its endpoints live under it. ``resource``: the MCP server's canonical URI
    (default ``issuer + "/mcp"``), the only audience tokens are issued for. ``scopes``: the
    scopes MCP clients may request (advertised); ``required_scopes``: what every MCP request
    needs. Upstream: ``upstream_authorize_url``, ``upstream_token_url``, ``client_id`` and
    ``client_secret`` (this proxy's registration at the IdP, whose redirect URI is
    :attr:`callback_url`), ``upstream_scopes`` (asked of the IdP; default ``["openid"]``),
    ``upstream_userinfo_url`` + ``subject_claim`` (who logged in; default: the ID token's
    ``sub``), ``upstream_auth_method`` (``client_secret_post`` or ``client_secret_basic``),
    ``upstream_issuer`` (when given, an ``iss`` in the IdP's redirect must equal it: RFC 9207).
    ``signing_key``: a PEM EC P-256 private key to keep tokens valid across restarts (default:
    a new key per process). Lifetimes in seconds; caps bound every in-memory store.
    """

    issuer: str
    upstream_authorize_url: str
    upstream_token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: list[str] = field(default_factory=lambda: ["mcp"])
    resource: str | None = None
    required_scopes: list[str] = field(default_factory=list)
    upstream_scopes: list[str] = field(default_factory=lambda: ["openid"])
    upstream_userinfo_url: str | None = None
    subject_claim: str = "sub"
    upstream_auth_method: str = "client_secret_post"
    upstream_issuer: str | None = None
    signing_key: str | None = field(default=None, repr=False)
    access_token_ttl: float = 3600.0
    refresh_token_ttl: float = 30 * 86400.0
    code_ttl: float = 60.0
    login_ttl: float = 600.0
    max_clients: int = 10_000
    max_logins: int = 1_000
    max_grants: int = 10_000
    allow_cimd: bool = True

    def __post_init__(self) -> None:
        check_url(self.issuer, "the proxy's issuer")
        parts = urlsplit(self.issuer)
        if parts.query:
            raise ValueError("the issuer must not have a query")
        self.issuer = self.issuer.rstrip("/")
        self.prefix = parts.path.rstrip("/")
        self.resource = (self.resource or self.issuer + "/mcp").rstrip("/")
        self.upstream = Upstream(
            self.upstream_authorize_url,
            self.upstream_token_url,
            self.client_id,
            self.client_secret,
            list(self.upstream_scopes),
            self.upstream_userinfo_url,
            self.subject_claim,
            self.upstream_auth_method,
        )
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        if self.signing_key:
            key = serialization.load_pem_private_key(self.signing_key.encode(), None)
            if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
                raise ValueError("signing_key must be a PEM EC P-256 private key (ES256)")
        else:
            key = ec.generate_private_key(ec.SECP256R1())
        self._key = key
        import jwt

        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        self._kid = digest(json.dumps(public, sort_keys=True))[:16]
        self._jwks = {"keys": [{**public, "kid": self._kid, "use": "sig", "alg": "ES256"}]}
        self._clients: Bounded[ClientInfo] = Bounded(self.max_clients, 90 * 86400.0)
        self._cimd: Bounded[ClientInfo] = Bounded(1000, 3600.0)
        self._logins: Bounded[_Login] = Bounded(self.max_logins, self.login_ttl)  # by upstream state
        self._consents: Bounded[_Login] = Bounded(self.max_logins, self.login_ttl)  # by consent id
        self._codes: Bounded[_Code] = Bounded(self.max_logins, self.code_ttl)
        self._families: Bounded[_Family] = Bounded(self.max_grants, self.refresh_token_ttl)
        self._grants: Bounded[dict[str, Any]] = Bounded(self.max_grants, self.refresh_token_ttl)  # upstream tokens
        self._revoked: Bounded[bool] = Bounded(10 * self.max_grants, self.access_token_ttl + 60)
        self._http: Any = None

    # ------------------------------------------------------------------ public surface
    def url(self, endpoint: str) -> str:
        return self.issuer + "/" + endpoint

    @property
    def callback_url(self) -> str:
        """The redirect URI to register at the upstream IdP for this proxy."""
        return self.url("callback")

    @property
    def metadata_url(self) -> str:
        parts = urlsplit(self.issuer)
        return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{self.prefix}"

    def metadata(self) -> dict[str, Any]:
        """This authorization server's metadata (RFC 8414 §2)."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.url("authorize"),
            "token_endpoint": self.url("token"),
            "registration_endpoint": self.url("register"),
            "jwks_uri": self.url("jwks"),
            "scopes_supported": list(self.scopes),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "client_id_metadata_document_supported": self.allow_cimd,
            "authorization_response_iss_parameter_supported": True,
        }

    def register(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """Register a client as ``POST /register`` would (RFC 7591 §3.1); the response body.
        OAuthError when the metadata is refused."""
        info = validate_registration(metadata, scopes=frozenset(self.scopes))
        info.client_id = "mcpio-" + token(18)
        out: dict[str, Any] = {
            "client_id": info.client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": info.redirect_uris,
            "grant_types": info.grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": info.auth_method,
        }
        if info.auth_method != "none":
            secret = token(32)
            info.secret_digest = digest(secret)
            out.update(client_secret=secret, client_secret_expires_at=0)
        if info.client_name:
            out["client_name"] = info.client_name
        if info.scope:
            out["scope"] = info.scope
        self._clients.put(info.client_id, info)
        return out

    def resource_server(self) -> ResourceServer:
        """The :class:`ResourceServer` that accepts this proxy's tokens (metadata naming the proxy)."""
        resource = self.resource
        assert resource is not None  # set by __post_init__
        verifier = JWTVerifier(
            self.issuer, resource, jwks_url=self.url("jwks"), algorithms=["ES256"], jwks_ttl=math.inf
        )
        verifier.jwks._keys = parse_keys(self._jwks["keys"])  # our own key: no fetch from ourselves
        verifier.jwks._fetched_at = time.monotonic()
        return ResourceServer(
            resource=resource,
            issuer=self.issuer,
            verifier=_NotRevoked(verifier, self),
            required_scopes=self.required_scopes,
            scopes_supported=self.scopes,
        )

    def guard(self, **options: Any) -> ProxyGuard:
        """The per-request ASGI check ``http_app(auth=…)`` installs (options as
        :meth:`ResourceServer.guard`)."""
        return ProxyGuard(self, self.resource_server().guard(**options))

    def revoked(self, jti: Any) -> bool:
        return isinstance(jti, str) and self._revoked.get(jti) is not None

    # ------------------------------------------------------------------ helpers
    def client_http(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        return self._http

    async def find_client(self, client_id: str | None) -> ClientInfo:
        if not client_id:
            raise OAuthError("invalid_request", "client_id is required")
        info = self._clients.get(client_id)
        if info is not None:
            return info
        if self.allow_cimd and client_id.startswith(("https://", "http://")):
            return await self._metadata_document(client_id)
        raise OAuthError(
            "invalid_client",
            "unknown client_id: register at "
            + self.url("register")
            + " (Dynamic Client Registration) or use a Client ID Metadata Document URL",
            401,
        )

    async def _metadata_document(self, url: str) -> ClientInfo:
        """A Client ID Metadata Document (spec basic/authorization "Client ID Metadata Documents"):
        an https URL with a path, whose JSON names itself as ``client_id``."""
        cached = self._cimd.get(url)
        if cached is not None:
            return cached
        try:
            check_url(url, "a client_id metadata document URL")
        except ValueError as exc:
            raise OAuthError("invalid_client", str(exc), 401) from None
        if urlsplit(url).path in ("", "/"):
            raise OAuthError("invalid_client", "a client_id URL must have a path (the metadata document)", 401)
        try:
            doc = await fetch_json(self.client_http(), url, "the client metadata document", max_size=MAX_CIMD)
        except AuthUnavailable as exc:
            raise OAuthError("invalid_client", str(exc), 401) from None
        if doc.get("client_id") != url:
            raise OAuthError("invalid_client", "the client metadata document's client_id is not its own URL", 401)
        info = validate_registration(doc, scopes=frozenset(self.scopes), client_id=url)
        self._cimd.put(url, info)
        return info

    def _issue(self, family_id: str, fam: _Family) -> dict[str, Any]:
        import jwt

        now = int(time.time())
        jti = token(16)
        claims = {
            "iss": self.issuer,
            "aud": fam.resource,
            "sub": fam.subject,
            "client_id": fam.client_id,
            "scope": " ".join(fam.scope),
            "iat": now,
            "exp": now + int(self.access_token_ttl),
            "jti": jti,
        }
        access = jwt.encode(claims, self._key, algorithm="ES256", headers={"kid": self._kid, "typ": "at+jwt"})
        fam.jtis = [(j, e) for j, e in fam.jtis if e > now] + [(jti, now + self.access_token_ttl)]
        out: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.access_token_ttl),
            "scope": " ".join(fam.scope),
        }
        client = self._clients.get(fam.client_id) or self._cimd.get(fam.client_id)
        if client is None or "refresh_token" in client.grant_types:
            secret = token(32)
            fam.refresh = digest(secret)
            out["refresh_token"] = f"{family_id}.{secret}"
        self._families.put(family_id, fam)
        return out

    def _revoke(self, family_id: str) -> None:
        fam = self._families.pop(family_id)
        if fam is None:
            return
        self._grants.pop(fam.grant)  # the upstream tokens of this grant go too
        now = time.time()
        for jti, exp in fam.jtis:
            if exp > now:
                self._revoked.put(jti, True, ttl=exp - now + 60)
        log.warning(
            "revoked the tokens of a grant to client %s (a code replay or a refresh token reuse)", fam.client_id[:80]
        )


class _NotRevoked:
    """A :class:`JWTVerifier` that also refuses the tokens of revoked grants."""

    def __init__(self, inner: JWTVerifier, proxy: OAuthProxy) -> None:
        self.inner = inner
        self.proxy = proxy

    async def verify(self, token_: str) -> AuthInfo:
        info = await self.inner.verify(token_)
        if self.proxy.revoked(info.claims.get("jti")):
            raise InvalidToken(
                "the token was revoked (its authorization code was replayed or its refresh token reused)"
            )
        return info
