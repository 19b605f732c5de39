"""mcpio's log records on a command line: on stderr as ``mcpio: warning: …``, cleaned (they may
quote a server). Loaded with :mod:`logging` (``_dispatch._logging``)."""

from __future__ import annotations

import logging


class _CleanHandler(logging.Handler):
    """mcpio's log records on stderr as ``mcpio: warning: …``, cleaned (they may quote a server)."""

    def emit(self, record: logging.LogRecord) -> None:
        from ._output import err  # with the first record: a server that logs nothing never loads it

        try:
            err(f"mcpio: {record.levelname.lower()}: {record.getMessage()}")
        except Exception:
            self.handleError(record)


#: Warnings of the library that are noise on a command line unless -v asks for details: a server
#: printing lines that are not JSON on stdout (they are skipped; pain point of issue 15).
_DETAILS = ("skipping a line from the server that is not JSON",)


def clean_logs(verbose: bool) -> None:
    """mcpio's log records go to stderr, cleaned: warnings and up, or everything from INFO with
    ``-v`` (which also shows the :data:`_DETAILS` warnings)."""
    logger = logging.getLogger("mcpio")
    handler = next((h for h in logger.handlers if isinstance(h, _CleanHandler)), None)
    if handler is None:
        handler = _CleanHandler()
        logger.addHandler(handler)
    handler.filters.clear()
    if not verbose:
        handler.addFilter(lambda record: not str(record.msg).startswith(_DETAILS))
    logger.setLevel(logging.INFO if verbose else logging.WARNING)
    logger.propagate = False
