"""Dependencies: a handler parameter whose value a *provider* makes, once per call.

``db: DB = Depends(get_db)`` or ``db: Annotated[DB, Depends(get_db)]`` in a tool, resource or
prompt function: the parameter is left out of the input schema (``_schema.analyze_function``
finds it through ``_callables.injection``, the mechanism that finds a ``Context`` parameter) and
filled per call with what ``get_db`` gives. A provider may be

* a function (its return value), run on the event loop: keep it quick, or make it async;
* an ``async def`` (awaited);
* a generator or async generator function, or a (async) context manager factory
  (``@contextmanager``, ``@asynccontextmanager``, a class with ``__enter__``/``__aenter__``):
  the value is what it yields / what entering gives, and it is closed after the call — when the
  handler returned, raised (the exception is thrown in at the ``yield``) or was cancelled.

A provider's own parameters are a ``Context``, other ``Depends(...)`` (a graph: each provider
runs once per call however many parameters ask for it) and parameters with a default (left
alone); anything else is a TypeError at registration naming the provider and the parameter.

Everything about a function's dependencies is decided at registration: a function with none is
called exactly as before (:func:`wrap` is not involved; a plain sync tool stays on the
synchronous answer path, ``_answer``). One with dependencies is wrapped in an async function
that takes the Context, resolves the graph (compiled on first call, and again after
``Server.override`` changed something), calls the original and closes what needs closing.

2026-07-28 (MRTR): a provider that asks the client (``await ctx.elicit(...)``) ends the round
like the handler would; the client's retry runs the handler again, and with it every provider:
a provider runs once per *round*, not once per logical call (as the handler does).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from .._callables import EMPTY, VAR_KEYWORD, VAR_POSITIONAL, injection, parameters, type_hints, unwrap
from ._context import Context

if TYPE_CHECKING:
    from .._schema import FunctionSignature
    from ._registry import Registry

__all__ = ["INJECTED", "Dependency", "Depends", "Overrides", "wrap"]

_CALL, _AWAIT, _ENTER, _AENTER = range(4)  # how a provider gives its value
_CTX = -1  # an argument source: the call's Context
CONTEXT_PARAM = "__mcpio_context__"  # the wrapper's one injected parameter


class Dependency:
    """The marker :func:`Depends` puts on a parameter: the provider that makes its value."""

    __slots__ = ("provider",)

    def __init__(self, provider: Callable[..., Any]) -> None:
        if not callable(provider):
            raise TypeError(f"Depends() needs a callable provider, not {provider!r}")
        self.provider = provider

    def __repr__(self) -> str:
        return f"Depends({getattr(self.provider, '__qualname__', self.provider)!r})"


def Depends(provider: Callable[..., Any]) -> Any:  # typed Any: `db: DB = Depends(get_db)` type-checks
    """Mark a parameter as made by ``provider`` for each call (docs: dependencies).

    ``db: DB = Depends(get_db)`` or ``db: Annotated[DB, Depends(get_db)]``; the parameter is not
    part of the input schema. ``provider`` is a function, an ``async def``, a (async) generator
    function or context manager factory, whose own parameters may be a ``Context`` and other
    ``Depends(...)``. ``server.override(get_db, fake)`` replaces it (tests); ``mcpio.deps`` has
    ready-made ones."""
    return Dependency(provider)


INJECTED = (Context, Dependency)  # what analyze_function is told the framework supplies


class Overrides:
    """A server's provider replacements (``Server.override``); ``version`` changes with each."""

    __slots__ = ("map", "version")

    def __init__(self) -> None:
        self.map: dict[Any, Callable[..., Any]] = {}
        self.version = 0

    def set(self, provider: Callable[..., Any], replacement: Callable[..., Any]) -> _Undo:
        if not callable(replacement):
            raise TypeError(f"override({provider!r}, …): the replacement must be callable, not {replacement!r}")
        had = provider in self.map
        before = self.map.get(provider)
        self.map[provider] = replacement
        self.version += 1
        return _Undo(self, provider, had, before)


class _Undo:
    """What ``Server.override`` returns: ``.undo()`` (or leaving its ``with`` block) restores
    what was there before."""

    def __init__(self, owner: Overrides, provider: Any, had: bool, before: Any) -> None:
        self._owner, self._provider, self._had, self._before = owner, provider, had, before

    def undo(self) -> None:
        owner = self._owner
        if self._had:
            owner.map[self._provider] = self._before
        else:
            owner.map.pop(self._provider, None)
        owner.version += 1

    def __enter__(self) -> _Undo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()


def override(registry: Registry, provider: Callable[..., Any], replacement: Callable[..., Any]) -> _Undo:
    """``Server.override``: the registry's :class:`Overrides`, made at the first."""
    if registry.overrides is None:
        registry.overrides = Overrides()
    return registry.overrides.set(provider, replacement)


