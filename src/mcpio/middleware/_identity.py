"""Who is asking: the one rule the kit uses to tell callers apart (rate-limit buckets, private
cache entries, the ids in log lines).

* ``principal``: the authenticated principal when the server runs with ``auth=`` (``ctx.principal``,
  issuer + subject: the notion sessions and tasks are bound to); without auth, the client address
  of the HTTP request (``ctx.http.client``); over stdio (or in memory), the one connection.
* ``address``: the client address of the HTTP request, whoever is authenticated; the connection
  without HTTP. Behind a reverse proxy this is the proxy's address unless the proxy is trusted
  (uvicorn's ``FORWARDED_ALLOW_IPS``), or pass ``per=`` a function that reads its header.
* ``network``: what a rate limit counts an address as: an IPv4 address itself, an IPv4-mapped
  IPv6 address as the IPv4 address it maps, any other IPv6 address as its /64 (one subscriber's
  allocation, RFC 6177: its holder could otherwise rotate addresses for fresh buckets).
  Rate limits use it (``RateLimit(per="principal")`` without auth, ``per="address"``); private
  cache entries keep the exact address (two hosts of one /64 are still two callers there).
* ``audience``: whom a *private* answer may be served to again (``ResponseCache``): the
  ``principal``, and in a legacy session that session (an answer may depend on it: its
  ``ctx.session_state``, its client), and without auth the credentials the request carried
  (a server checking a cookie or token of its own tells callers apart by them, not by address).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from .._server._http_view import SECRET_HEADERS, client_network

if TYPE_CHECKING:
    from .._server._context import Context

_CONNECTION = "mcpio.middleware/connection"  # the connection's random id, in its Session.state


def connection(ctx: Context) -> str:
    """A random id of the connection (session) serving ``ctx``, made at its first use."""
    state = ctx.session.state
    found = state.get(_CONNECTION)
    if found is None:
        found = state[_CONNECTION] = secrets.token_hex(8)
    return f"connection:{found}"


def address(ctx: Context) -> str:
    """The HTTP client address (host only, no port), else the connection."""
    http = ctx.http
    if http is not None and http.client is not None:
        return f"address:{http.client[0]}"
    return connection(ctx)


def network(ctx: Context) -> str:
    """The HTTP client address as a rate limit counts it (module docstring), else the connection."""
    http = ctx.http
    if http is not None and http.client is not None:
        return f"address:{client_network(http.client[0])}"
    return connection(ctx)


def principal(ctx: Context) -> str:
    """The authenticated principal, else :func:`address`."""
    if ctx.principal is not None:
        return f"principal:{ctx.principal}"
    return address(ctx)


def bucket(ctx: Context) -> str:
    """Whose rate-limit bucket ``ctx`` draws from: the authenticated principal, else :func:`network`."""
    if ctx.principal is not None:
        return f"principal:{ctx.principal}"
    return network(ctx)


def audience(ctx: Context) -> tuple[str, ...]:
    """Whom a private answer made for ``ctx`` may be served to again (module docstring)."""
    who: tuple[str, ...] = (principal(ctx),)
    if not ctx.stateless:
        who += (connection(ctx),)
    http = ctx.http
    if ctx.principal is None and http is not None:
        sent = [f"{name}={http.secret_header(name)}" for name in sorted(SECRET_HEADERS) if name in http.headers]
        if sent:
            who += ("credentials:" + digest("\n".join(sent), 32),)
    return who


def digest(value: str, size: int = 12) -> str:
    """A short, stable, one-way name for ``value`` (log lines, Redis keys): the same caller gives
    the same name on every process, and the value itself is never written."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:size]
