"""A :class:`~mcpio.Server` on this process's stdin/stdout: the stdio transport, ``MCPIO_TRACE``,
and the three ways serving ends (stdin EOF, SIGTERM — CTRL_BREAK_EVENT on Windows — and the
client's death), each without lingering on requests in flight.

Cold start: :func:`run` answers a first line that is a legacy ``initialize`` or a 2026-07-28
``server/discover`` before asyncio is imported (about half of a server's start-up): it reads fd
0 synchronously up to the first newline, feeds it to the sans-IO :class:`Connection`, answers
on fd 1 with what the engine's handlers would (``_lifecycle.initialize_result`` /
``discover_result`` with ``Server.decorate``'s era decorations), then imports asyncio and hands
the connection, the session state and every byte read after that line to the engine
(:func:`serve_stdio`). Any other first line (a request, a batch, garbage, EOF …) is handed over
untouched. :func:`fast_start` says which servers the engine serves from the first byte.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import TYPE_CHECKING, Any

from .. import _jsonrpc as rpc
from .. import _log
from .._errors import TransportError
from .._protocol._connection import Connection
from .._protocol._events import RequestReceived
from .._versions import RULES
from ._lifecycle import discover_result, initialize_result

if TYPE_CHECKING:
    from ._server import Server

log = _log.logger("mcpio.server", globals())

#: The first requests :func:`answer_initialize` answers before the engine runs (the handshake's).
FIRST = ("initialize", "server/discover")
_FIRST_LINE_MAX = 64 * 1024  # a first line longer than this goes to the engine (an initialize is ~200 bytes)


class Primed:
    """What the synchronous start-up leaves to the engine: the bytes read from fd 0 and not
    consumed, our parent's pid when we started, and — when it answered ``initialize`` — the
    connection (READY for ``notifications/initialized``) and the session state it recorded."""

    __slots__ = ("connection", "ppid", "rest", "state")

    def __init__(self, rest: bytes, ppid: int, connection: Connection | None = None, state: Any = None) -> None:
        self.rest = rest
        self.ppid = ppid
        self.connection = connection
        self.state: dict[str, Any] = state or {}


class _Terminated(Exception):
    """SIGTERM while waiting for the first line."""


def run(server: Server) -> None:
    """``server.run()`` on stdio: serve until EOF, SIGTERM or the parent's death. A stdio that
    cannot be served (e.g. started without stdin) is one line on stderr and exit status 1."""
    # Everything imported and registered so far lives as long as the process: take it out of
    # the collector's sight. Full collections stop traversing it while serving, and the
    # interpreter's exit skips it: stdin EOF -> exit is about 3x faster (benchmarks/PROFILE.md).
    gc.freeze()
    resume_collection()  # `mcpio run` paused it until here
    try:
        with contextlib.suppress(KeyboardInterrupt):
            primed = None
            if fast_start(server):
                primed = answer_initialize(server)
                if primed is None:
                    return  # SIGTERM or the client gone before serving started: exit 0, as the engine does
            _log.load()  # logging, configured as Server.run() asked (asyncio would import it anyway)
            gc.freeze()  # its objects out of the collector's sight too, as when it loaded before run()
            import asyncio  # only now (module docstring)

            asyncio.run(serve_stdio(server, primed))
    except TransportError as exc:  # one line, not a traceback
        raise SystemExit(f"{server.name}: cannot serve on stdio: {exc}") from None


def resume_collection() -> None:
    """Automatic garbage collection on again if ``mcpio run`` paused it for its start-up
    (:mod:`mcpio._collector`): called where serving starts. That module is loaded only by what
    pauses, so a server started any other way does not load it."""
    collector = sys.modules.get("mcpio._collector")
    if collector is not None:
        collector.resume()


def settle() -> None:
    """What was loaded since serving started (a proxy's upstream client) out of the collector's
    sight, as :func:`run` does at start-up; only in a process mcpio's command line runs (it loads
    :mod:`mcpio._collector`): an application's own process keeps its collector as it was."""
    if "mcpio._collector" in sys.modules:
        gc.freeze()


def fast_start(server: Server) -> bool:
    """Whether :func:`answer_initialize` may answer the first ``initialize`` before the engine
    runs. Not when something must see that request or precede its answer: a server that is not
    plain (middleware may wrap ``initialize``, telemetry makes a span per request, a subclass
    serves requests its own way: ``Server.plain_for``), a ``lifespan`` (entered before any
    request is served), ``MCPIO_TRACE`` (the trace records every frame); nor on Windows (no
    ``select`` on pipes) or when stdin is a terminal (its end of input is not sticky)."""
    return (
        os.name == "posix"
        and server.plain_for()
        and server.lifespan is None
        and not os.environ.get("MCPIO_TRACE")
        and not os.isatty(0)  # False for a closed fd too: it never raises
    )


