"""Module loggers that import :mod:`logging` only when first used.

``logging`` (with ``traceback``, ``string``, ``threading``...) is ~19 M instructions of a stdio
server's ~210 M to its first answer, and the modules loaded before that answer log only on rare
paths. A module writes ``log = _log.logger("mcpio.server", globals())``: while ``logging`` is not
imported yet that is a stand-in which, at its first attribute use, imports ``logging``, runs
what :func:`configure` deferred, rebinds the module's ``log`` to ``logging.getLogger(name)`` and
forwards; afterwards the module uses the real logger directly (nothing on hot paths). Once
``logging`` is imported (by the user, asyncio...) :func:`logger` returns the real one at once.
Names, levels and handlers are those of ``logging.getLogger(name)``: nothing else changes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import logging

_pending: list[Callable[[], None]] = []  # configure()'s functions, run when logging loads


def logger(name: str, namespace: dict[str, Any], var: str = "log") -> logging.Logger:
    """``logging.getLogger(name)``, or a stand-in that becomes it (``namespace[var]`` is rebound)
    at its first use when ``logging`` is not imported yet."""
    if "logging" in sys.modules:
        return cast("logging.Logger", sys.modules["logging"].getLogger(name))
    return cast("logging.Logger", _Deferred(name, namespace, var))


def configure(fn: Callable[[], None]) -> None:
    """Run ``fn`` (it sets up handlers) now if ``logging`` is imported, else right before the first
    use of a deferred logger or at :func:`load`, whichever comes first."""
    if "logging" in sys.modules:
        load()  # what was deferred before runs first: configurations apply in the order asked
        fn()
    else:
        _pending.append(fn)


def load() -> None:
    """Import ``logging`` and run what :func:`configure` deferred (e.g. after a first answer)."""
    import logging  # noqa: F401  (the import is the point)

    while _pending:
        _pending.pop(0)()


class _Deferred:
    __slots__ = ("_name", "_namespace", "_var")

    def __init__(self, name: str, namespace: dict[str, Any], var: str) -> None:
        self._name, self._namespace, self._var = name, namespace, var

    def __getattr__(self, attr: str) -> Any:
        load()
        real = sys.modules["logging"].getLogger(self._name)
        if self._namespace.get(self._var) is self:
            self._namespace[self._var] = real
        return getattr(real, attr)

    def __repr__(self) -> str:
        return f"<logger {self._name} (logging not loaded yet)>"


def to_stderr() -> None:
    """A server's logging: the ``mcpio`` loggers to stderr at ``MCPIO_LOG_LEVEL`` (WARNING), unless
    the application gave them a handler. For :func:`configure`, when serving starts."""
    import logging
    import os

    root = logging.getLogger("mcpio")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(os.environ.get("MCPIO_LOG_LEVEL", "WARNING").upper())
