"""The legacy-era lifecycle as a table (spec 2025-11-25, basic/lifecycle).

Theory of operation
-------------------
A legacy connection moves through four states, the same names for both roles::

    NEW ──initialize──▶ INITIALIZING ──result──▶ INITIALIZED ──notifications/initialized──▶ READY
     ▲                       │
     └──────error────────────┘            any state ──close──▶ CLOSED

The server enters INITIALIZING when it *receives* initialize and INITIALIZED when it *sends*
the result; the client mirrors that. READY follows ``notifications/initialized``. A failed
initialize returns to NEW (the client may try again). A server continuing a shared HTTP session
initialized on another process goes to READY by ``resume``.

What may be received in each state is a second table (``SERVER_ACCEPTS``): before initialize a
server serves only ``initialize`` and ``ping``; after it, everything but a second
``initialize``. Leniently, requests pipelined behind initialize (INITIALIZING, INITIALIZED)
are served: the version is negotiated, and their results follow initialize's on the wire.

Transitions are looked up, never computed: an event with no entry for the current state raises
:class:`LocalProtocolError` when we caused it; the connection decides how to answer the peer.
"""

from __future__ import annotations

from typing import Final

from .._errors import LocalProtocolError

CLIENT: Final = "client"
SERVER: Final = "server"

NEW: Final = "NEW"
INITIALIZING: Final = "INITIALIZING"
INITIALIZED: Final = "INITIALIZED"
READY: Final = "READY"
CLOSED: Final = "CLOSED"

# Event names: "<send|recv>:<what>"
SEND_INITIALIZE = "send:initialize"
RECV_INITIALIZE = "recv:initialize"
SEND_INIT_RESULT = "send:initialize-result"
RECV_INIT_RESULT = "recv:initialize-result"
SEND_INIT_ERROR = "send:initialize-error"
RECV_INIT_ERROR = "recv:initialize-error"
SEND_INITIALIZED = "send:initialized"
RECV_INITIALIZED = "recv:initialized"
CLOSE = "close"
RESUME = "resume"  # a shared HTTP session's handshake happened elsewhere: READY at once

TRANSITIONS: Final[dict[str, dict[str, dict[str, str]]]] = {
    SERVER: {
        NEW: {RECV_INITIALIZE: INITIALIZING, RESUME: READY},
        INITIALIZING: {SEND_INIT_RESULT: INITIALIZED, SEND_INIT_ERROR: NEW},
        INITIALIZED: {RECV_INITIALIZED: READY},
        READY: {RESUME: READY},
        CLOSED: {},
    },
    CLIENT: {
        NEW: {SEND_INITIALIZE: INITIALIZING},
        INITIALIZING: {RECV_INIT_RESULT: INITIALIZED, RECV_INIT_ERROR: NEW},
        INITIALIZED: {SEND_INITIALIZED: READY},
        READY: {},
        CLOSED: {},
    },
}

# Requests a server accepts from the client in each state (None: every method but initialize).
SERVER_ACCEPTS: Final[dict[str, frozenset[str] | None]] = {
    NEW: frozenset({"initialize", "ping"}),
    INITIALIZING: None,  # pipelined behind initialize: served once its result is out (see above)
    INITIALIZED: None,
    READY: None,
    CLOSED: frozenset(),
}


class Lifecycle:
    """One role's position in the table."""

    __slots__ = ("role", "state")

    def __init__(self, role: str) -> None:
        if role not in TRANSITIONS:
            raise ValueError(f"role must be {CLIENT!r} or {SERVER!r}, not {role!r}")
        self.role = role
        self.state = NEW

    def can(self, event: str) -> bool:
        return event == CLOSE or event in TRANSITIONS[self.role][self.state]

    def process(self, event: str) -> str:
        """Apply ``event``; raises LocalProtocolError if the table has no such transition."""
        if event == CLOSE:
            self.state = CLOSED
            return CLOSED
        try:
            self.state = TRANSITIONS[self.role][self.state][event]
        except KeyError:
            raise LocalProtocolError(f"{self.role}: {event!r} is not allowed in state {self.state}") from None
        return self.state

    @property
    def initialized(self) -> bool:
        return self.state in (INITIALIZED, READY)
