""" "Did you mean": the one rule for suggesting a name close to a misspelt one (layer 0, pure).

Used wherever a name is refused — an unknown tool or argument in the server's error messages,
the command line's unknown tools and arguments — and to keep CPython's own suggestion of an
``AttributeError`` or ``NameError`` in the one-line summaries of a user's exception (CPython adds
it only when it prints a whole traceback, so ``str(exc)`` lacks it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


def close_to(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` when one is close enough, else None."""
    import difflib  # on the error path only (cold start)

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a choice is close to ``word``, else ``""``. The choices that
    are ``word`` under a namespace (``math__add`` for ``add``: the naming rule of a mount or a
    gateway, :mod:`mcpio._naming`) come first, all of them (``'a__add' or 'b__add'``)."""
    from ._naming import SEPARATOR

    choices = list(choices)
    namespaced = [c for c in choices if c.endswith(SEPARATOR + word) and len(c) > len(word) + len(SEPARATOR)]
    if namespaced and SEPARATOR not in word:
        return f" (did you mean {' or '.join(repr(c) for c in namespaced)}?)"
    close = close_to(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, with CPython's ``. Did you mean: 'x'?`` for an AttributeError or NameError
    when a name is close (the suggestion CPython prints with a traceback)."""
    text = str(exc)
    name = getattr(exc, "name", None)
    if not isinstance(exc, (AttributeError, NameError)) or not isinstance(name, str) or "Did you mean" in text:
        return text
    close = _cpython_suggestion(exc) if sys.version_info >= (3, 12) else None
    if close is None:
        close = close_to(name, _names_near(exc))
    return f"{text}. Did you mean: {close!r}?" if close and close != name else text


def _cpython_suggestion(exc: BaseException) -> str | None:
    """CPython's own suggestion (3.12+: ``traceback`` computes it)."""
    import traceback

    try:
        last = list(traceback.TracebackException.from_exception(exc).format_exception_only())[-1]
    except Exception:
        return None
    _, found, rest = last.rpartition("Did you mean: ")
    return rest.strip().rstrip("?").strip("'\"") or None if found else None


def _names_near(exc: BaseException) -> list[str]:
    """The names the missing one may have meant: the object's attributes (AttributeError), or
    what the failing frame could see (NameError: its locals, globals and the builtins)."""
    if isinstance(exc, AttributeError):
        try:
            return [n for n in dir(getattr(exc, "obj", None)) if not n.startswith("__")]
        except Exception:
            return []
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return []
    frame: Any = tb.tb_frame
    return [*frame.f_locals, *frame.f_globals, *dir(frame.f_builtins)]
