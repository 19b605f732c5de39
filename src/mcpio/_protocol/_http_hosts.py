"""Host and Origin matching for the DNS-rebinding checks (``_http.check_host``/``check_origin``),
and whether an address is loopback; pure functions, re-exported by :mod:`._http`."""

from __future__ import annotations

import ipaddress
from collections.abc import Collection


def split_host(host: str) -> tuple[str, str | None]:
    """``"localhost:8000"`` → ("localhost", "8000"); ``"[::1]:3000"`` → ("[::1]", "3000")."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, None
        rest = host[end + 1 :]
        return host[: end + 1], rest[1:] if rest.startswith(":") else None
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        return name, port
    return host, None


def host_allowed(host: str, allowed: Collection[str]) -> bool:
    """``allowed`` entries: a name (any port), ``name:port`` (that port), or ``"*"``."""
    if "*" in allowed:
        return True
    name, port = split_host(host)
    for entry in allowed:
        e_name, e_port = split_host(entry)
        if e_name == name and (e_port is None or e_port == port):
            return True
    return False


def origin_allowed(origin: str, allowed: Collection[str]) -> bool:
    """``allowed`` entries: a full origin (``https://app.example.com``), a bare host (any
    scheme and port, e.g. ``localhost``), or ``"*"``."""
    if "*" in allowed:
        return True
    origin = origin.strip().lower().rstrip("/")
    if origin in {a.lower().rstrip("/") for a in allowed}:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https") or not rest:
        return False  # "null", file://, garbage: never a browser page we trust
    return host_allowed(rest, [a for a in allowed if "://" not in a])


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (binding them needs no opt-in): a literal
    loopback address (127.0.0.0/8, ::1) or ``localhost`` — never a name that merely starts like
    one (``127.evil.example`` resolves wherever its owner wants)."""
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
