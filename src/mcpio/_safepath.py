"""Safe file access for tools and resources: paths from a client stay inside declared roots.

A path argument of a tool or a resource-template variable is text chosen by a client (often an
LLM), and ``../``, absolute paths and symbolic links are the classic ways out of the folder a
server meant to expose (to a credentials file, say). :class:`SafePath` is built from one or more root
folders and turns such text into a real path inside them, or refuses it with
:class:`SafePathError` saying why (never the target of a link that points out):

* a relative path is taken from the first root (or the ``root=`` given); an absolute path is
  accepted only when it lies inside a root; ``..`` is fine while it stays inside;
* every symbolic link is resolved, and the *resolved* path must be inside a root — a link
  pointing out is refused; ``follow_symlinks=False`` refuses any link below the root at all;
* NUL bytes are refused (the OS would cut the path there);
* ``read_bytes``/``read_text`` open the resolved path without following a final link (a link
  swapped in after the check is not followed) and without blocking on a FIFO, read regular
  files only, and cap what they read (``max_bytes``);
* ``iterdir``/``walk`` list only entries inside the roots; ``walk`` yields regular files and
  never enters a linked folder (so it cannot loop, nor leave the roots).

Threat model: the *path text* is hostile; the file system is the server's. Someone who can
create links inside a root while a request is served could still race a check against an open
of a folder component; the final component is opened with ``O_NOFOLLOW``.

``PathParam`` marks a resource-template parameter as a path (``Annotated[str, PathParam]``):
its value may then contain ``/``, ``\\`` and ``..`` (check it with a SafePath); other template
parameters refuse them (see ``_uritemplate``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ._errors import SafePathError as SafePathError  # defined there: a server catches it without this module

if TYPE_CHECKING:
    from pathlib import Path

# pathlib (and urllib.parse, ipaddress with it) is imported when a SafePath is made, not when a
# server that imports this module for its errors starts (cold start).

StrPath = str | os.PathLike[str]
_CHUNK = 1 << 20


class PathParam:
    """Marker (never instantiated) for ``Annotated[str, PathParam]``: this resource-template
    parameter is a path; its value may contain ``/``, ``\\`` and ``..`` (confine it with a
    :class:`SafePath`)."""

    def __new__(cls) -> PathParam:
        raise TypeError("PathParam is a marker: write Annotated[str, PathParam]")


def _norm(path: str) -> str:
    return os.path.normcase(path)


class SafePath:
    """Paths from clients, confined to ``roots``. See the module docstring."""

    __slots__ = ("_aliases", "_real", "follow_symlinks", "roots")

    def __init__(self, *roots: StrPath, follow_symlinks: bool = True) -> None:
        if not roots:
            raise ValueError("SafePath needs at least one root folder")
        real: list[str] = []
        aliases: list[tuple[str, str]] = []
        for root in roots:
            raw = os.fspath(root)
            if "\0" in raw:
                raise ValueError(f"root {raw!r} contains a NUL byte")
            r = os.path.realpath(raw)
            if not os.path.isdir(r):
                raise ValueError(f"root {raw!r} is not a folder")
            real.append(r)
            given = os.path.abspath(raw)
            if given != r:
                aliases.append((given, r))  # the root named through a link (/tmp -> /private/tmp)
        self._real = real
        self._aliases = aliases
        from pathlib import Path

        self.roots: tuple[Path, ...] = tuple(Path(r) for r in real)
        self.follow_symlinks = follow_symlinks

    def __repr__(self) -> str:
        return f"SafePath({', '.join(repr(str(r)) for r in self.roots)})"

    # ------------------------------------------------------------------ checking
    def _inside(self, real: str) -> str | None:
        """The root that contains ``real``, or None."""
        n = _norm(real)
        for r in self._real:
            rn = _norm(r)
            if n == rn or n.startswith(rn.rstrip(os.sep) + os.sep):
                return r
        return None

    def _describe_roots(self) -> str:
        return ", ".join(self._real)

    def resolve(self, path: StrPath, *, root: StrPath | None = None) -> Path:
        """The real path ``path`` names inside the roots; raises :class:`SafePathError` otherwise.

        ``path`` is relative to ``root`` (a folder inside the roots; default: the first root)
        unless it is absolute. It need not exist (for a file about to be written).
        """
        raw = os.fspath(path)
        if isinstance(raw, bytes):
            raw = os.fsdecode(raw)
        if "\0" in raw:
            raise SafePathError(f"{raw!r}: a path must not contain NUL bytes")
        base = self._real[0] if root is None else str(self.resolve(root))
        joined = os.path.join(base, raw)
        # Resolved component by component, as the OS would: "link/.." is the link target's parent.
        target = os.path.realpath(joined)
        if self._inside(target) is None:
            plural = "s" if len(self._real) > 1 else ""
            raise SafePathError(f"{raw!r} is outside the allowed folder{plural} ({self._describe_roots()})")
        if not self.follow_symlinks:
            textual = os.path.abspath(joined)  # ".." taken textually: differs when a link was involved
            for given, real in self._aliases:
                if _norm(textual) == _norm(given) or _norm(textual).startswith(_norm(given).rstrip(os.sep) + os.sep):
                    textual = real + textual[len(given) :]
                    break
            if _norm(target) != _norm(textual):
                raise SafePathError(f"{raw!r} goes through a symbolic link, which this server does not follow")
        from pathlib import Path

        return Path(target)

    def contains(self, path: StrPath) -> bool:
        """True when ``path`` resolves inside the roots (no exception)."""
        try:
            self.resolve(path)
        except SafePathError:
            return False
        return True

    def relative(self, path: StrPath) -> str:
        """``path`` relative to the root containing it (for display: no real root leaks out)."""
        target = self.resolve(path)
        root = self._inside(str(target))
        assert root is not None
        return os.path.relpath(target, root)

    # ------------------------------------------------------------------ reading
    def read_bytes(self, path: StrPath, *, max_bytes: int | None = None) -> bytes:
        """The bytes of a regular file inside the roots (at most ``max_bytes``, else SafePathError)."""
        target = self.resolve(path)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(target, flags)
        except OSError as exc:
            if getattr(os, "O_NOFOLLOW", 0) and os.path.islink(target):
                raise SafePathError(f"{os.fspath(path)!r} changed into a symbolic link while being opened") from None
            raise SafePathError(f"{os.fspath(path)!r} cannot be read: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SafePathError(f"{os.fspath(path)!r} is not a regular file")
            if max_bytes is not None and st.st_size > max_bytes:
                raise SafePathError(f"{os.fspath(path)!r} is larger than {max_bytes} bytes")
            chunks = []
            left = max_bytes + 1 if max_bytes is not None else -1
            while left:
                chunk = os.read(fd, _CHUNK if left < 0 else min(_CHUNK, left))
                if not chunk:
                    break
                chunks.append(chunk)
                left = left - len(chunk) if left > 0 else left
        finally:
            os.close(fd)
        if left == 0:  # it grew past max_bytes since the fstat
            raise SafePathError(f"{os.fspath(path)!r} is larger than {max_bytes} bytes")
        return b"".join(chunks)

    def read_text(
        self, path: StrPath, *, encoding: str = "utf-8", errors: str = "strict", max_bytes: int | None = None
    ) -> str:
        """The text of a regular file inside the roots (see :meth:`read_bytes`)."""
        return self.read_bytes(path, max_bytes=max_bytes).decode(encoding, errors)

    # ------------------------------------------------------------------ listing
    def iterdir(self, path: StrPath = ".") -> Iterator[Path]:
        """The entries of a folder inside the roots, sorted by name, as real paths; links that
        resolve outside the roots (and, with ``follow_symlinks=False``, every link) are left out."""
        from pathlib import Path

        folder = self.resolve(path)
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            raise SafePathError(f"{os.fspath(path)!r} cannot be listed: {exc.strerror}") from None
        for name in names:
            entry = os.path.join(folder, name)
            if os.path.islink(entry):
                if not self.follow_symlinks:
                    continue
                real = os.path.realpath(entry)
                if self._inside(real) is None:
                    continue
                yield Path(real)
            else:
                yield Path(entry)

    def walk(self, path: StrPath = ".", *, skip_dirs: Iterable[str] = ()) -> Iterator[Path]:
        """Every regular file under a folder inside the roots, depth first in name order.

        Never follows a link (to a file or a folder), so it stays inside the roots and cannot
        loop; FIFOs, sockets and devices are left out (opening one may block); folders named in
        ``skip_dirs`` (e.g. ``.git``) are not entered.
        """
        from pathlib import Path

        skip = frozenset(skip_dirs)
        top = self.resolve(path)
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in skip)
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                try:
                    if stat.S_ISREG(os.lstat(full).st_mode):
                        yield Path(full)
                except OSError:
                    continue
