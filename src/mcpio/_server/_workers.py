"""N worker processes serving one HTTP port: ``Server.run("http", workers=N)`` and
``mcpio run -t http --workers N``.

The supervisor (this process) binds the listening socket once and forks N workers that share
it (the kernel spreads new connections over them); each worker runs its own event loop and
uvicorn on the inherited socket. Forking (not spawning) means the workers need no way to
rebuild the app: they inherit the Server object the user's code built, before any event loop,
thread pool or Redis connection exists. POSIX only (no ``fork`` on Windows).

* A worker that dies (crash, ``kill -9``, out of memory) is restarted; more than
  ``MAX_RESTARTS`` deaths within ``RESTART_WINDOW`` seconds stop everything with status 1
  (a server that cannot stay up is a bug to see, not to hide).
* SIGTERM or SIGINT (Ctrl-C) to the supervisor: every worker gets SIGTERM and drains
  (``_transports/_uvicorn``: stop accepting, requests in flight get ``grace`` seconds, open
  streams handed over); a worker still alive ``grace + STOP_MARGIN`` seconds later is killed.
  The supervisor exits once every worker has: no orphans. On Linux a worker also gets
  SIGTERM when the supervisor itself dies (``PR_SET_PDEATHSIG``).
* Ctrl-C belongs to the supervisor: a terminal sends SIGINT to the whole process group, and a
  worker acting on it too would race the supervisor's SIGTERM (a KeyboardInterrupt raised
  wherever the worker happened to be, or uvicorn's "second signal: force exit" skipping the
  drain). So workers ignore SIGINT (``_uvicorn`` and ``_hypercorn`` keep an ignored SIGINT
  ignored), and both signals are blocked across each fork until the new worker has set its
  own dispositions: a SIGTERM sent in between waits for them instead of reaching the
  supervisor's handler inherited by the child.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("mcpio.server")

MAX_RESTARTS = 5  # per worker slot, within RESTART_WINDOW seconds
RESTART_WINDOW = 60.0
STOP_MARGIN = 10.0  # seconds past the grace period before a worker that has not stopped is killed


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """The listening socket the workers share (bound here once, inherited by each fork)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when their proto says
    # TCP, and without it Nagle + delayed ACK hold each keep-alive answer ~40 ms (found by
    # benchmarks/scale.py: 2 workers served 0.21x one worker's calls/s).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _worker_main(serve: Callable[[socket.socket], None], sock: socket.socket, parent: int, wake: Any) -> None:
    # Forked with STOP_SIGNALS blocked (see start() in supervise): set this process's own
    # dispositions, then let what arrived meanwhile in.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's: it sends SIGTERM
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # until the server installs its graceful one
    for end in wake:  # the supervisor's signal pipe is not the worker's
        end.close()
    if sys.platform != "win32":  # (never forked there; this keeps the Windows type check clean)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    if sys.platform.startswith("linux"):  # die with the supervisor, even a kill -9 of it
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the supervisor died before the line above
        return
    serve(sock)


def supervise(serve: Callable[[socket.socket], None], host: str, port: int, workers: int, *, grace: float) -> int:
    """Run ``serve(sock)`` in ``workers`` forked processes on one socket bound to ``host:port``
    until SIGTERM/SIGINT (see the module docstring); the exit status (0, or 1 if the workers
    kept dying). ``ValueError`` for ``workers < 1``; ``OSError`` if the port cannot be bound."""
    if workers < 1:
        raise ValueError(f"workers={workers}: at least 1")
    if not hasattr(os, "fork"):
        raise ValueError("workers > 1 needs fork (Linux, macOS); on this system run one process per port")
    ctx: Any = multiprocessing.get_context("fork")  # typed Any: Windows stubs have no fork context
    sock = listen(host, port)
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    stopping: list[int] = []

    def on_signal(sig: int, _frame: Any) -> None:
        stopping.append(sig)
        with contextlib.suppress(OSError):
            wake_w.send(b"x")

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    me = os.getpid()
    procs: dict[int, Any] = {}
    deaths: dict[int, list[float]] = {}

    def start(slot: int) -> None:
        p = ctx.Process(
            target=_worker_main, args=(serve, sock, me, (wake_r, wake_w)), name=f"mcpio-worker-{slot}", daemon=False
        )
        if sys.platform == "win32":  # unreachable (no fork): the guard keeps the Windows type check clean
            raise ValueError("workers > 1 needs fork")
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # the child unblocks them (_worker_main)
        try:
            p.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        procs[slot] = p

    status = 0
    try:
        for slot in range(workers):
            start(slot)
        while not stopping:
            multiprocessing.connection.wait([p.sentinel for p in procs.values()] + [wake_r])
            if stopping:
                break
            for slot, p in list(procs.items()):
                if p.is_alive():
                    continue
                p.join()
                now = time.monotonic()
                recent = [t for t in deaths.get(slot, []) if now - t < RESTART_WINDOW] + [now]
                deaths[slot] = recent
                if len(recent) > MAX_RESTARTS:
                    sys.stderr.write(
                        f"mcpio: worker {slot} died {len(recent)} times within {RESTART_WINDOW:g} s "
                        f"(last exit status {p.exitcode}); stopping: see the errors above\n"
                    )
                    stopping.append(0)
                    status = 1
                    break
                sys.stderr.write(f"mcpio: worker {slot} (pid {p.pid}) exited with status {p.exitcode}; restarting it\n")
                start(slot)
    finally:
        _stop_all(procs, grace)
        for s, handler in previous.items():
            signal.signal(s, handler)
        sock.close()
        wake_r.close()
        wake_w.close()
    return status


def _stop_all(procs: dict[int, Any], grace: float) -> None:
    """SIGTERM every worker, wait for all of them, kill any still alive after the grace period."""
    for p in procs.values():
        if p.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace + STOP_MARGIN
    for p in procs.values():
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs.values():
        if p.is_alive():
            sys.stderr.write(f"mcpio: worker pid {p.pid} did not stop within {grace + STOP_MARGIN:g} s; killing it\n")
            p.kill()
            p.join()
