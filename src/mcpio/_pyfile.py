"""Which files are Python code mcpio serves itself (``mcpio run`` imports them), and which are
programs to start as they are: the one rule for the Client's targets and every CLI command.
Cheap to import: ``mcpio run server.py`` reads it before its first answer."""

from __future__ import annotations

import os

#: How the name of a Python source file ends (``.pyw``: a script Windows runs without a console);
#: such a file is Python code by its name alone, with a path or without one (``server.py``).
SOURCE_SUFFIXES = (".py", ".pyw")


def python_file(target: str) -> str | None:
    """The file of a ``FILE[:OBJECT]`` target naming Python code mcpio serves, else None: an
    existing ``FILE.py`` (or ``.pyw``: :data:`SOURCE_SUFFIXES`), or a path (with a separator) to a file without ``.py`` whose code imports
    mcpio (:func:`imports_mcpio`: an mcpio server saved as ``bin/server``). Such a target is
    served as ``mcpio run`` serves it (``_client._target.serve_argv``): the module's mcpio ``Server``
    (``OBJECT``, or the one it holds), so a file without a ``__main__`` block works; a ``.py``
    script without an mcpio Server is run as one. Any other path is a program, started as it is
    (a console script of an installed package runs with its own interpreter and packages). The
    one rule for the Client and every CLI command."""
    for file in (target, target.rpartition(":")[0]):
        if file.endswith(SOURCE_SUFFIXES):
            if os.path.isfile(file):
                return file
        elif (os.sep in file or (os.altsep and os.altsep in file)) and os.path.isfile(file) and imports_mcpio(file):
            return file
    return None


_IMPORTS_MCPIO = rb"^[ \t]*(?:from[ \t]+mcpio\b|import[ \t]+(?:[\w.]+[ \t]*,[ \t]*)*mcpio\b)"
_PROGRAM_HEAD = 1 << 20  # a file whose first megabyte imports no mcpio is not an mcpio server


def imports_mcpio(path: str) -> bool:
    """Whether the file at ``path`` is Python code importing mcpio (a line ``import mcpio`` or
    ``from mcpio…``); not a binary, nor a script for another interpreter (``#!`` without python).
    True when it cannot be read: importing it reports why."""
    import re

    try:
        with open(path, "rb") as f:
            head = f.read(_PROGRAM_HEAD)
    except OSError:
        return True
    head = head.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 BOM (a Windows editor's): Python skips it
    if b"\0" in head[:4096] or (head.startswith(b"#!") and b"python" not in head.split(b"\n", 1)[0]):
        return False
    return re.search(_IMPORTS_MCPIO, head, re.MULTILINE) is not None
