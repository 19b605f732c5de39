"""``Server.from_config(path)``: one server serving every entry of an ``mcpServers`` file.

Each enabled entry becomes a :func:`~._proxy.proxy` mounted under the entry's name (the naming
rule of ``mcpio._naming``: ``files__read_file``); ``"disabled": true`` entries are left out and
``"tools": {"allow": [...], "deny": [...]}`` chooses the entry's tools. The upstreams start in
parallel when the gateway starts serving; one that fails to start is logged and served as
nothing (its next request tries again), the others are not held back.

Cold start: the gateway answers ``initialize`` (``server/discover``, ``ping``,
``logging/setLevel``: ``_running.AT_ONCE``) at once, as a plain server does, while its upstreams
start; every other request waits until each upstream's first start has ended (connected and
listed, or failed: each proxy's ``Registry.first_start``), so the first ``tools/list`` a host
sends lists every upstream's tools, also for a host that ignores ``list_changed``. Mounted in
another server, it holds that server's requests the same way (``_server._running``). It
announces every kind an upstream may bring (tools, prompts, resources, completions, each with
``listChanged``: spec-notes §4; ``Registry.promised``, so a server it is mounted in announces
them too) and the MCP Apps extension (2026-07-28 ``server/discover``, answered at once: an
upstream's tool may link a view); a client that lists a kind no upstream has gets an empty list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._host._config import ServerSpec, load_config, servers_of
from .._naming import namespace_of
from .._server._apps import declare
from .._server._mrtr import ROUND_TIMEOUT
from .._server._running import first_started
from .._server._server import Server
from ._custom import require_scopes
from ._proxy import ProxyServer, Upstream

if TYPE_CHECKING:
    import subprocess


class GatewayServer(Server):
    """The Server :func:`from_config` makes: its ``upstreams`` (by entry name) start together, in
    parallel, when it starts serving (the lifespans of its mounted proxies); requests other than
    ``AT_ONCE`` wait until each one's first start has ended (module docstring)."""

    def __init__(self, name: str, upstreams: dict[str, Upstream]) -> None:
        super().__init__(name)
        self.upstreams = upstreams
        self.registry.promised.update(("tools", "prompts", "resources", "completions"))  # what upstreams may bring
        declare(self)  # MCP Apps too: an upstream's tool may link a view (_forwarded.forwarded_tool)

    def upstream_states(self) -> list[dict[str, Any]]:
        """Each upstream's :meth:`~._proxy.Upstream.state`, in the file's order."""
        return [{**upstream.state(), "name": name} for name, upstream in self.upstreams.items()]

    async def started(self) -> None:
        """Return when each upstream's first start has ended (begun now if serving has not)."""
        await first_started(self.registry)


def from_config(
    config: str | os.PathLike[str] | Mapping[str, ServerSpec],
    *,
    name: str = "gateway",
    names: list[str] | None = None,
    processes: Mapping[str, subprocess.Popen[bytes]] | None = None,
    round_timeout: float = ROUND_TIMEOUT,
    method_scopes: Mapping[str, Iterable[str]] | None = None,
    **client_options: Any,
) -> GatewayServer:
    """The gateway Server of ``config`` (a file path, a host alias such as ``"claude"``, or the
    entries of a file already read: ``load_config``), optionally only the entries ``names``;
    ``client_options`` go to every upstream's Client. ``processes``: entry -> its process,
    started already with the same options (``start_servers``: ``mcpio run mcp.json`` starts them
    before it loads the gateway), adopted by the upstream's first connection. ``round_timeout``:
    every upstream's (``proxy``) but an entry's with a ``"roundTimeout"`` of its own.
    ``method_scopes``: the scopes of the custom requests it forwards (:func:`~._custom.require_scopes`)."""
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
    require_scopes(gateway, method_scopes)  # the gateway's: its HTTP guard reads them
    return gateway
