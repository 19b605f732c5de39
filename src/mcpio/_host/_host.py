"""Host: one object connected to several MCP servers at once, their tools under one namespace.

``async with Host.from_config("claude") as host`` connects every (enabled) server of a
configuration concurrently. A server that fails to connect does not stop the others: its
error is kept in ``host.errors`` (``strict=True`` raises instead). ``list_tools()`` returns
every server's tools with names ``<server><separator><tool>`` (default separator ``__``; the
server part is reduced to ``[A-Za-z0-9_-]``), and ``call_tool`` routes such a name back.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any

from .._client._client import Client
from .._errors import InvalidParams
from ._config import ServerSpec, load_config, servers_of

log = logging.getLogger("mcpio.host")


def _prefix(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "server"


class Host:
    """Clients for several servers. ``servers`` maps a name to a :class:`ServerSpec`, an mcpio
    ``Server``, a command line or a ``.py`` path; ``client_options`` go to every ``Client``."""

    def __init__(
        self,
        servers: Mapping[str, Any],
        *,
        separator: str = "__",
        strict: bool = False,
        include_disabled: bool = False,
        **client_options: Any,
    ) -> None:
        self.specs = {
            name: s for name, s in servers.items() if include_disabled or not (isinstance(s, ServerSpec) and s.disabled)
        }
        self.separator = separator
        self.strict = strict
        self.client_options = client_options
        self.clients: dict[str, Client] = {}
        self.errors: dict[str, BaseException] = {}
        self._routes: dict[str, tuple[str, str]] = {}

    @classmethod
    def from_config(cls, config: str, names: list[str] | None = None, **options: Any) -> Host:
        """A host for the servers of a configuration file path or host alias (``"claude"``,
        ``"cursor"``, ``"vscode"``, ``"claude-code"`` …), optionally only ``names``."""
        servers = servers_of(config) if not config.endswith((".json", ".jsonc")) else load_config(config)
        if names is not None:
            servers = {n: servers[n] for n in names if n in servers}
        return cls(servers, **options)

    def _client(self, name: str, target: Any) -> Client:
        opts = dict(self.client_options)
        if isinstance(target, ServerSpec):
            return target.client(**opts)
        return Client(target, **opts)

    async def __aenter__(self) -> Host:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def connect(self) -> None:
        async def one(name: str, target: Any) -> None:
            try:
                client = self._client(name, target)
                await client.connect()
            except Exception as exc:
                log.warning("server %r did not connect: %s", name, exc)
                self.errors[name] = exc
            else:
                self.clients[name] = client

        await asyncio.gather(*(one(n, t) for n, t in self.specs.items()))
        if self.strict and self.errors:
            await self.aclose()
            _, exc = next(iter(self.errors.items()))
            raise exc

    async def aclose(self) -> None:
        clients, self.clients = self.clients, {}
        await asyncio.gather(*(c.aclose() for c in clients.values()), return_exceptions=True)

    def tool_name(self, server: str, tool: str) -> str:
        return f"{_prefix(server)}{self.separator}{tool}"

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every connected server's tools, each a copy with ``name`` namespaced and
        ``_meta["io.mcpio/server"]`` / ``_meta["io.mcpio/tool"]`` naming its origin."""

        async def one(server: str, client: Client) -> list[dict[str, Any]]:
            try:
                return [dict(t, _server=server) for t in await client.list_tools()]
            except Exception as exc:
                log.warning("tools/list failed on %r: %s", server, exc)
                self.errors[server] = exc
                return []

        lists = await asyncio.gather(*(one(s, c) for s, c in self.clients.items()))
        routes: dict[str, tuple[str, str]] = {}
        out = []
        for tools in lists:
            for t in tools:
                server = t.pop("_server")
                name = self.tool_name(server, t["name"])
                if name in routes:
                    log.warning("tool name %r is taken twice; keeping the first", name)
                    continue
                routes[name] = (server, t["name"])
                meta = dict(t.get("_meta") or {})
                meta.update({"io.mcpio/server": server, "io.mcpio/tool": t["name"]})
                out.append({**t, "name": name, "_meta": meta})
        self._routes = routes
        return out

    def route(self, name: str) -> tuple[Client, str]:
        """The client and original tool name behind a namespaced tool name."""
        hit = self._routes.get(name)
        if hit is None:  # not listed yet: split on the separator
            for server in self.clients:
                prefix = _prefix(server) + self.separator
                if name.startswith(prefix):
                    hit = (server, name[len(prefix) :])
                    break
        if hit is None or hit[0] not in self.clients:
            known = ", ".join(sorted(self.clients)) or "none connected"
            raise InvalidParams(f"Unknown tool {name!r}: no connected server matches (servers: {known})")
        return self.clients[hit[0]], hit[1]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        """Call a namespaced tool on the server it belongs to (options as for ``Client.call_tool``)."""
        client, tool = self.route(name)
        return await client.call_tool(tool, arguments, **options)
