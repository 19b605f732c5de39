"""Exit statuses of the ``mcpio`` command, and the errors that carry them (one table, used by
every command; ``mcpio --help`` and docs/guides/cli.md print the same table).

=====  =====================================================================================
0      success
1      the server or the tool reported an error (an error response, a result with ``isError``),
       ``doctor`` found a problem, ``replay`` found a difference
2      usage: a bad command line, an unknown tool or argument, a value that does not fit the
       tool's schema (nothing was sent)
3      the server could not be started or reached: its code does not import, its command is
       not found, it exited or closed the connection, it did not answer in time, the port is
       in use
4      the server broke the protocol (an answer that is not valid MCP)
130    interrupted (Ctrl-C)
=====  =====================================================================================
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
UNAVAILABLE = 3
PROTOCOL = 4
INTERRUPTED = 130

TABLE = """exit status:
  0    success
  1    the server or the tool reported an error; doctor found a problem; replay found a difference
  2    usage error: bad command line, unknown tool or argument, value not matching the tool's schema
  3    the server could not be started or reached (import error, command not found, exited,
       no answer in time, port in use)
  4    the server broke the protocol
  130  interrupted"""


class CLIFailure(Exception):
    """A failure to report in one or two lines, with its exit status.

    ``message`` says what happened and whose fault it is; ``hint`` what to do."""

    def __init__(self, message: str, status: int = FAILED, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.hint = hint


class UsageError(ValueError):
    """A bad command-line value (exit status 2)."""
