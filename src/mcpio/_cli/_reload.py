"""``mcpio run FILE --reload``: serve FILE over stdio and restart it whenever a Python file below
its folder changes, behind a supervisor that keeps the host's pipes open (the host never sees the
server go away, so it need not reconnect).

The host talks to this process; it runs ``python -m mcpio run FILE`` as a child and passes every
message through unchanged. When a watched file changes (polled every ``POLL`` seconds: ``*.py`` and
``*.pyw`` below FILE's folder, skipping hidden folders, ``__pycache__``, virtual environments and
``site-packages``):

1. the child is stopped (stdin closed, then SIGTERM, then SIGKILL); the host's requests it had
   not answered get an error saying so (send them again), and its own requests to the host are
   forgotten (late answers to them are dropped);
2. a new child starts and is sent the host's recorded ``initialize`` (under a private id; its
   answer is not forwarded) and ``notifications/initialized``: the legacy session goes on. The
   2026-07-28 era is stateless and needs no replay;
3. the host gets ``notifications/tools/list_changed``, ``…/prompts/…`` and ``…/resources/…`` (legacy era).

If a child fails to start or exits (a syntax error, say), the host gets an error log message
(``notifications/message``, legacy era) and each request is answered with an error carrying the
last line of its stderr, until the next change restarts it. The children's stderr
passes through. End of input from the host stops the child and the supervisor (exit 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from .. import _jsonrpc as rpc
from .._errors import EndOfStream, TransportError
from .._platform import on_terminate
from .._protocol._framing import Oversized
from .._pyfile import SOURCE_SUFFIXES
from .._transports._stdio import StdioServerTransport
from .._transports._subprocess import SubprocessTransport
from ._output import clean

POLL = 0.5  # seconds between looks at the files
SETTLE = 0.2  # after a change, how long the files must stay still (editors write in steps)
MAX_FILES = 5000
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"}
INTERNAL_ERROR = -32603


def snapshot(root: Path) -> dict[str, int]:
    """``{path: mtime_ns}`` of the Python sources below ``root`` (``*.py``, ``*.pyw``:
    ``SOURCE_SUFFIXES``, what ``mcpio run`` serves; at most MAX_FILES)."""
    out: dict[str, int] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS]
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    out[path] = os.stat(path).st_mtime_ns
                if len(out) >= MAX_FILES:
                    return out
    return out


def _say(text: str) -> None:
    print(f"mcpio --reload: {clean(text)}", file=sys.stderr, flush=True)


class Supervisor:
    """Holds the host's stdio and runs the server as a child it restarts (module docstring)."""

    def __init__(self, app: str, root: Path, verbose: bool = False) -> None:
        self.app = app
        self.verbose = verbose  # the children run with -v: full tracebacks
        self.root = root
        self.host = StdioServerTransport()
        self.child: SubprocessTransport | None = None
        self.generation = 0
        self.failure: str | None = None  # why there is no working child
        self.ready = asyncio.Event()  # a child is up (or has failed): host messages may go on
        self.lock = asyncio.Lock()
        self.init_msg: dict[str, Any] | None = None  # the host's initialize, replayed to new children
        self.initialized = False
        self.in_flight: set[Any] = set()  # the host's requests the child has not answered
        self.child_requests: set[Any] = set()  # the child's requests the host has not answered
        self.replay: asyncio.Future[Any] | None = None
        self.stopping = False

    # ------------------------------------------------------------------ children
    async def start_child(self) -> None:
        self.generation += 1
        gen = self.generation
        child = SubprocessTransport(
            sys.executable,
            ["-m", "mcpio", "run", *(["-v"] if self.verbose else []), self.app],
            grace=1.0,
            on_stderr=lambda line: print(clean(line, multiline=False), file=sys.stderr, flush=True),
        )
        try:
            await child.open()
        except (OSError, TransportError) as exc:
            self.failure = f"the server could not be started: {exc}"
            self.ready.set()
            return
        self.child, self.failure = child, None
        asyncio.get_running_loop().create_task(self.from_child(child, gen))
        if self.init_msg is not None:  # the legacy session goes on with the new child
            self.replay = asyncio.get_running_loop().create_future()
            replay = dict(self.init_msg, id=f"mcpio-reload-{gen}")
            try:
                await child.send(rpc.encode(replay))
                await asyncio.wait_for(self.replay, 30)
                if self.initialized:
                    await child.send(rpc.encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            except (TransportError, TimeoutError, asyncio.CancelledError, EndOfStream):
                self.failure = self.failure or "the server did not answer the replayed initialize"
        self.ready.set()

    async def restart(self, why: str) -> None:
        async with self.lock:
            self.ready.clear()
            self.generation += 1  # the old child's reader sees it is retired, not failed
            old, self.child = self.child, None
            if old is not None:
                await old.aclose()
            await self.fail_in_flight(
                f"the server was restarted ({why}) while this request was in flight; send it again"
            )
            self.child_requests.clear()
            await self.start_child()
            _say(
                f"restarted ({why})" if self.failure is None else f"{self.failure} ({why}); waiting for the next change"
            )
            if self.failure is None and self.initialized:
                for kind in ("tools", "prompts", "resources"):
                    await self.host.send(rpc.encode({"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}))

    async def from_child(self, child: SubprocessTransport, gen: int) -> None:
        """Pass the child's messages to the host until it ends."""
        while True:
            try:
                frame = await child.receive()
            except (EndOfStream, TransportError):
                break
            if type(frame) is Oversized:
                continue
            msg = _decode(frame)
            if isinstance(msg, dict) and "method" not in msg and "id" in msg:
                if msg["id"] == f"mcpio-reload-{gen}":
                    if self.replay is not None and not self.replay.done():
                        self.replay.set_result(msg)
                    continue
                self.in_flight.discard(msg["id"])
            elif isinstance(msg, dict) and "method" in msg and "id" in msg:
                self.child_requests.add(msg["id"])
            with contextlib.suppress(TransportError):
                await self.host.send(bytes(frame))
        if gen == self.generation and not self.stopping:  # it ended by itself: say why to every request
            code = await child.wait_exit(2.0)
            tail = [line for line in child.stderr_tail().splitlines() if line.strip()]
            ours = [line for line in tail if line.startswith("mcpio: error: ")]  # `mcpio run`'s one-line report
            last = ours[-1][len("mcpio: error: ") :] if ours else tail[-1].strip() if tail else ""
            self.failure = f"the server exited (code {code})" + (f": {last}" if last else "")
            if self.replay is not None and not self.replay.done():
                self.replay.cancel()
            await self.fail_in_flight(f"{self.failure}; fix it and save a file to restart it")
            await self.tell(f"{self.failure}; waiting for a change to restart it")

    # ------------------------------------------------------------------ the host
    async def tell(self, text: str) -> None:
        """Say ``text`` on stderr and, in a legacy session, as an error log message to the host."""
        _say(text)
        if self.initialized:
            with contextlib.suppress(TransportError):
                await self.host.send(
                    rpc.encode(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/message",
                            "params": {"level": "error", "logger": "mcpio.reload", "data": text},
                        }
                    )
                )

    async def fail_in_flight(self, message: str) -> None:
        """Answer every request the child will not answer now with an error saying ``message``."""
        for id_ in sorted(self.in_flight, key=repr):
            await self.answer_error(id_, message)
        self.in_flight.clear()

    async def answer_error(self, id_: Any, message: str) -> None:
        with contextlib.suppress(TransportError):
            await self.host.send(rpc.encode(rpc.error_response(id_, {"code": INTERNAL_ERROR, "message": message})))

    async def from_host(self) -> None:
        while True:
            try:
                frame = await self.host.receive()
            except EndOfStream:
                return
            if type(frame) is Oversized:
                await self.answer_error(None, f"a message of {frame.size} bytes is over the limit of {frame.limit}")
                continue
            msg = _decode(frame)
            is_request = isinstance(msg, dict) and isinstance(msg.get("method"), str) and "id" in msg
            if is_request and msg["method"] == "initialize":
                self.init_msg = msg
            elif isinstance(msg, dict) and msg.get("method") == "notifications/initialized":
                self.initialized = True
            elif isinstance(msg, dict) and "method" not in msg and "id" in msg:
                if msg["id"] not in self.child_requests:
                    continue  # an answer to a request of a child that was restarted since
                self.child_requests.discard(msg["id"])
            await self.ready.wait()
            async with self.lock:
                child = self.child
                if child is None or self.failure is not None:
                    if is_request:
                        await self.answer_error(msg["id"], f"{self.failure}; fix it and save a file to restart it")
                    continue
                if is_request:
                    self.in_flight.add(msg["id"])
                try:
                    await child.send(bytes(frame))
                except TransportError:
                    pass  # it is ending: from_child reports it

    async def watch(self) -> None:
        seen = snapshot(self.root)
        while True:
            await asyncio.sleep(POLL)
            now = snapshot(self.root)
            if now == seen:
                continue
            while True:  # let the editor finish writing
                await asyncio.sleep(SETTLE)
                later = snapshot(self.root)
                if later == now:
                    break
                now = later
            changed = sorted({p for p in now.keys() | seen.keys() if now.get(p) != seen.get(p)})
            seen = now
            names = ", ".join(os.path.relpath(p, self.root) for p in changed[:3]) + (" …" if len(changed) > 3 else "")
            await self.restart(f"{names} changed")

    async def run(self) -> int:
        await self.host.open()
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        on_terminate(loop, main.cancel)  # type: ignore[union-attr]  # SIGTERM; Windows: CTRL_BREAK_EVENT
        await self.start_child()
        _say(f"serving {self.app}; watching {self.root} for changes")
        watcher = loop.create_task(self.watch())
        try:
            await self.from_host()
        except asyncio.CancelledError:
            pass
        finally:
            self.stopping = True
            watcher.cancel()
            if self.child is not None:
                await self.child.aclose()
            await self.host.aclose()
        return 0


def _decode(frame: Any) -> Any:
    try:
        return rpc.decode(bytes(frame))
    except Exception:  # not JSON: passed on as it is, the peer answers it
        return None


def run_with_reload(app: str, where: str, verbose: bool = False) -> int:
    root = Path(where).resolve().parent if os.path.exists(where) else Path.cwd()
    return asyncio.run(Supervisor(app, root, verbose).run())