def _kind(fn: Any) -> tuple[int, Any]:
    """How ``fn`` gives its value (``_CALL`` … ``_AENTER``) and what to call for it (a generator
    function becomes its context manager factory), decided once per plan."""
    import inspect

    target = fn.func if isinstance(fn, functools.partial) else fn
    if inspect.isasyncgenfunction(target):
        return _AENTER, contextlib.asynccontextmanager(fn)
    if inspect.isgeneratorfunction(target):
        return _ENTER, contextlib.contextmanager(fn)
    if isinstance(target, type):
        if hasattr(target, "__aenter__"):
            return _AENTER, fn
        if hasattr(target, "__enter__"):
            return _ENTER, fn
    wrapped = inspect.unwrap(target)
    if wrapped is not target and inspect.isasyncgenfunction(wrapped):  # @asynccontextmanager
        return _AENTER, fn
    if wrapped is not target and inspect.isgeneratorfunction(wrapped):  # @contextmanager
        return _ENTER, fn
    return (_AWAIT if unwrap(fn)[3] else _CALL), fn


def _arguments(provider: Any) -> list[tuple[str, Any]]:
    """(parameter, Context class or Depends) of each parameter of ``provider`` it needs filled."""
    name = getattr(provider, "__qualname__", None) or repr(provider)
    try:
        params = parameters(provider)
        target = getattr(provider, "__init__") if isinstance(provider, type) else unwrap(provider)[0]  # noqa: B009
        hints = type_hints(target)
    except Exception as exc:
        raise TypeError(f"provider {name}(): cannot read its signature ({type(exc).__name__}: {exc})") from None
    out: list[tuple[str, Any]] = []
    for pname, kind, default in params:
        if kind in (VAR_POSITIONAL, VAR_KEYWORD):
            continue
        how = injection(hints.get(pname, Any), default, INJECTED)
        if how is True:
            out.append((pname, Context))
        elif how is not None:
            out.append((pname, how))
        elif default is EMPTY:
            raise TypeError(
                f"provider {name}(): parameter {pname!r} is neither a Context nor a Depends(…) and has no "
                "default; a provider gets only the call's Context and other providers' values"
            )
    return out


class _Plan:
    """A function's dependency graph, in the order to run it: ``steps`` of (kind, provider,
    ((argument, source), …)) where a source is ``_CTX`` or an earlier step's index, and
    ``outputs`` ((parameter, step), …). ``closing``: some step needs closing after the call."""

    __slots__ = ("closing", "now", "outputs", "overrides", "steps", "version")

    def __init__(self, provided: dict[str, Any], overrides: Overrides | None) -> None:
        self.overrides, self.version = overrides, overrides.version if overrides is not None else 0
        replace = overrides.map if overrides is not None else {}
        index: dict[Any, int] = {}
        steps: list[tuple[int, Any, tuple[tuple[str, int], ...]]] = []
        visiting: set[Any] = set()

        def step(marker: Dependency) -> int:
            provider = marker.provider
            if provider in index:
                return index[provider]
            if provider in visiting:
                raise TypeError(f"dependency cycle through provider {provider!r}")
            visiting.add(provider)
            fn = replace.get(provider, provider)
            args = tuple((a, _CTX if how is Context else step(how)) for a, how in _arguments(fn))
            visiting.discard(provider)
            index[provider] = len(steps)
            steps.append((*_kind(fn), args))
            return index[provider]

        self.outputs = tuple((pname, step(marker)) for pname, marker in provided.items())
        self.steps = tuple(steps)
        self.closing = any(kind >= _ENTER for kind, _, _ in steps)
        self.now = all(kind == _CALL for kind, _, _ in steps)  # no awaiting: resolved by _resolve_now


def _resolve_now(plan: _Plan, ctx: Context) -> list[Any]:
    """:func:`_resolve` of a plan of plain functions (no coroutine: the common, cheapest case)."""
    values: list[Any] = []
    for _, fn, args in plan.steps:
        values.append(fn(**{a: ctx if src == _CTX else values[src] for a, src in args}) if args else fn())
    return values


async def _resolve(plan: _Plan, ctx: Context, stack: contextlib.AsyncExitStack | None) -> list[Any]:
    values: list[Any] = []
    for kind, fn, args in plan.steps:
        kw = {a: ctx if src == _CTX else values[src] for a, src in args} if args else {}
        if kind == _CALL:
            values.append(fn(**kw))
        elif kind == _AWAIT:
            values.append(await fn(**kw))
        elif kind == _ENTER:
            values.append(stack.enter_context(fn(**kw)))  # type: ignore[union-attr]  # plan.closing: a stack
        else:
            values.append(await stack.enter_async_context(fn(**kw)))  # type: ignore[union-attr]
    return values


