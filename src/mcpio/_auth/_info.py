"""Who is calling: :class:`AuthInfo`, and where a request's handlers find it (``ctx.auth``).

No I/O and no third-party imports: ``Context.auth`` imports this module lazily, and a server
without authorization never does.

How the principal travels (one seam, the HTTP guard in ``_resource``): the guard verifies the
bearer token at the top of the ASGI app and stores the :class:`AuthInfo` in a :class:`Slot`
held by a context variable. The modern era serves each POST in a task spawned from that
request, so the slot is the request's own. A legacy session (Streamable HTTP with
``Mcp-Session-Id``, or HTTP+SSE) belongs to the principal that opened it: the HTTP app records
that principal with the session (in the shared record on a state backend, so every process
checks it), refuses any other principal's request for it as an unknown session (404), and
before each admitted request makes the slot the session's task holds :meth:`Slot.follow` the
request's, so handlers run by the session see the current request's principal and token.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_RESERVED = ("client:", "token:", "\\")  # subjects escaped in AuthInfo.principal


@dataclass(frozen=True, slots=True)
class AuthInfo:
    """A verified access token, as handlers see it (``ctx.auth``).

    ``scopes`` are the token's granted scopes; ``claims`` the JWT claims or the introspection
    response; ``expires_at`` a UNIX time or None. The raw token is kept out of ``repr`` and of
    every message: ask for it explicitly with :meth:`raw_token` (and never forward it upstream:
    spec basic/authorization, "Token Handling" forbids token passthrough).
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)
    issuer: str | None = None
    expires_at: float | None = None
    _token: str = field(default="", repr=False, compare=False)

    def raw_token(self) -> str:
        """The bearer token itself. Only for code that must present it again to the same
        resource; it is a secret (never log it, never pass it to another server)."""
        return self._token

    @property
    def principal(self) -> str:
        """A stable string naming who holds the token; server-side state (sessions, tasks,
        session state, rate-limit buckets, cache entries) is bound to it.

        ``"<issuer> <subject>"``; a token without ``sub`` (a client_credentials grant) names
        its client, ``"<issuer> client:<client_id>"``; a token naming neither is its own
        principal, ``"<issuer> token:<digest>"``. Injective: a subject that begins like those
        forms (``client:``, ``token:``) or with a backslash gets a backslash in front, and a
        space or backslash in the issuer is backslash-escaped, so no subject can pose as a
        client and no issuer/subject pair as another."""
        if self.subject is not None:
            who = "\\" + self.subject if self.subject.startswith(_RESERVED) else self.subject
        elif self.client_id is not None:
            who = "client:" + self.client_id
        else:
            import hashlib

            who = "token:" + hashlib.sha256(self._token.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        issuer = (self.issuer or "").replace("\\", "\\\\").replace(" ", "\\ ")
        return f"{issuer} {who}"

    def has_scopes(self, needed: Iterable[str]) -> bool:
        return self.scopes.issuperset(needed)


class Slot:
    """The mutable holder of one request's (or legacy session's) :class:`AuthInfo`."""

    __slots__ = ("info",)

    def __init__(self, info: AuthInfo) -> None:
        self.info = info

    @property
    def principal(self) -> str:
        """Who holds the token (:attr:`AuthInfo.principal`): what a legacy session is bound to."""
        return self.info.principal

    def follow(self, other: Slot) -> None:
        """Show ``other``'s token from now on (a session's slot, admitted request by request;
        the HTTP app calls it only once it checked both name the same principal)."""
        self.info = other.info


_current: contextvars.ContextVar[Slot | None] = contextvars.ContextVar("mcpio_auth", default=None)


def current() -> AuthInfo | None:
    """The :class:`AuthInfo` of the request being served, or None (no authorization, stdio)."""
    slot = _current.get()
    return slot.info if slot is not None else None


def enter(slot: Slot) -> None:
    """Make ``slot`` the current one for this task and the tasks it spawns from now on."""
    _current.set(slot)


def slot() -> Slot | None:
    """The :class:`Slot` of the request being served, or None (no authorization)."""
    return _current.get()


def current_principal() -> str | None:
    """The principal string of the current request (see :attr:`AuthInfo.principal`), or None.

    The hook for state that must not cross principals (e.g. MRTR ``requestState``)."""
    info = current()
    return info.principal if info is not None else None


def split_scopes(value: Any) -> frozenset[str]:
    """Scopes from a ``scope`` claim (space-separated string, RFC 8693 / 7662) or a ``scp`` list."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(s for s in value if isinstance(s, str))
    return frozenset()
