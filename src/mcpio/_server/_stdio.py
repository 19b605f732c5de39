"""A :class:`~mcpio.Server` on this process's stdin/stdout: the stdio transport, ``MCPIO_TRACE``,
and the three ways serving ends (stdin EOF, SIGTERM — CTRL_BREAK_EVENT on Windows — and the
client's death), each without lingering on requests in flight."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from typing import TYPE_CHECKING

from .._errors import TransportError
from .._transports._trace import open_trace

if TYPE_CHECKING:
    from ._server import Server

log = logging.getLogger("mcpio.server")


def run(server: Server) -> None:
    """``server.run()`` on stdio: serve until EOF, SIGTERM or the parent's death. A stdio that
    cannot be served (e.g. started without stdin) is one line on stderr and exit status 1."""
    # Everything imported and registered so far lives as long as the process: take it out of
    # the collector's sight. Full collections stop traversing it while serving, and the
    # interpreter's exit skips it: stdin EOF -> exit is about 3x faster (benchmarks/PROFILE.md).
    gc.freeze()
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(server.serve_stdio())
    except TransportError as exc:  # one line, not a traceback
        raise SystemExit(f"{server.name}: cannot serve on stdio: {exc}") from None


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` on stdin/stdout until EOF, SIGTERM or the parent's death."""
    from .._platform import on_terminate
    from .._transports._stdio import StdioServerTransport

    transport = StdioServerTransport(max_line_size=server.max_message_size)
    await transport.open()  # first: once fd 1 is off the wire, MCPIO_TRACE=/dev/stdout is harmless
    trace_path = os.environ.get("MCPIO_TRACE")
    if trace_path:
        try:
            transport.trace = open_trace(trace_path)
        except OSError as exc:  # a debugging aid must not stop the server
            log.warning("MCPIO_TRACE: cannot write %s (%s); serving without a trace", trace_path, exc.strerror or exc)
    loop = asyncio.get_running_loop()
    session = server.session(transport)

    def on_signal() -> None:  # SIGTERM: stop now, send nothing more, exit 0
        session.abort()  # also when already draining after stdin EOF
        transport.terminate()

    def on_gone(why: str) -> None:  # the client died: never linger on requests in flight
        session.abort(0.0 if why == "output" else 0.5)

    transport.on_gone = on_gone

    on_terminate(loop, on_signal)  # SIGTERM; Windows: CTRL_BREAK_EVENT (mcpio._platform)
    try:
        async with server.running():
            await server._run_session(session)
    finally:
        await transport.aclose()
