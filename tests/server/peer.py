"""A raw JSON-RPC client peer for server tests: in memory, every frame checked both ways.

``Peer(server, version=…)`` joins a :class:`~mcpio.Server` to the test over
:func:`~mcpio._transports._memory.memory_pair` (the same bytes as stdio) and runs
``server.serve`` for the life of the ``async with`` block. Every frame either side writes is

* decoded from bytes (the peer never sees Python objects the server built),
* validated against the official schema of the negotiated version (``tests/support/wire``),
* checked for members that version does not define (``strict``), and
* recorded in order in :attr:`Peer.frames` as ``("in"|"out", message)``.

A validation failure is raised from the call that was waiting and again when the block
exits, so no frame escapes. Waiting is event-driven (futures and an arrival event) and
bounded by ``asyncio.timeout``; nothing sleeps.

Requests the server sends us are answered by ``handlers[method](params)`` (a value, an
awaitable, or raise :class:`~mcpio.MCPError` to answer with an error); a request without a
handler is recorded in :attr:`Peer.server_requests` and left unanswered (answer it later
with :meth:`Peer.respond`, or never, to test the server's timeout).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from mcpio import EndOfStream, MCPError
from mcpio._transports._memory import memory_pair
from tests.server.strict import check_strict
from tests.support import wire

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = LEGACY[-1]
TIMEOUT = 5.0  # bound on any single wait; tests normally take milliseconds

Handler = Callable[[dict[str, Any]], Any]


def arun(coro: Coroutine[Any, Any, Any], timeout: float = 20.0) -> Any:
    """Run ``coro`` in a fresh event loop, failing the test if it takes longer than ``timeout``."""

    async def bounded() -> Any:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


async def within(aw: Awaitable[Any], seconds: float = TIMEOUT) -> Any:
    """Await ``aw``, failing with TimeoutError after ``seconds`` (every test wait is bounded)."""
    async with asyncio.timeout(seconds):
        return await aw


def since(version: str, first: str) -> bool:
    """True when ``version`` is ``first`` or later (legacy versions sort as strings)."""
    return version >= first


class Peer:
    """See the module docstring. Use as ``async with Peer(server) as peer: …``."""

    def __init__(
        self,
        server: Any,
        *,
        version: str = LATEST,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        handlers: dict[str, Handler] | None = None,
        initialize: bool = True,
        timeout: float = TIMEOUT,
    ) -> None:
        self.server = server
        self.version = version
        self.capabilities = capabilities or {}
        self.client_info = client_info or {"name": "mcpio-tests", "version": "1.0.0"}
        self.handlers: dict[str, Handler] = {"ping": lambda params: {}}
        self.handlers.update(handlers or {})
        self._initialize = initialize
        self.timeout = timeout
        self.init_result: dict[str, Any] = {}
        self.frames: list[tuple[str, Any]] = []
        self.received: list[Any] = []  # messages from the server, in order
        self.server_requests: list[dict[str, Any]] = []  # unanswered requests from the server
        self.failures: list[BaseException] = []
        self._next_id = 0
        self._ours: dict[Any, str] = {}  # our request id -> method
        self._theirs: dict[Any, str] = {}  # server request id -> method
        self._waiting: dict[Any, asyncio.Future] = {}
        self._arrived = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Peer:
        self._end, server_end = memory_pair()
        # Server.serve closes its end when the session is over: our reader then sees EOF.
        self._server_task = asyncio.create_task(self.server.serve(server_end))
        self._reader = asyncio.create_task(self._read())
        if self._initialize:
            await self.initialize()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
        if self.failures and exc[0] is None:
            raise self.failures[0]

    async def close(self) -> None:
        """Close our end (stdin EOF, in stdio terms) and wait until the server has finished."""
        await self._end.aclose()
        async with asyncio.timeout(self.timeout):
            await asyncio.gather(self._server_task, self._reader, *self._tasks)

    async def initialize(self, version: str | None = None) -> dict[str, Any]:
        """``initialize`` + ``notifications/initialized``; the negotiated version is used from then on."""
        self.version = version or self.version
        self.init_result = await self.call(
            "initialize",
            {"protocolVersion": self.version, "capabilities": self.capabilities, "clientInfo": self.client_info},
        )
        self.version = self.init_result["protocolVersion"]
        await self.notify("notifications/initialized")
        return self.init_result

    # ------------------------------------------------------------------ checking
    def _check(self, msg: Any, method: str | None) -> None:
        wire.check(msg, self.version, method)
        check_strict(msg, self.version, method)

    def _fail(self, exc: BaseException) -> None:
        self.failures.append(exc)
        for fut in self._waiting.values():
            if not fut.done():
                fut.set_exception(exc)

    # ------------------------------------------------------------------ reading
    async def _read(self) -> None:
        while True:
            try:
                frame = await self._end.receive()
            except EndOfStream:
                return
            try:
                msg = json.loads(frame)
            except ValueError:
                self._fail(AssertionError(f"the server wrote a frame that is not JSON: {frame[:300]!r}"))
                continue
            self.frames.append(("in", msg))
            self.received.append(msg)
            try:
                self._on_message(msg)
            except AssertionError as exc:
                self._fail(exc)
            self._arrived.set()
            self._arrived = asyncio.Event()

    def _on_message(self, msg: Any) -> None:
        assert isinstance(msg, dict), f"the server sent a batch or a non-object: {msg!r}"
        if "method" in msg:
            self._check(msg, None)
            if "id" in msg:
                self._theirs[msg["id"]] = msg["method"]
                handler = self.handlers.get(msg["method"])
                if handler is None:
                    self.server_requests.append(msg)
                else:
                    self._spawn(self._answer(msg, handler))
            return
        method = self._ours.get(msg.get("id"))
        self._check(msg, method)
        fut = self._waiting.pop(msg.get("id"), None)
        assert fut is not None, f"a response for no request in flight: {msg}"
        fut.set_result(msg)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: dict[str, Any], handler: Handler) -> None:
        try:
            result = handler(msg.get("params") or {})
            if asyncio.iscoroutine(result):
                result = await result
        except MCPError as exc:
            await self.respond_error(msg["id"], exc.to_error_object())
        else:
            await self.respond(msg["id"], result)

    # ------------------------------------------------------------------ writing
    async def send(self, msg: dict[str, Any], *, check: bool = True) -> None:
        """Validate (unless ``check`` is False: a deliberately invalid message) and send ``msg``."""
        method = self._theirs.get(msg.get("id")) if "method" not in msg else None
        if check:
            self._check(msg, method)
        self.frames.append(("out", msg))
        await self._end.send(json.dumps(msg, separators=(",", ":")).encode())

    async def respond(self, id_: Any, result: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "id": id_, "result": result})

    async def respond_error(self, id_: Any, error: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "id": id_, "error": error})

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)

    async def start(
        self, method: str, params: dict[str, Any] | None = None, *, check: bool = True
    ) -> tuple[int, asyncio.Future]:
        """Send a request; returns its id and a future for the whole response message."""
        self._next_id += 1
        id_ = self._next_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self._ours[id_] = method
        fut = asyncio.get_running_loop().create_future()
        self._waiting[id_] = fut
        await self.send(msg, check=check)
        return id_, fut

    async def request(self, method: str, params: dict[str, Any] | None = None, *, check: bool = True) -> dict[str, Any]:
        """Send a request and return the whole response message (result or error)."""
        _, fut = await self.start(method, params, check=check)
        async with asyncio.timeout(self.timeout):
            return await fut

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return its result; an error response fails the test."""
        resp = await self.request(method, params)
        assert "result" in resp, f"{method} failed: {resp}"
        return resp["result"]

    async def error(self, method: str, params: dict[str, Any] | None = None, *, check: bool = True) -> dict[str, Any]:
        """Send a request that must fail; returns the error object."""
        resp = await self.request(method, params, check=check)
        assert "error" in resp, f"{method} should have failed: {resp}"
        return resp["error"]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
        p: dict[str, Any] = {"name": name, **params}
        if arguments is not None:
            p["arguments"] = arguments
        return await self.call("tools/call", p)

    async def list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """Follow ``nextCursor`` to the end; returns every item of every page."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] | None = None
        while True:
            result = await self.call(method, params)
            items.extend(result[key])
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}

    # ------------------------------------------------------------------ waiting
    async def wait_for(self, pred: Callable[[Any], bool], *, start: int = 0) -> Any:
        """The first message from the server (from index ``start``) for which ``pred`` holds."""
        i = start
        async with asyncio.timeout(self.timeout):
            while True:
                while i < len(self.received):
                    if pred(self.received[i]):
                        return self.received[i]
                    i += 1
                await self._arrived.wait()

    async def notification(self, method: str, *, start: int = 0) -> dict[str, Any]:
        """Params of the first ``method`` notification (waits for it)."""
        msg = await self.wait_for(lambda m: m.get("method") == method and "id" not in m, start=start)
        return msg.get("params") or {}

    async def server_request(self, method: str) -> dict[str, Any]:
        """The first request ``method`` the server sent us that no handler answered (waits)."""
        return await self.wait_for(lambda m: m.get("method") == method and "id" in m and m in self.server_requests)

    def notifications(self, method: str) -> list[dict[str, Any]]:
        """Params of every ``method`` notification received so far."""
        return [m.get("params") or {} for m in self.received if m.get("method") == method and "id" not in m]

    async def barrier(self) -> None:
        """A ping round trip: every frame the server wrote before answering it has arrived."""
        assert await self.call("ping") == {}
