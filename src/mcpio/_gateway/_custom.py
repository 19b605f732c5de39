"""What a proxy forwards beyond MCP's own methods: its upstream's extensions (SEP-2133).

A proxy stands for its upstream (``Registry.upstream``), so it is as transparent for what
extensions add as for tools:

* it announces the extensions the upstream declares (2026-07-28 ``capabilities.extensions``,
  learned at each connection whichever era it speaks; a legacy upstream declares none: its
  ``initialize`` result has no such member), but the tasks extension, which the proxy serves
  itself (``_tasks``);
* a custom request no extension of the proxy's own serves (``_extensions.is_custom``: not an MCP
  method) is forwarded to the upstream on behalf of the caller, as a call is (``Upstream.forward``):
  the upstream's answer or error is the answer (-32601 when it serves no such method either);
  over HTTP with auth it needs the scopes ``method_scopes=`` names (:func:`require_scopes`);
* a custom notification of the proxy's client goes to the upstream (a legacy connection: a
  2026-07-28 one has no client notifications), and one of the upstream's goes to each client of
  the proxy that declared an extension the proxy's own connection declares (the upstream sends
  an extension's notifications to the clients that declared it: ``Server.proxy(target,
  extensions={...})``), MCP Apps aside (declared upstream for every proxy; none of its
  notifications is custom). Both ways they go in the order heard, by one task at a time
  (:class:`Outbox`: a flood of them waits in a bounded queue, not in a task each).

Mounted in another server (a gateway: ``Server.from_config``), custom methods not being
namespaced, the rule is ``_server._extensions.routes``: when one mounted proxy's upstream
declares extensions (tasks and MCP Apps aside), the gateway announces them and forwards its
custom requests there (``method_scopes=`` of ``from_config`` guards them); when several do,
it announces none of theirs and answers a custom request -32601 naming those upstreams (logged
once for them): which one serves it is ambiguous. Notifications do not pass a gateway either
way (the upstream's go to the proxy's own clients, a gateway's proxy has none; a client's go
only to a legacy upstream connection, which declares no extension).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import _log
from .._client._extensions import _ERA_MEMBERS
from .._server._extensions import Extension, client_extension, is_custom
from .._server._registry import ANY_METHOD
from .._versions import TASKS_EXTENSION, UI_EXTENSION
from ._forwarded import upstream_meta
from ._loops import at_home, running_loop

if TYPE_CHECKING:
    import asyncio

    from .._client._client import Client
    from .._server._context import Context
    from .._server._server import Server

log = _log.logger("mcpio.gateway", globals())

#: How many custom notifications a proxy holds waiting to go one way (to its upstream, to its
#: clients); past that, one is dropped (a notification has no answer to fail), told by one line in
#: the log a minute at most.
QUEUED = 1000


class Outbox:
    """Custom notifications going one way, each ``send(session, method, params)`` in the order
    put, by one task at a time (made when the first one waits, ended when none does)."""

    __slots__ = ("dropped", "label", "queue", "quiet_until", "send", "task", "way")

    def __init__(self, label: str, way: str, send: Callable[[Any, str, Any], Awaitable[Any]]) -> None:
        self.label, self.way, self.send = label, way, send
        self.queue: deque[tuple[Any, str, Any]] = deque()  # (session, method, params)
        self.task: asyncio.Task[None] | None = None
        self.dropped = 0  # since the last line in the log
        self.quiet_until = 0.0  # no line before then (time.monotonic)

    def put(self, session: Any, method: str, params: Any) -> None:
        if len(self.queue) >= QUEUED:
            self.dropped += 1
            if (now := time.monotonic()) >= self.quiet_until:
                log.warning(
                    "upstream %r: %d custom notification(s) %s dropped: %d wait to be sent already "
                    "(a minute passes before the next such line)",
                    self.label,
                    self.dropped,
                    self.way,
                    QUEUED,
                )
                self.dropped, self.quiet_until = 0, now + 60
            return
        self.queue.append((session, method, params))
        if self.task is None or self.task.done():
            import asyncio

            self.task = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        queue, send = self.queue, self.send
        while queue:
            session, method, params = queue.popleft()
            with contextlib.suppress(Exception):  # the session ended: the next one fails as fast
                await send(session, method, params)


def require_scopes(server: Server, method_scopes: Mapping[str, Iterable[str]] | None) -> None:
    """``method_scopes=`` of a proxy: the OAuth scopes a custom request it forwards (or a custom
    notification) needs over HTTP with auth, by method, ``"*"`` for every other custom method;
    kept and checked as a tool's ``scopes=`` are (``Registry.scopes_for``: HTTP 403 when lacking)."""
    for method, scopes in (method_scopes or {}).items():
        if method != ANY_METHOD and not is_custom(method):
            raise ValueError(f"method_scopes= names custom methods or '*', not {method!r}")
        server.registry.set_scopes(method, "", scopes)


