"""``mcpio run TARGET`` when TARGET is not Python code: a proxy or a gateway to serve.

- ``mcp.json`` (any ``mcpServers`` file, no ``:NAME``): every entry, mounted under its name
  (:meth:`Server.from_config`);
- an ``http(s)://`` URL: a bridge to the remote server (``mcpio run URL`` over stdio is what a
  stdio-only host needs), logged in with the OAuth client and token store ``mcpio login`` uses,
  or with the headers in ``$MCPIO_HEADERS`` (what ``mcpio install URL --header`` writes for a
  host that starts commands only);
- a command line (``"npx -y some-server"``), ``CONFIG:NAME``, a host-config name, a command on
  PATH or a path to a program that is not mcpio code (a console script, an npm package's bin):
  that server, proxied (``mcpio run "npx -y x" -t http`` serves a stdio server over HTTP).

Python code (``server.py``, ``FILE.py:OBJECT``, ``package.module[:OBJECT]``, a path to a file
that imports mcpio: ``_targets.resolve`` decides, as for every command) is not a gateway:
``None``, and ``mcpio run`` imports and serves it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._host._config import ServerSpec
    from .._server._server import Server

# What a gateway or a proxy needs (the server, the client's target rules, the CLI's TARGET rules)
# is imported where it is used, after its stdio upstreams were started: they boot while it loads.

#: The headers ``mcpio run URL`` sends upstream, one ``Name: value`` per line: what ``mcpio
#: install URL --header …`` writes into a stdio-only host's entry (in its env, never its argv).
BRIDGE_HEADERS = "MCPIO_HEADERS"


def gateway_specs(target: str) -> dict[str, ServerSpec] | None:
    """The servers of TARGET when it is an ``mcpServers`` file served whole (``mcpio run
    mcp.json``: its gateway), else None; the file is read and decoded once, here. A JSON file
    with no section of servers (a ``package.json``) is a usage error, not an empty gateway; one
    that cannot be read or decoded, or whose entries cannot be used, is the ConfigError that says
    why."""
    if not (target.endswith((".json", ".jsonc")) and os.path.isfile(target)):
        return None
    from .._host._config import file_servers, holds_servers, read_config
    from ._exit import UsageError

    path, data = read_config(target)
    if not holds_servers(data):
        raise UsageError(
            f'{target}: not a server configuration: it has no "mcpServers" (nor "servers", "context_servers") object'
        )
    return file_servers(path, data)


def gateway_server(
    app: str, start_now: bool = True, round_timeout: float | None = None, must_start: bool = False
) -> Server | None:
    """The proxy or gateway Server for ``app``, or None when ``app`` names Python code.
    ``start_now``: its stdio upstreams are started now, while it loads the rest of itself (not
    for forked ``--workers``: each worker starts its own). ``round_timeout``: ``Server.proxy``'s
    (None: its default). ``must_start`` (``mcpio run "COMMAND" -t http``): a command that cannot
    start now (not found, an entry without one) is a CLIFailure, not a server of nothing served
    to a terminal; over stdio the host's ``initialize`` gets the error instead, so it can show it."""
    options: dict[str, Any] = {} if round_timeout is None else {"round_timeout": round_timeout}
    from .._host._config import start_servers

    specs = gateway_specs(app)
    if specs is not None:
        started = start_servers(specs) if start_now else {}
        from .._gateway._config import from_config

        name = os.path.splitext(os.path.basename(app))[0]
        return from_config(specs, name=name, processes=started, **options)
    from .._client._target import is_url
    from ._targets import PYTHON, resolve

    if is_url(app):
        from .._server._server import Server

        lines = os.environ.pop(BRIDGE_HEADERS, "").splitlines()  # not inherited by anything it starts
        headers = {k.strip(): v.strip() for k, sep, v in (line.partition(":") for line in lines) if sep and k.strip()}
        return Server.proxy(resolve(app), headers=headers or None, **options)
    spec = resolve(app)  # the CLI's one TARGET rule, as `mcpio list APP` starts it
    if spec.source == PYTHON:
        return None  # imported and served by mcpio run
    if must_start and start_now:
        from ._exit import UNAVAILABLE, CLIFailure

        try:
            process = spec.start()
        except (ValueError, OSError) as exc:  # ConfigError; ServerNotFound, TransportError
            raise CLIFailure(str(exc), UNAVAILABLE, "check the command: is it installed, and on PATH?") from None
        started = {spec.name: process} if process is not None else {}
    else:
        started = start_servers({spec.name: spec}) if start_now else {}
    from .._gateway._proxy import proxy

    return proxy(spec, process=started.get(spec.name), **options)  # named as the upstream names itself


async def upstream_states(path: str, specs: dict[str, ServerSpec]) -> list[dict[str, Any]]:
    """Each upstream of the gateway of file ``path`` (its ``specs``: :func:`gateway_specs`)
    (``Upstream.state``: started, failed with its error, its counts), started in this process the
    way ``mcpio run`` starts them, then stopped."""
    import logging

    from .._gateway._config import from_config

    quiet = logging.getLogger("mcpio.gateway")
    level, quiet.level = quiet.level, logging.CRITICAL  # a failed start is in the states, not the log
    try:
        gateway = from_config(specs, name=os.path.splitext(os.path.basename(path))[0])
        async with gateway.running():
            await gateway.started()
            return gateway.upstream_states()
    finally:
        quiet.setLevel(level)


def upstream_lines(states: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The table of ``states`` and a problem line for each upstream that did not start."""
    from ._output import table

    rows = [
        [s["name"], s["state"], s["tools"], s["prompts"], s["resources"] + s["templates"], f"{s['start_ms'] or 0:.0f}"]
        for s in states
    ]
    problems = [f"upstream {s['name']!r} did not start: {s['error']}" for s in states if s["state"] != "started"]
    return table(["UPSTREAM", "STATE", "TOOLS", "PROMPTS", "RESOURCES", "START (ms)"], rows), problems
