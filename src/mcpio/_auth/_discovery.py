"""Client-side discovery (spec basic/authorization, "Authorization Server Discovery").

Order, as the spec gives it (2025-11-25 and 2026-07-28):

1. Protected Resource Metadata (RFC 9728): the ``resource_metadata`` URL of the 401's
   ``WWW-Authenticate`` first; then ``/.well-known/oauth-protected-resource/<path of the MCP
   URL>``; then ``/.well-known/oauth-protected-resource`` at the root.
2. The PRM's ``resource`` must name the server the client talks to (same origin, and the MCP
   URL's path inside it): a document for another resource is refused (RFC 9728 §3.3).
3. Authorization server metadata for the first ``authorization_servers`` issuer: with a path
   component ``/tenant``: ``/.well-known/oauth-authorization-server/tenant``,
   ``/.well-known/openid-configuration/tenant``, ``/tenant/.well-known/openid-configuration``;
   without: ``/.well-known/oauth-authorization-server``, ``/.well-known/openid-configuration``.
   The document's ``issuer`` must equal the issuer used to build the URL, exactly (RFC 8414
   §3.3; 2026-07-28 makes it a MUST for MCP clients).
4. A 2025-03-26 server (no PRM): its origin is the authorization server; without metadata
   there either, the default endpoints ``/authorize``, ``/token``, ``/register`` of that origin.

Every fetch is bounded (:data:`MAX_METADATA_BYTES`, a timeout, no redirects followed), goes
through :func:`oauth_http` (https, or plain http to a loopback address only, checked before any
connection: every URL here is named by a server the client does not trust yet), and every
step is recorded in :class:`Discovery.steps` (what was fetched, and why it was accepted or
refused) for ``mcpio auth URL`` and for error messages. Nothing here sees a token.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ._jwks import tls_or_loopback

MAX_METADATA_BYTES = 256 * 1024
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"


class AuthorizationError(httpx.HTTPError):
    """Authorization with an MCP server could not be completed.

    The message says which step failed, whose fault it is and what to do; it never contains a
    token, a client secret, a code or a code verifier. (A subclass of ``httpx.HTTPError`` so
    the HTTP transport answers the pending request with it instead of hanging.)
    """

    def __init__(self, message: str, *, steps: list[str] | None = None) -> None:
        super().__init__(message)
        self.steps = list(steps or [])


#: How every "no usable OAuth metadata" failure begins (the CLI turns it into ``-H 'Authorization: Bearer …'``)
WANTS_TOKEN = "this server wants a bearer token"


def wants_token(why: str, steps: list[str] | None = None) -> AuthorizationError:
    """The failure for a server that answers 401 but offers no usable way to get a token by
    OAuth (no metadata, or metadata naming an authorization server that cannot be used): the
    user needs a token from the server's operator. ``why``: the details (after the headline)."""
    return AuthorizationError(
        f"{WANTS_TOKEN}: send one as 'Authorization: Bearer <token>' (ask its operator); it cannot be "
        f"obtained by OAuth: {why}",
        steps=steps,
    )


@dataclass
class Discovery:
    """What discovery found for one MCP server URL."""

    server_url: str
    resource: str  # the value for `resource` (RFC 8707): the PRM's, as published
    issuer: str
    prm: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- WWW-Authenticate
_ITEM = re.compile(r'[\s,]*([A-Za-z0-9_\-.!#$%&\'*+^`|~]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*)))?')


DPOP_CHALLENGED = "mcpio dpop"  # set when a DPoP challenge is present (a space: no parameter name)


