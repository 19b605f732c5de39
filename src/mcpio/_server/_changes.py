"""Changes to what a :class:`~mcpio.Server` serves, and what it tells clients of them.

:class:`Changes` (one per Server, made with it: ``server.changes``) registers an item where it
is served (the :class:`~._registry.Registry`'s table, or the catalog's own items once the server
is shaped: ``registry.catalog``), and tells clients when its lists, a resource or a task change
(``notifications/*/list_changed``, ``resources/updated``, ``tasks``), on this process and,
through the state backend's bus, on every other; and the servers it is mounted in. It holds the
sessions to tell and the loops that serve them; the Server reads them there, never the reverse.
:class:`ChangesMixin` is the Server's public face of it.

A session is written to from the event loop that runs it (:meth:`Changes.tell`): one server may
be served on several loops at once (threads, each with a loop and clients of its own), and a
change made on one, or on no loop at all (a sync handler's thread), reaches the others' clients.

Changes are rare: the modules that find the sessions to tell (``_subscriptions``), the catalog
and the bus (``_http``) are imported by each method, never at start-up.
"""

from __future__ import annotations

from _weakrefset import WeakSet  # weakref's own: weakref itself is not at start-up
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ._registry import KINDS_OF, NOTIFY, Registry

if TYPE_CHECKING:
    import asyncio

    from .._session import Session
    from . import _http
    from ._catalog import Catalog
    from ._tasks import Task


