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
scopes). The upstream tokens stay on the server side (encrypted at rest); the MCP client gets
the proxy's tokens.

Access tokens are JWTs (ES256, key published at ``/jwks``) with ``aud`` = the MCP server's
canonical URI (RFC 8707): verified locally by :class:`JWTVerifier` with no round trip per
request, and by any other resource server that reads the proxy's JWKS. Each token names its
grant (``sid``); a replayed code or a reused refresh token revokes the grant, and this server
refuses every token of a grant that is gone.

What the proxy remembers lives in a :mod:`._proxy_store`: in this process, or on Redis when the
server's state backend is shared (``--workers N --redis``, replicas), so any process can finish a
sign-in another started and a revocation reaches all of them. Every store is capped and refuses
when full (503) rather than dropping someone's live entry; registrations and sign-ins are also
limited per source address and sign-ins per client.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .._shown import shown_repr
from .._state._base import StateUnavailable
from ._cimd import CIMDFetcher, CIMDUnavailable
from ._info import AuthInfo
from ._jwks import AuthUnavailable, check_url, parse_keys
from ._proxy_endpoints import ProxyGuard
from ._proxy_keys import Sealer, check_secret, derive, signing_key
from ._proxy_rules import ClientInfo, OAuthError, digest, validate_registration
from ._proxy_store import MemoryProxyStore, ProxyStore, store_for
from ._proxy_upstream import Upstream
from ._resource import ResourceServer
from ._verify import InvalidToken, JWTVerifier

log = logging.getLogger("mcpio.auth")


@dataclass(repr=False)
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
    ``secret``: at least 32 random characters from which the signing key and the key that
    encrypts the IdP's tokens at rest are derived (:mod:`._proxy_keys`), so tokens stay valid
    across restarts and every process given it agrees; ``signing_key`` (a PEM EC P-256 private
    key) overrides the derived signing key. Without either, a process makes its own keys.
    Lifetimes in seconds; ``max_*`` cap each store (full: 503, nothing evicted);
    ``unused_client_ttl``: how long a registration no user has approved is kept (approved ones:
    ``client_ttl`` since last use); per source address (an IPv6 /64 counts as one) at most
    ``max_registrations_per_address`` registrations an hour and ``max_logins_per_address``
    sign-ins per ``login_ttl``, and ``max_logins_per_client`` sign-ins per client per
    ``login_ttl``. CIMD: ``cimd_allowed_networks`` (CIDRs whose non-public addresses may be
    fetched, for an intranet) and ``cimd_ssl_context`` (whom TLS trusts; default the system CAs).
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
    secret: str | None = field(default=None, repr=False)
    signing_key: str | None = field(default=None, repr=False)
    access_token_ttl: float = 3600.0
    refresh_token_ttl: float = 30 * 86400.0
    code_ttl: float = 60.0
    login_ttl: float = 600.0
    client_ttl: float = 90 * 86400.0
    unused_client_ttl: float = 86400.0
    max_clients: int = 10_000
    max_logins: int = 1_000
    max_grants: int = 10_000
    max_registrations_per_address: int = 20
    max_logins_per_address: int = 30
    max_logins_per_client: int = 100
    allow_cimd: bool = True
    cimd_allowed_networks: list[str] = field(default_factory=list)
    cimd_ssl_context: Any = field(default=None, repr=False)

    __repr__ = shown_repr  # its endpoints without their credentials

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

        if self.secret is not None:
            check_secret(self.secret)
        if self.signing_key:
            key = serialization.load_pem_private_key(self.signing_key.encode(), None)
            if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
                raise ValueError("signing_key must be a PEM EC P-256 private key (ES256)")
        elif self.secret is not None:
            key = signing_key(self.secret)
        else:
            key = ec.generate_private_key(ec.SECP256R1())
        self._key = key
        self.sealer = Sealer(derive(self.secret, "aes256gcm") if self.secret is not None else os.urandom(32))
        import jwt

        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        self._kid = digest(json.dumps(public, sort_keys=True))[:16]
        self._jwks = {"keys": [{**public, "kid": self._kid, "use": "sig", "alg": "ES256"}]}
        self.cimd = CIMDFetcher(allowed_networks=self.cimd_allowed_networks, ssl_context=self.cimd_ssl_context)
        self.store: ProxyStore = MemoryProxyStore()  # this process's; a guard on shared state uses Redis
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

    def resource_server(self, store: ProxyStore | None = None) -> ResourceServer:
        """The :class:`ResourceServer` that accepts this proxy's tokens (metadata naming the
        proxy) while their grant is alive in ``store`` (default: this process's store)."""
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
            verifier=_NotRevoked(verifier, store or self.store),
            required_scopes=self.required_scopes,
            scopes_supported=self.scopes,
        )

    def guard(self, *, state: Any = None, **options: Any) -> ProxyGuard:
        """The per-request ASGI check ``http_app(auth=…)`` installs (options as
        :meth:`ResourceServer.guard`). ``state``: the server's state backend; a shared one
        (Redis) holds the proxy's clients, sign-ins, codes and grants for every process."""
        store = store_for(state) or self.store
        return ProxyGuard(self, self.resource_server(store).guard(**options), store)

    async def aclose(self) -> None:
        """Close the HTTP clients (the IdP's, the CIMD fetcher's); they reopen when needed."""
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()
        await self.cimd.aclose()

    # ------------------------------------------------------------------ helpers
    def client_http(self) -> Any:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        return self._http

    async def metadata_document(self, url: str) -> ClientInfo:
        """A Client ID Metadata Document (spec basic/authorization "Client ID Metadata Documents"):
        an https URL with a path, whose JSON names itself as ``client_id``, fetched under the
        rules of :mod:`._cimd` (public addresses only; errors that say nothing of the target)."""
        doc = self.cimd.cached(url)
        if doc is None:
            try:
                doc = await self.cimd.fetch(url)
            except CIMDUnavailable as exc:
                raise OAuthError("invalid_client", str(exc), 401) from None
        if doc.get("client_id") != url:
            raise OAuthError("invalid_client", "the client metadata document's client_id is not its own URL", 401)
        info = validate_registration(doc, scopes=frozenset(self.scopes), client_id=url)
        self.cimd.remember(url, doc)
        return info

    def sign(self, claims: dict[str, Any]) -> str:
        import jwt

        return jwt.encode(claims, self._key, algorithm="ES256", headers={"kid": self._kid, "typ": "at+jwt"})


class _NotRevoked:
    """A :class:`JWTVerifier` that also refuses the tokens of grants that are gone (revoked,
    expired) from the proxy's store, on every process that shares it."""

    def __init__(self, inner: JWTVerifier, store: ProxyStore) -> None:
        self.inner = inner
        self.store = store

    async def verify(self, token_: str) -> AuthInfo:
        info = await self.inner.verify(token_)
        sid = info.claims.get("sid")
        try:
            alive = isinstance(sid, str) and await self.store.get("family", sid) is not None
        except StateUnavailable as exc:
            raise AuthUnavailable(f"the grant store is unreachable ({exc})") from None
        if not alive:
            raise InvalidToken(
                "the token was revoked (its authorization code was replayed, its refresh token reused, "
                "or its grant expired); sign in again"
            )
        return info

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
