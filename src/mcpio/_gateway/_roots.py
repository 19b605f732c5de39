"""The roots an upstream sees outside a call: those of the proxy's one client.

An upstream may ask ``roots/list`` at any time, not only during a call (spec 2025-11-25
client/roots: a server asks when it needs them, typically right after initialization, and
again after ``notifications/roots/list_changed``). During a call it is asked of the call's
client (``Upstream._ask``). Outside one, the proxy answers with the roots of its **sole
client**: the one session it (or a server it is mounted in, a gateway) serves now, in the
legacy era (2024-11-05 to 2025-11-25: a server may send it requests outside a request), past
``notifications/initialized`` (before it, a server sends only pings and logging: spec
basic/lifecycle) and declaring the ``roots`` capability. Then the upstream's ``roots/list`` is
asked of that client (``_rounds.ask_client``, the rule of a call's asks), on the event loop
serving it, whichever loop owns the upstream connection (``_loops``). Otherwise it is
answered with no roots: no client yet, several (whose roots would govern the others' calls?),
one that declared no roots, or a 2026-07-28 client (asked only within its own requests).

The proxy's upstream client announces ``roots`` with ``listChanged`` (its capabilities are
fixed at initialize, before any client of the proxy is known) and keeps that promise here:
the sole client's ``notifications/roots/list_changed`` goes upstream, and so does a change of
whose roots the upstream was last given (a client's ``notifications/initialized``: the first
client ready after the upstream asked, or a second one, after which there is no sole client;
a client's session ending: the one left may be the sole client again), told through the
connection on its owner's loop.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._errors import MCPError
from .._protocol._state import READY
from .._server._context import Context
from .._server._registry import SESSION_ENDED
from ._loops import at_home

if TYPE_CHECKING:
    from .._session import Session
    from ._proxy import Upstream

INITIALIZED = "notifications/initialized"
ROOTS_CHANGED = "notifications/roots/list_changed"
_NOT_ASKED = object()  # the upstream never asked roots/list outside a call


class RootsRelay:
    """The upstream's roots outside a call (the module docstring), and what it is told of them."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        # Whose roots the upstream got when it last asked outside a call: a weak reference to the
        # session, None (it got no roots), or _NOT_ASKED.
        self.given: Any = _NOT_ASKED
        upstream.server.on_notification(INITIALIZED)(self._initialized)
        upstream.server.on_notification(ROOTS_CHANGED)(self._roots_changed)
        upstream.server.registry.notification_hooks.setdefault(SESSION_ENDED, []).append(self._ended)

    async def listed(self) -> list[Any]:
        """The answer to the upstream's ``roots/list`` outside a call: the sole client's roots, or none."""
        session = self.sole_client()
        self.given = None if session is None else weakref.ref(session)
        if session is None:
            return []
        from ._rounds import ask_client

        ctx = Context(self.upstream.server, session, None, None)
        try:
            roots = await at_home(ctx, ask_client(ctx, "roots/list", {}, None))  # on the session's loop (_loops)
        except MCPError:  # no answer, or the client's error: as during a call, no roots
            return []
        return roots if isinstance(roots, list) else []

    def sole_client(self) -> Session | None:
        """The session whose roots the upstream sees outside a call, if any (the module docstring),
        whichever event loop serves it (``_loops``)."""
        sessions = [s for s in _sessions(self.upstream.server) if not s.closed and not s.connection.stateless]
        if len(sessions) != 1:
            return None
        session = sessions[0]
        connection = session.connection
        rules = connection.rules
        if (
            rules is None
            or rules.stateless
            or connection.lifecycle.state != READY
            or "roots" not in connection.peer_capabilities
        ):
            return None
        return session

    async def _initialized(self, ctx: Context, params: dict[str, Any]) -> None:
        await self._heard(ctx.session, False)

    async def _roots_changed(self, ctx: Context, params: dict[str, Any]) -> None:
        await self._heard(ctx.session, True)

    async def _ended(self, ctx: Context, params: dict[str, Any]) -> None:  # a client left: a sole one again?
        await self._heard(ctx.session, False)

    async def _heard(self, session: Session, roots_changed: bool) -> None:
        """A client's ``initialized`` or (``roots_changed``) ``roots/list_changed``: the upstream is
        told its roots changed when the client whose roots it sees changed them, or when they are
        no longer those it was given when it last asked (another client's, or none)."""
        upstream = self.upstream
        if upstream.starting:  # its first roots/list may come during the start: wait for it
            await upstream.start()
        sole = self.sole_client()
        given = self.given
        told = roots_changed and sole is session
        if not told and given is not _NOT_ASKED:
            told = (None if given is None else given()) is not sole
        if told and upstream.client is not None:  # connected (on this loop or another: _loops.handed)
            await upstream.forward(None, lambda client: client.roots_changed())


def _sessions(server: Any) -> Iterator[Session]:
    """The sessions of ``server`` and of every server it is mounted in (a gateway's clients)."""
    yield from server.changes.snapshot()
    for catalog in server.registry.mounted_in():
        yield from catalog.changes.snapshot()
