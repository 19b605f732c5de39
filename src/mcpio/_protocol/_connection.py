"""The sans-IO MCP connection: messages in, events and messages out; it never awaits.

One class serves both roles (style rule 3; docs/project/architecture.md, step 2). It owns the
JSON-RPC validity of each message and batches (only under 2025-03-26, answered as one array),
the legacy lifecycle (``_state``), version negotiation, and ids: requests in flight (a
duplicate id is refused), ours awaiting a response (one to an unknown id is ignored), and
cancellation both ways (no response after ``notifications/cancelled``).
"""

from __future__ import annotations

from typing import Any

from .. import _jsonrpc as rpc
from .. import _log
from .._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
    MCPError,
)
from .._versions import (
    ALL_CLIENT_REQUESTS,
    LATEST,
    LEGACY_ONLY_METHODS,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN_ONLY_METHODS,
    MODERN_VERSIONS,
    RULES,
    SUPPORTED_VERSIONS,
    Rules,
    negotiate,
)
from . import _state as st
from ._events import (
    CancelRequested,
    ErrorReceived,
    Event,
    NotificationReceived,
    Reply,
    RequestId,
    RequestReceived,
    ResponseReceived,
)

log = _log.logger("mcpio.protocol", globals())


class _Batch:
    """Collects the responses of one incoming batch until every request in it is answered."""

    __slots__ = ("pending", "responses")

    def __init__(self) -> None:
        self.pending: set[RequestId] = set()
        self.responses: list[Any] = []


