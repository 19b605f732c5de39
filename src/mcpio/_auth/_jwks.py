"""Fetching what a resource server needs from its authorization server, safely.

* :func:`fetch_json` — one GET/POST with a timeout, no redirects, a size cap and a JSON check;
  every failure is an :class:`AuthUnavailable` that names the URL and what went wrong.
* :func:`check_url` — ``https://`` only, except on a loopback host (spec basic/authorization,
  "Communication Security": endpoints MUST be HTTPS; loopback is for development).
* :class:`JWKS` — the issuer's signing keys: ``jwks_uri`` discovered from RFC 8414 /
  OpenID Connect metadata (path-insertion order of the spec's "Authorization Server Metadata
  Discovery"), cached for ``ttl`` seconds, refetched when a token names an unknown ``kid``.
  A flood of made-up kids cannot hammer the IdP nor stall requests: at most one fetch is in
  flight (every request that needs it joins it, none starts another), at most one per
  ``min_refresh`` seconds after a success, and after a failure none for a backoff that doubles
  (up to ``max_backoff``) while the IdP keeps failing; meanwhile unknown kids fail at once
  (503), and tokens whose key is cached go on being verified with the cached keys, even past
  ``ttl`` (stale keys are served while a refresh is in flight or failing, never waited for).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from .._protocol._http_hosts import is_loopback
from .._shown import show_urls_in_httpx_log, shown

log = logging.getLogger("mcpio.auth")

MAX_DOCUMENT = 512 * 1024  # bytes: a JWKS or metadata document larger than this is refused
TIMEOUT = 5.0  # seconds for connect, read and the whole exchange


class AuthUnavailable(Exception):
    """The authorization server (metadata, JWKS, introspection) cannot be used right now.

    The server's or the IdP's fault, not the client's: the resource server answers 503."""


def is_loopback_host(host: str | None) -> bool:
    """The loopback rule of :func:`mcpio._protocol._http.is_loopback` (an address in 127.0.0.0/8
    or ::1, or ``localhost``; never a name that merely starts like one), for a URL's hostname."""
    return bool(host) and is_loopback(host or "")


def tls_or_loopback(url: str) -> bool:
    """OAuth 2.1 §1.5, the one rule for every authorization endpoint and every server that gets
    bearer tokens: ``https://`` with a host, or plain ``http://`` to a loopback address only."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and is_loopback_host(parts.hostname)


def check_url(url: str, what: str) -> str:
    """``url`` if it may be used for ``what``; ValueError naming the rule otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{what} must be an absolute https:// URL, not {shown(url)!r}")
    if not tls_or_loopback(url):
        raise ValueError(
            f"{what} {shown(url)!r} uses http:// on a non-loopback host; authorization endpoints must "
            "use https:// (http:// is accepted on 127.0.0.1, ::1 and localhost only)"
        )
    if parts.fragment:
        raise ValueError(f"{what} {shown(url)!r} must not have a #fragment")
    return url


