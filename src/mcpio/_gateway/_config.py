"""``Server.from_config(path)``: one server serving every entry of an ``mcpServers`` file.

Each enabled entry becomes a :func:`~._proxy.proxy` mounted under the entry's name (the naming
rule of ``mcpio._naming``: ``files__read_file``); ``"disabled": true`` entries are left out and
``"tools": {"allow": [...], "deny": [...]}`` chooses the entry's tools. The upstreams start in
parallel when the gateway starts serving; one that fails to start is logged and served as
nothing (its next request tries again), the others are not held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from .._host._config import load_config, servers_of
from .._naming import namespace_of
from .._server._server import Server
from ._proxy import Upstream, proxy

log = logging.getLogger("mcpio.gateway")


class GatewayServer(Server):
    """The Server :func:`from_config` makes: its ``upstreams`` (by entry name) start together, in
    parallel, when it starts serving."""

    def __init__(self, name: str, upstreams: dict[str, Upstream]) -> None:
        super().__init__(name, lifespan=_start_all)
        self.upstreams = upstreams

    def upstream_states(self) -> list[dict[str, Any]]:
        """Each upstream's :meth:`~._proxy.Upstream.state`, in the file's order."""
        return [{**upstream.state(), "name": name} for name, upstream in self.upstreams.items()]


@contextlib.asynccontextmanager
async def _start_all(server: Server) -> AsyncIterator[None]:
    assert isinstance(server, GatewayServer)
    await asyncio.gather(*(u.start() for u in server.upstreams.values()))  # failures are logged by start
    yield


def from_config(
    config: str | os.PathLike[str], *, name: str = "gateway", names: list[str] | None = None, **client_options: Any
) -> GatewayServer:
    """The gateway Server of ``config`` (a file path or a host alias such as ``"claude"``),
    optionally only the entries ``names``; ``client_options`` go to every upstream's Client."""
    text = os.fspath(config)
    specs = load_config(text) if text.endswith((".json", ".jsonc")) or os.path.exists(text) else servers_of(text)
    if names is not None:
        specs = {n: specs[n] for n in names if n in specs}
    children = {entry: proxy(spec, name=entry, **client_options) for entry, spec in specs.items() if not spec.disabled}
    gateway = GatewayServer(name, {entry: child.upstream for entry, child in children.items()})
    for entry, child in children.items():
        spec = specs[entry]
        gateway.mount(child, namespace=namespace_of(entry), include=spec.tools_allow, exclude=spec.tools_deny)
    return gateway