class Changes:
    """What changes a server's served items and tells its clients (the module docstring).

    ``registry``: what the server serves. ``binding``: the server's HTTP binding now, or None
    (stdio; no ``http_app`` yet): its state backend's bus fans changes out to the other processes.
    ``sessions``: every session of the server (``Server.session`` adds each; a closed one goes
    with its last reference). ``loops``: the event loops serving them now, in the order they
    started (``Server.running`` adds and removes each); none: nothing to tell. ``background``: the
    notifications on their way."""

    __slots__ = ("background", "binding", "loops", "registry", "sessions")

    def __init__(self, registry: Registry, binding: Callable[[], _http.HttpBinding | None]) -> None:
        self.registry = registry
        self.binding = binding
        self.sessions: WeakSet[Session] = WeakSet()
        self.loops: dict[asyncio.AbstractEventLoop, None] = {}  # (a dict: changed from their own threads)
        self.background: set[asyncio.Task[Any]] = set()

    @property
    def bus(self) -> Any:
        """The state backend whose bus reaches the other processes, or None."""
        binding = self.binding()
        return binding.bus if binding is not None else None

    # ------------------------------------------------------------ what is served
    def register(self, kind: str, key: str, item: Any) -> None:
        """Add ``item`` to the ``kind`` table ("tools", "prompts", "resources", "templates")."""
        catalog = self.registry.catalog
        if catalog is None:  # a plain server serves what it registers, as it is
            self.registry.table(kind)[key] = item
            self.changed(NOTIFY[kind])
        else:
            catalog.own[kind][key] = item
            catalog.rebuild((kind,))

    def unregister(self, kind: str, key: str) -> None:
        """Remove an own item; KeyError when the server did not register ``key`` itself."""
        catalog = self.registry.catalog
        if catalog is None:
            del self.registry.table(kind)[key]
            self.changed(NOTIFY[kind])
        else:
            del catalog.own[kind][key]
            catalog.rebuild((kind,))

    def shaped(self) -> Catalog:
        """The server's catalog (``_catalog``), made at the first ``mount``/``disable``/``transform_tool``."""
        catalog = self.registry.catalog
        if catalog is None:
            from ._catalog import Catalog

            catalog = self.registry.catalog = Catalog(self.registry, self)
        return catalog

    # ------------------------------------------------------------ telling clients
    def changed(self, kind: str) -> None:
        """Tell connected clients that ``kind`` changed; safe from any thread (a sync tool may add or
        remove tools). The servers this one is mounted in serve its items again (and tell theirs)."""
        self.registry.changed()
        self.registry.tell(kind, None)
        for catalog in self.registry.parents:
            catalog.rebuild(KINDS_OF.get(kind, ()))
        # no loop: not serving yet (asked first: no WeakSet length while tools are registered)
        if self.loops and (self.sessions or self.bus is not None):
            self._notify_changed(kind)

    def _serving_loop(self, again: Callable[..., None], *args: Any) -> asyncio.AbstractEventLoop | None:
        """The caller's event loop when it serves; else None, and ``again(*args)`` is called from
        the first serving loop still open (the caller is a sync handler's thread, or none's)."""
        running = running_loop()
        if running in self.loops:
            return running
        loop = next((loop for loop in list(self.loops) if not loop.is_closed()), None)
        if loop is not None:
            loop.call_soon_threadsafe(again, *args)
        return None

    def _notify_changed(self, kind: str, here_only: bool = False) -> None:
        from .._transports._base import change, new_change
        from ._subscriptions import list_changed_targets

        loop = self._serving_loop(self._notify_changed, kind, here_only)
        if loop is None:
            return
        told = change.get() if here_only else new_change()  # here only: another process's (its id)
        token = change.set(told)
        try:
            for session, params in list_changed_targets(iter(self.snapshot()), kind):
                self.tell_soon(loop, session, f"notifications/{kind}/list_changed", params)
        finally:
            change.reset(token)
        bus = self.bus
        if bus is not None and not here_only:  # and to the sessions of every other process
            from . import _http

            self.spawn(loop, _http.publish(bus, {"type": "list_changed", "kind": kind, "change": told}))

    def list_changed_here(self, kind: str) -> None:
        """Tell this process's clients that list ``kind`` changed on another process: not published again."""
        self.registry.tell(kind, None)
        self._notify_changed(kind, here_only=True)

    def spawn(self, loop: asyncio.AbstractEventLoop, coro: Any) -> None:
        """Run ``coro`` on ``loop`` (the caller's), held until it ends."""
        t = loop.create_task(coro)
        self.background.add(t)
        t.add_done_callback(self.background.discard)

    def snapshot(self) -> list[Session]:
        """Every session now (closed ones not yet collected included): a copy, safe to take from
        any thread (another loop's may change the set while it is copied: copied again)."""
        for _ in range(10):
            try:
                return list(self.sessions)
            except RuntimeError:
                continue
        return []

    async def tell(self, session: Session, method: str, params: dict[str, Any] | None) -> None:
        """``session.notify(method, params)``, sent by the loop running the session: awaited here
        when that is the caller's loop, else handed to it (held until sent)."""
        sending = self._sending(session, method, params)
        if sending is not None:
            await sending

    def tell_soon(self, loop: asyncio.AbstractEventLoop, session: Session, method: str, params: Any) -> None:
        """:meth:`tell`, spawned on ``loop`` (the caller's) and held until sent."""
        sending = self._sending(session, method, params)
        if sending is not None:
            self.spawn(loop, sending)

    def _sending(self, session: Session, method: str, params: Any) -> Coroutine[Any, Any, None] | None:
        """``session.notify(method, params)`` to await or spawn on the caller's loop, when that
        loop runs the session (every session, while one loop serves); else sent from the loop
        that does (held until sent) and None: a session is written to from its own loop. Marked as
        told to every copy of a session shared by several processes (each tells its own), under
        the id of the change told (``_base.change``; without one, a new id: twice at worst)."""
        from .._transports._base import change, new_change, told_everywhere  # loaded: a loop serves sessions

        told = change.get() or new_change()
        theirs = session.loop
        if theirs is None or len(self.loops) < 2 or theirs is running_loop():
            return told_everywhere(session.notify(method, params), told)
        if not theirs.is_closed():
            theirs.call_soon_threadsafe(
                lambda: self.spawn(theirs, told_everywhere(session.notify(method, params), told))
            )
        return None

    def task_changed(self, task: Task) -> None:
        """A task's state changed (the task store's ``on_change``): ``notifications/tasks`` to the
        listen streams that asked for it; a core task's status to the session that owns it. What
        is told is the task as this change left it, taken here, on the thread that changed it:
        a sync handler's two changes in a row are told each as it was, in order, even though
        they are sent from the loop running the task."""
        if task.core:  # 2025-11-25: notifications/tasks/status to the session that owns it
            self._core_status(task, task.core_fields())
        else:
            self._task_status(task, task.detailed())

    def _core_status(self, task: Task, params: dict[str, Any]) -> None:
        loop = self._serving_loop(self._core_status, task, params)
        if loop is None:
            return
        from .._transports._base import change, new_change

        token = change.set(new_change())  # the same change for its copies elsewhere
        try:
            if task.owner is not None and not task.owner.closed:
                self.tell_soon(loop, task.owner, "notifications/tasks/status", params)
            binding = self.binding()
            # and to its copies elsewhere: one holds its GET stream
            if binding is not None and binding.bus is not None:
                self.spawn(loop, binding.core_status(task, params))
        finally:
            change.reset(token)

    def _task_status(self, task: Task, detailed: dict[str, Any]) -> None:
        loop = self._serving_loop(self._task_status, task, detailed)
        if loop is None:
            return
        from ._subscriptions import task_targets

        for session, meta in task_targets(iter(self.snapshot()), task.id):
            self.tell_soon(loop, session, "notifications/tasks", {**detailed, "_meta": meta})

    async def resource_updated(self, uri: str, turn: str | None = None) -> None:
        """:meth:`ChangesMixin.notify_resource_updated`. ``turn``: every process sharing the state
        backend hears this same update (a proxy's: each process's upstream holds the subscription
        its own clients asked for), so only the process holding ``turn`` tells anyone, here and
        on the others: the first to hear one, for as long as it goes on hearing them
        (``StateBackend.claim``, :data:`TURN_TTL`; :meth:`turn_over` when it stops)."""
        bus = self.bus
        if turn is not None and bus is not None and not await _has_turn(bus, turn):
            return  # the process holding the turn heard it too, and tells every process
        from .._transports._base import change, new_change

        token = change.set(new_change())
        try:
            await self.resource_updated_here(uri)
            if bus is not None:
                from . import _http

                await _http.publish(bus, {"type": "resources/updated", "uri": uri, "change": change.get()})
        finally:
            change.reset(token)
        for catalog in self.registry.parents:  # and wherever it is mounted, by the name it has there
            await catalog.child_updated(self.registry, uri, turn)

    async def turn_over(self, turn: str) -> None:
        """This process hears the updates of ``turn`` no more (its upstream subscription ended):
        the turn is free for a process that does (``StateBackend.release``), here and wherever
        this server is mounted."""
        bus = self.bus
        if bus is not None:
            from . import _http

            await _http.on_bus(bus.release(turn), None)  # down: it expires after TURN_TTL all the same
        for catalog in self.registry.parents:
            await catalog.changes.turn_over(turn)

    async def resource_updated_here(self, uri: str) -> None:
        """:meth:`ChangesMixin.notify_resource_updated_here`."""
        self.registry.tell("resources/updated", uri)
        if not self.sessions:  # no client yet (nor _subscriptions: _load_serving comes with the first)
            return
        from ._subscriptions import updated_targets

        for session, params in list(updated_targets(iter(self.snapshot()), uri)):
            await self.tell(session, "notifications/resources/updated", params)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The caller's event loop, or None (a thread without one); asked only once a loop serves."""
    import asyncio  # loaded: a loop serves sessions

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