def answer_initialize(server: Server) -> Primed | None:
    """Read fd 0 up to the first newline (blocking, before the event loop exists); answer it on
    fd 1 when it is a legacy ``initialize`` or a modern ``server/discover`` the connection
    admits. Returns what the engine
    continues from, or None when serving must not start: SIGTERM arrived while waiting, or
    fd 1 is closed (the client is gone). Bytes that cannot be read are left to the engine,
    which reports them as it always did."""
    import select

    # signal's C half: the same functions and constants without the module's enums (Signals,
    # Handlers, Sigmasks), whose creation costs ~3 M instructions at start-up; asyncio
    # imports `signal` after the answer. Type-checked as `signal` (no stub for `_signal`).
    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal

    ppid = os.getppid()
    buf = b""
    try:
        previous = _signal.signal(_signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: no synchronous wait here
        return Primed(buf, ppid)
    try:
        while b"\n" not in buf and len(buf) <= _FIRST_LINE_MAX:
            # A timeout to notice the parent's death while stdin stays open (the engine's watch).
            ready, _, _ = select.select([0], [], [], 0.5)
            if not ready:
                if os.getppid() != ppid:
                    break
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                break
            buf += chunk
    except _Terminated:
        return None
    except OSError:  # fd 0 unusable: the engine says so in its own words
        return Primed(buf, ppid)
    finally:
        _signal.signal(_signal.SIGTERM, previous)
    nl = buf.find(b"\n")
    if nl < 0:
        return Primed(buf, ppid)
    answered = _answer(server, buf[:nl])
    if answered is None:
        return Primed(buf, ppid)
    conn, state, frame = answered
    view = memoryview(frame)
    try:
        while view:
            view = view[os.write(1, view) :]
    except OSError:  # our stdout is closed: the client is gone, as the engine's on_gone("output")
        return None
    return Primed(buf[nl + 1 :], ppid, conn, state)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


def _answer(server: Server, line: bytes) -> tuple[Connection, dict[str, Any], bytes] | None:
    """The connection, session state and framed answer for ``line`` when it is a legacy
    ``initialize`` or a 2026-07-28 ``server/discover`` the connection admits; None for anything
    else (the engine serves it)."""
    if line.endswith(b"\r"):  # framing as _protocol._framing.LineBuffer
        line = line[:-1]
    if (b'"initialize"' not in line and b'"server/discover"' not in line) or len(line) > server.max_message_size:
        return None
    try:
        msg = rpc.decode(line)
    except rpc.InvalidMessage:
        return None
    if type(msg) is not dict or msg.get("method") not in FIRST:
        return None
    conn = Connection("server")
    events = conn.receive(msg)
    if len(events) != 1 or type(events[0]) is not RequestReceived:
        return None  # refused (a Reply) or not a request: the engine answers it afresh
    ev = events[0]
    if ev.version is None:
        return None
    rules = RULES[ev.version]
    state: dict[str, Any] = {}
    try:
        if ev.method == "initialize" and not rules.result_type:  # legacy handshake
            result = initialize_result(server, rules, state)
        elif ev.method == "server/discover" and rules.result_type:  # 2026-07-28: with the era's decorations
            result = server.decorate(discover_result(server, rules), rules, ev.method)
        else:
            return None
    except Exception:  # the engine answers it again and reports the failure its own way
        return None
    out = conn.respond(ev.id, result)
    if out is None:
        return None
    return conn, state, rpc.encode(out) + b"\n"


def env_trace() -> Any:
    """``MCPIO_TRACE``'s wire trace (``open_trace``), opened now; None if unset or unwritable (warned)."""
    from .._transports._trace import open_trace

    path = os.environ.get("MCPIO_TRACE")
    try:
        return open_trace(path) if path else None
    except OSError as exc:
        log.warning("MCPIO_TRACE: cannot write %s (%s); serving without a trace", path, exc.strerror or exc)
        return None


async def serve_stdio(server: Server, primed: Primed | None = None) -> None:
    """Serve ``server`` on stdin/stdout until EOF, SIGTERM or the parent's death; ``primed``:
    what :func:`answer_initialize` read and answered already."""
    import asyncio

    from .._platform import on_terminate
    from .._transports._stdio import StdioServerTransport

    def on_gone(why: str) -> None:  # the client died: never linger on requests in flight
        session.abort(0.0 if why == "output" else 0.5)

    transport = StdioServerTransport(max_line_size=server.max_message_size, trace=env_trace, on_gone=on_gone)
    primed = primed or Primed(b"", os.getppid())
    transport.prime(primed.rest, primed.ppid)
    session = server.session(transport, conn=primed.connection)  # initialised: continues from READY
    session.state.update(primed.state)
    await transport.open()

    def on_signal() -> None:  # SIGTERM: stop now, send nothing more, exit 0
        session.abort()  # also when already draining after stdin EOF
        transport.terminate()

    on_terminate(asyncio.get_running_loop(), on_signal)  # SIGTERM; Windows: CTRL_BREAK_EVENT (mcpio._platform)
    try:
        async with server.running():
            await server.run_session(session)
    finally:
        await transport.aclose()
