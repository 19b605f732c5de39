"""``ctx.http``: a read-only view of the HTTP request that carried a client request.

Made from the ASGI scope of that request's POST (``Abilities.http_scope``); None over stdio.
Credentials (:data:`SECRET_HEADERS`) read as :data:`REDACTED` through ``headers``;
:meth:`HttpRequest.secret_header` gives the value to code that asks for it by name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["REDACTED", "HttpRequest"]

REDACTED = "[redacted]"
# Credentials: a token, a cookie, and a legacy session's id (whoever holds it acts as the
# session; without auth it is the session's only credential).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "mcp-session-id"})


class Headers(Mapping[str, str]):
    """Request headers, case-insensitive, read-only; repeated headers joined with ", ". The
    credentials headers (:data:`SECRET_HEADERS`) read as :data:`REDACTED`."""

    __slots__ = ("_map",)

    def __init__(self, raw: Any) -> None:
        found: dict[str, str] = {}
        for key, value in raw or ():
            name = (key.decode("latin-1") if isinstance(key, bytes) else str(key)).lower()
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            found[name] = f"{found[name]}, {text}" if name in found else text
        self._map = found

    def __getitem__(self, name: str) -> str:
        key = name.lower()
        value = self._map[key]
        return REDACTED if key in SECRET_HEADERS else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._map

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"

    def secret(self, name: str) -> str | None:
        return self._map.get(name.lower())


class HttpRequest:
    """The HTTP request carrying this client request (see the module docstring)."""

    __slots__ = ("_query", "client", "headers", "method", "path", "query_string")

    def __init__(self, scope: Mapping[str, Any]) -> None:
        self.method: str = scope.get("method", "POST")
        self.path: str = scope.get("path", "/")
        raw = scope.get("query_string", b"")
        self.query_string: str = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
        self.headers = Headers(scope.get("headers"))
        client = scope.get("client")
        self.client: tuple[str, int] | None = (str(client[0]), int(client[1])) if client else None
        self._query: dict[str, str] | None = None

    @property
    def query(self) -> Mapping[str, str]:
        """The query string's parameters (the first value of a repeated one)."""
        if self._query is None:
            from urllib.parse import parse_qsl

            found: dict[str, str] = {}
            for key, value in parse_qsl(self.query_string, keep_blank_values=True):
                found.setdefault(key, value)
            self._query = found
        return self._query

    def secret_header(self, name: str) -> str | None:
        """The value of header ``name`` as sent, credentials included (``Authorization``…)."""
        return self.headers.secret(name)

    def __repr__(self) -> str:
        return f"HttpRequest({self.method} {self.path}, client={self.client})"


def client_network(host: str) -> str:
    """What a client address counts as where callers without auth are told apart by address (a
    rate limit, a share of state handles): an IPv4 address itself, an IPv4-mapped IPv6 address as
    the IPv4 address it maps, any other IPv6 address as its /64 (one subscriber's allocation,
    RFC 6177: its holder could otherwise rotate addresses), anything else (a Unix socket's peer)
    as it is."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # without an IPv6 zone id
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
