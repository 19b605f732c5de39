"""What a client says of itself, and how it opens a connection: the part of :class:`~mcpio.Client`
that needs no event loop.

:class:`Declaring` holds what a Client declares (its name and version, the era and protocol
version it asks for, the handlers that make its capabilities, its log level) and builds, from
them, the handshake's requests: ``initialize``'s params, the 2026-07-28 per-request ``_meta``, and
:meth:`Declaring.opening`, the first request of a connection, which :func:`._era.choose_era`
follows (the only place that decides the era: its module docstring). ``Client`` is a Declaring.

:func:`send_first` writes that first request into the stdin of a server process started early
(``_transports._spawn``), before asyncio and the Client load: a gateway (``mcpio run mcp.json``)
and a proxy (``mcpio run "COMMAND"``) do so for their upstreams, which then answer it while the
gateway loads. The Client that adopts the process (``Client(process=...)``) builds the same
request, with the same id (its connection's first), and the transport does not write it again
(``SubprocessTransport``): the Client continues the handshake from the answer.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _jsonrpc as rpc
from .._protocol._connection import Connection
from .._transports._spawn import send_ahead
from .._version import __version__
from .._versions import (
    LATEST,
    LATEST_LEGACY,
    LEGACY,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN,
    MODERN_VERSIONS,
    RULES,
    TASKS_EXTENSION,
    Rules,
    checked_extension,
)

if TYPE_CHECKING:
    import subprocess

ERAS = ("auto", LEGACY, MODERN)

#: The extensions the request being sent declares over its client's own (by identifier: 2026-07-28
#: per-request ``_meta`` clientCapabilities, ``_modern.ModernEra``; a legacy connection declares
#: once, at ``initialize``): a proxy's, for the client it forwards the request for (``_gateway``).
ALSO_DECLARED: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "mcpio_also_declared", default=None
)

# transport key -> era name, for every server this process connected to ("remembered per server").
ERA_CACHE: dict[str, str] = {}

Handler = Callable[..., Any]


class Declaring:
    """What a client declares of itself (see the module docstring); ``Client``'s options of the
    same names, with the same defaults (tests/unit/test_client_opening.py compares them)."""

    def __init__(
        self,
        *,
        name: str = "mcpio",
        version: str = __version__,
        era: str = "auto",
        protocol_version: str | None = None,
        sampling: Handler | None = None,
        elicitation: Handler | None = None,
        elicitation_modes: Sequence[str] = ("form",),
        roots: Sequence[Any] | Callable[[], Any] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        log_level: str | None = None,
        tasks: bool = True,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        if era not in ERAS:
            raise ValueError(f"era must be one of {', '.join(ERAS)}, not {era!r}")
        if protocol_version is not None and protocol_version not in LEGACY_VERSIONS + MODERN_VERSIONS:
            raise ValueError(
                f"protocol_version must be one of {', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}, not {protocol_version!r}"
            )
        if (
            protocol_version is not None
            and era != "auto"
            and (protocol_version in MODERN_VERSIONS) != (era == "modern")
        ):
            raise ValueError(f"protocol_version {protocol_version!r} does not belong to the {era} era")
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}, not {log_level!r}")
        self.client_info = {"name": name, "version": version}
        self.era = era
        self.protocol_version = protocol_version
        self.sampling = sampling
        self.elicitation, self.elicitation_modes = elicitation, tuple(elicitation_modes)  # modes: what it declares
        self.roots = roots
        self.on_log = on_log
        self.log_level = log_level
        self.tasks = tasks  # declare the tasks extension (2026-07-28) and follow task handles
        if extensions is not None and not isinstance(extensions, dict):
            raise TypeError(f"Client(extensions=...) takes a dict of identifier to settings, not {extensions!r}")
        # {id: settings}: capabilities.extensions, both eras
        self.extensions = {k: checked_extension(k, v, "Client(extensions=...)") for k, v in (extensions or {}).items()}
        self._metas: dict[tuple[str, str], dict[str, Any]] = {}  # (version, level) -> modern_meta's answer

    def _capabilities(self, rules: Rules) -> dict[str, Any]:
        """The ClientCapabilities this client declares under ``rules``."""
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {} if rules.stateless else {"listChanged": True}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None and rules.elicitation:  # {}: form only; modes named since 2025-11-25
            modes = self.elicitation_modes
            caps["elicitation"] = {m: {} for m in modes} if rules.icons and modes != ("form",) else {}
        extensions: dict[str, Any] = {TASKS_EXTENSION: {}} if self.tasks and rules.tasks_extension else {}
        extensions.update(self.extensions)
        if extensions:
            caps["extensions"] = extensions
        return caps

    def versions(self) -> tuple[str, str]:
        """(legacy version, modern version) to ask for, from ``protocol_version``."""
        wanted = self.protocol_version
        return (wanted if wanted in LEGACY_VERSIONS else LATEST_LEGACY, wanted if wanted in MODERN_VERSIONS else LATEST)

    def starts_legacy(self, remembered: str | None) -> bool:
        """Whether a connection starts with ``initialize`` (no ``server/discover`` probe): the
        legacy era asked for, by name or by version, or ``remembered`` (ERA_CACHE) for the server."""
        if self.era != "auto":
            return self.era == LEGACY
        return self.protocol_version in LEGACY_VERSIONS or remembered == LEGACY

    def initialize_params(self, version: str) -> dict[str, Any]:
        """The params of ``initialize`` asking for ``version``."""
        return {
            "protocolVersion": version,
            "capabilities": self._capabilities(RULES[version]),
            "clientInfo": self.client_info,
        }

    def modern_meta(self, version: str, level: str | None) -> dict[str, Any]:
        """The 2026-07-28 per-request ``_meta`` for ``version``. ``level``: the log level set (None:
        ``"debug"`` for an ``on_log`` callback, which wants them all, or else the level the
        ``mcpio.server`` logger lets through, where the logs go by default). Shared: never changed
        by its callers (they copy it into the params they send)."""
        if level is None:
            if self.on_log is not None:
                level = "debug"
            else:
                from ._handlers import forwarded_level  # logging: not for a gateway's upstream

                level = forwarded_level()
        meta = self._metas.get((version, level))
        if meta is None:  # built once: what it holds is the constructor's (set_roots keeps roots declared)
            meta = self._metas[version, level] = {
                META_PROTOCOL_VERSION: version,
                META_CLIENT_CAPABILITIES: self._capabilities(RULES[version]),
                META_CLIENT_INFO: self.client_info,
                META_LOG_LEVEL: level,
            }
        return meta

    def opening(self, remembered: str | None) -> tuple[str, dict[str, Any]]:
        """The first request of a connection (method, params): ``initialize`` when it
        :meth:`starts_legacy`, else ``server/discover`` (the probe, or the modern start)."""
        legacy, modern = self.versions()
        if self.starts_legacy(remembered):
            return "initialize", self.initialize_params(legacy)
        return "server/discover", {"_meta": dict(self.modern_meta(modern, self.log_level))}


#: The ``Client`` options :class:`Declaring` takes (its keyword-only parameters).
DECLARING = frozenset(Declaring.__init__.__code__.co_varnames[1 : 1 + Declaring.__init__.__code__.co_kwonlyargcount])


def send_first(process: subprocess.Popen[bytes] | None, options: Mapping[str, Any]) -> None:
    """Write into ``process``'s stdin (from ``_spawn.spawn``; None: nothing to do) the first
    request ``Client(..., process=process, **options)`` will send, framed and numbered as its
    connection sends it (its first id), for its transport not to send again. Only when that
    request is certain: the era cache (read when the Client connects) cannot change it, i.e. no
    server is remembered as legacy, or the options decide alone. Nothing is written to a process
    that cannot take it (it exited: the Client says so)."""
    if process is None:
        return
    try:
        declaring = Declaring(**{k: v for k, v in options.items() if k in DECLARING})
    except (ValueError, TypeError):  # options the Client refuses: it says so when it is made, as without this
        return
    if declaring.starts_legacy(None) != declaring.starts_legacy(LEGACY if LEGACY in ERA_CACHE.values() else None):
        return
    method, params = declaring.opening(None)
    _, message = Connection("client").request(method, params)  # a client connection's first request
    send_ahead(process, rpc.encode(message))
