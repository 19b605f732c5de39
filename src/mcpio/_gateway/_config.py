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


def from_config(
    config: str | os.PathLike[str], *, name: str = "gateway", names: list[str] | None = None, **client_options: Any
) -> Server:
    """The gateway Server of ``config`` (a file path or a host alias such as ``"claude"``),
    optionally only the entries ``names``; ``client_options`` go to every upstream's Client."""
    text = os.fspath(config)
    specs = load_config(text) if text.endswith((".json", ".jsonc")) or os.path.exists(text) else servers_of(text)
    if names is not None:
        specs = {n: specs[n] for n in names if n in specs}
    upstreams: list[Upstream] = []

    @contextlib.asynccontextmanager
    async def start_all(server: Server) -> AsyncIterator[None]:
        await asyncio.gather(*(u.start() for u in upstreams))  # in parallel; failures are logged by start
        yield

    gateway = Server(name, lifespan=start_all)
    for entry, spec in specs.items():
        if spec.disabled:
            continue
        child = proxy(spec, name=entry, **client_options)
        upstreams.append(child.upstream)
        gateway.mount(child, namespace=namespace_of(entry), include=spec.tools_allow, exclude=spec.tools_deny)
    return gateway
