"""Sans-IO connection and lifecycle table: messages in, events and messages out; no event loop."""

from __future__ import annotations

import pytest

from mcpio._errors import LocalProtocolError
from mcpio._protocol import _state as st
from mcpio._protocol._connection import Connection
from mcpio._protocol._events import (
    CancelRequested,
    ErrorReceived,
    NotificationReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)


def init_msg(id_=1, version="2025-11-25"):
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


def ready_server(version="2025-11-25"):
    s = Connection("server")
    [ev] = s.receive(init_msg(version=version))
    assert isinstance(ev, RequestReceived)
    assert s.respond(1, {"protocolVersion": s.version, "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}})
    s.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert s.lifecycle.state == st.READY
    return s


def test_lifecycle_table_both_roles():
    for role, events in (
        (st.SERVER, [st.RECV_INITIALIZE, st.SEND_INIT_RESULT, st.RECV_INITIALIZED]),
        (st.CLIENT, [st.SEND_INITIALIZE, st.RECV_INIT_RESULT, st.SEND_INITIALIZED]),
    ):
        lc = st.Lifecycle(role)
        states = [lc.process(e) for e in events]
        assert states == [st.INITIALIZING, st.INITIALIZED, st.READY]
        with pytest.raises(LocalProtocolError):
            lc.process(events[0])
        assert lc.process(st.CLOSE) == st.CLOSED


def test_failed_initialize_returns_to_new():
    lc = st.Lifecycle(st.SERVER)
    lc.process(st.RECV_INITIALIZE)
    assert lc.process(st.SEND_INIT_ERROR) == st.NEW


def test_negotiates_supported_version_and_falls_back_to_latest_legacy():
    s = Connection("server")
    s.receive(init_msg(version="2025-03-26"))
    assert s.version == "2025-03-26" and s.rules.batching
    s2 = Connection("server")
    s2.receive(init_msg(version="1999-01-01"))
    assert s2.version == "2025-11-25"
    assert s2.peer_capabilities == {"roots": {}}


def test_requests_before_initialize_are_refused_but_ping_is_served():
    s = Connection("server")
    [r] = s.receive({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert isinstance(r, Reply) and r.message["id"] == 5 and r.message["error"]["code"] == -32600
    assert "initialize" in r.message["error"]["message"]
    [p] = s.receive({"jsonrpc": "2.0", "id": 6, "method": "ping"})
    assert isinstance(p, RequestReceived)


def test_second_initialize_is_refused():
    s = ready_server()
    [r] = s.receive(init_msg(id_=9))
    assert isinstance(r, Reply) and r.message["error"]["code"] == -32600


def test_requests_after_result_before_initialized_are_served():
    s = Connection("server")
    s.receive(init_msg())
    s.respond(1, {})
    [ev] = s.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert isinstance(ev, RequestReceived)


@pytest.mark.parametrize(
    "msg,code,id_",
    [
        ([], -32600, None),
        (42, -32600, None),
        ("x", -32600, None),
        (None, -32600, None),
        ({"id": 1, "method": "ping"}, -32600, 1),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600, 1),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, -32600, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, None),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}, -32602, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": 7}, -32600, 3),
        ({"jsonrpc": "2.0", "id": 3}, -32600, 3),
    ],
)
def test_invalid_messages_get_the_right_error(msg, code, id_):
    s = ready_server()
    [r] = s.receive(msg)
    assert isinstance(r, Reply)
    assert r.message["jsonrpc"] == "2.0" and r.message["id"] == id_ and r.message["error"]["code"] == code


def test_duplicate_id_in_flight_is_refused_and_original_still_answered():
    s = ready_server()
    [a] = s.receive({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    [b] = s.receive({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    assert isinstance(a, RequestReceived) and isinstance(b, Reply) and b.message["error"]["code"] == -32600
    assert s.respond(7, {"tools": []}) == {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}
    [c] = s.receive({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})  # free again
    assert isinstance(c, RequestReceived)


def test_cancellation_suppresses_the_response():
    s = ready_server()
    s.receive({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}})
    [ev] = s.receive(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a", "reason": "r"}}
    )
    assert ev == CancelRequested(id="a", reason="r")
    assert s.respond("a", {"content": []}) is None
    assert s.in_flight() == 0
    # unknown id: ignored
    assert s.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "zz"}}) == []


def test_initialize_cannot_be_cancelled():
    s = Connection("server")
    s.receive(init_msg())
    assert s.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}) == []