class Connection:
    """Protocol state of one MCP connection, for ``role`` "client" or "server"."""

    def __init__(self, role: str, *, stateless: bool = False, id_prefix: str | None = None) -> None:
        self.role = role
        # stateless: a server connection of the modern era only (one 2026-07-28 Streamable HTTP
        # request): every request is admitted by its _meta (-32602 without it).
        self.stateless = stateless
        self.lifecycle = st.Lifecycle(role)
        self.version: str | None = None  # negotiated legacy version
        self.rules: Rules | None = None
        self.peer_capabilities: dict[str, Any] = {}
        self.peer_info: dict[str, Any] = {}
        self._incoming: dict[RequestId, str] = {}  # id -> method, requests we must answer
        self.cancelled: set[RequestId] = set()  # ids of requests in flight the peer cancelled (read only)
        self._batches: dict[RequestId, _Batch] = {}
        self._outgoing: dict[RequestId, str] = {}  # id -> method, requests we sent
        self._next_id = 0
        # The ids of our requests: 1, 2, ...; with ``id_prefix`` the strings "<id_prefix>1", ...
        # (one of several connections serving one session, each with its own prefix: ids stay
        # unique within the session, JSON-RPC 2.0 §4; a legacy HTTP session shared by processes).
        self._id_prefix = id_prefix
        # Methods admitted in READY, admitted again from memory (READY is final until close, which
        # empties it); a stateless connection adds none.
        self._ready_admits: set[str] = set()

    # ------------------------------------------------------------------ receiving
    def receive(self, msg: Any) -> list[Event]:
        """Process one decoded JSON value (a message or a batch) and return its events."""
        if type(msg) is list:
            return self._receive_batch(msg)
        out: list[Event] = []
        self._receive_one(msg, out, None)
        return out

    def _receive_batch(self, items: list[Any]) -> list[Event]:
        rules = self.rules
        if rules is None or not rules.batching:
            why = "this connection negotiated " + (self.version or "no version yet")
            return [_invalid(None, f"JSON-RPC batches are accepted only with protocol version 2025-03-26 ({why})")]
        if not items:
            return [_invalid(None, "empty batch")]
        batch = _Batch()
        out: list[Event] = []
        for item in items:
            self._receive_one(item, out, batch)
        events: list[Event] = []
        for ev in out:
            if type(ev) is Reply:  # a protocol error inside a batch belongs in the batch's answer
                batch.responses.append(ev.message)
                continue
            if type(ev) is RequestReceived:
                self._batches[ev.id] = batch
            events.append(ev)
        if not batch.pending and batch.responses:
            events.append(Reply(batch.responses))
        return events

    def _receive_one(self, msg: Any, out: list[Event], batch: _Batch | None) -> None:
        try:
            kind = rpc.classify(msg)
        except rpc.InvalidMessage as exc:
            id_ = exc.id
            if id_ is not None and id_ in self._outgoing and "method" not in msg:
                # A broken answer to our request, not a peer's request: an error under that id
                # could be read as the reply to a peer request with the same id, so it is dropped.
                log.warning("ignoring a malformed answer to our request %r: %s", id_, exc.message)
                return
            out.append(Reply(exc.error_response()))
            return
        if kind == rpc.REQUEST:
            out.append(self.receive_request(msg, batch))
        elif kind == rpc.NOTIFICATION:
            self._receive_notification(msg["method"], msg.get("params"), out)
        else:
            self._receive_response(msg, kind, out)

    def receive_request(self, msg: dict[str, Any], batch: _Batch | None = None) -> RequestReceived | Reply:
        """The one event of ``msg``, classified already as a request: RequestReceived, or the Reply
        refusing it (:meth:`receive`, and Streamable HTTP, which classified the message already)."""
        id_, method, params = msg["id"], msg["method"], msg.get("params")
        if id_ in self._incoming:
            return _invalid(
                id_,
                f"request id {id_!r} is already in use by a request in flight; "
                "ids must be unique among the requests a peer has not yet been answered",
            )
        admitted: str | dict[str, Any] | None
        if self.role != st.SERVER:
            admitted = self.version
        else:
            meta = params.get("_meta") if params is not None else None
            if type(meta) is dict and (META_PROTOCOL_VERSION in meta or META_CLIENT_CAPABILITIES in meta):
                # Dual era (spec 2026-07-28 versioning §Backward Compatibility): a request with
                # modern _meta is served statelessly, whatever the connection's legacy state.
                admitted = modern_admission(method, meta)
            # (ready_version reads this memo too, for a request answered without entering this state)
            elif method in self._ready_admits:  # only while READY (emptied at close); never stateless
                admitted = self.version  # the table's answer for it in READY, again
            elif self.stateless:
                admitted = modern_admission(method, meta if type(meta) is dict else {})
            else:
                admitted = self._server_admission(method, params, batch)
            if type(admitted) is dict:
                return Reply(rpc.error_response(id_, admitted))
        self._incoming[id_] = method
        if batch is not None:
            batch.pending.add(id_)
        return RequestReceived(id_, method, params, admitted)  # type: ignore[arg-type]  # str or None

    def ready_version(self, id_: RequestId, method: str, params: dict[str, Any] | None) -> str | None:
        """The version :meth:`receive_request` would serve this request under when it admits it
        from memory alone (``method`` admitted in READY before, no ``_meta``, its id not in
        flight), else None; nothing is recorded (``Session.answer_admitted``)."""
        if method in self._ready_admits and id_ not in self._incoming and (params is None or "_meta" not in params):
            return self.version
        return None

    def _server_admission(self, method: str, params: Any, batch: _Batch | None) -> str | dict[str, Any] | None:
        """The legacy lifecycle table applied: the version the request is served under (None
        before initialize completes), or the error object refusing it."""
        lc = self.lifecycle
        if method == "initialize":
            refusal = self._initialize(params, batch)
            if refusal is not None:
                return invalid_request(refusal)
        else:
            accepts = st.SERVER_ACCEPTS[lc.state]
            if accepts is not None and method not in accepts:
                if lc.state == st.CLOSED:
                    return invalid_request("the connection is closed")
                return invalid_request(
                    f"received {method!r} before initialization completed; the client must send "
                    "'initialize' and wait for its result first (MCP lifecycle)"
                )
        rules = self.rules
        if rules is not None and method not in rules.client_requests and method in ALL_CLIENT_REQUESTS:
            return {
                "code": METHOD_NOT_FOUND,
                "message": f"Method not found: {method!r} is not a {rules.version} method"
                + (
                    " (2026-07-28 requests carry their version in params._meta)"
                    if method in MODERN_ONLY_METHODS
                    else ""
                ),
            }
        if lc.state == st.READY:  # admitted (not initialize: refused in READY), and so from now on
            self._ready_admits.add(method)
        return self.version

    def _initialize(self, params: Any, batch: _Batch | None) -> str | None:
        """A legacy ``initialize``: negotiate the version and record the client; a refusal or None."""
        lc = self.lifecycle
        if batch is not None:
            return "initialize must not be part of a JSON-RPC batch"
        if not lc.can(st.RECV_INITIALIZE):
            return "the connection is already initialized; initialize may be sent only once"
        lc.process(st.RECV_INITIALIZE)
        p = params or {}
        self.version = negotiate(p.get("protocolVersion"))
        self.rules = RULES[self.version]
        self._peer(p, "clientInfo")
        return None

    def _receive_notification(self, method: str, params: Any, out: list[Event]) -> None:
        if method == "notifications/cancelled":
            rid = params.get("requestId") if params else None
            if type(rid) not in (int, str):  # unhashable or null: nothing we could have in flight
                log.debug("ignoring cancellation with invalid requestId %r", rid)
                return
            if rid in self._incoming and self._incoming[rid] != "initialize":
                self.cancelled.add(rid)
                reason = params.get("reason")
                out.append(CancelRequested(id=rid, reason=reason if isinstance(reason, str) else None))
            else:
                log.debug("ignoring cancellation of unknown or finished request %r", rid)
            return
        if method == "notifications/initialized" and self.role == st.SERVER and self.lifecycle.can(st.RECV_INITIALIZED):
            self.lifecycle.process(st.RECV_INITIALIZED)
        out.append(NotificationReceived(method=method, params=params))

    def _receive_response(self, msg: dict[str, Any], kind: int, out: list[Event]) -> None:
        id_ = msg.get("id")
        method = self._outgoing.pop(id_, None) if (type(id_) is int or type(id_) is str) else None
        if method is None or id_ is None:
            log.debug("ignoring response to unknown request id %r", id_)
            return
        if kind == rpc.RESPONSE:
            result = msg["result"]
            if method == "initialize" and self.role == st.CLIENT:
                self._client_initialized(result)
            out.append(ResponseReceived(id=id_, method=method, result=result))
        else:
            if method == "initialize" and self.role == st.CLIENT:
                self.lifecycle.process(st.RECV_INIT_ERROR)
            out.append(ErrorReceived(id=id_, method=method, error=MCPError.from_error_object(msg.get("error"))))

    def _client_initialized(self, result: Any) -> None:
        self.lifecycle.process(st.RECV_INIT_RESULT)
        if isinstance(result, dict):
            v = result.get("protocolVersion")
            if isinstance(v, str) and v in LEGACY_VERSIONS:
                self.version = v
                self.rules = RULES[v]
            self._peer(result, "serverInfo")

    def _peer(self, fields: dict[str, Any], info_key: str) -> None:
        """The peer's capabilities and info (``info_key``) from its initialize request or result."""
        caps, info = fields.get("capabilities"), fields.get(info_key)
        self.peer_capabilities = caps if isinstance(caps, dict) else {}
        self.peer_info = info if isinstance(info, dict) else {}

    # ------------------------------------------------------------------ sending
    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[RequestId, dict[str, Any]]:
        """Build a request to the peer; returns (id, message). Responses come back as events."""
        if method == "initialize":
            self.lifecycle.process(st.SEND_INITIALIZE)
        self._next_id += 1
        id_: RequestId = self._next_id if self._id_prefix is None else f"{self._id_prefix}{self._next_id}"
        self._outgoing[id_] = method
        return id_, rpc.request(id_, method, params)

    def forget(self, id_: RequestId) -> None:
        """Stop waiting for our request ``id_`` (timeout or cancellation): a late answer is ignored."""
        self._outgoing.pop(id_, None)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if method == "notifications/initialized" and self.role == st.CLIENT:
            self.lifecycle.process(st.SEND_INITIALIZED)
        return rpc.notification(method, params)

    def respond(self, id_: RequestId, result: Any) -> Any | None:
        """The message answering request ``id_``, or None: cancelled by the peer (spec: no
        response after cancellation), or its batch still waits for other answers."""
        return self._finish(id_, rpc.response(id_, result), True)

    def respond_error(self, id_: RequestId, error: dict[str, Any]) -> Any | None:
        return self._finish(id_, rpc.error_response(id_, error), ok=False)

    def respond_encoded(self, id_: RequestId, frame: bytes, ok: bool) -> bytes | list[Any] | None:
        """:meth:`respond` (``ok``) or :meth:`respond_error` with the response already encoded
        (``frame``): the frame to send, the batch's answer once complete (a list, whose encoded
        members are ``msgspec.Raw``), or None."""
        out: bytes | list[Any] | None = self._finish(id_, rpc.Raw(frame) if id_ in self._batches else frame, ok)
        return out

    def _finish(self, id_: RequestId, message: Any, ok: bool) -> Any | None:
        method = self._incoming.pop(id_, None)
        if method is None:
            raise LocalProtocolError(f"there is no request {id_!r} in flight to answer")
        if method == "initialize" and self.role == st.SERVER:
            self.lifecycle.process(st.SEND_INIT_RESULT if ok else st.SEND_INIT_ERROR)
            if not ok:
                self.version = self.rules = None
        cancelled = id_ in self.cancelled  # no response after cancellation (spec)
        if cancelled:
            self.cancelled.discard(id_)
        batch = self._batches.pop(id_, None) if self._batches else None
        if batch is None:
            return None if cancelled else message
        batch.pending.discard(id_)
        if not cancelled:
            batch.responses.append(message)
        return batch.responses if not batch.pending and batch.responses else None

    def resume_legacy(self, version: str, capabilities: dict[str, Any], info: dict[str, Any]) -> None:
        """Continue a legacy session whose handshake happened in another process: READY under
        ``version`` with the client's ``capabilities`` and ``info``, as if it had answered
        initialize. ValueError for a version not of the legacy era; LocalProtocolError once
        closed or mid-handshake."""
        if version not in LEGACY_VERSIONS:
            raise ValueError(f"cannot resume a session of protocol {version!r}: not a legacy version")
        self.lifecycle.process(st.RESUME)
        self.version = version
        self.rules = RULES[version]
        self.peer_capabilities = capabilities
        self.peer_info = info
        self._ready_admits.clear()  # admitted under the rules before (none, on a new connection)

    def is_cancelled(self, id_: RequestId) -> bool:
        return id_ in self.cancelled

    def in_progress(self, id_: RequestId) -> bool:
        """Whether request ``id_`` is an operation in progress: received, not answered, not
        cancelled by the peer (spec basic/utilities/progress: only such a request's token)."""
        return id_ in self._incoming and id_ not in self.cancelled

    def in_flight(self) -> int:
        """Requests received and not yet answered."""
        return len(self._incoming)

    def close(self) -> None:
        self.lifecycle.process(st.CLOSE)
        self._ready_admits.clear()  # READY is over: receive_request admits nothing from memory