def parse_www_authenticate(value: str | None) -> dict[str, str]:
    """The parameters of the ``Bearer`` (RFC 6750 §3) or ``DPoP`` (RFC 9449 §7.1) challenge,
    lowercase keys; {} if none. A DPoP challenge also sets :data:`DPOP_CHALLENGED`.

    Lenient: other challenges before or after it are skipped; quoted and bare values both work.
    """
    params: dict[str, str] = {}
    scheme = None
    for m in _ITEM.finditer(value or ""):
        name, quoted, bare = m.group(1), m.group(2), m.group(3)
        if quoted is None and bare is None:
            scheme = name.lower()  # a bare token starts a new challenge
            if scheme == "dpop":
                params.setdefault(DPOP_CHALLENGED, "1")
        elif scheme in ("bearer", "dpop"):
            val = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
            params.setdefault(name.lower(), val)
    return params


def union(*scope_lists: list[str]) -> list[str]:
    out: list[str] = []
    for scopes in scope_lists:
        out.extend(s for s in scopes if s not in out)
    return out


@contextlib.asynccontextmanager
async def as_authorization_error() -> AsyncIterator[None]:
    """Anything but an HTTP error (a token file that cannot be used, a key that cannot sign, a
    user agent that failed) becomes an :class:`AuthorizationError`, which the HTTP transport
    turns into the pending request's error (another exception would leave the request hanging)."""
    try:
        yield
    except httpx.HTTPError:
        raise
    except Exception as exc:
        raise AuthorizationError(f"authorization failed: {type(exc).__name__}: {exc}") from exc


def select_scopes(disc: Discovery, challenge: dict[str, str], scopes: list[str] | None, offline: bool) -> list[str]:
    """Spec "Scope Selection Strategy": ``scopes`` (the client's own), else the challenge's scope,
    else the PRM's ``scopes_supported``, else none; with ``offline``, ``offline_access`` too
    when the authorization server lists it (2026)."""
    if scopes is not None:
        chosen = list(scopes)
    elif challenge.get("scope"):
        chosen = scopes_of(challenge["scope"])
    elif isinstance(disc.prm.get("scopes_supported"), list):
        chosen = [s for s in disc.prm["scopes_supported"] if isinstance(s, str)]
    else:
        chosen = []
    as_scopes = disc.metadata.get("scopes_supported")
    if offline and isinstance(as_scopes, list) and "offline_access" in as_scopes and chosen:
        chosen = union(chosen, ["offline_access"])
    return chosen


def scopes_of(value: str | None) -> list[str]:
    return [s for s in (value or "").split() if s]


# ---------------------------------------------------------------------- URLs
def server_identity(url: str | httpx.URL) -> str:
    """The URL the OAuth client knows an MCP server by (its discovery, its stored tokens, its
    messages): the one the client connects to, without userinfo, query and fragment (spec
    "Canonical Server URI" has none), so a ``user:password@`` or ``?token=`` of the URL given
    never reaches a metadata URL, a default endpoint, a token store or a message."""
    return str(httpx.URL(url).copy_with(query=None, fragment=None, userinfo=b""))


def canonical_resource(url: str) -> str:
    """The canonical server URI (spec "Canonical Server URI"): lowercase scheme and host, no
    fragment, no query, no trailing slash."""
    p = urlsplit(url)
    path = p.path.rstrip("/")
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), path, "", ""))


def prm_urls(server_url: str, header_url: str | None) -> list[str]:
    """The PRM locations to try, in the spec's order."""
    p = urlsplit(server_url)
    root = urlunsplit((p.scheme, p.netloc, "", "", ""))
    out = [header_url] if header_url else []
    path = p.path.rstrip("/")
    if path:
        out.append(root + PRM_WELL_KNOWN + path)
    out.append(root + PRM_WELL_KNOWN)
    return list(dict.fromkeys(out))


def as_metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata locations for ``issuer``, in the spec's order."""
    p = urlsplit(issuer)
    root = urlunsplit((p.scheme, p.netloc, "", "", ""))
    path = p.path.rstrip("/")
    if path:
        return [
            f"{root}/.well-known/oauth-authorization-server{path}",
            f"{root}/.well-known/openid-configuration{path}",
            f"{root}{path}/.well-known/openid-configuration",
        ]
    return [f"{root}/.well-known/oauth-authorization-server", f"{root}/.well-known/openid-configuration"]