def test_batches_only_with_2025_03_26_and_answered_as_a_batch():
    s = ready_server("2025-06-18")
    [r] = s.receive([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert isinstance(r, Reply) and r.message["id"] is None and r.message["error"]["code"] == -32600
    b = ready_server("2025-03-26")
    evs = b.receive(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        ]
    )
    kinds = [type(e) for e in evs]
    assert kinds == [RequestReceived, NotificationReceived, RequestReceived]
    assert b.respond(2, {}) is None
    out = b.respond(1, {})
    assert isinstance(out, list) and len(out) == 3
    assert {m["id"] for m in out} == {1, 2, 3}
    assert b.receive([])[0].message["error"]["code"] == -32600


def test_initialize_in_a_batch_is_refused():
    s = Connection("server")
    s.rules = None
    # no version negotiated yet: batch refused outright
    [r] = s.receive([init_msg()])
    assert r.message["error"]["code"] == -32600


def test_client_role_correlates_responses_and_ignores_unknown_ids():
    c = Connection("client")
    id_, msg = c.request(
        "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    )
    assert msg["method"] == "initialize" and c.lifecycle.state == st.INITIALIZING
    [ev] = c.receive(
        {
            "jsonrpc": "2.0",
            "id": id_,
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        }
    )
    assert isinstance(ev, ResponseReceived) and c.version == "2025-06-18" and c.peer_capabilities == {"tools": {}}
    c.notify("notifications/initialized")
    assert c.lifecycle.state == st.READY
    assert c.receive({"jsonrpc": "2.0", "id": 999, "result": {}}) == []
    id2, _ = c.request("tools/list")
    [err] = c.receive({"jsonrpc": "2.0", "id": id2, "error": {"code": -32601, "message": "nope"}})
    assert isinstance(err, ErrorReceived) and err.error.code == -32601 and err.method == "tools/list"


@pytest.mark.parametrize("role", ["client", "server"])
def test_a_payloadless_message_with_our_request_id_is_dropped_not_answered(role):
    """{"jsonrpc":"2.0","id":N} with N one of our requests in flight is a broken answer to it:
    answering it with an error under N could read as the reply to the peer's own request N."""
    c = ready_server() if role == "server" else Connection("client")
    id_, _ = c.request(
        "roots/list" if role == "server" else "initialize",
        None
        if role == "server"
        else {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    )
    assert c.receive({"jsonrpc": "2.0", "id": id_}) == []
    [ev] = c.receive({"jsonrpc": "2.0", "id": id_, "result": {"roots": []}})  # the real answer still counts
    assert isinstance(ev, ResponseReceived) and ev.id == id_
    [reply] = c.receive({"jsonrpc": "2.0", "id": "theirs"})  # not ours: an invalid request of the peer
    assert isinstance(reply, Reply) and reply.message["id"] == "theirs" and reply.message["error"]["code"] == -32600


def test_answering_an_unknown_request_is_a_local_error():
    s = ready_server()
    with pytest.raises(LocalProtocolError):
        s.respond(12345, {})


def test_requests_pipelined_behind_initialize_are_admitted_under_the_negotiated_version():
    s = Connection("server")
    s.receive(init_msg(version="2025-06-18"))
    [ev] = s.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert isinstance(ev, RequestReceived) and ev.version == "2025-06-18"
    [r] = s.receive(init_msg(id_=3))  # but never a second initialize
    assert isinstance(r, Reply) and r.message["error"]["code"] == -32600


def test_receive_request_gives_the_events_receive_gives():
    # Connection.receive_request (a request its transport classified already: Streamable HTTP)
    # must answer exactly as receive (its one event): before initialize, during it, when ready, a duplicate id in
    # flight, a method of another era, a modern _meta on a legacy connection.
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},  # before initialize: refused
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},  # allowed before initialize
        init_msg(3),
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}},  # after the result
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x"}},  # id in flight
        {"jsonrpc": "2.0", "id": "s", "method": "subscriptions/listen", "params": {}},  # a 2026 method
        init_msg(6),  # a second initialize
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        },
    ]
    general, direct = Connection("server"), Connection("server")
    for msg in requests:
        if "id" not in msg:
            assert general.receive(msg) == direct.receive(msg)
            continue
        a, b = general.receive(msg), direct.receive_request(msg)
        assert a == [b], msg
        if msg.get("method") == "initialize" and isinstance(b, RequestReceived):
            result = {
                "protocolVersion": general.version,
                "capabilities": {},
                "serverInfo": {"name": "x", "version": "1"},
            }
            assert general.respond(msg["id"], result) == direct.respond(msg["id"], result)
    assert general.lifecycle.state == direct.lifecycle.state == st.READY


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_method_admitted_when_ready_is_admitted_again_as_the_table_says(version):
    # Connection._ready_admits (issue 17): a method admitted in READY is admitted again without the
    # table, which cannot answer otherwise there. Each request of a READY connection that has
    # seen every method before must get what a new READY connection gives it; a closed one
    # refuses them all, and a resumed one follows its new rules.
    from mcpio._versions import RULES

    methods = sorted(set().union(*(r.client_requests for r in RULES.values()))) + ["initialize", "no/such"]
    seen = ready_server(version)
    for round_ in range(2):
        for i, method in enumerate(methods):
            msg = {"jsonrpc": "2.0", "id": f"{round_}-{i}", "method": method, "params": {}}
            fresh = ready_server(version)
            assert seen.receive_request(msg) == fresh.receive_request(msg), method
            assert seen.receive([msg]) == fresh.receive([msg]), method  # as a batch item too
            for c in (seen, fresh):
                c._incoming.clear()
    closed = ready_server(version)
    for method in methods:
        closed.receive_request({"jsonrpc": "2.0", "id": method, "method": method, "params": {}})
        closed._incoming.clear()
    closed.close()
    ev = closed.receive_request({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert isinstance(ev, Reply) and "closed" in ev.message["error"]["message"]
    other = "2025-03-26" if version != "2025-03-26" else "2025-11-25"
    seen.resume_legacy(other, {}, {})
    for i, method in enumerate(methods):
        msg = {"jsonrpc": "2.0", "id": f"r-{i}", "method": method, "params": {}}
        assert seen.receive_request(msg) == ready_server(other).receive_request(msg), method
        seen._incoming.clear()


def test_a_shared_session_resumes_through_the_lifecycle_table():
    """A replica (another process of a shared HTTP server) resumes a legacy session READY; a
    closed connection, or one whose own handshake is under way, is not resumed."""
    replica = Connection("server")
    replica.resume_legacy("2025-06-18", {"roots": {}}, {"name": "c", "version": "1"})
    assert replica.lifecycle.state == st.READY and replica.version == "2025-06-18"
    ev = replica.receive_request({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert isinstance(ev, RequestReceived) and ev.version == "2025-06-18"
    replica.close()
    with pytest.raises(LocalProtocolError):
        replica.resume_legacy("2025-06-18", {}, {})
    handshaking = Connection("server")
    handshaking.receive(init_msg())
    with pytest.raises(LocalProtocolError):
        handshaking.resume_legacy("2025-11-25", {}, {})
    with pytest.raises(ValueError):
        Connection("server").resume_legacy("2026-07-28", {}, {})
