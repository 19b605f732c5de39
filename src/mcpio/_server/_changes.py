"""The notifying half of :class:`~mcpio.Server`: what it tells clients when its lists, a resource or
a task change (``notifications/*/list_changed``, ``resources/updated``, ``tasks``), on this process
and, through the state backend's bus, on every other; and the servers it is mounted in.

Changes are rare: the modules that find the sessions to tell (``_subscriptions``) and the bus
(``_http``) are imported by each method, never at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._registry import KINDS_OF, Registry

if TYPE_CHECKING:
    import asyncio
    from _weakrefset import WeakSet

    from .._session import Session
    from . import _http
    from ._tasks import Task


class ChangesMixin:
    if TYPE_CHECKING:
        registry: Registry
        _sessions: WeakSet[Session]
        _background: set[asyncio.Task[Any]]
        _loop: asyncio.AbstractEventLoop | None
        _binding: _http.HttpBinding | None

        @property
        def state_backend(self) -> Any: ...

    def _changed(self, kind: str) -> None:
        """Tell connected clients that ``kind`` changed; safe from any thread (a sync tool may add or
        remove tools). The servers this one is mounted in serve its items again (and tell theirs)."""
        self.registry.changed()
        self.registry.tell(kind, None)
        for catalog in self.registry.parents:
            catalog.rebuild(KINDS_OF.get(kind, ()))
        loop = self._loop
        # loop None: not serving yet (asked first: no WeakSet length while tools are registered)
        if loop is None or (not self._sessions and self.state_backend is None) or loop.is_closed():
            return
        import asyncio  # loaded: a loop serves sessions

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._notify_changed(loop, kind)
        else:
            loop.call_soon_threadsafe(self._notify_changed, loop, kind)

    def _notify_changed(self, loop: asyncio.AbstractEventLoop, kind: str, here_only: bool = False) -> None:
        from ._subscriptions import list_changed_targets

        for session, params in list_changed_targets(iter(list(self._sessions)), kind):
            self._spawn(loop, session.notify(f"notifications/{kind}/list_changed", params))
        bus = self.state_backend
        if bus is not None and not here_only:  # and to the sessions of every other process
            from . import _http

            self._spawn(loop, _http.publish(bus, {"type": "list_changed", "kind": kind}))

    def notify_list_changed_here(self, kind: str) -> None:
        """Tell this process's clients that list ``kind`` (tools, resources, prompts) changed on
        another process (its message on the state backend's bus): not published again."""
        self.registry.tell(kind, None)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            self._notify_changed(loop, kind, here_only=True)

    def _spawn(self, loop: asyncio.AbstractEventLoop, coro: Any) -> None:
        t = loop.create_task(coro)
        self._background.add(t)
        t.add_done_callback(self._background.discard)

    def _task_changed(self, task: Task) -> None:
        """A task's state changed: ``notifications/tasks`` to the listen streams that asked for it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if task.core:  # 2025-11-25: notifications/tasks/status to the session that owns it
            if task.owner is not None and not task.owner.closed:
                self._spawn(loop, task.owner.notify("notifications/tasks/status", task.core_fields()))
            binding = self._binding
            if binding is not None and binding.bus is not None:  # and to its copies elsewhere: one holds its GET stream
                self._spawn(loop, binding.core_status(task))
            return
        from ._subscriptions import task_targets

        targets = list(task_targets(iter(list(self._sessions)), task.id))
        if targets:
            detailed = task.detailed()
            for session, meta in targets:
                self._spawn(loop, session.notify("notifications/tasks", {**detailed, "_meta": meta}))

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed (``notifications/resources/updated``):
        legacy ``resources/subscribe`` subscribers and modern ``subscriptions/listen`` streams,
        on every process that shares this server's state backend (``http_app(state=...)``)."""
        await self.notify_resource_updated_here(uri)
        bus = self.state_backend
        if bus is not None:
            from . import _http

            await _http.publish(bus, {"type": "resources/updated", "uri": uri})
        for catalog in self.registry.parents:  # and wherever it is mounted, by the name it has there
            await catalog.child_updated(self.registry, uri)

    async def notify_resource_updated_here(self, uri: str) -> None:
        """Tell this process's clients subscribed to ``uri`` that it changed (what
        :meth:`notify_resource_updated` does here; another process's update arrives by the bus)."""
        self.registry.tell("resources/updated", uri)
        if not self._sessions:  # no client yet (nor _subscriptions: _load_serving comes with the first)
            return
        from ._subscriptions import updated_targets

        for session, params in list(updated_targets(iter(list(self._sessions)), uri)):
            await session.notify("notifications/resources/updated", params)
