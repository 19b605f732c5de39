"""The state backend seam of the HTTP server: every piece of cross-request state behind one
bounded backend, entering :class:`~mcpio._transports._http_server.StreamableHTTPApp` through
one parameter, ``http_app(state=...)``.

* :class:`MemoryState` — in this process (the default; what ``http_app()`` uses without
  ``state``), no extra dependency and no extra cost.
* :class:`RedisState` — on Redis or Valkey (``pip install 'mcpio[redis]'``; ``redis`` is
  imported only when a RedisState is made): legacy sessions, the SSE event store on Redis
  Streams and the tasks, shared by every process that points at the same database.

What a backend holds today: the SSE event store (``backend.events``, see
:mod:`mcpio._transports._http_events` for the interface and the bounds), the directory of
legacy sessions (``backend.sessions``, :class:`SessionDirectory`; None in memory, where the
HTTP app keeps them itself; see :mod:`mcpio._transports._http_sessions`), the tasks
(``backend.tasks``: None for :class:`MemoryState`, whose server keeps them in its own
``TaskStore``; on Redis every process's task records, leases and bounds, see
:mod:`._redis_tasks`) and a bus between the processes that share it (``publish`` /
``on_message``), which carries resource updates, list changes, session changes, task changes
and the client's answers to every process (see docs/guides/deploying-at-scale.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import SessionDirectory, StateBackend, StateUnavailable
from ._memory import MemoryState

if TYPE_CHECKING:
    from ._redis import RedisState

__all__ = ["MemoryState", "RedisState", "SessionDirectory", "StateBackend", "StateUnavailable", "check_reachable"]


def check_reachable(url: str) -> None:
    """Raise :class:`StateUnavailable` (one line, the URL shown without its credentials: ``_shown.shown``) unless Redis answers at
    ``url``; for command lines, before they announce that they serve."""
    import asyncio

    from ._redis import RedisState

    async def ping() -> None:
        state = RedisState(url)
        try:
            await state.check()  # not start(): it would make the bus's key, for nothing
        finally:
            await state.aclose()

    asyncio.run(ping())


def __getattr__(name: str) -> Any:  # RedisState imports redis: only when asked for
    if name == "RedisState":
        from ._redis import RedisState

        return RedisState
    raise AttributeError(name)
