"""One authorization flow at a time, finished even when the request that started it is cancelled.

A login waits for a person (seconds to minutes), and the request that met the 401 may be
cancelled meanwhile: a client's era probe gives up on ``server/discover`` after a few seconds
and speaks the legacy era instead, a caller's own timeout ends. Abandoning the flow then closes
its redirect listener under the login page the user has open, and the next request starts
another login (another browser tab). So the flow runs as its own task: a cancelled request only
stops waiting for it, and the next request that needs a token waits for the same flow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


class Once:
    """The flow in progress, if any (see the module doc). Used under the OAuth client's lock."""

    def __init__(self) -> None:
        self._task: asyncio.Future[None] | None = None

    async def run(self, start: Callable[..., Awaitable[None]], *args: Any, **kwargs: Any) -> None:
        """Wait for the flow in progress, or for a new one ``start(*args, **kwargs)`` begins; its
        error is raised to every request waiting for it."""
        task = self._task
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            task = self._task = asyncio.ensure_future(start(*args, **kwargs))
            task.add_done_callback(_retrieve)
        await asyncio.shield(task)


def _retrieve(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()  # read, so a flow nobody waits for any more is not reported as unretrieved
