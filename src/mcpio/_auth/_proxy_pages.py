"""The OAuth proxy's HTML pages: an error page and the consent screen, every value escaped,
served with headers that forbid framing (clickjacking of the Allow button), scripts and
caching."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._proxy_rules import _Login

PAGE_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"pragma", b"no-cache"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
]


def _html(title: str, content: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{content}</body></html>"
    ).encode()


def page(title: str, text: str) -> bytes:
    return _html(title, f"<p>{html.escape(text)}</p>")


def consent_page(consent_id: str, login: _Login, action: str) -> bytes:
    """Who asks (the client's name, and how much that name is worth), for which resource, as
    whom, with which scopes, and where the browser goes next; Allow / Deny post to ``action``."""
    c = login.client
    e = html.escape
    name = c.client_name or c.client_id
    how = (
        ("its metadata document at " + c.client_id)
        if c.client_id.startswith(("https://", "http://"))
        else "self-registered (the name is not verified)"
    )
    scopes = "".join(f"<li><code>{e(s)}</code></li>" for s in login.scope) or "<li>(no scope)</li>"
    content = (
        f"<p><b>{e(name)}</b> ({e(how)}) asks to use <code>{e(login.resource)}</code> as "
        f"<b>{e(login.subject or '')}</b>.</p><p>Scopes:</p><ul>{scopes}</ul>"
        f"<p>After approval you go back to <code>{e(login.redirect_uri)}</code>.</p>"
        f'<form method="post" action="{e(action)}">'
        f'<input type="hidden" name="consent" value="{e(consent_id)}">'
        f'<input type="hidden" name="csrf" value="{e(login.csrf)}">'
        '<button name="decision" value="allow">Allow</button> '
        '<button name="decision" value="deny">Deny</button></form>'
    )
    return _html("Allow access?", content)