def require_secure(url: str, what: str) -> None:
    """:func:`~mcpio._auth._jwks.tls_or_loopback` for a URL the OAuth client is about to contact.
    Raises :class:`AuthorizationError`. :func:`oauth_http` applies it to every request."""
    if tls_or_loopback(url):
        return
    raise AuthorizationError(
        f"{what} {url} is not https (OAuth 2.1 requires TLS, plain http only on a loopback address: "
        "127.0.0.1, ::1, localhost); refusing to contact it. The server that named it is misconfigured "
        "or hostile: ask its operator to publish https endpoints"
    )


async def _refuse_insecure(request: httpx.Request) -> None:
    require_secure(str(request.url.copy_with(query=None, fragment=None)), request.method)


def oauth_http(timeout: float = 30.0) -> httpx.AsyncClient:
    """The HTTP client of every request the OAuth client makes (resource and authorization server
    metadata, registration, token endpoints): no redirects followed, and :func:`require_secure`
    checked on each request before it is sent (an httpx request hook runs before any connection),
    so a hostile server cannot make the client fetch a plain-http URL elsewhere (blind SSRF)."""
    return httpx.AsyncClient(follow_redirects=False, timeout=timeout, event_hooks={"request": [_refuse_insecure]})


def resource_covers(resource: str, server_url: str) -> bool:
    """True if the PRM ``resource`` names ``server_url`` (same origin; the server's path is the
    resource's path or below it)."""
    r, s = urlsplit(resource), urlsplit(server_url)
    if (r.scheme.lower(), r.netloc.lower()) != (s.scheme.lower(), s.netloc.lower()) or r.fragment:
        return False
    rp, sp = r.path.rstrip("/"), s.path.rstrip("/")
    return sp == rp or sp.startswith(rp + "/")


# ---------------------------------------------------------------------- fetching
async def fetch_json(http: httpx.AsyncClient, url: str, what: str, steps: list[str]) -> dict[str, Any] | None:
    """GET ``url`` and return its JSON object, or None (the reason appended to ``steps``)."""
    try:
        async with http.stream("GET", url, headers={"accept": "application/json"}) as resp:
            if resp.status_code != 200:
                steps.append(f"{what}: GET {url} -> HTTP {resp.status_code}: not there")
                return None
            body = bytearray()
            async for chunk in resp.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_BYTES:
                    steps.append(f"{what}: GET {url} -> refused: the body is over {MAX_METADATA_BYTES} bytes")
                    return None
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower() or "no content type"
    except httpx.HTTPError as exc:
        steps.append(f"{what}: GET {url} -> failed: {type(exc).__name__}: {exc}")
        return None
    try:
        doc = json.loads(bytes(body))
    except ValueError:
        steps.append(f"{what}: GET {url} -> refused: the body is not JSON ({ctype}, {len(body)} bytes)")
        return None
    if not isinstance(doc, dict):
        steps.append(f"{what}: GET {url} -> refused: the JSON is not an object")
        return None
    return doc


async def discover_resource(
    http: httpx.AsyncClient, server_url: str, header_url: str | None, steps: list[str]
) -> tuple[dict[str, Any], str] | None:
    """The Protected Resource Metadata for ``server_url`` and the URL it came from, or None."""
    if header_url:
        steps.append(f"WWW-Authenticate names the resource metadata: {header_url}")
    else:
        steps.append("WWW-Authenticate names no resource_metadata: trying the well-known URIs")
    mismatch: str | None = None
    for url in prm_urls(server_url, header_url):
        doc = await fetch_json(http, url, "protected resource metadata", steps)
        if doc is None:
            continue
        servers = doc.get("authorization_servers")
        resource = doc.get("resource")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
            steps.append(f"protected resource metadata: {url} refused: no authorization_servers list")
            continue
        if not isinstance(resource, str) or not resource_covers(resource, server_url):
            mismatch = f"{url} is for the resource {resource!r}, not for {server_url}"
            steps.append(f"protected resource metadata: refused: {mismatch} (RFC 9728 §3.3)")
            continue
        steps.append(
            f"protected resource metadata: accepted {url} (resource {resource}, "
            f"authorization servers {', '.join(servers)})"
        )
        return doc, url
    if mismatch is not None:
        raise AuthorizationError(
            f"the MCP server {server_url} published protected resource metadata for another resource "
            f"({mismatch}); refusing to authorize (a misconfigured or malicious server). "
            "Check the server URL, or ask the server's operator to fix its metadata",
            steps=steps,
        )
    return None


