"""Layer 3: the one async engine for both roles (style rule 3; its place in a request's way:
docs/project/architecture.md, step 3).

A :class:`Session` joins a transport to a sans-IO :class:`Connection`. ``run()`` reads frames,
decodes them, feeds the connection and acts on its events:

* each incoming request runs in its own task, unless the framework's ``answer(session, event)``
  gives its encoded response on the reader's stack, or its ``relay(session, event)`` forwards it
  to another peer and ends it later with :meth:`settle` (a :class:`Relayed` stands for it while
  in flight); ``None`` from both: ``on_request`` serves it in a task. An answer goes through the
  transport's ``send_nowait`` / ``answer_nowait`` when they take it at once. At most
  ``max_in_flight`` run together (each item of a batch counts); past that the session stops
  reading: backpressure, never an unbounded queue. With ``inline_requests`` (a modern
  Streamable HTTP POST) the request runs in ``run()``'s own task;
* a transport whose frames arrive on another task (a legacy HTTP POST) may hand one over with
  :meth:`feed` when :meth:`reading` says the reader waits on nothing queued (order is kept); one
  with ``push`` hands each frame read while its queue is empty to :meth:`take`, on its callback;
* every answer, on every route, is built by :func:`response_frame` (:func:`error_object`);
* a request of ours is awaited (:meth:`request`), or answered by a call on the reader's stack
  (:meth:`request_nowait`): both wait in one table, failed alike when the connection ends;
* ``notifications/cancelled`` cancels the request's task and no response is sent;
* a peer's request that the transport marks as related to one of ours (``relates``; a
  :class:`Related` frame) runs in a copy of the context :meth:`request` was called in;
* at end of stream every request already received is still answered (within
  ``drain_timeout``), our own pending requests fail with ConnectionClosed, and ``run`` returns.

The framework supplies ``on_request(session, event) -> result`` and
``on_notification(session, event)``; the session knows nothing about tools or resources.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from . import _jsonrpc as rpc
from ._errors import ConnectionClosed, EndOfStream, RequestTimeout, TransportError
from ._protocol._connection import Connection, invalid_request
from ._protocol._events import (
    CancelRequested,
    ErrorReceived,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from ._protocol._framing import Decoded, Oversized, Related
from ._replies import (
    Answered,
    OnAnswer,
    ProgressCallback,
    ProgressRoutes,
    Relayed,
    error_object,
    expire,
    response_frame,
    task_outcome,
)
from ._transports._base import Transport, abilities, related, serving

log = logging.getLogger("mcpio.session")

__all__ = ["Answered", "OnAnswer", "Relayed", "Session", "error_object", "response_frame", "task_outcome"]

RequestHandler = Callable[["Session", RequestReceived], Awaitable[Any]]
SyncAnswer = Callable[["Session", RequestReceived], bytes | None]
Relay = Callable[["Session", RequestReceived], Relayed | None]
NotificationHandler = Callable[["Session", NotificationReceived], Awaitable[None] | None]


class Session:
    """An MCP peer on one transport. See the module docstring for the contract."""

    def __init__(
        self,
        transport: Transport,
        connection: Connection,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler | None = None,
        max_in_flight: int = 1024,
        drain_timeout: float = 30.0,
        answer: SyncAnswer | None = None,
        relay: Relay | None = None,
        expose_errors: bool = True,
        inline_requests: bool = False,
    ) -> None:
        self.transport = transport
        offers = abilities(transport)  # read once: a transport's abilities do not change
        self._routing_key = transport if offers.routing_key is None else offers.routing_key  # routing_key()
        self._answer = answer  # never waits, sends nothing of its own (module docstring)
        self._relay = relay  # never waits; what it starts ends with settle() (module docstring)
        self.answers_only = answer is not None  # Engine.answers_only (_http_legacy)
        self._send_nowait = offers.send_nowait
        self._answer_nowait = offers.answer_nowait
        self._unanswered = offers.unanswered
        self._close_reason = offers.close_reason
        # our request id -> the context it was sent from, kept while it is pending (offers.relates)
        self._origins: dict[Any, contextvars.Context] | None = {} if offers.relates else None
        self.connection = connection
        self._on_request = on_request
        self._on_notification = on_notification
        self._max_in_flight = max_in_flight
        self._drain_timeout = drain_timeout
        self._tasks: dict[Any, asyncio.Future[None]] = {}  # a request's Task, or its Relayed
        self._room = asyncio.Event()  # set while fewer than max_in_flight requests run
        self._room.set()
        self._has_room = True  # self._room.is_set()
        self._pending: dict[Any, asyncio.Future[Any] | Answered] = {}
        self._progress = ProgressRoutes()
        self.closed = False  # run() has ended: nothing more is sent (read only)
        self._aborted = False
        self.closing = asyncio.Event()  # set when the transport ended: long-lived handlers finish up
        self.state: dict[str, Any] = {}  # per-connection data for the framework (subscriptions, log level …)
        self.expose_errors = expose_errors  # an unexpected exception's text to the peer (False: its type only)
        self.inline_requests = inline_requests  # serve requests in run()'s own task (module docstring)
        self._reading = False  # run() waits on receive() (feed may go ahead of it)
        self._feeding = False  # a feed() is under way (another waits its turn in the queue)
        self._context = contextvars.copy_context()  # run()'s, once it runs: what take() serves in
        self.loop: asyncio.AbstractEventLoop | None = None  # run()'s (read only; asking is a getpid() on 3.11)
        if offers.push is not None:
            offers.push(self.take)

    # ------------------------------------------------------------------ main loop
    async def run(self) -> None:
        """Serve until the transport ends; then answer what was received and return."""
        transport = self.transport
        receive = transport.receive
        conn_receive = self.connection.receive
        self._context = contextvars.copy_context()  # what a request's task copies, here or in take()
        self.loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._has_room:
                    await self._room.wait()
                self._reading = True
                try:
                    frame = await receive()
                except EndOfStream:
                    break
                except TransportError as exc:
                    log.warning("transport failed: %s", exc)
                    break
                finally:
                    self._reading = False
                try:
                    if type(frame) is Oversized:
                        if self.connection.role == "server":
                            why = f"a message of {frame.size} bytes exceeds this server's limit of {frame.limit} bytes"
                            error = invalid_request(why + "; it was discarded (raise max_message_size to accept it)")
                            await self._send_obj(rpc.error_response(None, error))
                        else:  # a client never answers a server's garbage
                            log.warning(
                                "skipping a message of %d bytes from the server: over this client's limit of "
                                "%d bytes (max_line_size)",
                                frame.size,
                                frame.limit,
                            )
                        continue
                    origin = None  # the context of the request of ours this frame relates to
                    try:
                        if type(frame) is Related:
                            if self._origins is not None:
                                origin = self._origins.get(frame.to)
                            msg = rpc.decode(frame.raw)
                        else:
                            msg = frame.value if type(frame) is Decoded else rpc.decode(frame)
                    except rpc.InvalidMessage as exc:
                        if self.connection.role == "server":
                            await self._send_obj(exc.error_response())
                        else:  # a client never answers a server's garbage (stray stdout prints); it skips it
                            log.warning(
                                "skipping a line from the server that is not JSON: %.200r",
                                frame.raw if isinstance(frame, (Decoded, Related)) else bytes(frame),
                            )
                        continue
                except TransportError as exc:  # answering the garbage failed: the peer is gone
                    log.debug("transport failed while answering a bad message: %s", exc)
                    break
                for ev in conn_receive(msg):
                    if type(ev) is RequestReceived and not self._has_room:
                        await self._room.wait()  # a batch counts item by item against max_in_flight
                    if self._aborted:  # the peer is gone: the rest of a batch never starts
                        break
                    if not self._act(ev, origin):
                        await self._dispatch(ev)
                if self._aborted:
                    break
        finally:
            await self._finish()

    def take(self, frame: Any) -> Any:
        """The ``push`` ability's callback (module docstring): serve ``frame`` now when that needs
        no waiting (:meth:`_act`), and return None; else return what to queue for :meth:`run`
        (decoded, when it was): a notification, a batch, garbage, a marker, a Related frame, or
        anything while :meth:`run` is not :meth:`reading`."""
        kind = type(frame)
        if not (kind is bytes or kind is Decoded) or not self._reading or self._feeding or not self._has_room:
            return frame  # reading(), inline: this runs for every frame
        if self._aborted:
            return frame
        if kind is Decoded:
            msg = frame.value
        else:
            try:
                msg = rpc.decode(frame)
            except rpc.InvalidMessage:
                return frame
        if type(msg) is not dict or "id" not in msg or (self.inline_requests and "method" in msg):
            return frame if kind is Decoded else Decoded(frame, msg)
        try:
            for ev in self.connection.receive(msg):  # one event at most: a request or an answer
                if not self._act(ev, self._context):  # a Reply: the protocol layer refusing
                    key = object()  # sent in a task of its own (the transport may make it wait)
                    loop = asyncio.get_running_loop()
                    self._track(key, loop.create_task(self._sent(key, self._dispatch(ev))))
        except Exception:  # a bug here must not reach the transport's callback (it would close it)
            log.exception("could not serve a message on the transport's callback: %.200r", frame)
        return None

    def _act(self, ev: Any, origin: contextvars.Context | None) -> bool:
        """Act on ``ev`` if that needs no waiting: start a request (not with ``inline_requests``),
        hand an answer to the request of ours it answers. False: it is :meth:`_dispatch`'s."""
        t = type(ev)
        if t is RequestReceived and not self.inline_requests:
            self._start(ev, origin)
        elif t is ResponseReceived or t is ErrorReceived:
            fut = self._pending.pop(ev.id, None)
            if self._origins is not None:  # answered: nothing more comes on its stream
                self._origins.pop(ev.id, None)
            if fut is not None and not fut.done():
                if t is ResponseReceived:
                    fut.set_result(ev.result)
                else:
                    fut.set_exception(ev.error)
        else:
            return False
        return True

    def reading(self) -> bool:
        """Whether :meth:`feed` may serve a frame now: the reader waits on the transport, no other
        feed is under way, there is room in flight."""
        return self._reading and not self._feeding and self._has_room and not self._aborted

    def feed(self, message: dict[str, Any]) -> Awaitable[None] | None:
        """Serve ``message`` (one request, decoded, never queued) in the caller's task as ``run()``
        would, only when :meth:`reading` said so just before. Returns what is left to await (the
        protocol layer's refusal to send), or None: the request is started (:meth:`_start`)."""
        ev = self.connection.receive_request(message)  # RequestReceived, or the Reply refusing it
        if type(ev) is RequestReceived and not self.inline_requests:
            if not self._aborted:
                self._start(ev)  # nothing here waits: no other feed can come between
            return None
        return self._feed_event(ev)

    async def _feed_event(self, ev: Any) -> None:
        self._feeding = True
        try:
            if not self._aborted:
                await self._dispatch(ev)
        finally:
            self._feeding = False

    async def _dispatch(self, ev: Any) -> None:
        t = type(ev)
        if t is RequestReceived:  # with inline_requests only: _act and feed() start the others
            await self._serve(ev)
        elif t is NotificationReceived:
            if ev.method == "notifications/progress":
                self._progress.route(ev.params)
            if self._on_notification is not None:
                try:
                    r = self._on_notification(self, ev)
                    if r is not None:
                        await r
                except Exception:
                    log.exception("notification handler for %s failed", ev.method)
        elif t is CancelRequested:  # the connection sends no answer to ev.id from now on
            if self._unanswered is not None:
                self._unanswered(ev.id)
            running = self._tasks.get(ev.id)
            if running is not None:
                # Deferred: a task cancelled before its first step never enters _serve's
                # try/finally, and its bookkeeping would stay (1,024 such wedge the session).
                # Started first, it sees the cancellation (is_cancelled) or gets it where it waits.
                asyncio.get_running_loop().call_soon(running.cancel)
        elif t is Reply:
            await self._send_obj(ev.message)

    def _start(self, ev: RequestReceived, origin: contextvars.Context | None = None) -> None:
        """Start request ``ev``: answered on this stack when ``answer`` gives its frame, else in
        a Task running :meth:`_serve` (module docstring); either in a copy of ``origin`` when
        given (the context of the request of ours it relates to, or run()'s for :meth:`take`),
        else of the caller's."""
        context = contextvars.copy_context() if origin is None else origin.copy()
        loop = self.loop or asyncio.get_running_loop()
        answer = self._answer
        if answer is not None and ev.id not in self.connection.cancelled:
            # In the context its task would have: what the tool sets stays there. No frame: no
            # tool ran (the answer declined before running one), so the task may have it.
            frame = context.run(answer, self, ev)
            if frame is not None:
                sending = self._deliver(ev.id, frame, True)  # answer serves no lifecycle request
                if sending is not None:
                    self._track(ev.id, loop.create_task(self._sent(ev.id, sending)))
                return
            relay = self._relay
            if relay is not None:
                relayed = context.run(relay, self, ev)
                if relayed is not None:  # in flight, no task: it ends with settle()
                    self._track(ev.id, relayed)
                    return
        self._track(ev.id, loop.create_task(self._serve(ev), context=context))

    def _track(self, id_: Any, task: asyncio.Future[None]) -> None:
        self._tasks[id_] = task
        if len(self._tasks) >= self._max_in_flight:
            self._has_room = False
            self._room.clear()

    async def _serve(self, ev: RequestReceived) -> None:
        id_ = ev.id
        serving.set((self._routing_key, id_))  # this task's own context: what it sends relates to id_
        try:
            try:
                if id_ in self.connection.cancelled:  # cancelled before it started: never run it
                    raise asyncio.CancelledError
                result = await self._on_request(self, ev)
            except (asyncio.CancelledError, Exception) as exc:
                sending = self._reply(ev, None, exc)
            else:
                sending = self._reply(ev, result, None)
        except BaseException:
            self._done(id_)
            raise
        if sending is None:
            self._done(id_)
        else:
            await self._sent(id_, sending)

    def relayed(self, on_cancel: Callable[[], None]) -> Relayed:
        """What ``relay`` returns for a request it started (:class:`Relayed`, on this session's loop)."""
        return Relayed(on_cancel, loop=self.loop or asyncio.get_running_loop())

    def settle(self, ev: RequestReceived, result: Any, exc: BaseException | None) -> None:
        """End request ``ev`` that ``relay`` started: answer it with ``result``, or the error of
        ``exc`` (a CancelledError when its :class:`Relayed` was cancelled: nothing is sent), as
        :meth:`_serve` ends the request its task serves. Called once, on any stack."""
        relayed = self._tasks.get(ev.id)
        if relayed is not None and not relayed.done():
            relayed.set_result(None)  # what waits for it (the end of the session) is done waiting
        sending = self._reply(ev, result, exc)
        if sending is None:
            self._done(ev.id)
        else:  # the answer waits for the transport: a task sends it, and the request ends then
            loop = self.loop or asyncio.get_running_loop()
            self._tasks[ev.id] = loop.create_task(self._sent(ev.id, sending))

    def _reply(self, ev: RequestReceived, result: Any, exc: BaseException | None) -> Awaitable[None] | None:
        """:meth:`_deliver` of :func:`response_frame` (``result``, or ``exc`` the handler raised)."""
        try:
            frame = response_frame(ev.id, ev.method, result, exc, self.expose_errors)
        except Exception:  # an error object that cannot be encoded either: a bug below us
            log.exception("could not encode the answer to %r", ev.id)
            frame = response_frame(ev.id, ev.method, None, RuntimeError("unencodable error"), False)
        # The only request in flight, answered from its task: no other answer can join its write.
        return self._deliver(ev.id, frame, exc is None, len(self._tasks) == 1)

    def _deliver(self, id_: Any, frame: bytes, ok: bool, now: bool = False) -> Awaitable[None] | None:
        """Record that request ``id_`` is answered by ``frame`` (``ok``: not an error) and send it
        (``now``: nothing else is due to join its write, the ``send_nowait`` ability's flag).
        Returns the send still to await, or None: taken at once, or nothing to send (cancelled,
        a batch still waiting for other answers, or a failure below us: logged)."""
        try:
            out = self.connection.respond_encoded(id_, frame, ok)
            if out is None:
                return None
            if type(out) is not bytes:  # a batch's answer, complete
                out = rpc.encode(out)
            elif self._answer_nowait is not None and self._answer_nowait(id_, out):
                return None
            if self._send_nowait is not None and self._send_nowait(out, now):
                return None
            return self.transport.send(out)
        except Exception:  # a bug below us must not kill the session silently
            log.exception("could not send the answer to %r", id_)
            return None

    def answer_admitted(self, message: dict[str, Any]) -> bytes | None:
        """The encoded answer to ``message`` (one request; :meth:`reading` said so just before) when
        the connection admits it from memory (``Connection.ready_version``) and ``answer`` gives
        it; else None: :meth:`feed` it. Nothing is recorded: nothing of it is ever in flight."""
        answer = self._answer
        if answer is None or self._aborted:
            return None
        id_, method, params = message["id"], message["method"], message.get("params")
        version = self.connection.ready_version(id_, method, params)
        if version is None:
            return None
        return contextvars.copy_context().run(answer, self, RequestReceived(id_, method, params, version))

    async def _sent(self, id_: Any, sending: Awaitable[None]) -> None:
        try:
            await sending
        except TransportError as exc:
            log.debug("could not send the answer to %r: %s", id_, exc)
        except Exception:  # a bug below us must not kill the session silently
            log.exception("could not send the answer to %r", id_)
        finally:
            self._done(id_)

    def _done(self, id_: Any) -> None:
        self._tasks.pop(id_, None)
        if not self._has_room and len(self._tasks) < self._max_in_flight:
            self._has_room = True
            self._room.set()

    async def _finish(self) -> None:
        self.closing.set()
        pending = list(self._pending.values())
        self._pending.clear()
        if pending:
            closed = self._close_reason
            reason = await closed() if closed is not None else "the connection closed before the peer answered"
            for fut in pending:
                if not fut.done():
                    fut.set_exception(ConnectionClosed(reason))
        if self._tasks:
            tasks = list(self._tasks.values())
            _, late = await asyncio.wait(tasks, timeout=self._drain_timeout)
            for t in late:
                t.cancel()
            if late:
                await asyncio.wait(late, timeout=5)
        self.closed = True
        self.connection.close()

    # ------------------------------------------------------------------ sending
    def related(self, id_: Any, sending: Awaitable[Any]) -> Awaitable[Any]:
        """``sending`` (what request ``id_``'s handler sends), to await, related to it (``_base.related``)."""
        return related(self._routing_key, id_, sending)

    def _send_obj(self, obj: Any) -> Awaitable[None]:
        return self.transport.send(rpc.encode(obj))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification; silently dropped once the session has closed."""
        if self.closed:
            return
        try:
            await self._send_obj(self.connection.notify(method, params))
        except TransportError as exc:
            log.debug("dropping %s: %s", method, exc)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = 60.0,
        on_progress: ProgressCallback | None = None,
        max_timeout: float | None = None,
        on_sent: Callable[[Any], None] | None = None,
    ) -> Any:
        """Send a request and wait for its result, at most ``timeout`` seconds; with ``max_timeout``
        it carries a progress token, each ``notifications/progress`` restarts the ``timeout``
        clock, and the wait never exceeds ``max_timeout`` in all (spec lifecycle §Timeouts).
        ``on_sent(id)`` gets the request's JSON-RPC id just before it is sent.

        Raises the peer's :class:`MCPError`, :class:`RequestTimeout` (after sending
        ``notifications/cancelled``) or :class:`ConnectionClosed`. Cancelling the caller also
        cancels the request on the peer.
        """
        if self.closed:
            raise ConnectionClosed(f"cannot send {method}: the connection is closed")
        conn = self.connection
        loop = self.loop or asyncio.get_running_loop()
        start = loop.time()
        timer: list[asyncio.TimerHandle] = []  # the deadline, once armed: it fails fut with TimeoutError
        token = None
        if on_progress is not None or max_timeout is not None:

            def progressed(progress: float, total: float | None, message: str | None) -> Any:
                if timer and timeout is not None and max_timeout is not None:
                    timer[0].cancel()
                    timer[0] = loop.call_at(min(loop.time() + timeout, start + max_timeout), expire, fut)
                if on_progress is not None:
                    return on_progress(progress, total, message)
                return None

            params, token = self._progress.open(params, progressed)
        id_, msg = conn.request(method, params)
        fut = loop.create_future()
        self._pending[id_] = fut
        origins = self._origins
        if origins is not None:  # what the peer asks on this request's stream is served in this context
            origins[id_] = contextvars.copy_context()
        try:
            if on_sent is not None:
                on_sent(id_)
            await self._send_obj(msg)
            if timeout is None and max_timeout is None:
                return await fut
            limits = [t for t in (timeout, max_timeout) if t is not None]
            timer.append(loop.call_at(start + min(limits), expire, fut))
            try:
                return await fut
            finally:
                timer[0].cancel()
        except TimeoutError:
            elapsed = loop.time() - start
            if max_timeout is not None and (timeout is None or elapsed >= max_timeout - 0.001):
                why = f"reached its maximum of {max_timeout:g} s"
            elif max_timeout is not None:
                why = f"got no answer and no progress for {timeout:g} s"
            else:
                why = f"got no answer within {timeout:g} s"
            await self._abandon(id_, f"timed out: {why}")
            raise RequestTimeout(f"{method} {why}; the request was cancelled") from None
        except asyncio.CancelledError:
            await self._abandon(id_, "cancelled by the requester")
            raise
        finally:
            self._pending.pop(id_, None)
            if origins is not None:
                origins.pop(id_, None)
            if token is not None:
                self._progress.close(token)

    def request_nowait(
        self,
        method: str,
        params: dict[str, Any] | None,
        on_answer: OnAnswer,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send a request now, answered by ``on_answer(result, None)`` or ``on_answer(None, exc)``
        (the peer's :class:`MCPError`, or :class:`ConnectionClosed`) on the reader's stack, no task
        waiting for it: when the transport takes the frame at once (``send_nowait``). Returns its
        JSON-RPC id (:meth:`cancel_nowait`), or None: nothing was sent, :meth:`request` it. With
        ``on_progress`` it carries a progress token, and each ``notifications/progress`` for it is
        given to ``on_progress(progress, total, message)`` on the reader's stack until it is
        answered or cancelled. No timeout: a caller needing one awaits :meth:`request`."""
        send_nowait = self._send_nowait
        if self.closed or send_nowait is None:
            return None
        answered = Answered(on_answer)
        if on_progress is not None:
            params, answered.token = self._progress.open(params, on_progress)
            answered.progress = self._progress
        id_, msg = self.connection.request(method, params)
        if not send_nowait(rpc.encode(msg), True):
            self.connection.forget(id_)
            answered.drop()
            return None
        self._pending[id_] = answered
        if self._origins is not None:  # as request(): what the peer asks on its stream, in this context
            self._origins[id_] = contextvars.copy_context()
        return id_

    def cancel_nowait(self, id_: Any, reason: str) -> None:
        """Give up request ``id_`` of :meth:`request_nowait` (its ``on_answer`` is never called) and
        tell the peer (``notifications/cancelled``), as :meth:`request` does when its caller is cancelled."""
        pending = self._pending.pop(id_, None)
        if pending is None:
            return
        if type(pending) is Answered:  # (a request() of the same id cannot be: ids are not reused)
            pending.drop()
        if self._origins is not None:
            self._origins.pop(id_, None)
        self.connection.forget(id_)
        if self.closed:
            return
        frame = rpc.encode(self.connection.notify("notifications/cancelled", {"requestId": id_, "reason": reason}))
        if self._send_nowait is None or not self._send_nowait(frame, True):
            key = object()  # sent in a task of its own (the transport makes it wait), as take() does
            loop = self.loop or asyncio.get_running_loop()
            self._track(key, loop.create_task(self._sent(key, self.transport.send(frame))))

    async def _abandon(self, id_: Any, reason: str) -> None:
        self.connection.forget(id_)
        if not self.closed:
            await self.notify("notifications/cancelled", {"requestId": id_, "reason": reason})

    def abort(self, grace: float = 0.0) -> None:
        """The peer is gone: requests in flight get at most ``grace`` more seconds (not the full
        ``drain_timeout``), then are cancelled; nothing more is read or started."""
        self._aborted = True
        self._has_room = True
        self._room.set()  # a run loop waiting for room sees the abort
        self._drain_timeout = min(self._drain_timeout, grace)
        tasks = list(self._tasks.values())
        if tasks:
            asyncio.get_running_loop().call_later(grace, lambda: [t.cancel() for t in tasks if not t.done()])

    def in_flight(self) -> int:
        return len(self._tasks)
