"""``Server.from_config(path)``: one server serving every entry of an ``mcpServers`` file.

Each enabled entry becomes a :func:`~._proxy.proxy` mounted under the entry's name (the naming
rule of ``mcpio._naming``: ``files__read_file``); ``"disabled": true`` entries are left out and
``"tools": {"allow": [...], "deny": [...]}`` chooses the entry's tools. The upstreams start in
parallel when the gateway starts serving; one that fails to start is logged and served as
nothing (its next request tries again), the others are not held back.

Cold start: the gateway answers ``initialize`` (``server/discover``, ``ping``,
``logging/setLevel``) at once, as a plain server does, while its upstreams start; every other
request waits until each upstream's first start has ended (connected and listed, or failed), so
the first ``tools/list`` a host sends lists every upstream's tools, also for a host that ignores
``list_changed``. It announces every kind an upstream may bring (tools, prompts, resources,
completions, each with ``listChanged``: spec-notes §4; ``Registry.promised``, so a server it is
mounted in announces them too); a client that lists a kind no upstream has gets an empty list.
Mounted in another server, which serves its items without this hold, it waits for the
upstreams' first start as that server's lifespan enters it (:meth:`GatewayServer.running`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from .._host._config import ServerSpec, load_config, servers_of
from .._naming import namespace_of
from .._server._mrtr import ROUND_TIMEOUT
from .._server._server import Server
from ._proxy import ProxyServer, Upstream

if TYPE_CHECKING:
    import subprocess

    from .._protocol._events import RequestReceived
    from .._session import Session

#: What the gateway answers without waiting for its upstreams: nothing of theirs is in the answer.
AT_ONCE = frozenset({"initialize", "server/discover", "ping", "logging/setLevel"})


class GatewayServer(Server):
    """The Server :func:`from_config` makes: its ``upstreams`` (by entry name) start together, in
    parallel, when it starts serving (the lifespans of its mounted proxies); requests other than
    :data:`AT_ONCE` wait until each one's first start has ended."""

    passes_through = AT_ONCE  # answered as a plain server answers them (before asyncio loads: _stdio)

    def __init__(self, name: str, upstreams: dict[str, Upstream]) -> None:
        super().__init__(name)
        self.upstreams = upstreams
        self._all_started = False  # every upstream's first start has ended (it never begins again)
        self.registry.promised.update(("tools", "prompts", "resources", "completions"))  # what upstreams may bring

    def upstream_states(self) -> list[dict[str, Any]]:
        """Each upstream's :meth:`~._proxy.Upstream.state`, in the file's order."""
        return [{**upstream.state(), "name": name} for name, upstream in self.upstreams.items()]

    async def started(self) -> None:
        """Return when each upstream's first start has ended (begun now if serving has not)."""
        import asyncio  # not at import: the gateway answers initialize before asyncio loads

        await asyncio.gather(*(u.start() for u in self.upstreams.values()))  # failures are logged by start
        self._all_started = True

    def running(self) -> contextlib.AbstractAsyncContextManager[Server]:
        """As a Server's; mounted in another server (which serves this one's items without the
        hold of :meth:`_on_request`), entered with that server's lifespan, it also waits for the
        upstreams' first start, so that server's requests come after it. (Not a ``lifespan``:
        served itself, the gateway answers ``initialize`` before its event loop exists.)"""
        return self._running_started() if self.registry.parents else super().running()

    @contextlib.asynccontextmanager
    async def _running_started(self) -> AsyncIterator[Server]:
        async with super().running() as server:
            await self.started()
            yield server

    def plain_for(self, method: str | None = None) -> bool:
        """As a Server's, but :attr:`plain` (``method`` None) holds despite this class's own
        ``_on_request``: what reads it answers only ``tools/call``s of registered tools (mirrored,
        so their upstream has started) without the engine, which waiting for every upstream's
        first start would only delay. Any other request waits for it, on the engine."""
        if method is None:
            return not (self.telemetry or self.registry.middleware)
        return super().plain_for(method)

    def _on_request(self, session: Session, ev: RequestReceived) -> Coroutine[Any, Any, Any]:
        if self._all_started or ev.method in self.passes_through:
            return super()._on_request(session, ev)  # Server's own coroutine: no layer of ours per request
        return self._after_start(session, ev)

    async def _after_start(self, session: Session, ev: RequestReceived) -> Any:
        await self.started()
        return await super()._on_request(session, ev)


def from_config(
    config: str | os.PathLike[str] | Mapping[str, ServerSpec],
    *,
    name: str = "gateway",
    names: list[str] | None = None,
    processes: Mapping[str, subprocess.Popen[bytes]] | None = None,
    round_timeout: float = ROUND_TIMEOUT,
    **client_options: Any,
) -> GatewayServer:
    """The gateway Server of ``config`` (a file path, a host alias such as ``"claude"``, or the
    entries of a file already read: ``load_config``), optionally only the entries ``names``;
    ``client_options`` go to every upstream's Client. ``processes``: entry -> its process,
    started already with the same options (``start_servers``: ``mcpio run mcp.json`` starts them
    before it loads the gateway), adopted by the upstream's first connection. ``round_timeout``:
    every upstream's (``proxy``) but an entry's with a ``"roundTimeout"`` of its own."""
    if isinstance(config, Mapping):
        specs = dict(config)
    else:
        text = os.fspath(config)
        specs = load_config(text) if text.endswith((".json", ".jsonc")) or os.path.exists(text) else servers_of(text)
    if names is not None:
        specs = {n: specs[n] for n in names if n in specs}
    started = processes or {}
    children = {  # begun by their lifespans, awaited by the gateway
        entry: ProxyServer(
            spec, entry, client_options, waits=False, process=started.get(entry), round_timeout=round_timeout
        )
        for entry, spec in specs.items()
        if not spec.disabled
    }
    gateway = GatewayServer(name, {entry: child.upstream for entry, child in children.items()})
    for entry, child in children.items():  # an entry's "tools" allow/deny: its proxy's (chosen_tools)
        gateway.mount(child, namespace=namespace_of(entry))
    return gateway