def invalid_request(why: str) -> dict[str, Any]:
    """The -32600 error object ``Invalid Request: why``."""
    return {"code": INVALID_REQUEST, "message": "Invalid Request: " + why}


def _invalid(id_: RequestId | None, why: str) -> Reply:
    """The -32600 answer to request ``id_`` (None: no one request)."""
    return Reply(rpc.error_response(id_, invalid_request(why)))


def modern_admission(method: str, meta: dict[str, Any]) -> str | dict[str, Any]:
    """The version a modern request (its ``_meta``) is served under, or the error object refusing
    it, with or without a connection. Order: version (-32022), required _meta (-32602), method
    (-32601): what a client can change without guessing first (spec 2026-07-28 basic/index §_meta)."""
    requested = meta.get(META_PROTOCOL_VERSION)
    if type(requested) is not str:
        return {
            "code": INVALID_PARAMS,
            "message": f'Invalid params: _meta["{META_PROTOCOL_VERSION}"] is required on every 2026-07-28 '
            f"request (a version string such as {LATEST!r}), got {requested!r}",
        }
    if requested not in MODERN_VERSIONS:
        return {
            "code": UNSUPPORTED_PROTOCOL_VERSION,
            "message": f"Unsupported protocol version {requested!r}; this server supports "
            + ", ".join(SUPPORTED_VERSIONS)
            + " (legacy versions through initialize)",
            "data": {"supported": list(SUPPORTED_VERSIONS), "requested": requested},
        }
    caps = meta.get(META_CLIENT_CAPABILITIES)
    if type(caps) is not dict:
        return {
            "code": INVALID_PARAMS,
            "message": f'Invalid params: _meta["{META_CLIENT_CAPABILITIES}"] is required on every '
            "2026-07-28 request (an object; {} declares no capabilities)",
        }
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        return {
            "code": INVALID_PARAMS,
            "message": f'Invalid params: _meta["{META_LOG_LEVEL}"] must be one of {", ".join(LOG_LEVELS)}, got {level!r}',
        }
    rules = RULES[requested]
    if method not in rules.client_requests and method in ALL_CLIENT_REQUESTS:  # else: an extension's, or -32601 above
        return {
            "code": METHOD_NOT_FOUND,
            "message": f"Method not found: {method!r} is not a {requested} method"
            + (" (it exists only in the legacy era, before 2026-07-28)" if method in LEGACY_ONLY_METHODS else ""),
        }
    return requested
