"""Client: one surface for every transport (in-memory Server, subprocess over stdio).

``async with Client(target) as client`` connects and initializes; ``list_*`` follow every page
(with a page cap and loop detection); every method raises :class:`MCPError` with the server's
code, message and data. Server→client requests are answered by the handlers you pass:
``sampling(params) -> result``, ``elicitation(params) -> result``, ``roots`` (a list of root
dicts or a callable returning one), and notifications reach ``on_log`` / ``on_notification``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._errors import MCPError, MethodNotFound
from .._protocol._connection import Connection
from .._protocol._events import NotificationReceived, RequestReceived
from .._session import ProgressCallback, Session
from .._transports._base import Transport
from .._version import __version__
from .._versions import LATEST_LEGACY

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]

MAX_PAGES = 1000


class Client:
    """An MCP client. ``target``: a :class:`~mcpio.Server` (in memory), a ``.py`` path, or a
    command line (split with shlex, never run through a shell)."""

    def __init__(
        self,
        target: Any = None,
        *,
        transport: Transport | None = None,
        name: str = "mcpio",
        version: str = __version__,
        protocol_version: str = LATEST_LEGACY,
        sampling: Handler | None = None,
        elicitation: Handler | None = None,
        roots: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        on_notification: Callable[[str, dict[str, Any] | None], Any] | None = None,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
        env_mode: str = "inherit",
        cwd: str | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> None:
        self._target = target
        self._transport = transport
        self._spawn_options = {"env": env, "env_mode": env_mode, "cwd": cwd, "on_stderr": on_stderr}
        self.client_info = {"name": name, "version": version}
        self.protocol_version = protocol_version
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.on_log = on_log
        self.on_notification = on_notification
        self.timeout = timeout
        self.session: Session | None = None
        self.server_result: dict[str, Any] = {}
        self._tasks: list[asyncio.Task] = []

    @classmethod
    def stdio(cls, command: str, args: Sequence[str] = (), **options: Any) -> Client:
        """Spawn ``command args…`` and speak stdio to it (no shell involved)."""
        from .._transports._subprocess import SubprocessTransport

        spawn = {k: options.pop(k) for k in ("env", "env_mode", "cwd", "on_stderr", "grace") if k in options}
        return cls(transport=SubprocessTransport(command, args, **spawn), **options)

    # ------------------------------------------------------------------ lifecycle
    def _make_transport(self) -> Transport:
        target = self._target
        if callable(getattr(target, "serve", None)) and callable(getattr(target, "session", None)):  # a Server
            from .._transports._memory import memory_pair

            ours, theirs = memory_pair()
            task = asyncio.get_running_loop().create_task(target.serve(theirs))
            self._tasks.append(task)
            self._server_end = theirs
            return ours
        if isinstance(target, (str, os.PathLike)):
            text = os.fspath(target)
            if text.startswith(("http://", "https://")):
                raise NotImplementedError("HTTP targets need the Streamable HTTP transport (not in this version)")
            argv = [sys.executable, text] if text.endswith(".py") and os.path.exists(text) else shlex.split(text)
            from .._transports._subprocess import SubprocessTransport

            opts = {k: v for k, v in self._spawn_options.items() if v is not None or k == "env"}
            return SubprocessTransport(argv[0], argv[1:], **opts)
        raise TypeError(f"cannot connect to {target!r}: give a Server, a .py path or a command line")

    async def __aenter__(self) -> Client:
        transport = self._transport or self._make_transport()
        self._transport = transport
        opener = getattr(transport, "open", None)
        if opener is not None:
            await opener()
        self.session = Session(transport, Connection("client"), on_request=self._on_request, on_notification=self._on_notif)
        self._tasks.append(asyncio.get_running_loop().create_task(self.session.run()))
        try:
            await self._initialize()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()
        if self._tasks:
            _, late = await asyncio.wait(self._tasks, timeout=10)
            for t in late:
                t.cancel()
            self._tasks.clear()

    def _capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        return caps

    async def _initialize(self) -> None:
        assert self.session is not None
        params = {"protocolVersion": self.protocol_version, "capabilities": self._capabilities(), "clientInfo": self.client_info}
        self.server_result = await self.session.request("initialize", params, timeout=self.timeout)
        await self.session.notify("notifications/initialized")

    @property
    def server_info(self) -> dict[str, Any]:
        return self.server_result.get("serverInfo", {})

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.server_result.get("capabilities", {})

    @property
    def instructions(self) -> str | None:
        return self.server_result.get("instructions")

    @property
    def negotiated_version(self) -> str | None:
        return self.server_result.get("protocolVersion")

    # ------------------------------------------------------------------ server → client
    async def _on_request(self, session: Session, ev: RequestReceived) -> Any:
        params = ev.params or {}
        if ev.method == "ping":
            return {}
        if ev.method == "roots/list" and self.roots is not None:
            roots = self.roots() if callable(self.roots) else self.roots
            return {"roots": list(roots)}
        handler = {"sampling/createMessage": self.sampling, "elicitation/create": self.elicitation}.get(ev.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: this client does not handle {ev.method!r}")
        r = handler(params)
        return await r if asyncio.iscoroutine(r) else r

    def _on_notif(self, session: Session, ev: NotificationReceived) -> None:
        if ev.method == "notifications/message" and self.on_log is not None:
            self.on_log(ev.params or {})
        if self.on_notification is not None:
            self.on_notification(ev.method, ev.params)

    async def roots_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        assert self.session is not None
        await self.session.notify("notifications/roots/list_changed")

    # ------------------------------------------------------------------ requests
    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = -1.0,
                      on_progress: ProgressCallback | None = None) -> Any:
        """Send any request; returns the raw result (raises MCPError)."""
        if self.session is None:
            raise RuntimeError("use 'async with Client(...) as client' first")
        t = self.timeout if timeout == -1.0 else timeout
        return await self.session.request(method, params, timeout=t, on_progress=on_progress)

    async def _list(self, method: str, key: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor = None
        for _ in range(MAX_PAGES):
            p = dict(params or {})
            if cursor is not None:
                p["cursor"] = cursor
            result = await self.request(method, p or None)
            items.extend(result.get(key, []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
            if cursor in seen:
                raise MCPError(f"{method}: the server returned cursor {cursor!r} twice; stopping to avoid a loop")
            seen.add(cursor)
        raise MCPError(f"{method}: more than {MAX_PAGES} pages; stopping")

    async def ping(self) -> None:
        await self.request("ping")

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self._list("tools/list", "tools")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = -1.0,
                        on_progress: ProgressCallback | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        return (await self.request("resources/read", {"uri": uri}))["contents"]

    async def subscribe(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("prompts/get", params)

    async def complete(self, ref: dict[str, Any], argument: str, value: str, context: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return (await self.request("completion/complete", params))["completion"]

    async def set_logging_level(self, level: str) -> None:
        await self.request("logging/setLevel", {"level": level})
