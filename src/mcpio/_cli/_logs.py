"""mcpio's log records on a command line: on stderr as ``mcpio: warning: …``, cleaned (they may
quote a server). Loaded with :mod:`logging` (``_dispatch._logging``)."""

from __future__ import annotations

import logging


class _CleanHandler(logging.Handler):
    """mcpio's log records on stderr as ``mcpio: warning: …``, cleaned (they may quote a server),
    each followed by its exception's traceback when it carries one (a tool that raised under
    ``mcpio run``: host logs are where its author debugs it), as ``logging``'s own handlers do."""

    def emit(self, record: logging.LogRecord) -> None:
        from ._output import err  # with the first record: a server that logs nothing never loads it

        try:
            text = f"mcpio: {record.levelname.lower()}: {record.getMessage()}"
            if record.exc_info and record.exc_info[1] is not None:
                text += "\n" + _FORMATTER.formatException(record.exc_info).rstrip()
            err(text)
        except Exception:
            self.handleError(record)


_FORMATTER = logging.Formatter()


#: Warnings of the library that are noise on a command line unless -v asks for details: a server
#: printing lines that are not JSON on stdout (they are skipped).
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