_CLOSING: set[Any] = set()  # the tasks of _ThreadGuard.close_later (kept from the collector)


class _ThreadGuard:
    """A sync function with values to close, run in a worker thread, which nothing can stop.
    When its call ends early (cancelled, past its ``timeout``) the answer goes out at once, but
    the values it was given are closed only once its thread is done with them: a pooled
    connection is never handed back while the thread still uses it. ``abandon`` tells whether
    the thread has begun (it then defers the closing); a thread that had not begun never will."""

    __slots__ = ("_done", "_fn", "_lock", "_loop", "_state")

    def __init__(self, fn: Callable[..., Any]) -> None:
        import asyncio
        import threading

        self._fn, self._lock, self._state = fn, threading.Lock(), "waiting"  # -> running, done, abandoned
        self._loop, self._done = asyncio.get_running_loop(), asyncio.Event()

    def run(self, **kwargs: Any) -> Any:  # the worker thread (or the loop, when inlined)
        with self._lock:
            if self._state == "abandoned":
                return None  # nobody waits for it; its values are closed already
            self._state = "running"
        try:
            return self._fn(**kwargs)
        finally:
            with self._lock:
                self._state = "done"
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to close
                self._loop.call_soon_threadsafe(self._done.set)

    def abandon(self) -> bool:
        """The call ended early: whether the function is still running (else it never will)."""
        with self._lock:
            if self._state == "waiting":
                self._state = "abandoned"
            return self._state == "running"

    def close_later(self, stack: contextlib.AsyncExitStack) -> None:
        import asyncio

        async def close() -> None:
            await self._done.wait()
            try:
                await stack.aclose()
            except Exception:
                import logging

                logging.getLogger("mcpio.server").exception("a provider failed while closing after its tool's thread")

        task = asyncio.ensure_future(close())
        _CLOSING.add(task)
        task.add_done_callback(_CLOSING.discard)


def wrap(
    fn: Callable[..., Any], sig: FunctionSignature, name: str, inline: bool | None = None
) -> tuple[Callable[..., Any], FunctionSignature]:
    """``fn`` (with ``sig.provided`` dependencies) as an async function of the call's validated
    arguments plus the Context (its one injected parameter), and the signature to call it by.
    A sync ``fn`` then runs as a plain tool would (``inline``: ``_tools.invoke``)."""
    from ._tools import invoke

    provided = sig.provided
    inner = sig
    _Plan(provided, None)  # a bad graph is a TypeError at registration, not at the first call
    speed = None
    if not sig.is_async and inline is None:
        from ._inline import Speed

        speed = Speed(name)  # the sync function itself is inlined adaptively, as a plain tool
    on_loop = inline is True
    plan: list[_Plan] = []

    is_async, contexts = sig.is_async, sig.injected

    async def call(**kwargs: Any) -> Any:
        ctx: Context = kwargs.pop(CONTEXT_PARAM)
        overrides = ctx.server.registry.overrides
        current = plan[0] if plan else None
        if (
            current is None
            or current.overrides is not overrides
            or (overrides is not None and current.version != overrides.version)
        ):
            current = _Plan(provided, overrides)
            plan[:] = [current]
        if not current.closing:
            values = _resolve_now(current, ctx) if current.now else await _resolve(current, ctx, None)
            return await start(kwargs, values, current, ctx, fn)
        async with contextlib.AsyncExitStack() as stack:
            values = await _resolve(current, ctx, stack)
            if is_async or on_loop:
                return await start(kwargs, values, current, ctx, fn)
            guard = _ThreadGuard(fn)
            try:
                return await start(kwargs, values, current, ctx, guard.run)
            except BaseException:
                if guard.abandon():  # its thread still uses the values: closed when it ends
                    guard.close_later(stack.pop_all())
                raise

    def start(
        kwargs: dict[str, Any], values: list[Any], current: _Plan, ctx: Context, target: Callable[..., Any]
    ) -> Awaitable[Any]:
        """The call of ``target`` (``fn``) with its resolved values, to await (no frame of its own)."""
        for pname, i in current.outputs:
            kwargs[pname] = values[i]
        if is_async:  # what invoke does for it, without its frame
            for cname in contexts:
                kwargs[cname] = ctx
            return cast("Awaitable[Any]", target(**kwargs))
        return invoke(inner, target, kwargs, ctx, on_loop, speed)

    import copy

    outer = copy.copy(sig)
    outer.injected = [CONTEXT_PARAM]
    outer.is_async = True
    outer.provided = {}
    return call, outer
