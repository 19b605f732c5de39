"""Middleware: code that runs around every client request, on every transport (stdio too:
audit, auth gating and rate limits are not an HTTP-only matter).

``@server.middleware`` registers ``async def mw(request, call_next)``; the first registered is
the outermost. ``request`` is a :class:`Request` (method, params, name, arguments, the
Context); ``await call_next(request)`` runs the rest of the chain and the method's handler and
returns its result (a dict) as the middleware's own copy, which it may inspect, change in place
or replace without changing anything the server keeps (cached tool definitions). To refuse a
request, raise :class:`~mcpio.MCPError` (a JSON-RPC error) — or, for ``tools/call``,
:class:`~mcpio.ToolError`, which becomes an ``isError`` result the model can read (a rate limit,
say). ``request.params`` may be replaced before ``call_next`` (it is the handler's input).

Middleware sees requests after the protocol layer admitted them (lifecycle, version, ``_meta``)
and before the era's result decorations (``resultType``, ``_meta`` serverInfo) are added.
Notifications do not pass through it. With no middleware registered nothing of this runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import _log
from ._tools import ToolError

if TYPE_CHECKING:
    from ._context import Context

log = _log.logger("mcpio.server", globals())

CallNext = Callable[["Request"], Awaitable[dict[str, Any]]]
Middleware = Callable[["Request", CallNext], Awaitable[dict[str, Any]]]


class Request:
    """One client request as middleware sees it."""

    __slots__ = ("context", "method", "params")

    def __init__(self, method: str, params: dict[str, Any], context: Context) -> None:
        self.method = method
        self.params = params
        self.context = context

    @property
    def name(self) -> str | None:
        """The tool or prompt name (``tools/call``, ``prompts/get``) or resource URI (``resources/read``)."""
        value = self.params.get("name", self.params.get("uri"))
        return value if isinstance(value, str) else None

    @property
    def arguments(self) -> dict[str, Any]:
        value = self.params.get("arguments")
        return value if isinstance(value, dict) else {}

    @property
    def client(self) -> dict[str, Any]:
        """The client's ``clientInfo`` (name, version) as it declared it."""
        return self.context.client_info

    def __repr__(self) -> str:
        return f"<Request {self.method}" + (f" {self.name!r}" if self.name else "") + ">"


def check_middleware(fn: Any) -> None:
    import inspect  # not at start-up: only a server with middleware registers one

    if not callable(fn) or not (
        inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 - the bound method
    ):
        raise TypeError(f"middleware must be an async function (request, call_next) -> result, not {fn!r}")


def build_chain(middleware: list[Middleware], innermost: CallNext) -> CallNext:
    """``innermost`` wrapped by each middleware, the first registered outermost; what the
    handler returns reaches them as a copy (module docstring)."""

    async def copied(request: Request) -> dict[str, Any]:
        result: dict[str, Any] = _copy(await innermost(request))
        return result

    call: CallNext = copied
    for mw in reversed(middleware):
        call = _link(mw, call)
    return call


def _copy(value: Any) -> Any:
    """A copy of ``value`` (a result: JSON-like dicts and lists; other values are kept as they are)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def _link(mw: Middleware, nxt: CallNext) -> CallNext:
    async def step(request: Request) -> dict[str, Any]:
        try:
            return await mw(request, nxt)
        except ToolError as exc:  # a refused tool call is a result the model reads, here and outward
            if request.method != "tools/call":
                raise
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}

    return step


async def run_hook(hook: Callable[..., Any], ctx: Context, params: dict[str, Any]) -> None:
    """Run a notification hook (``@server.on_notification``), sync or async; its failure is logged."""
    import asyncio  # loaded: hooks run on the loop

    try:
        r = hook(ctx, params)
        if asyncio.iscoroutine(r):
            await r
    except Exception:
        log.exception("notification hook %r failed", getattr(hook, "__name__", hook))
