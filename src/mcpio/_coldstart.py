"""Cold-start devices for the processes mcpio starts itself (``mcpio run``, ``python -m mcpio``):
never applied by ``import mcpio``, which only defines modules, so an application that imports
mcpio keeps its interpreter as it was.

:func:`import_msgspec` imports msgspec without letting it import typing_extensions, with uuid's
``platform`` a stand-in (:class:`_PlatformForUuid`) and without the ``compile()`` of msgspec's
feature probe (:class:`_ProbeCompile`); the command line calls it before it imports the server it
serves (and pauses the garbage collector: :mod:`mcpio._collector`). The figures are in
docs/evidence/benchmarks.md (cold start).
"""

from __future__ import annotations

import _thread
import builtins
import sys as _sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec


class _MsgspecImport:
    """The meta path finder of msgspec's import (see _import_msgspec), for one thread: it refuses
    ``typing_extensions``, and (on Linux) serves ``platform`` as a stand-in made for uuid."""

    thread = -1
    standin: object = None  # the stand-in served, if any

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if _thread.get_ident() != cls.thread:
            return None
        if name == "typing_extensions":
            raise ModuleNotFoundError("typing_extensions: not needed by msgspec on Python 3.11+")
        if name == "platform" and _sys.platform == "linux":
            return type(__spec__)("platform", cls)  # type: ignore[arg-type]  # a ModuleSpec, without importlib
        return None

    @classmethod
    def create_module(cls, spec: object) -> object:
        cls.standin = _PlatformForUuid("platform")
        return cls.standin

    @staticmethod
    def exec_module(module: object) -> None:
        pass


class _ProbeCompile:
    """``compile`` as ``typing`` sees it during msgspec's import (see :func:`import_msgspec`).

    msgspec's ``_utils`` probes at import whether ``typing.ForwardRef`` takes ``is_class`` by making
    ``ForwardRef("Foo", is_class=True)`` and dropping it; ForwardRef's constructor compiles its
    string, and the first ``compile()`` of a process builds the ast module's ~120 node classes
    (~9.4 M instructions, an eighth of a stdio server's start-up). For that one call (this
    thread, the source ``"Foo"`` in ``eval`` mode, made by ForwardRef for ``msgspec._utils``) it
    returns None, the dropped object's ``__forward_code__``: the probe sees its answer, the same
    as with the real compile. Any other call, from any thread, is the builtin's."""

    thread = -1

    @classmethod
    def compile(cls, source: object, filename: object, mode: str, *args: object, **kwargs: object) -> object:
        if (
            _thread.get_ident() == cls.thread
            and source == "Foo"
            and mode == "eval"
            and _sys._getframe(2).f_globals.get("__name__") == "msgspec._utils"
        ):
            return None
        return builtins.compile(source, filename, mode, *args, **kwargs)  # type: ignore[call-overload]


class _PlatformForUuid(type(_sys)):  # type: ignore[misc]  # a module
    """``platform`` as uuid's import reads it . uuid imports platform only
    to call ``platform.system()`` once, at import, telling Linux from AIX (CPython 3.11-3.13:
    nothing else of it, then or later); importing the real module costs ~8 M instructions (~2.5
    ms, 6 % of a stdio server's start-up: its module-level regular expressions), more than the
    rest of uuid. On Linux (``sys.platform == "linux"``), ``platform.system()`` is the kernel's
    ``uname`` name, as here. Any other name loads the real module, privately, and gives its
    attribute: a thread that imports platform during msgspec's import gets a working module.
    Out of ``sys.modules`` as soon as msgspec is imported: a later ``import platform`` loads the
    real one (tests/unit/test_msgspec_import.py)."""

    def system(self) -> str:
        import os
        import sys  # by this name: the type checker reads `sys.platform`, not an alias's

        if sys.platform != "linux":  # never served there (find_spec)
            raise AttributeError("system")
        return os.uname().sysname

    def __getattr__(self, name: str) -> object:
        if name[:2] == "__":  # the import system's look-ups (__loader__, __path__, ...), as on a module
            raise AttributeError(name)  # (so __version__ too: only in the window, only for another thread)
        real = self.__dict__.get("_real")
        if real is None:
            import importlib.machinery
            import importlib.util

            spec = importlib.machinery.PathFinder.find_spec("platform")
            assert spec is not None and spec.loader is not None
            real = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(real)
            self.__dict__["_real"] = real
        return getattr(real, name)


def import_msgspec() -> None:
    """``import msgspec`` without letting it import typing_extensions, with uuid's ``platform``
    a stand-in (:class:`_PlatformForUuid`), and without the ``compile()`` of its ForwardRef
    probe (:class:`_ProbeCompile`).

    msgspec's ``_utils`` takes ``get_type_hints``, ``Required`` and ``NotRequired`` from
    typing_extensions when it is installed, else from typing. On Python 3.11+ (mcpio's floor)
    they are the same: typing_extensions' ``Required``/``NotRequired`` *are* typing's, and its
    ``get_type_hints(..., include_extras=True)`` (the only call msgspec makes) returns
    ``typing.get_type_hints``'s result unchanged. Importing typing_extensions 4.x costs ~33 M
    instructions (~9 ms), half the floor server's whole start-up, in nearly every real
    environment (pydantic, httpx and most SDKs install it). Refused to this thread only, for the
    time of the import; an application that imports it later gets it as usual, and when it is
    already imported msgspec takes it as always (``sys.modules`` is read before any finder;
    tests/unit/test_msgspec_import.py). The stand-in is served only to an import of platform
    made during msgspec's (none when uuid or platform was imported before: both are then taken
    from ``sys.modules``)."""
    if "msgspec" in _sys.modules:
        return
    import typing

    finder = _MsgspecImport
    finder.thread = _thread.get_ident()
    finder.standin = None
    # New lists, never the one in place changed: another thread's import may be iterating it by
    # index, and an insert or remove would make it see a finder twice or skip one.
    _sys.meta_path = [finder, *_sys.meta_path]
    names = vars(typing)
    probe = "compile" not in names  # (typing defines no `compile` of its own: never replaced)
    if probe:
        _ProbeCompile.thread = finder.thread
        names["compile"] = _ProbeCompile.compile  # found before the builtin by typing's functions
    try:
        import msgspec  # noqa: F401
    finally:
        if probe:
            _ProbeCompile.thread = -1
            del names["compile"]
        finder.thread = -1
        _sys.meta_path = [f for f in _sys.meta_path if f is not finder]
        if finder.standin is not None and _sys.modules.get("platform") is finder.standin:
            del _sys.modules["platform"]  # uuid has read it; a later import loads the real one
        finder.standin = None