class CustomForwarding:
    """The part of an ``Upstream`` that forwards its extensions (module docstring): it is the
    proxy's :attr:`~mcpio._server._registry.Registry.upstream`."""

    outbox: Outbox | None = None  # to the upstream: made by the first custom notification heard
    telling: Outbox | None = None  # to the proxy's clients: made by the first one the upstream sends

    if TYPE_CHECKING:
        server: Server
        label: str
        extensions: list[Extension]
        client_options: dict[str, Any]
        owner: asyncio.AbstractEventLoop | None

        def forward(self, ctx: Context | None, call: Any) -> Any: ...
        def live(self) -> Client | None: ...

    async def custom(self, ctx: Context, method: str, params: dict[str, Any]) -> Any:
        """The upstream's answer to custom request ``method`` (its ``_meta`` is the caller's own),
        forwarded as a call is (``forwarded_tool``): for as long as the upstream takes (the
        caller's timeout is the caller's; cancelling cancels it upstream), its progress to the
        caller when the caller asked for progress."""
        sent = {k: v for k, v in params.items() if k != "_meta"}

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await at_home(ctx, ctx.report_progress(progress, total, message))

        async def go(client: Client) -> Any:
            on_progress = progress if ctx.progress_token is not None else None
            result = await client.request(method, sent, timeout=None, on_progress=on_progress)
            if type(result) is not dict:
                return result
            # the era's members are the proxy's to set for its client's era (Server.decorate)
            answer = {k: v for k, v in result.items() if k not in _ERA_MEMBERS}
            meta = upstream_meta(result.get("_meta"))
            return answer if meta is None else {**answer, "_meta": meta}

        return await self.forward(ctx, go)

    def heard(self, method: str, params: dict[str, Any]) -> None:
        """The proxy's client sent custom notification ``method``: told to a legacy upstream, after
        those heard before it (:class:`Outbox`)."""
        client = self.live()
        owner = self.owner
        if client is None and owner is not None and owner is not running_loop() and not owner.is_closed():
            owner.call_soon_threadsafe(self.heard, method, params)  # another loop's connection (_loops)
            return
        session = client.session if client is not None else None
        if session is not None and client is not None and client.negotiated_era == "legacy":
            if self.outbox is None:
                self.outbox = Outbox(self.label, "from its clients", lambda s, m, p: s.notify(m, p))
            self.outbox.put(session, method, {k: v for k, v in params.items() if k != "_meta"})

    def learn_extensions(self, client: Client) -> None:
        """Announce what the upstream on ``client`` declares (each one that is well formed)."""
        found: list[Extension] = []
        for ext_id, settings in client.server_capabilities.extensions.items():
            if ext_id == TASKS_EXTENSION:
                continue
            try:
                found.append(Extension(None, ext_id, settings))
            except (TypeError, ValueError) as exc:
                log.warning("upstream %r: its extension %.80r is not announced: %s", self.label, ext_id, exc)
        if [(e.id, e.settings) for e in found] != [(e.id, e.settings) for e in self.extensions]:
            self.extensions = found
            self.server.registry.changed()  # the capabilities follow

    def tell_clients(self, method: str, params: dict[str, Any] | None) -> None:
        """The upstream's custom notification ``method``, to each client of the proxy that declared
        one of the extensions the proxy's connection declares (it came for one of those), but MCP
        Apps, which the connection declares for every proxy (``as_host``): its notifications are
        ``ui/`` ones, never custom (ext-apps), so a host's declaring it qualifies it for none."""
        declared = [ext_id for ext_id in self.client_options.get("extensions") or () if ext_id != UI_EXTENSION]
        server = self.server
        for session in server.open_sessions():
            caps = session.connection.peer_capabilities
            if any(client_extension(caps, ext_id) is not None for ext_id in declared):
                if self.telling is None:
                    self.telling = Outbox(self.label, "to its clients", server.changes.tell)
                self.telling.put(session, method, params)