async def discover_issuer(http: httpx.AsyncClient, issuer: str, steps: list[str]) -> dict[str, Any] | None:
    """The authorization server metadata of ``issuer`` whose ``issuer`` matches exactly, or None."""
    for url in as_metadata_urls(issuer):
        doc = await fetch_json(http, url, "authorization server metadata", steps)
        if doc is None:
            continue
        if doc.get("issuer") != issuer:
            steps.append(
                f"authorization server metadata: refused {url}: its issuer {doc.get('issuer')!r} "
                f"is not {issuer!r} (RFC 8414 §3.3)"
            )
            continue
        missing = [k for k in ("authorization_endpoint", "token_endpoint") if not isinstance(doc.get(k), str)]
        if "token_endpoint" in missing:
            steps.append(f"authorization server metadata: refused {url}: no token_endpoint")
            continue
        steps.append(f"authorization server metadata: accepted {url}")
        return doc
    return None


async def discover(
    http: httpx.AsyncClient, server_url: str, challenge: dict[str, str], steps: list[str] | None = None
) -> Discovery:
    """Run discovery for ``server_url`` given the 401's Bearer challenge parameters.

    Raises :class:`AuthorizationError` when no usable metadata is found.
    """
    steps = [] if steps is None else steps
    require_secure(server_url, "the MCP server")
    found = await discover_resource(http, server_url, challenge.get("resource_metadata"), steps)
    if found is None:
        # 2025-03-26 servers publish no PRM: the MCP server's origin is the authorization server.
        p = urlsplit(server_url)
        issuer = urlunsplit((p.scheme, p.netloc, "", "", ""))
        steps.append(
            f"no protected resource metadata: trying the MCP server's origin {issuer} as the "
            "authorization server (2025-03-26 servers)"
        )
        prm: dict[str, Any] = {}
        resource = canonical_resource(server_url)
    else:
        prm = found[0]
        issuer = prm["authorization_servers"][0]
        resource = prm["resource"]
    require_secure(issuer, "the authorization server")
    metadata = await discover_issuer(http, issuer, steps)
    if metadata is None and found is None:
        # 2025-03-26 "Fallbacks for Servers without Metadata Discovery": the default endpoints
        # at the MCP server's origin (PKCE was already mandatory: S256 is assumed).
        steps.append(
            f"no authorization server metadata either: using the 2025-03-26 default endpoints "
            f"{issuer}/authorize, /token and /register"
        )
        metadata = {
            "issuer": issuer,
            "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "registration_endpoint": issuer + "/register",
            "code_challenge_methods_supported": ["S256"],
            "mcpio_default_endpoints": True,
        }
    if metadata is None:
        raise wants_token(
            f"found no usable authorization server metadata for {issuer} (the authorization server of "
            f"{server_url}): " + "; ".join(steps[-3:]) + ". The server's authorization set-up is broken or "
            "unreachable; `mcpio auth URL` prints every step",
            steps,
        )
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        if isinstance(metadata.get(key), str):
            require_secure(metadata[key], f"the {key.replace('_', ' ')}")
    return Discovery(server_url=server_url, resource=resource, issuer=issuer, prm=prm, metadata=metadata, steps=steps)
