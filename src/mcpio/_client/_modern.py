"""The 2026-07-28 era seen from the client: stateless requests, input rounds, listen streams.

Theory of operation
-------------------
There is no handshake and no session state on the server: every request carries, in
``params._meta``, the protocol version, the client's capabilities, its name and version, and
the log level when the client wants logs (spec-notes §3). :class:`ModernEra` adds them to
every request the :class:`~mcpio.Client` sends, and handles three things on the way back:

* **-32022** (UnsupportedProtocolVersion): pick a mutually supported version from
  ``data.supported`` and send the request again, at most :data:`MAX_VERSION_RETRIES` times;
  with no modern version in common the error reaches the caller as
  :class:`~mcpio.UnsupportedProtocolVersion` (era detection may then fall back to a legacy
  version, see ``_era``).
* **input_required** (multi round-trip requests, spec basic/patterns/mrtr): answer every entry
  of ``inputRequests`` with the client's handlers (``client.answer(method, params)``: sampling,
  elicitation, roots) and send the same request again, as a new JSON-RPC request (new id),
  with ``inputResponses`` and the ``requestState`` echoed verbatim (left out when the server
  sent none), for as many rounds as the server needs, up to ``client.max_input_rounds``.
* **task** (the tasks extension, declared unless ``Client(tasks=False)``): a ``tools/call``
  answered with a task handle is followed to its end by polling, and, for a caller who wants
  each status, by a listen stream of its own naming the task (``_tasks``, :meth:`ModernEra.listen`).
* **resultType**: ``"complete"`` (or absent: a server of an earlier revision) is the final
  result, returned without the ``resultType`` key so that results look the same in both eras;
  any other kind is returned as it came, ``resultType`` included.

Change notifications come through ``subscriptions/listen`` (spec-notes §9b): one long-lived
request whose filter is fixed when it is sent. The era keeps at most one stream open; its
filter asks for every ``list_changed`` the server announces (when the client has an
``on_notification`` callback to give them to, or a cache they invalidate) and ``resources/updated`` for the subscribed
URIs. Changing the filter opens a new stream, waits for its
``notifications/subscriptions/acknowledged`` and only then cancels the old one
(``notifications/cancelled``), so no notification is lost or delivered twice: notifications
tagged with another stream's ``subscriptionId`` are dropped. ``logging/setLevel``, ``ping`` and
``notifications/roots/list_changed`` do not exist in this era: the log level becomes the
per-request ``logLevel``, the other two do nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import (
    MODERN_ERROR_CODES,
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    MCPError,
    MethodNotFound,
    RemoteProtocolError,
    RequestTimeout,
    TransportError,
)
from .._session import task_outcome
from .._versions import (
    INPUT_REQUIRED_METHODS,
    LATEST,
    META_CLIENT_CAPABILITIES,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    MODERN,
    MODERN_VERSIONS,
    RULES,
    Rules,
)
from ._handlers import typed_error
from ._opening import ALSO_DECLARED
from ._tasks import await_task

if TYPE_CHECKING:
    from .._replies import ProgressCallback
    from .._session import OnAnswer, Session
    from ._client import Client

log = logging.getLogger("mcpio.client")

MAX_VERSION_RETRIES = 2  # -32022 answers followed per request
MAX_LISTEN_RESTARTS = 5  # a listen stream that ends is reopened this many times in a row
_LIST_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}


def pick_version(supported: Any, ours: tuple[str, ...] = MODERN_VERSIONS) -> str | None:
    """Our newest version that the server lists in ``supported`` (None if none)."""
    if not isinstance(supported, list):
        return None
    return next((v for v in ours if v in supported), None)


def describe(result: dict[str, Any], version: str) -> dict[str, Any]:
    """A DiscoverResult in the shape the Client reads (that of an initialize result)."""
    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = result.get("serverInfo")  # some servers put it beside the capabilities
    caps = result.get("capabilities")
    out = {k: v for k, v in result.items() if k != "resultType"}
    out.update(
        protocolVersion=version,
        capabilities=caps if isinstance(caps, dict) else {},
        serverInfo=info if isinstance(info, dict) else {},
    )
    return out


class _Stream:
    """One ``subscriptions/listen`` request: its filter, id, acknowledgement and task."""

    __slots__ = ("acked", "error", "filter", "honoured", "id", "task")

    def __init__(self, filt: dict[str, Any]) -> None:
        self.filter = filt
        self.id: Any = None
        self.acked = asyncio.Event()
        self.honoured: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[Any] | None = None


class ModernEra:
    """The stateless era. One instance per connection (it holds the version in use)."""

    name = MODERN

    def __init__(self, client: Client, protocol_version: str = LATEST) -> None:
        if protocol_version not in MODERN_VERSIONS:
            raise ValueError(
                f"protocol_version must be one of {', '.join(MODERN_VERSIONS)} for the modern era, not {protocol_version!r}"
            )
        self.client = client
        self.version: str = protocol_version
        self.rules: Rules = RULES[protocol_version]
        self.log_level: str | None = client.log_level
        self.discovered: dict[str, Any] | None = None  # the probe's DiscoverResult, reused by start
        self._session: Session | None = None
        self._uris: set[str] = set()
        self._stream: _Stream | None = None  # the newest listen stream
        self._delivering: _Stream | None = None  # the stream whose notifications reach the client
        self._lock = asyncio.Lock()
        self._restarts = 0  # listen streams reopened since one was last acknowledged
        self._private: dict[Any, Callable[[str, Any], None]] = {}  # listen()'s streams by id -> heard

    # ------------------------------------------------------------------ start
    async def discover(self, session: Session, timeout: float | None) -> Any:
        """``server/discover`` (with our _meta and the -32022 retry)."""
        return await self._send(session, "server/discover", {}, timeout=timeout, max_timeout=None, on_progress=None)

    async def start(self, client: Client, session: Session) -> dict[str, Any]:
        """The server's description, from ``server/discover`` (the probe's answer if there was one)."""
        self._session = session
        result = self.discovered
        if result is None:
            try:
                result = await self.discover(session, client.timeout)
            except MCPError as exc:
                # Only an answer says the server does not speak the era; a server gone or silent does not.
                if exc.code in MODERN_ERROR_CODES or isinstance(exc, (ConnectionClosed, RequestTimeout)):
                    raise
                raise MCPError(
                    f"the server does not speak the 2026-07-28 era (server/discover: {exc.message}); "
                    "connect with era='legacy' or era='auto'",
                    exc.code,
                    exc.data,
                ) from None
        if not isinstance(result, dict):
            raise RemoteProtocolError(
                f"the server answered server/discover with {type(result).__name__}, not an object"
            )
        better = pick_version(result.get("supportedVersions"))
        if better is not None and better != self.version and self.version not in result["supportedVersions"]:
            self.version, self.rules = better, RULES[better]
        described = describe(result, self.version)
        await self._relisten(wait=False, caps=described["capabilities"])
        return described

    # ------------------------------------------------------------------ requests
    def meta(self) -> dict[str, Any]:
        """The per-request ``_meta`` of this era (logs are opt-in per request: the level set by
        ``log_level=`` or ``set_logging_level``, else the client's default: ``Declaring.modern_meta``)."""
        return self.client.modern_meta(self.version, self.log_level)

    async def _send(
        self,
        session: Session,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        on_sent: Any = None,
    ) -> Any:
        """One request with this era's _meta; follows -32022 to a mutually supported version."""
        for attempt in range(MAX_VERSION_RETRIES + 1):
            try:
                return await session.request(
                    method,
                    self._with_meta(params),
                    timeout=timeout,
                    max_timeout=max_timeout,
                    on_progress=on_progress,
                    on_sent=on_sent,
                )
            except MCPError as exc:
                if exc.code != UNSUPPORTED_PROTOCOL_VERSION or attempt == MAX_VERSION_RETRIES:
                    raise
                data = exc.data if isinstance(exc.data, dict) else {}
                version = pick_version(data.get("supported"))
                if version is None:
                    raise
                log.debug("%s: the server refused version %s; retrying with %s", method, self.version, version)
                self.version, self.rules = version, RULES[version]
        raise AssertionError("unreachable")  # pragma: no cover

    def _with_meta(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` as sent: with this era's ``_meta`` over the caller's (:meth:`meta`), declaring
        the extensions of ``ALSO_DECLARED`` too."""
        user_meta = params.get("_meta")
        meta = self.meta()
        also = ALSO_DECLARED.get()
        if also:
            caps = meta[META_CLIENT_CAPABILITIES]
            extensions = {**(caps.get("extensions") or {}), **also}
            meta = {**meta, META_CLIENT_CAPABILITIES: {**caps, "extensions": extensions}}
        return {**params, "_meta": {**(user_meta if isinstance(user_meta, dict) else {}), **meta}}

    def send_nowait(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        on_answer: OnAnswer,
        on_progress: ProgressCallback | None = None,
    ) -> Callable[[], None] | None:
        """``Client.send_nowait``: :meth:`request` (no timeout), its result to ``on_answer`` on the
        reader's stack when the first answer is complete; any other answer (input_required, a task,
        another version wanted) goes on in a task, in the sender's context, as :meth:`request` goes on. Returns the
        request's cancel, or None: nothing was sent."""
        base = params or {}
        rest: list[asyncio.Task[Any]] = []
        context = contextvars.copy_context()  # what goes on runs in the sender's, as request() would

        def answered(result: Any, exc: BaseException | None) -> None:
            if exc is None and type(result) is dict and result.get("resultType", "complete") != "complete":
                first = result  # request() goes on from this answer
            elif isinstance(exc, MCPError) and exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                first = None  # refused, nothing ran: request() sends it again, in a version both speak
            else:
                if exc is None and type(result) is dict:
                    result.pop("resultType", None)  # as request(): the session decoded it for this request alone
                on_answer(result, exc)
                return
            going_on = self.request(
                session, method, base, timeout=None, max_timeout=None, on_progress=on_progress, first=first
            )
            rest.append(asyncio.get_running_loop().create_task(going_on, context=context))
            rest[0].add_done_callback(lambda task: None if task.cancelled() else on_answer(*task_outcome(task)))

        id_ = session.request_nowait(method, self._with_meta(base), answered, on_progress)
        if id_ is None:
            return None

        def cancel() -> None:
            if rest:
                rest[0].cancel()
            else:
                session.cancel_nowait(id_, "cancelled by the requester")

        return cancel

    async def request(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        follow_task: bool = True,
        on_task_status: Callable[[dict[str, Any]], Any] | None = None,
        first: dict[str, Any] | None = None,
    ) -> Any:
        """Send ``method``; answer input_required rounds until the result is complete (or, with
        ``follow_task=False``, until the server answers with a task handle: returned as sent).
        ``on_task_status``: each state of the task a ``tools/call`` becomes (``await_task``).
        ``first``: the answer to its first send, received already (:meth:`send_nowait`)."""
        base = params or {}  # never changed: a round sends a copy (below)
        current = base
        rounds = self.client.max_input_rounds
        for _ in range(rounds + 1):
            if first is not None:
                result, first = first, None
            else:
                result = await self._send(
                    session, method, current, timeout=timeout, max_timeout=max_timeout, on_progress=on_progress
                )
            if not isinstance(result, dict):
                return result
            kind = result.get("resultType", "complete")
            if kind == "complete":
                result.pop("resultType", None)  # the session decoded it for this request alone
                return result
            if kind == "task" and method == "tools/call" and self.client.tasks and follow_task:
                # the tasks extension: follow the task to its result (_tasks)
                return await await_task(
                    self, session, result, timeout=timeout, max_timeout=max_timeout, on_status=on_task_status
                )
            if kind != "input_required":
                return result  # another kind of result (an extension's): as it came
            if method not in INPUT_REQUIRED_METHODS:
                raise RemoteProtocolError(
                    f"{method}: the server answered input_required, which only "
                    f"{', '.join(sorted(INPUT_REQUIRED_METHODS))} may be answered with"
                )
            current = dict(base)  # the original request again; a new id is Session.request's
            responses = await self._answer(method, result.get("inputRequests"))
            if responses is not None:
                current["inputResponses"] = responses
            if "requestState" in result:
                current["requestState"] = result["requestState"]  # verbatim, never inspected
        raise RemoteProtocolError(
            f"{method}: the server still wants input after {rounds} rounds (Client(max_input_rounds=…)); giving up"
        )

    async def _answer(self, method: str, requests: Any) -> dict[str, Any] | None:
        """``inputResponses`` for an ``inputRequests`` map (None when there was none)."""
        if requests is None:
            return None
        if not isinstance(requests, dict):
            raise RemoteProtocolError(f"{method}: inputRequests is {type(requests).__name__}, not an object")
        responses: dict[str, Any] = {}
        for key, req in requests.items():
            what = req.get("method") if isinstance(req, dict) else None
            if not isinstance(what, str):
                raise RemoteProtocolError(f"{method}: input request {key!r} has no method")
            params = req.get("params")
            try:
                responses[key] = await self.client.answer(what, params if isinstance(params, dict) else {})
            except MethodNotFound:
                raise RemoteProtocolError(
                    f"{method}: the server asked for {what} (input {key!r}), which this client did not "
                    "declare (give the Client a handler for it)"
                ) from None
        return responses

    # ------------------------------------------------------------------ era-specific operations
    async def set_logging_level(self, client: Client, level: str) -> None:
        self.log_level = level  # sent with every request from now on

    async def ping(self, client: Client) -> None:
        return None  # no ping in 2026-07-28

    async def roots_changed(self, session: Session) -> None:
        return None  # roots are asked for in input rounds, never cached by the server

    async def subscribe(self, client: Client, uri: str) -> None:
        async with self._lock:
            self._uris.add(uri)
            await self._relisten(wait=True)

    async def unsubscribe(self, client: Client, uri: str) -> None:
        async with self._lock:
            self._uris.discard(uri)
            await self._relisten(wait=True)

    # ------------------------------------------------------------------ listen streams
    def _filter(self, caps: dict[str, Any]) -> dict[str, Any]:
        """The SubscriptionFilter we want now, for a server with capabilities ``caps``."""
        filt: dict[str, Any] = {}
        if self.client.on_notification is not None or self.client._cache is not None:  # someone to tell
            for cap, flag in _LIST_FLAGS.items():
                have = caps.get(cap)
                if isinstance(have, dict) and have.get("listChanged"):
                    filt[flag] = True
        if self._uris:
            filt["resourceSubscriptions"] = sorted(self._uris)
        return filt

    async def _relisten(self, wait: bool, caps: dict[str, Any] | None = None) -> None:
        """Open a stream with the current filter, then close the previous one."""
        session = self._session
        if session is None:
            return
        filt = self._filter(self.client.server_capabilities if caps is None else caps)
        old = self._stream
        if (
            old is not None
            and old.filter == filt
            and old.error is None
            and old.task is not None
            and not old.task.done()
        ):
            if wait:  # the stream we want is open (or opening): wait for it to be acknowledged
                await self._acknowledged(old, old)
            return
        new: _Stream | None = None
        if filt:
            new = _Stream(filt)
            new.task = asyncio.get_running_loop().create_task(self._listen(session, new))
            self._stream = new
            if wait:
                await self._acknowledged(new, old)
        else:
            self._stream = None
        if old is not None:
            if self._delivering is old:
                self._delivering = new if (new is not None and new.acked.is_set()) else None
            await self._close(old)

    async def _acknowledged(self, stream: _Stream, previous: _Stream | None) -> None:
        """Wait until ``stream`` is acknowledged; on failure ``previous`` stays the stream."""
        try:
            async with asyncio.timeout(self.client.timeout):
                await stream.acked.wait()
        except TimeoutError:
            await self._close(stream)
            self._stream = previous
            raise RemoteProtocolError(
                "subscriptions/listen: the server did not acknowledge the subscription in time"
            ) from None
        if stream.error is not None:
            self._stream = previous
            raise stream.error

    async def _listen(self, session: Session, stream: _Stream) -> None:
        def sent(id_: Any) -> None:
            stream.id = id_

        gone = False
        try:
            await self._send(
                session,
                "subscriptions/listen",
                {"notifications": stream.filter},
                timeout=None,
                max_timeout=None,
                on_progress=None,
                on_sent=sent,
            )
            log.debug("the server ended subscription %r", stream.id)
        except (ConnectionClosed, TransportError):
            gone = True
        except MCPError as exc:
            stream.error = typed_error(exc, "subscriptions/listen")
            log.debug("subscriptions/listen failed: %s", exc)
        finally:
            stream.acked.set()  # wake a waiter; .error or .honoured tells what happened
            if self._delivering is stream:
                self._delivering = None
        if not gone and self._stream is stream and stream.honoured is not None and not session.closing.is_set():
            # A working stream ended (the server restarted, an HTTP connection dropped): the
            # spec's SHOULD is to listen again; a few tries, a second apart.
            self._restarts += 1
            if self._restarts <= MAX_LISTEN_RESTARTS:
                await asyncio.sleep(1.0)
                async with self._lock:
                    if self._stream is stream:  # nothing newer was opened meanwhile
                        self._stream = None
                        await self._relisten(wait=False)

    async def listen(self, session: Session, filt: dict[str, Any], heard: Callable[[str, Any], None]) -> None:
        """A ``subscriptions/listen`` stream of its own with filter ``filt`` (the tasks
        extension's ``taskIds``), beside the era's: every notification tagged with its id, its
        acknowledgement first, goes to ``heard(method, params)`` and never to the client's
        callbacks. Returns when the stream ends (cancel the caller to end it: the server is told);
        a server that refuses it is logged at debug level, not raised."""
        ids: list[Any] = []

        def sent(id_: Any) -> None:  # a -32022 retry sends it again, under a new id
            ids.append(id_)
            self._private[id_] = heard

        try:
            await self._send(
                session,
                "subscriptions/listen",
                {"notifications": filt},
                timeout=None,
                max_timeout=None,
                on_progress=None,
                on_sent=sent,
            )
        except (MCPError, ConnectionClosed, TransportError) as exc:
            log.debug("subscriptions/listen %s: %s", filt, exc)
        finally:
            for id_ in ids:
                self._private.pop(id_, None)

    async def _close(self, stream: _Stream) -> None:
        task = stream.task
        if task is not None and not task.done():
            task.cancel()  # Session.request sends notifications/cancelled for it
            with contextlib.suppress(BaseException):
                await task

    def on_notification(self, method: str, params: Any) -> bool:
        """Whether a notification reaches the client's callbacks (stale streams' do not)."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict) or META_SUBSCRIPTION_ID not in meta:
            return True
        sub_id = meta[META_SUBSCRIPTION_ID]
        private = self._private.get(sub_id) if self._private and type(sub_id) in (int, str) else None
        if private is not None:  # a stream of listen()'s
            private(method, params)
            return False
        stream = self._stream
        if method == "notifications/subscriptions/acknowledged":
            if stream is not None and stream.id == sub_id and not stream.acked.is_set():
                kept = params.get("notifications")
                stream.honoured = kept if isinstance(kept, dict) else {}
                self._delivering = stream
                self._restarts = 0
                stream.acked.set()
            return False
        delivering = self._delivering
        return delivering is not None and delivering.id == sub_id

    @property
    def subscriptions(self) -> dict[str, Any] | None:
        """What the server agreed to send on the open stream (its acknowledgement), or None."""
        stream = self._delivering
        return stream.honoured if stream is not None else None

    async def aclose(self) -> None:
        """End the listen stream (``notifications/cancelled``) before the transport closes."""
        stream, self._stream, self._delivering = self._stream, None, None
        if stream is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self._close(stream)
