"""What a callable declares, read as ``inspect`` and ``typing`` read it (layer 0, pure): the object
carrying its annotations, its name, docstring and async-ness (:func:`unwrap`), its parameters
(:func:`parameters`) and type hints (:func:`type_hints`).

A plain Python function with nothing in its ``__dict__`` (nothing ``inspect`` would follow or
mark: ``__wrapped__``, ``__signature__``, a partialmethod or coroutine marker) is read straight
from its code object and annotations, giving the same results faster: a server may register
hundreds of tools before it answers ``initialize``. tests/unit: test_schema.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

__all__ = [
    "EMPTY",
    "KEYWORD_ONLY",
    "POSITIONAL_ONLY",
    "VAR_KEYWORD",
    "VAR_POSITIONAL",
    "injection",
    "parameters",
    "type_hints",
    "unwrap",
]


class EMPTY:
    """No default value, no annotation: what ``inspect.Parameter.empty`` marks."""


# ``inspect`` is not imported on the stdio start-up path (~32 M instructions, 0.4x the
# floor's whole cold start, where msgspec does not import it through typing_extensions), so the
# parameter kinds are ``inspect._ParameterKind``'s values as plain ints (it is an IntEnum: they
# compare equal) and the code flags are CPython's (``inspect.CO_*``, Include/cpython/code.h).
POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = range(5)
CO_VARARGS, CO_VARKEYWORDS, CO_COROUTINE = 0x04, 0x08, 0x80
_FUNCTION = types.FunctionType


def _signature(fn: Any) -> list[tuple[str, int, Any]]:
    """What ``inspect.signature`` lists, in this module's terms (callables that are not plain functions)."""
    import inspect  # not at start-up: a plain function never needs it

    empty = inspect.Parameter.empty
    return [
        (p.name, int(p.kind), EMPTY if p.default is empty else p.default)
        for p in inspect.signature(fn).parameters.values()
    ]


def unwrap(fn: Any) -> tuple[Any, str, str | None, bool]:
    """(object carrying the annotations, default name, docstring, is_async) of a callable.

    A plain function with an empty ``__dict__`` (nothing ``inspect`` would follow or mark) is
    async iff its code says so: what ``inspect.iscoroutinefunction`` reads, without its unwrapping
    (registration; tests/unit: test_schema)."""
    f = fn
    if type(f) is _FUNCTION and not f.__dict__:
        return f, f.__name__ or type(f).__name__, f.__doc__, bool(f.__code__.co_flags & CO_COROUTINE)
    import inspect  # not at start-up: a plain function never needs it

    while isinstance(f, functools.partial):
        f = f.func
    if inspect.isroutine(f) or isinstance(f, type):
        name = str(getattr(f, "__name__", None) or type(f).__name__)
        return f, name, f.__doc__, inspect.iscoroutinefunction(f)
    call = type(f).__call__  # a callable object
    return call, type(f).__name__, getattr(call, "__doc__", None) or type(f).__doc__, inspect.iscoroutinefunction(call)


def type_hints(target: Any) -> dict[str, Any]:
    """``typing.get_type_hints(target, include_extras=True)``. The annotations of a plain function
    (empty ``__dict__``: no ``__wrapped__`` to follow) that are all plain classes are its hints as
    they are: nothing to evaluate (registration; tests/unit: test_schema)."""
    if type(target) is _FUNCTION and not target.__dict__:
        annotations = target.__annotations__
        for v in annotations.values():  # a loop, not all(<genexpr>): ~5 k instructions less a tool
            if type(v) is not type:
                break
        else:
            return dict(annotations)
    return typing.get_type_hints(target, include_extras=True)


def parameters(fn: Any) -> list[tuple[str, int, Any]]:
    """(name, kind, default) of each parameter of ``fn``, as ``inspect.signature(fn)`` lists them.

    A plain Python function with nothing in its ``__dict__`` (no ``__wrapped__``, ``__signature__``
    or partialmethod marker that ``inspect`` would follow) is read straight from its code object:
    building ``Signature`` and ``Parameter`` objects was a quarter of a tool's registration, and a
    server may register hundreds before it answers ``initialize``. The same result
    (tests/unit: test_schema)."""
    if type(fn) is not _FUNCTION or fn.__dict__:
        return _signature(fn)
    code = fn.__code__
    flags = code.co_flags
    npos, nkw, nposonly = code.co_argcount, code.co_kwonlyargcount, code.co_posonlyargcount
    names = code.co_varnames[: npos + nkw + bool(flags & CO_VARARGS) + bool(flags & CO_VARKEYWORDS)]
    if not all(map(str.isidentifier, names)):  # e.g. a comprehension's ".0": inspect's rules
        return _signature(fn)
    defaults = fn.__defaults__ or ()
    first_default = npos - len(defaults)
    out: list[tuple[str, int, Any]] = []  # loops, not comprehensions: a frame less each
    for i in range(npos):
        kind = POSITIONAL_ONLY if i < nposonly else POSITIONAL_OR_KEYWORD
        out.append((names[i], kind, defaults[i - first_default] if i >= first_default else EMPTY))
    at = npos + nkw
    if flags & CO_VARARGS:
        out.append((names[at], VAR_POSITIONAL, EMPTY))
        at += 1
    if nkw:
        kwdefaults = fn.__kwdefaults__ or {}
        for name in names[npos : npos + nkw]:
            out.append((name, KEYWORD_ONLY, kwdefaults.get(name, EMPTY)))
    if flags & CO_VARKEYWORDS:
        out.append((names[at], VAR_KEYWORD, EMPTY))
    return out


def injection(hint: Any, default: Any, injected: tuple[type, ...]) -> Any:
    """How the framework supplies a parameter annotated ``hint`` with ``default``, or None (it is
    an argument of the schema): True when its type is one of ``injected`` (or Optional of one: a
    ``Context``); else the marker object — an instance of one of ``injected`` — that is its
    default or part of its ``Annotated`` metadata (``db: DB = Depends(get_db)``,
    ``db: Annotated[DB, Depends(get_db)]``)."""
    if isinstance(default, injected):
        return default
    if type(hint) is type:  # a plain class (most hints): no typing construct to look into
        return True if issubclass(hint, injected) else None
    if typing.get_origin(hint) is typing.Annotated:
        base, *extras = typing.get_args(hint)
        for extra in extras:
            if isinstance(extra, injected):
                return extra
        hint = base
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # Optional[Context]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 else None
        if typing.get_origin(hint) is typing.Annotated:
            hint = typing.get_args(hint)[0]
    hint = typing.get_origin(hint) or hint
    return True if isinstance(hint, type) and issubclass(hint, injected) else None
