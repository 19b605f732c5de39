"""Fetching a Client ID Metadata Document (spec basic/authorization, "Client ID Metadata
Documents") without becoming a request forger for whoever sends ``/authorize``.

The URL comes from an anonymous request, so the fetch is refused unless every rule holds:

* ``https://`` with a host name or address and a path; no user info, no fragment;
* the host is resolved *here*, every address it resolves to must be public (not loopback,
  private, shared, link-local, multicast, unspecified or reserved; an IPv4-mapped IPv6 address is
  judged as its IPv4 address), and the connection goes to the address that was checked, never
  to a second resolution (no DNS-rebinding window); the connected peer is checked once more;
* TLS verifies the certificate for the URL's host name; no redirect is followed;
* the whole exchange (resolution included) within ``timeout`` seconds, the body at most
  ``max_size`` bytes, ``200`` with a JSON object.

Every refusal before a JSON object is in hand is the same :class:`CIMDUnavailable` whose message
says nothing about the target (no status, no body, no reason such as "private address"), so the
error page is no oracle for what listens where; the reason is logged for the operator. An
operator whose clients publish their documents on an intranet lists those networks in
``allowed_networks`` (and a private CA in ``ssl_context``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("mcpio.auth")

MAX_CIMD = 64 * 1024  # bytes of a metadata document
CIMD_TIMEOUT = 5.0  # seconds for resolution, connection, TLS and the whole answer
CIMD_CACHE = 1000  # documents kept (a cache: dropping one costs a refetch, nothing else)
CIMD_TTL = 3600.0

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

GENERIC = (
    "the client_id metadata document could not be fetched: it must be an https URL with a path, "
    "on a public address, answering 200 with a JSON object of at most {size} bytes within {timeout:g} s "
    "(nothing more is said about the target)"
)


class CIMDUnavailable(Exception):
    """The document could not be fetched; ``str()`` is the same for every cause (see the module
    docstring), ``reason`` is for the operator's log."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class _Refused(Exception):
    pass


def public_address(ip: IPAddress, allowed: Iterable[Network] = ()) -> bool:
    """Whether a server-side fetch may connect to ``ip``: a globally routable unicast address
    (an IPv6 address carrying an IPv4 one, mapped, 6to4 or Teredo, is judged by that one too),
    or one inside an operator's ``allowed`` networks."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in net for net in allowed if net.version == ip.version):
        return True
    if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = [ip.sixtofour, *(ip.teredo or ())]
        if ip.is_site_local or any(v4 is not None and not public_address(v4) for v4 in embedded):
            return False
    return ip.is_global


class CIMDFetcher:
    """Fetches and caches metadata documents under the rules of the module docstring.
    ``allowed_networks``: CIDR strings whose addresses are fetched although not public (an
    intranet); ``ssl_context``: whom TLS trusts (default: the system's CAs)."""

    def __init__(
        self,
        *,
        allowed_networks: Iterable[str] = (),
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = CIMD_TIMEOUT,
        max_size: int = MAX_CIMD,
    ) -> None:
        self.allowed: tuple[Network, ...] = tuple(ipaddress.ip_network(n, strict=False) for n in allowed_networks)
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.max_size = max_size
        self.message = GENERIC.format(size=max_size, timeout=timeout)
        self._pool: Any = None
        self._cache: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()

    def cached(self, url: str) -> dict[str, Any] | None:
        item = self._cache.get(url)
        if item is None or time.monotonic() >= item[0]:
            self._cache.pop(url, None)
            return None
        return item[1]

    def remember(self, url: str, doc: dict[str, Any]) -> None:
        self._cache[url] = (time.monotonic() + CIMD_TTL, doc)
        self._cache.move_to_end(url)
        while len(self._cache) > CIMD_CACHE:
            self._cache.popitem(last=False)

    async def fetch(self, url: str) -> dict[str, Any]:
        """The JSON object at ``url``; :class:`CIMDUnavailable` otherwise."""
        try:
            target = self._check(url)
            async with asyncio.timeout(self.timeout):
                return await self._get(target)
        except _Refused as exc:
            reason = str(exc)
        except TimeoutError:
            reason = f"no complete answer within {self.timeout:g} s"
        except (OSError, ssl.SSLError) as exc:
            reason = f"connection failed ({type(exc).__name__})"
        except Exception as exc:  # httpcore's errors, a malformed answer: the same refusal
            reason = f"{type(exc).__name__}"
        log.info("refused the client metadata document %s: %s", url[:200], reason)
        raise CIMDUnavailable(self.message, reason)

    def _check(self, url: str) -> str:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            raise _Refused("not a URL") from None
        if parts.scheme != "https" or not parts.hostname:
            raise _Refused("not an https URL")
        if parts.username is not None or parts.password is not None or parts.fragment:
            raise _Refused("user info or a fragment")
        if parts.path in ("", "/"):
            raise _Refused("no path")
        return url

    def _client(self) -> Any:
        if self._pool is None:
            import httpcore

            backend: Any = _CheckedBackend(httpcore.AnyIOBackend(), self.allowed)  # httpcore's interface, duck-typed
            self._pool = httpcore.AsyncConnectionPool(
                ssl_context=self.ssl_context or ssl.create_default_context(),
                max_connections=16,
                http1=True,
                http2=False,
                retries=0,
                network_backend=backend,
            )
        return self._pool

    async def _get(self, url: str) -> dict[str, Any]:
        headers = [(b"accept", b"application/json"), (b"user-agent", b"mcpio-oauth-proxy")]
        async with self._client().stream("GET", url, headers=headers) as response:
            if response.status != 200:
                raise _Refused(f"HTTP {response.status}")
            hdrs = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
            declared = hdrs.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_size:
                raise _Refused("too large")
            chunks, size = [], 0
            async for chunk in response.aiter_stream():
                size += len(chunk)
                if size > self.max_size:
                    raise _Refused("too large")
                chunks.append(chunk)
        ctype = hdrs.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json" and not ctype.endswith("+json"):
            raise _Refused("not JSON")
        try:
            doc = json.loads(b"".join(chunks))
        except ValueError:
            raise _Refused("not JSON") from None
        if not isinstance(doc, dict):
            raise _Refused("not a JSON object")
        return doc

    async def aclose(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.aclose()


def _peer_of(stream: Any) -> str | None:
    addr = stream.get_extra_info("server_addr")
    return addr[0] if isinstance(addr, tuple) and addr else None


class _CheckedBackend:
    """An httpcore network backend that resolves the host itself, refuses unless every address
    is public, and connects to the checked address (see the module docstring)."""

    def __init__(self, inner: Any, allowed: tuple[Network, ...]) -> None:
        self.inner = inner
        self.allowed = allowed

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> Any:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        if not addresses:
            raise _Refused("the host does not resolve")
        for ip in addresses:
            if not public_address(ip, self.allowed):
                raise _Refused("the host resolves to a non-public address")
        stream = await self.inner.connect_tcp(
            str(addresses[0]), port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        peer = _peer_of(stream)
        if peer is None or not public_address(ipaddress.ip_address(peer.split("%")[0]), self.allowed):
            await stream.aclose()
            raise _Refused("the connected peer is not a public address")
        return stream

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise _Refused("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