TURN_TTL = 2.0  # seconds a process holds the turn of an update it told (each one it tells renews it)


async def _has_turn(bus: Any, turn: str) -> bool:
    """Whether this process holds ``turn`` now (taking it if it was free); a backend that is down
    cannot say: the update is told (twice at worst, never lost for it)."""
    from . import _http

    return bool(await _http.on_bus(bus.claim(turn, TURN_TTL), True))


class ChangesMixin:
    """The notifying methods of :class:`~mcpio.Server`: its :class:`Changes`'."""

    if TYPE_CHECKING:
        changes: Changes

    def notify_list_changed_here(self, kind: str) -> None:
        """Tell this process's clients that list ``kind`` (tools, resources, prompts) changed on
        another process (its message on the state backend's bus): not published again."""
        self.changes.list_changed_here(kind)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``notifications/resources/updated``):
        legacy ``resources/subscribe`` subscribers and modern ``subscriptions/listen`` streams,
        on every process that shares this server's state backend (``http_app(state=...)``)."""
        await self.changes.resource_updated(uri)

    async def notify_resource_updated_here(self, uri: str) -> None:
        """Tell this process's clients subscribed to ``uri`` that it changed (what
        :meth:`notify_resource_updated` does here; another process's update arrives by the bus)."""
        await self.changes.resource_updated_here(uri)
