"""Property tests of the sans-IO core (no event loop, no I/O): framing, the JSON-RPC parser and
classifier, the lifecycle table and :class:`Connection` under arbitrary input.

* ``LineBuffer``: any chunking of any byte stream gives exactly the lines of a reference
  model that splits the whole stream at once (oversized lines become one marker each, CR and
  blank lines as documented), and it never holds more than its limit.
* ``decode``/``classify``: any bytes either decode or raise ``InvalidMessage`` (-32700); any
  JSON value is classified or refused with ``InvalidMessage``; a request with a readable id is
  either a request or refused *with that id*; every error reply is a well-formed JSON-RPC error.
* ``Lifecycle``: any event sequence follows the table or raises ``LocalProtocolError``, never
  anything else, and never leaves the table's states.
* ``Connection`` (server role): arbitrary message sequences, with responses and cancellations
  interleaved at random, never raise, and every request with a readable id gets exactly one
  answer — an event the caller answers, or a reply — except those the peer cancelled in flight.
  Client role: each response resolves at most one of our requests, once.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpio import _jsonrpc as rpc
from mcpio._errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, LocalProtocolError
from mcpio._protocol import _state as lst
from mcpio._protocol._connection import Connection
from mcpio._protocol._events import (
    CancelRequested,
    ErrorReceived,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from mcpio._protocol._framing import LineBuffer
from tests.fuzz import strategies as S
from tests.fuzz.corpus import CORPUS

N = int(os.environ.get("MCPIO_FUZZ_EXAMPLES", "300"))
FAST = settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ============================================================================ framing
stream_pieces = st.one_of(
    st.sampled_from([b"\n", b"\r", b"\r\n", b" ", b"\t", b"x", b"{}", b"\xff", b"\n\n", b"y" * 30]),
    st.binary(max_size=30),
)


@FAST
@given(
    st.lists(stream_pieces, max_size=40).map(b"".join), st.integers(1, 64), st.lists(st.integers(0, 1000), max_size=20)
)
def test_line_buffer_any_chunking_equals_splitting_the_whole(stream, limit, cuts):
    buf = LineBuffer(max_line_size=limit)
    out: list[Any] = []
    for chunk in S.chunked(stream, cuts) + [b""]:
        out += buf.feed(chunk)
        assert buf.buffered <= limit  # memory is bounded by the limit, whatever arrives
    out += buf.close()
    assert out == S.model_lines(stream, limit)
    assert buf.buffered == 0 and buf.close() == []


@FAST
@given(st.lists(stream_pieces, max_size=40).map(b"".join), st.lists(st.integers(0, 1000), max_size=20))
def test_line_buffer_is_reusable_after_close(stream, cuts):
    buf = LineBuffer(max_line_size=16)
    for _ in range(2):
        out: list[Any] = []
        for chunk in S.chunked(stream, cuts):
            out += buf.feed(chunk)
        out += buf.close()
        assert out == S.model_lines(stream, 16)


# ============================================================================ JSON-RPC
def check_error_reply(message: Any) -> None:
    assert set(message) == {"jsonrpc", "id", "error"}
    assert message["jsonrpc"] == "2.0"
    assert message["id"] is None or type(message["id"]) in (int, str)
    err = message["error"]
    assert type(err["code"]) is int and isinstance(err["message"], str) and err["message"]
    assert msgspec.json.decode(rpc.encode(message)) == message  # it can be sent


@FAST
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(lambda v, cut: S.encode(v)[:cut], S.json_values, st.integers(0, 200)),
        st.sampled_from([line for line, _ in CORPUS]),
    )
)
def test_decode_returns_a_value_or_a_parse_error(data):
    try:
        rpc.decode(data)
    except rpc.InvalidMessage as exc:
        assert exc.code == PARSE_ERROR and exc.id is None
        check_error_reply(exc.error_response())


@pytest.mark.parametrize("depth", [999, 1000, 5000, 100_000])
def test_decode_of_deep_nesting_is_a_parse_error_not_a_crash(depth):
    for opener in (b"[", b'{"a":'):
        try:
            rpc.decode(opener * depth)
        except rpc.InvalidMessage as exc:
            assert exc.code == PARSE_ERROR


message_like = st.one_of(
    S.json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", None, 2]),
            "id": st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=5), S.json_values),
            "method": st.one_of(st.sampled_from(["ping", "tools/call", "initialize", ""]), S.json_values),
            "params": st.one_of(st.dictionaries(st.text(max_size=5), S.json_values, max_size=3), S.json_values),
            "result": S.json_values,
            "error": S.json_values,
        },
    ),
)


@FAST
@given(message_like)
def test_classify_is_total_and_keeps_a_readable_id(msg):
    readable, id_ = S.readable_request_id(msg)
    try:
        kind = rpc.classify(msg)
    except rpc.InvalidMessage as exc:
        assert exc.code in (INVALID_REQUEST, INVALID_PARAMS)
        if readable:
            assert exc.id == id_ and type(exc.id) is type(id_)  # answerable under its own id
        else:
            assert exc.id is None or (type(msg) is dict and msg.get("id") == exc.id)
        check_error_reply(exc.error_response())
        return
    assert type(msg) is dict and msg["jsonrpc"] == "2.0"
    if kind == rpc.REQUEST:
        assert readable and type(msg["method"]) is str
        assert msg.get("params") is None or type(msg["params"]) is dict
    elif kind == rpc.NOTIFICATION:
        assert "id" not in msg and type(msg["method"]) is str
    elif kind == rpc.RESPONSE:
        assert msg.get("method") is None and "result" in msg and type(msg["id"]) in (int, str)
    else:
        assert kind == rpc.ERROR and msg.get("method") is None and "error" in msg
    if readable:
        assert kind == rpc.REQUEST


# ============================================================================ lifecycle table
@FAST
@given(
    st.sampled_from([lst.CLIENT, lst.SERVER]),
    st.lists(
        st.sampled_from(
            [
                lst.SEND_INITIALIZE,
                lst.RECV_INITIALIZE,
                lst.SEND_INIT_RESULT,
                lst.RECV_INIT_RESULT,
                lst.SEND_INIT_ERROR,
                lst.RECV_INIT_ERROR,
                lst.SEND_INITIALIZED,
                lst.RECV_INITIALIZED,
                lst.CLOSE,
                "send:nonsense",
            ]
        ),
        max_size=30,
    ),
)
def test_lifecycle_follows_the_table_or_refuses(role, events):
    lc = lst.Lifecycle(role)
    table = lst.TRANSITIONS[role]
    for event in events:
        before = lc.state
        allowed = lc.can(event)
        try:
            after = lc.process(event)
        except LocalProtocolError:
            assert not allowed and lc.state == before
            continue
        assert allowed
        assert after == lc.state == (lst.CLOSED if event == lst.CLOSE else table[before][event])
        assert lc.state in table
        assert lc.initialized == (lc.state in (lst.INITIALIZED, lst.READY))


# ============================================================================ Connection (server)
class Play:
    """Plays actions against a server Connection and counts answers per request id."""

    def __init__(self) -> None:
        self.conn = Connection("server")
        self.ids = S.Ids()
        self.sent: collections.Counter = collections.Counter()  # request lines per id
        self.answers: collections.Counter = collections.Counter()
        self.cancelled: collections.Counter = collections.Counter()
        self.pending: list[Any] = []  # ids of RequestReceived not yet answered, in order

    def answer(self, out: Any) -> None:
        """Count what the connection gives us to send (a message, a batch, or None)."""
        if out is None:
            return
        items = out if type(out) is list else [out]
        assert items, "an empty batch must never be sent"
        for m in items:
            assert m["jsonrpc"] == "2.0" and (("result" in m) != ("error" in m))
            if "error" in m:
                check_error_reply(m)
            if m["id"] is not None:
                self.answers[S.hashable_id(m["id"])] += 1

    def receive(self, msg: Any) -> None:
        batch_accepted = None
        if type(msg) is list:
            for item in msg:
                ok, id_ = S.readable_request_id(item)
                if ok:
                    self.sent[S.hashable_id(id_)] += 1
        else:
            ok, id_ = S.readable_request_id(msg)
            if ok:
                self.sent[S.hashable_id(id_)] += 1
        events = self.conn.receive(msg)
        for ev in events:
            t = type(ev)
            if t is RequestReceived:
                assert type(ev.id) in (int, str)
                self.pending.append(ev.id)
            elif t is Reply:
                if (
                    type(msg) is list
                    and type(ev.message) is dict
                    and ev.message["id"] is None
                    and "error" in ev.message
                ):
                    batch_accepted = False  # refused as a whole: its requests were never read
                self.answer(ev.message)
            elif t is CancelRequested:
                assert ev.id in self.pending and self.conn.is_cancelled(ev.id)
            else:
                assert t is NotificationReceived, ev  # a server never sent a request here
        if batch_accepted is False:
            for item in msg:
                ok, id_ = S.readable_request_id(item)
                if ok:
                    self.sent[S.hashable_id(id_)] -= 1

    def respond(self, pick: int, error: bool) -> None:
        if not self.pending:
            return
        id_ = self.pending.pop(pick % len(self.pending))
        cancelled = self.conn.is_cancelled(id_)
        out = self.conn.respond_error(id_, {"code": -1, "message": "no"}) if error else self.conn.respond(id_, {})
        if cancelled:
            self.cancelled[S.hashable_id(id_)] += 1
            assert out is None or (type(out) is list and all(m["id"] != id_ for m in out))
        self.answer(out)
        if id_ not in self.pending:
            with pytest.raises(LocalProtocolError):  # answered once: a second answer is our bug
                self.conn.respond(id_, {})

    def finish(self) -> None:
        while self.pending:
            self.respond(0, False)
        assert self.conn.in_flight() == 0
        for id_, n in self.sent.items():
            assert self.answers[id_] + self.cancelled[id_] == n, (id_, n, self.answers[id_], self.cancelled[id_])
        assert not [i for i in self.answers if i not in self.sent], "an answer to an id nobody sent"


@st.composite
def actions(draw: Any, play: Play) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if draw(st.booleans()):
        version = draw(st.sampled_from(S.VERSIONS + ("2025-03-26",) * 3))  # the batching version, often
        out.append(
            (
                "recv",
                {
                    "jsonrpc": "2.0",
                    "id": play.ids.make("small"),
                    "method": "initialize",
                    "params": {
                        "protocolVersion": version,
                        "capabilities": {},
                        "clientInfo": {"name": "f", "version": "1"},
                    },
                },
            )
        )
        out.append(("respond", 0))
        out.append(("recv", {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.integers(0, 10))
        if kind <= 2:
            out.append(("recv", draw(S.request(play.ids))))
        elif kind == 3:
            out.append(("recv", draw(S.batch(play.ids))))
        elif kind == 10:  # a batch of valid requests, answered as one array once all are done
            n = draw(st.integers(1, 4))
            out.append(("recv", [{"jsonrpc": "2.0", "id": play.ids.make("small"), "method": "ping"} for _ in range(n)]))
        elif kind == 4:
            out.append(("recv", draw(st.one_of(S.notification(), S.response(), S.json_values))))
        elif kind == 5:
            out.append(("cancel", draw(st.integers(0, 100))))
        elif kind == 6:
            out.append(("dup", draw(st.integers(0, 100))))  # a new request reusing an id in flight
        else:
            out.append(("respond" if kind < 9 else "respond_error", draw(st.integers(0, 100))))
    return out


@FAST
@given(st.data())
def test_connection_answers_every_readable_request_exactly_once(data):
    play = Play()
    for action, arg in data.draw(actions(play)):
        if action == "recv":
            play.receive(arg)
        elif action == "cancel" and play.pending:
            rid = play.pending[arg % len(play.pending)]
            play.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
        elif action == "dup" and play.pending:
            play.receive({"jsonrpc": "2.0", "id": play.pending[arg % len(play.pending)], "method": "ping"})
        elif action in ("respond", "respond_error"):
            play.respond(arg, action == "respond_error")
        assert play.conn.in_flight() == len(play.pending)
    play.finish()


# ============================================================================ Connection (client)
@FAST
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["request", "respond", "error", "again", "forget", "junk"]),
            st.integers(0, 50),
            S.json_values,
        ),
        max_size=30,
    )
)
def test_client_connection_resolves_each_request_at_most_once(steps):
    conn = Connection("client")
    outstanding: list[Any] = []
    resolved: collections.Counter = collections.Counter()
    done: list[Any] = []
    for action, pick, value in steps:
        if action == "request":
            id_, msg = conn.request("tools/call", {"name": "x"})
            assert msg["id"] == id_ and id_ not in outstanding and id_ not in done
            outstanding.append(id_)
            continue
        pool = outstanding if action in ("respond", "error", "forget") else (done or outstanding)
        if action == "junk":
            events = conn.receive(value)
        elif not pool:
            continue
        else:
            id_ = pool[pick % len(pool)]
            if action == "forget":
                conn.forget(id_)
                outstanding.remove(id_)
                done.append(id_)
                continue
            body = {"error": {"code": -1, "message": "x"}} if action == "error" else {"result": value}
            events = conn.receive({"jsonrpc": "2.0", "id": id_, **body})
        for ev in events:
            if type(ev) in (ResponseReceived, ErrorReceived):
                assert ev.id in outstanding, f"resolved {ev.id!r}, which is not outstanding"
                resolved[ev.id] += 1
                outstanding.remove(ev.id)
                done.append(ev.id)
            elif type(ev) is Reply:
                check_error_reply(ev.message)
    assert all(n == 1 for n in resolved.values())
