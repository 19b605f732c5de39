"""Host: one object connected to several MCP servers at once, their items under one namespace.

``async with Host.from_config("claude") as host`` connects every (enabled) server of a
configuration concurrently. A server that fails to connect does not stop the others: its
error is kept in ``host.errors`` (``strict=True`` raises instead). Names follow the one naming
rule of ``mcpio._naming`` (the rule ``Server.mount`` uses): ``list_tools()`` / ``list_prompts()``
give ``<server>__<name>`` (the server part reduced to ``[A-Za-z0-9_-]``), ``list_resources()``,
``list_resource_templates()`` and ``list_skills()`` give ``scheme://<server>/rest``; and
``call_tool``, ``get_prompt``, ``read_resource``, ``load_skill`` route such names back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from .. import _naming
from .._client._client import Client
from .._errors import InvalidParams
from ._config import ServerSpec, load_config, servers_of

log = logging.getLogger("mcpio.host")


_prefix = _naming.namespace_of


class Host:
    """Clients for several servers. ``servers`` maps a name to a :class:`ServerSpec`, an mcpio
    ``Server``, a command line or a ``.py`` path; ``client_options`` go to every ``Client``."""

    def __init__(
        self,
        servers: Mapping[str, Any],
        *,
        separator: str = _naming.SEPARATOR,
        strict: bool = False,
        include_disabled: bool = False,
        **client_options: Any,
    ) -> None:
        self.specs = {
            name: s for name, s in servers.items() if include_disabled or not (isinstance(s, ServerSpec) and s.disabled)
        }
        self.separator = separator
        by_namespace: dict[str, list[str]] = {}
        for name in self.specs:
            by_namespace.setdefault(_prefix(name), []).append(name)
        for namespace, names in by_namespace.items():
            if len(names) > 1:  # a name under it reaches only one of them
                log.warning(
                    "servers %s share the namespace %r: a tool, prompt or resource under it reaches one of "
                    "them only; rename one",
                    ", ".join(map(repr, names)),
                    namespace,
                )
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
        return _naming.join_name(_prefix(server), tool, self.separator)

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every connected server's tools, each a copy with ``name`` namespaced and
        ``_meta["io.mcpio/server"]`` / ``_meta["io.mcpio/tool"]`` naming its origin."""

        async def one(server: str, client: Client) -> list[dict[str, Any]]:
            try:
                return [dict(t, _server=server) for t in await client.list_tools() if self._chooses(server, t["name"])]
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
        if hit is not None and hit[0] in self.clients:
            return self.clients[hit[0]], hit[1]
        return self._by_name(name, "tool")  # not listed yet: split on the separator

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        """Call a namespaced tool on the server it belongs to (options as for ``Client.call_tool``);
        one its entry's ``"tools"`` lists leave out is unknown (-32602), as it is unlisted."""
        client, tool = self.route(name)
        server = next(s for s, c in self.clients.items() if c is client)
        if not self._chooses(server, tool):
            raise InvalidParams(f'Unknown tool {name!r}: the entry {server!r} does not allow it (its "tools" lists)')
        return await client.call_tool(tool, arguments, **options)

    def _chooses(self, server: str, tool: str) -> bool:
        """Whether ``server``'s entry lets ``tool`` be listed and called (``ServerSpec.chooses``)."""
        spec = self.specs.get(server)
        return not isinstance(spec, ServerSpec) or spec.chooses(tool)

    # ------------------------------------------------------------ prompts, resources, skills
    async def _gather(self, list_name: str) -> list[tuple[str, Any]]:
        """(server, item) for every item ``client.<list_name>()`` gives, servers in parallel."""

        async def one(server: str, client: Client) -> list[tuple[str, Any]]:
            try:
                return [(server, item) for item in await getattr(client, list_name)()]
            except Exception as exc:
                log.warning("%s failed on %r: %s", list_name, server, exc)
                self.errors[server] = exc
                return []

        lists = await asyncio.gather(*(one(s, c) for s, c in self.clients.items()))
        return [pair for pairs in lists for pair in pairs]

    async def list_prompts(self) -> list[Any]:
        """Every connected server's prompts, ``name`` namespaced as tools are."""
        return [
            type(p)({**p, "name": self.tool_name(server, p["name"])})
            for server, p in await self._gather("list_prompts")
        ]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, **options: Any) -> Any:
        client, prompt = self._by_name(name, "prompt")
        return await client.get_prompt(prompt, arguments, **options)

    async def list_resources(self) -> list[Any]:
        """Every connected server's resources, ``uri`` namespaced: ``scheme://<server>/rest``."""
        return [
            type(r)({**r, "uri": _naming.join_uri(_prefix(s), r["uri"])})
            for s, r in await self._gather("list_resources")
        ]

    async def list_resource_templates(self) -> list[Any]:
        pairs = await self._gather("list_resource_templates")
        return [type(t)({**t, "uriTemplate": _naming.join_uri(_prefix(s), t["uriTemplate"])}) for s, t in pairs]

    async def read_resource(self, uri: str, **options: Any) -> Any:
        """Read a namespaced resource URI from the server it belongs to; the contents' URIs namespaced too."""
        server, client, original = self._by_uri(uri)
        contents = await client.read_resource(original, **options)
        return [
            type(c)({**c, "uri": _naming.join_uri(_prefix(server), c["uri"])}) if "uri" in c else c for c in contents
        ]

    async def list_skills(self) -> list[Any]:
        """Every connected server's skills (the skills extension), their URIs namespaced."""
        out = []
        for server, entry in await self._gather("list_skills"):
            ns = _prefix(server)
            files = [{**f, "uri": _naming.join_uri(ns, f["uri"])} for f in entry.get("resources") or []]
            out.append(type(entry)({**entry, "uri": _naming.join_uri(ns, entry["uri"]), "resources": files}))
        return out

    async def load_skill(self, skill: Any) -> str:
        """Read and verify a skill :meth:`list_skills` gave (SKILL.md, on the server it belongs to)."""
        server, client, original = self._by_uri(skill["uri"])
        ns = _prefix(server)
        files = [{**f, "uri": _naming.strip_uri(f["uri"], ns) or f["uri"]} for f in skill.get("resources") or []]
        return await client.load_skill(type(skill)({**skill, "uri": original, "resources": files}))

    def _longest_first(self) -> list[tuple[str, Client]]:
        """The servers, the longest namespace first: ``a__b__x`` is ``x`` of a server ``a__b``,
        never ``b__x`` of a server ``a`` (nor ``page://a/b/x`` ``b/x`` of ``a``'s)."""
        return sorted(self.clients.items(), key=lambda pair: len(_prefix(pair[0])), reverse=True)

    def _by_name(self, name: str, what: str) -> tuple[Client, str]:
        for server, client in self._longest_first():
            original = _naming.split_name(name, _prefix(server), self.separator)
            if original is not None:
                return client, original
        known = ", ".join(sorted(self.clients)) or "none connected"
        raise InvalidParams(f"Unknown {what} {name!r}: no connected server matches (servers: {known})")

    def _by_uri(self, uri: str) -> tuple[str, Client, str]:
        for server, client in self._longest_first():
            original = _naming.strip_uri(uri, _prefix(server))
            if original is not None:
                return server, client, original
        known = ", ".join(sorted(self.clients)) or "none connected"
        raise InvalidParams(f"Unknown resource {uri!r}: no connected server matches (servers: {known})")
