"""``ResponseCache``: answers kept for a while and handed out again, never across principals.

What is cached (``methods``): ``tools/list``, ``resources/read`` and ``tools/call`` of tools
annotated ``readOnlyHint: true`` by default; any of the cacheable methods
(``_versions.CACHEABLE_METHODS``) may be named. Only complete answers are kept: no error, no
``isError`` tool result, no task, no ``input_required`` round.

The key: the method, the params without ``_meta``, the protocol version, the client's
capabilities and its ``clientInfo`` (a handler may shape its answer by each: in 2026-07-28 they
travel in each request's ``_meta``), and, when the answer is private, who asked
(:func:`._identity.audience`: the principal, a legacy session, the credentials sent without auth;
and the token's scopes). The rest of ``_meta`` is left out: per-request ids (``progressToken``,
trace context) must not split the cache, and the log level changes no answer (a hit runs no
handler, so it sends no log or progress notification, whatever ``logLevel`` asks). The scope is the server's own hint, the one
it sends in the 2026-07-28 era (``cacheScope``): the result's when the handler set one (a resource's
``cache_scope=``, a list filtered by the caller's scopes), else the resource's, else
``Server(cache_scope=)`` ("private" by default); a tool call is always private. A private answer
is only ever served to the caller it was made for. The time-to-live is ``ttl``, shortened by the
result's or the resource's ``ttlMs`` (0: not cached); a hit served with a ``ttlMs`` carries what is
left of it.

Invalidated by the server's own changes (``server.registry.watchers``): a tools / resources /
prompts list change drops the answers of that kind (and ``server/discover``), here or announced
by another process on the state backend's bus; ``notifications/resources/updated`` drops the reads
of that URI; an answer whose making overlapped a change is not kept. The cache is per process (bounded: ``max_entries``, least recently used first).
Every answer handed out is a copy: whoever edits it (a middleware outside, the era's decorations)
never changes what is kept.
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._server._middleware import _copy
from .._versions import CACHEABLE_METHODS
from . import _identity

if TYPE_CHECKING:
    from .._server._middleware import CallNext, Request
    from .._server._server import Server

DEFAULT_METHODS = ("tools/list", "resources/read", "tools/call")
_LISTS = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
# What a change of each kind makes stale (a list change is told as its kind).
_STALE = {
    "tools": {"tools/list", "tools/call", "server/discover"},
    "resources": {"resources/list", "resources/templates/list", "resources/read", "server/discover"},
    "prompts": {"prompts/list", "server/discover"},
}


class ResponseCache:
    """Middleware: serve repeated requests from a per-process cache (see the module docstring
    and docs/guides/middleware.md). ``ttl``: seconds an answer is kept at most."""

    def __init__(self, ttl: float = 60.0, *, methods: Iterable[str] = DEFAULT_METHODS, max_entries: int = 1000) -> None:
        if not ttl > 0:
            raise ValueError(f"ttl must be more than 0 seconds, not {ttl!r}")
        methods = frozenset([methods] if isinstance(methods, str) else methods)
        unknown = methods - CACHEABLE_METHODS - {"tools/call"}
        if unknown:
            raise ValueError(
                f"ResponseCache cannot cache {', '.join(sorted(unknown))}: only tools/call (read-only tools) "
                f"and {', '.join(sorted(CACHEABLE_METHODS))}"
            )
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries!r}")
        self.ttl = float(ttl)
        self.methods = methods
        self.max_entries = max_entries
        # key -> (expires at, result, method, uri); oldest use first. Changes come from any thread.
        self._entries: dict[tuple[Any, ...], tuple[float, dict[str, Any], str, str | None]] = {}
        self._lock = threading.Lock()
        self._servers: weakref.WeakKeyDictionary[Server, int] = weakref.WeakKeyDictionary()  # -> its number
        self._numbers = itertools.count()
        self._generations: dict[int, int] = {}  # server number -> changes heard (see __call__)
        self.hits = self.misses = 0

    def __repr__(self) -> str:
        return f"ResponseCache(ttl={self.ttl:g}, methods={sorted(self.methods)})"

    def clear(self) -> None:
        """Forget every answer."""
        with self._lock:
            self._entries.clear()

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        method = request.method
        if method not in self.methods:
            return await call_next(request)
        ctx = request.context
        server = ctx.server
        if method == "tools/call" and not _read_only(server, request):
            return await call_next(request)
        number = self._servers.get(server)
        if number is None:
            number = self._watch(server)
        params = {k: v for k, v in request.params.items() if k != "_meta"}
        client = (_frozen(ctx.client_capabilities), _frozen(ctx.client_info))
        base = (number, method, ctx.protocol_version, _frozen(params), client)
        private = (*base, _identity.audience(ctx), _scopes(ctx))
        now = time.monotonic()
        found = self._get(private, now) or self._get(base, now)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        generation = self._generations.get(number, 0)
        result = await call_next(request)
        if not _complete(result) or "task" in params:
            return result
        scope, ttl = _hints(server, method, request, result, self.ttl)
        if ttl > 0:
            uri = request.name if method == "resources/read" else None
            with self._lock:
                if self._generations.get(number, 0) != generation:
                    return result  # the server changed while this was computed: it may be stale already
                self._entries[private if scope != "public" else base] = (now + ttl, _copy(result), method, uri)
                while len(self._entries) > self.max_entries:
                    del self._entries[next(iter(self._entries))]
        return result

    def _get(self, key: tuple[Any, ...], now: float) -> dict[str, Any] | None:
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None or entry[0] <= now:
                return None
            self._entries[key] = entry  # the most recently used
        result: dict[str, Any] = _copy(entry[1])
        if isinstance(result.get("ttlMs"), int):  # what is left of the freshness the server promised
            result["ttlMs"] = min(result["ttlMs"], int((entry[0] - now) * 1000))
        return result

    def _watch(self, server: Server) -> int:
        """Number ``server`` (its entries' keys start with it) and hear of its changes."""
        number = self._servers[server] = next(self._numbers)
        server.registry.watchers.append(lambda kind, uri: self._changed(number, kind, uri))
        return number

    def _changed(self, number: int, kind: str, uri: str | None) -> None:
        stale = _STALE.get(kind, ())
        with self._lock:
            self._generations[number] = self._generations.get(number, 0) + 1
            for key in [k for k, e in self._entries.items() if k[0] == number and _is_stale(e, stale, kind, uri)]:
                del self._entries[key]


def _is_stale(entry: tuple[float, dict[str, Any], str, str | None], stale: Any, kind: str, uri: str | None) -> bool:
    if kind == "resources/updated":
        return entry[2] == "resources/read" and entry[3] == uri
    return entry[2] in stale


def _read_only(server: Server, request: Request) -> bool:
    tool = server.registry.tools.get(request.name or "")
    annotations = getattr(tool, "annotations", None)
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def _complete(result: Any) -> bool:
    return (
        isinstance(result, dict)
        and result.get("resultType", "complete") == "complete"
        and not result.get("isError")
        and "task" not in result
    )


def _scopes(ctx: Any) -> tuple[str, ...]:
    info = ctx.auth
    return tuple(sorted(info.scopes)) if info is not None else ()


def _hints(server: Server, method: str, request: Request, result: dict[str, Any], ttl: float) -> tuple[str, float]:
    """The answer's cache scope and how long to keep it: the server's hints (module docstring)."""
    scope, ttl_ms = result.get("cacheScope"), result.get("ttlMs")
    if method == "resources/read" and (scope is None or ttl_ms is None):
        found = server.find_resource(request.name or "")
        if found is not None:
            scope = scope if scope is not None else found[0].cache_scope
            ttl_ms = ttl_ms if ttl_ms is not None else found[0].ttl_ms
    if method == "tools/call":
        scope = "private"
    elif scope is None:
        from .._server._handlers import private_listing

        scope = "private" if method in _LISTS and private_listing(server) else server.cache_scope
    if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) and ttl_ms >= 0:
        ttl = min(ttl, ttl_ms / 1000)
    return ("public" if scope == "public" else "private"), ttl


def _frozen(value: Any) -> Any:
    """``value`` (JSON-like) as a hashable key: dicts as sorted item tuples, lists as tuples."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("[", *(_frozen(v) for v in value))
    if isinstance(value, float | int | str | bool) or value is None:
        return (type(value).__name__, value)
    return ("?", repr(value))
