"""The inspector's MCP side: one :class:`~mcpio.Client` connected to the inspected server, and
an event log the web page follows.

Everything the page learns arrives as an *event* (a JSON-able dict with a ``kind``): wire
frames in both directions (``wire``), log messages (``log``), notifications
(``notification``), progress of a call (``progress``), requests the server makes of the
client that a person must answer (``ask``: sampling, elicitation), and connection changes
(``connected``, ``disconnected``). Events are numbered; the page asks for those after the last
number it saw, so a reload or a dropped event stream loses nothing that is still kept (the most
recent :data:`MAX_EVENTS`; a wire frame over :data:`MAX_FRAME_CHARS` is cut, with its size
stated).

Nothing here trusts the server: its strings go to the page as JSON data, and the page renders
them as text.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
from collections.abc import Callable
from typing import Any

from .._client._apps import APPS_HOST
from .._client._client import Client
from .._client._results import SkillEntry
from .._client._target import is_url
from .._client._tasks import TaskCancelled, follow_tool_task, start_tool_task
from .._errors import MCPError
from .._shown import shown

MAX_EVENTS = 5000
MAX_FRAME_CHARS = 200_000
ENDED = ("completed", "failed", "cancelled")  # a task's final statuses
ASK_TIMEOUT = 3600.0  # a question the page never answers is declined after an hour


class InspectorSession:
    """The inspected server's connection and the events the page reads."""

    def __init__(
        self, make_client: Callable[..., Client], *, env: dict[str, str] | None = None, cwd: str | None = None
    ) -> None:
        self._make_client = make_client
        self.server_env, self.server_cwd = env, cwd  # what make_client starts a server with (for the export)
        self.client: Client | None = None
        self.target: str | None = None
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=MAX_EVENTS)
        self._seq = itertools.count(1)
        self._changed = asyncio.Event()
        self._asks: dict[str, asyncio.Future[Any]] = {}
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._followed: dict[str, asyncio.Task[Any]] = {}  # task id -> its follower (start_task)
        self._skills: dict[str, SkillEntry] = {}  # SKILL.md URI -> the entry last listed
        self._ask_ids = itertools.count(1)
        self.roots: list[dict[str, Any]] = []
        self.connecting: str | None = None  # the target of a connect under way (a login may be pending)

    # ------------------------------------------------------------------ events
    def emit(self, kind: str, **data: Any) -> None:
        """Record an event and wake the page's event streams."""
        self.events.append({"seq": next(self._seq), "kind": kind, "time": time.time(), **data})
        self._changed.set()
        self._changed = asyncio.Event()

    @property
    def last_seq(self) -> int:
        """The number of the newest event (0 before the first)."""
        return self.events[-1]["seq"] if self.events else 0

    def after(self, seq: int) -> list[dict[str, Any]]:
        """The events numbered above ``seq`` that are still kept."""
        return [e for e in self.events if e["seq"] > seq]

    async def wait(self, seq: int, timeout: float) -> list[dict[str, Any]]:
        """Events after ``seq``, waiting up to ``timeout`` seconds for one when there are none."""
        found = self.after(seq)
        if found:
            return found
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return []
        return self.after(seq)

    def _wire(self, direction: str, frame: bytes) -> None:
        text = bytes(frame).decode("utf-8", "replace")
        size = len(text)
        if size > MAX_FRAME_CHARS:
            text = text[:MAX_FRAME_CHARS]
        self.emit("wire", direction=direction, frame=text, size=size, cut=size > MAX_FRAME_CHARS)

    # ------------------------------------------------------------------ connection
    async def connect(
        self, target: str, *, era: str = "auto", headers: dict[str, str] | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Connect to ``target`` (closing any previous connection); returns :meth:`info`.

        Raises what the client raises (a TransportError, an MCPError, a ValueError for a bad
        era or target), with a message that says what failed."""
        await self.disconnect()
        self.connecting = target
        try:
            return await self._connect(target, era, headers, timeout)
        finally:
            self.connecting = None

    async def _connect(
        self, target: str, era: str, headers: dict[str, str] | None, timeout: float | None
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if is_url(target) and not any(k.lower() == "authorization" for k in headers or {}):
            options["auth"] = self._oauth()
        client = self._make_client(
            target,
            era=era,
            headers=headers or None,
            timeout=timeout,
            **options,
            sampling=self._asker("sampling/createMessage"),
            elicitation=self._asker("elicitation/create"),
            roots=lambda: list(self.roots),
            on_log=lambda params: self.emit("log", params=params),
            on_notification=lambda method, params: self.emit("notification", method=method, params=params),
            trace=self._wire,
            extensions=APPS_HOST,  # a host that renders MCP Apps views (static/appview.js)
        )
        await client.connect()
        self.client, self.target = client, target
        info = self.info()
        self.emit("connected", info=info)
        return info

    def _oauth(self) -> Any:
        """OAuth for an HTTP target (used only if the server asks, with a 401): the system browser
        opens the login page, and the page shows the login URL too (``login`` event); tokens go to
        the default store that ``mcpio login`` uses, so a later connection needs no new login."""
        try:
            from .._auth._browser import LoopbackBrowser
            from .._auth._oauth_client import OAuth
        except ImportError:  # no httpx / auth extra: connect without, the server's 401 says why
            return None
        return OAuth(
            client_name="mcpio inspect", user_agent=LoopbackBrowser(announce=lambda text: self.emit("login", text=text))
        )

    async def disconnect(self) -> None:
        """Close the connection (calls in flight are cancelled, open questions declined)."""
        for task in [*self._calls.values(), *self._followed.values()]:
            task.cancel()
        self._skills.clear()
        for fut in list(self._asks.values()):
            if not fut.done():
                fut.set_result(None)
        client, self.client = self.client, None
        if client is not None:
            try:
                await client.aclose()
            finally:
                self.emit("disconnected", target=shown(self.target or ""))

    def info(self) -> dict[str, Any]:
        """What the server said of itself, and the negotiated version and era."""
        c = self._need()
        return {
            "target": shown(self.target or ""),  # on the page (a shared screen): without its credentials
            "serverInfo": c.server_info,
            "capabilities": c.server_capabilities,
            "instructions": c.instructions,
            "protocolVersion": c.negotiated_version,
            "era": c.negotiated_era,
        }

    def _need(self) -> Client:
        if self.client is None:
            raise LookupError("not connected: connect to a server first")
        return self.client

    # ------------------------------------------------------------------ requests
    async def request(self, method: str, params: dict[str, Any] | None, call_id: str | None = None) -> Any:
        """Send any request; progress is emitted under ``call_id``; cancellable by :meth:`cancel`.

        Returns the raw result; raises MCPError (the server's error) or LookupError."""
        client = self._need()

        def progressed(progress: float, total: float | None, message: str | None) -> None:
            self.emit("progress", call=call_id, progress=progress, total=total, message=message)

        if method == "tools/call" and isinstance(params, dict):
            coro = client.call_tool(
                str(params.get("name", "")), params.get("arguments") or {}, on_progress=progressed if call_id else None
            )
        else:
            coro = client.request(method, params, on_progress=progressed if call_id else None)
        task = asyncio.ensure_future(coro)
        if call_id:
            self._calls[call_id] = task
        try:
            return await task
        finally:
            if call_id:
                self._calls.pop(call_id, None)

    def cancel(self, call_id: str) -> bool:
        """Cancel a call in flight (the client tells the server); False if it already ended."""
        task = self._calls.get(call_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    # ------------------------------------------------------------------ tasks and skills
    async def start_task(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Call tool ``name`` as a task: ``{"task": …}`` (then followed: every status it goes
        through, and its end with the result or error, arrive as ``task`` events; its input
        requests as ``ask`` events) or ``{"result": …}`` when the server answered at once."""
        client = self._need()
        started = await start_tool_task(client, name, arguments)
        task = started.get("task")
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            task_id = task["taskId"]
            self._followed[task_id] = asyncio.ensure_future(self._follow(client, name, task_id, task))
        return started

    async def _follow(self, client: Client, tool: str, task_id: str, task: dict[str, Any]) -> None:
        seen: list[Any] = [None]
        last = [task]

        def status(t: dict[str, Any]) -> None:  # the end is told once, with the result or error (below)
            last[0] = t
            shown = (t.get("status"), t.get("statusMessage"), t.get("inputRequests"))
            if shown != seen[0] and t.get("status") not in ENDED:
                seen[0] = shown
                self.emit("task", taskId=task_id, tool=tool, task=t)

        def ended(default: str) -> dict[str, Any]:
            t = {k: v for k, v in last[0].items() if k not in ("result", "error", "inputRequests")}
            return {**t, "status": t["status"] if t.get("status") in ENDED else default}

        try:
            result = await follow_tool_task(client, task, status)
            self.emit("task", taskId=task_id, tool=tool, task=ended("completed"), result=result)
        except MCPError as exc:
            final = ended("cancelled" if isinstance(exc, TaskCancelled) else "failed")
            self.emit("task", taskId=task_id, tool=tool, task=final, error=exc.to_error_object())
        except Exception as exc:  # the connection went away: say so, the page keeps the last state
            self.emit("task", taskId=task_id, tool=tool, error={"message": f"{type(exc).__name__}: {exc}"}, task=None)
        finally:
            self._followed.pop(task_id, None)

    async def list_skills(self) -> list[dict[str, Any]]:
        """The server's skills (``skills/list``, every page; [] without the extension)."""
        entries = await self._need().list_skills()
        self._skills = {e.uri: e for e in entries}
        return [dict(e) for e in entries]

    async def read_skill_file(self, skill: str, uri: str) -> str:
        """One file of the listed skill ``skill`` (its SKILL.md URI), verified against the entry
        (size, digest, frontmatter: SkillVerificationError otherwise), decoded as UTF-8."""
        client = self._need()
        entry = self._skills.get(skill) or await client.get_skill(skill)
        return (await client.read_skill_file(entry, uri)).decode("utf-8", "replace")

    async def subscribe(self, uri: str) -> None:
        """Subscribe to ``uri``'s updates in the era's way (legacy ``resources/subscribe``,
        2026-07-28 ``subscriptions/listen``); updates arrive as ``notification`` events."""
        await self._need().subscribe(uri)

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Replace the roots and send ``notifications/roots/list_changed``."""
        self.roots = roots
        if self.client is not None:
            await self.client.roots_changed()

    # ------------------------------------------------------------------ server → client questions
    def _asker(self, method: str) -> Callable[[dict[str, Any]], Any]:
        async def ask(params: dict[str, Any]) -> Any:
            ask_id = str(next(self._ask_ids))
            fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._asks[ask_id] = fut
            self.emit("ask", id=ask_id, method=method, params=params)
            try:
                answer = await asyncio.wait_for(fut, ASK_TIMEOUT)
            except TimeoutError:
                answer = None
            finally:
                self._asks.pop(ask_id, None)
                self.emit("asked", id=ask_id)
            if isinstance(answer, dict) and "error" in answer:
                raise MCPError(str(answer["error"]), -1)
            return answer

        return ask

    def answer(self, ask_id: str, result: Any) -> bool:
        """Answer the server's question ``ask_id`` (None declines); False if it is no longer open."""
        fut = self._asks.get(ask_id)
        if fut is None or fut.done():
            return False
        fut.set_result(result)
        return True

    def open_asks(self) -> list[str]:
        return list(self._asks)
