"""The sandbox origin of ``mcpio inspect``: where MCP Apps views run.

A web host MUST render a view through a *sandbox proxy* on an origin other than its own
(ext-apps specification 2026-01-26, §Sandbox proxy). The inspector listens on a second port of
127.0.0.1 for it (another port is another origin); this app serves nothing else:

* ``GET /proxy?csp=JSON`` — the proxy page. ``JSON`` is the view's ``_meta.ui.csp``; the page is
  served with the Content-Security-Policy :func:`view_csp` builds from it (the spec's
  restrictive default for what is not declared, ``object-src 'none'``; a declared origin that
  is not a plain source expression is dropped, never loosening the policy), and with
  ``frame-ancestors`` naming the inspector's page alone: ``host``, the origin it is open at, one
  of those the inspector answers at (``127.0.0.1:PORT``, ``localhost:PORT``; else 403). The view's HTML is loaded by the
  page's script into an inner ``sandbox="allow-scripts"`` iframe (no ``allow-same-origin``: an
  opaque origin) through ``srcdoc``, and a ``srcdoc`` document inherits this page's policy;
* ``GET /proxy.js`` — that script (``static/sandbox.js``): it relays JSON-RPC messages between
  the inspector's page (checked by origin and source) and the view (checked by source), and
  tells the page the declared origins the policy kept (:func:`allowed_sources`, in its
  ``sandbox-proxy-ready``): what the page tells the view in ``hostCapabilities.sandbox.csp``.

No cookie, key or API is served on this origin; the ``Host`` header must name it (DNS rebinding).
"""

from __future__ import annotations

import html
import importlib.resources
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import msgspec

from .._protocol._http import check_host
from .._server._apps import CSP_SOURCE

log = logging.getLogger("mcpio.inspect")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

# A host source expression (the rule mcpio's servers declare by: _server._apps.CSP_SOURCE);
# anything else is dropped, so a server cannot inject a keyword or a directive.
_SOURCE = re.compile(CSP_SOURCE)
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
MAX_CSP_QUERY = 16_384

PAGE = """<!doctype html>
<html data-host="{host}" data-csp="{csp}"><head><meta charset="utf-8"><title>mcpio inspect: view sandbox</title>
<style>html, body {{ margin: 0; padding: 0; height: 100%; overflow: hidden; }}
iframe {{ border: 0; width: 100%; height: 100%; display: block; }}</style>
<script src="/proxy.js"></script></head><body></body></html>
"""


def allowed_sources(csp: Any) -> dict[str, list[str]]:
    """The declared origins of ``csp`` (a ``_meta.ui.csp`` object) that are kept: plain source
    expressions, per key of :data:`CSP_KEYS`; anything else is dropped."""
    if not isinstance(csp, dict):
        return {}
    kept: dict[str, list[str]] = {}
    for key in CSP_KEYS:
        values = csp.get(key)
        if isinstance(values, list):
            good = [v for v in values if isinstance(v, str) and _SOURCE.fullmatch(v)]
            if good:
                kept[key] = good
    return kept


def view_csp(csp: Any) -> str:
    """The Content-Security-Policy a view runs under (§UI Resource Format, Host Behavior; §Sandbox
    proxy, 5): the spec's restrictive default, widened only by the declared origins."""
    kept = allowed_sources(csp)
    res = " ".join(kept.get("resourceDomains", []))
    connect = " ".join(kept.get("connectDomains", [])) or "'none'"
    frames = " ".join(kept.get("frameDomains", [])) or "'none'"
    base = " ".join(kept.get("baseUriDomains", [])) or "'self'"
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {res}",
        f"style-src 'self' 'unsafe-inline' {res}",
        f"img-src 'self' data: {res}",
        f"font-src 'self' {res}",
        f"media-src 'self' data: {res}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        f"base-uri {base}",
        "object-src 'none'",
        "form-action 'none'",
    ]
    return "; ".join(d.strip() for d in directives)


def _script() -> bytes:
    return importlib.resources.files("mcpio._inspect").joinpath("static", "sandbox.js").read_bytes()


def origin_of(port: int) -> str:
    """The sandbox origin served on ``port``."""
    return f"http://127.0.0.1:{port}"


class SandboxApp:
    """ASGI app of the sandbox origin (``127.0.0.1:port``), framed by the inspector's page at one
    of ``host_origins`` (the origins the inspector answers at: ``InspectorApp.origins``)."""

    def __init__(self, *, port: int, host_origins: tuple[str, ...]) -> None:
        self.port = port
        self.hosts = (f"127.0.0.1:{port}",)  # the Host it answers to (_protocol._http.check_host)
        self.origin = origin_of(port)
        self.host_origins = host_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if check_host(headers, self.hosts) is not None:
            await _send(send, 403, b"wrong Host header", "text/plain; charset=utf-8", [])
            return
        if scope["method"] != "GET":
            await _send(send, 405, b"only GET", "text/plain; charset=utf-8", [])
            return
        if scope["path"] == "/proxy.js":
            framed = f"frame-ancestors {' '.join(self.host_origins)}"
            await _send(send, 200, _script(), "text/javascript; charset=utf-8", [(b"content-security-policy", framed)])
            return
        if scope["path"] != "/proxy":
            await _send(send, 404, b"no such page", "text/plain; charset=utf-8", [])
            return
        query = scope.get("query_string", b"")
        params = parse_qs(query.decode("latin-1")) if len(query) <= MAX_CSP_QUERY else {}
        # the page that frames it: one of the inspector's origins (its own, location.origin), alone
        host = (params.get("host") or [self.host_origins[0]])[0]
        if host not in self.host_origins:
            await _send(send, 403, b"host is not the inspector's origin", "text/plain; charset=utf-8", [])
            return
        framed = f"frame-ancestors {host}"
        raw = (params.get("csp") or ["{}"])[0]
        try:
            csp = msgspec.json.decode(raw.encode())
        except msgspec.DecodeError:
            csp = {}
        policy = view_csp(csp)
        log.info("view sandbox served with Content-Security-Policy: %s", policy)  # the audit trail (§Host Behavior)
        applied = msgspec.json.encode(allowed_sources(csp)).decode()  # told to the view (proxy.js)
        page = PAGE.format(host=html.escape(host), csp=html.escape(applied)).encode()
        extra = [(b"content-security-policy", policy), (b"content-security-policy", framed)]
        await _send(send, 200, page, "text/html; charset=utf-8", extra)


async def _send(send: Send, status: int, body: bytes, kind: str, policies: list[tuple[bytes, str]]) -> None:
    headers = [
        (b"content-type", kind.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"cache-control", b"no-store"),
        *[(name, value.encode()) for name, value in policies],
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