async def fetch_json(
    client: Any,
    url: str,
    what: str,
    *,
    method: str = "GET",
    data: Any = None,
    auth: Any = None,
    max_size: int = MAX_DOCUMENT,
    timeout: float = TIMEOUT,
) -> dict[str, Any]:
    """GET (or POST ``data``) ``url`` and return its JSON object; AuthUnavailable otherwise."""
    import httpx

    named = shown(url)  # in messages: without its credentials (an endpoint given with user:password)
    show_urls_in_httpx_log()  # and in the line httpx logs for the request
    try:
        async with asyncio.timeout(timeout):
            async with client.stream(
                method, url, data=data, auth=auth, headers={"accept": "application/json"}
            ) as response:
                if response.status_code != 200:
                    raise AuthUnavailable(f"{what} {named} answered HTTP {response.status_code}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_size:
                    raise AuthUnavailable(f"{what} {named} is {declared} bytes, over the limit of {max_size}")
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    if size > max_size:
                        raise AuthUnavailable(f"{what} {named} is over the limit of {max_size} bytes")
                    chunks.append(chunk)
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    except TimeoutError:
        raise AuthUnavailable(f"{what} {named} did not answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise AuthUnavailable(f"{what} {named} is unreachable ({type(exc).__name__})") from None
    if ctype and ctype != "application/json" and not ctype.endswith("+json"):
        raise AuthUnavailable(f"{what} {named} answered {ctype}, not JSON")
    try:
        doc = json.loads(b"".join(chunks))
    except ValueError:
        raise AuthUnavailable(f"{what} {named} answered a body that is not JSON") from None
    if not isinstance(doc, dict):
        raise AuthUnavailable(f"{what} {named} answered JSON that is not an object")
    return doc


def metadata_urls(issuer: str) -> list[str]:
    """Where RFC 8414 / OIDC metadata of ``issuer`` may be, in the spec's order."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


async def discover_metadata(client: Any, issuer: str, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The issuer's metadata; its ``issuer`` must equal ``issuer`` (RFC 8414 §3.3)."""
    problems: list[str] = []
    for url in metadata_urls(issuer):
        try:
            doc = await fetch_json(client, url, "authorization server metadata", timeout=timeout)
        except AuthUnavailable as exc:
            problems.append(str(exc))
            continue
        if doc.get("issuer") != issuer:
            problems.append(f"{shown(url)} names issuer {doc.get('issuer')!r}, not {issuer!r}")
            continue
        return doc
    raise AuthUnavailable("no usable metadata for issuer " + issuer + ": " + "; ".join(problems))


class JWKS:
    """The signing keys of one issuer (see the module docstring)."""

    def __init__(
        self,
        *,
        issuer: str | None = None,
        jwks_url: str | None = None,
        ttl: float = 3600.0,
        min_refresh: float = 10.0,
        max_backoff: float = 300.0,
        client: Any = None,
        timeout: float = TIMEOUT,
    ) -> None:
        if issuer is None and jwks_url is None:
            raise ValueError("JWKS needs an issuer (to discover jwks_uri) or a jwks_url")
        self.issuer = check_url(issuer, "the issuer") if issuer else None
        self.jwks_url = check_url(jwks_url, "the JWKS URL") if jwks_url else None
        self.ttl = ttl
        self.min_refresh = min_refresh
        self.max_backoff = max_backoff
        self.timeout = timeout
        self._client = client
        self._keys: dict[str | None, list[Any]] = {}  # kid -> PyJWK objects
        self._fetched_at = float("-inf")  # the last successful fetch (monotonic)
        self._refreshing: asyncio.Future[None] | None = None  # the one fetch in flight
        self._failures = 0  # failed fetches in a row
        self._retry_at = float("-inf")  # after a failure: no fetch before this (monotonic)
        self._last_error = ""

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False)
        return self._client

    async def aclose(self) -> None:
        task, self._refreshing = self._refreshing, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _cached(self, kid: str | None) -> list[Any] | None:
        """The cached keys for ``kid`` (any key when the token names none), fresh or not."""
        if kid is None:
            every = [k for keys in self._keys.values() for k in keys]
            return every or None
        return self._keys.get(kid)

    def keys_for(self, kid: str | None) -> list[Any] | None:
        """The cached keys for ``kid`` if the cache is fresh (within ``ttl``), else None."""
        if time.monotonic() - self._fetched_at > self.ttl:
            return None
        return self._cached(kid)

    async def get(self, kid: str | None) -> list[Any]:
        """Keys for ``kid``, fetching the JWKS when needed (see the module docstring). [] when
        still unknown; :class:`AuthUnavailable` when the JWKS cannot be had now."""
        now = time.monotonic()
        stale = now - self._fetched_at > self.ttl
        found = self._cached(kid)
        if found is not None:
            if stale:  # served as they are; a refresh (if one may start) runs in the background
                self._start_refresh(now)
            return found
        task = self._refreshing or self._start_refresh(now)
        if task is None:
            if now < self._retry_at:
                raise AuthUnavailable(
                    f"the issuer's signing keys cannot be fetched ({self._last_error}); "
                    f"the next attempt is in {self._retry_at - now:.0f} s"
                )
            return []  # an unknown kid right after a fetch: do not refetch yet
        await asyncio.shield(task)  # join the one fetch in flight (its failure is raised here)
        return self._cached(kid) or []

    def _start_refresh(self, now: float) -> asyncio.Future[None] | None:
        """Start the fetch if none is in flight and the limits allow one; the fetch, or None."""
        if self._refreshing is not None or now < self._retry_at:
            return None
        if now - self._fetched_at <= self.ttl and now - self._fetched_at < self.min_refresh:
            return None
        task = asyncio.ensure_future(self._refresh())
        self._refreshing = task
        task.add_done_callback(self._refreshed)
        return task

    def _refreshed(self, task: asyncio.Future[None]) -> None:
        if self._refreshing is task:
            self._refreshing = None
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here too: a background refresh has no one awaiting it
        if exc is None:
            self._failures, self._retry_at, self._last_error = 0, float("-inf"), ""
            return
        self._failures += 1
        backoff = min(max(self.min_refresh, 1.0) * 2 ** (self._failures - 1), self.max_backoff)
        self._retry_at = time.monotonic() + backoff
        self._last_error = str(exc) if isinstance(exc, AuthUnavailable) else type(exc).__name__
        log.warning("fetching the signing keys failed (%s); next attempt in %.0f s", self._last_error, backoff)

    async def _refresh(self) -> None:
        client = self._http()
        url = self.jwks_url
        if url is None:
            assert self.issuer is not None
            meta = await discover_metadata(client, self.issuer, self.timeout)
            uri = meta.get("jwks_uri")
            if not isinstance(uri, str):
                raise AuthUnavailable(f"the metadata of {self.issuer} has no jwks_uri")
            try:
                url = check_url(uri, "the jwks_uri")
            except ValueError as exc:
                raise AuthUnavailable(str(exc)) from None
            self.jwks_url = url
        doc = await fetch_json(client, url, "the JWKS", timeout=self.timeout)
        keys = doc.get("keys")
        if not isinstance(keys, list):
            raise AuthUnavailable(f"the JWKS {shown(url)} has no 'keys' list")
        self._keys = parse_keys(keys)
        self._fetched_at = time.monotonic()
        log.info("fetched %d signing key(s) from %s", sum(map(len, self._keys.values())), shown(url))


def parse_keys(keys: list[Any]) -> dict[str | None, list[Any]]:
    """Public signing keys by kid; symmetric (``oct``), encryption and unreadable keys are skipped."""
    import jwt

    out: dict[str | None, list[Any]] = {}
    for jwk in keys:
        if not isinstance(jwk, dict) or jwk.get("kty") not in ("RSA", "EC", "OKP"):
            continue  # never an HMAC secret from a public document (alg confusion)
        if jwk.get("use", "sig") != "sig" or "d" in jwk:
            continue
        try:
            key = jwt.PyJWK(jwk)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
            continue
        kid = jwk.get("kid")
        out.setdefault(kid if isinstance(kid, str) else None, []).append(key)
    return out
