"""Sans-IO era dispatch (no event loop): which requests the server-role Connection admits
under which version, and the errors it answers itself."""

from __future__ import annotations

import pytest

from mcpio._protocol._connection import Connection
from mcpio._protocol._events import Reply, RequestReceived

V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"
L = "io.modelcontextprotocol/logLevel"


def req(method, meta=None, id_=1, **params):
    p = dict(params)
    if meta is not None:
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": p}


def modern(**extra):
    return {V: "2026-07-28", C: {}, **extra}


def test_modern_request_is_admitted_before_any_initialize():
    s = Connection("server")
    [ev] = s.receive(req("tools/list", modern()))
    assert isinstance(ev, RequestReceived) and ev.version == "2026-07-28"
    assert s.lifecycle.state == "NEW"  # stateless: the legacy lifecycle is untouched


def test_legacy_request_carries_the_negotiated_version():
    s = Connection("server")
    [ev] = s.receive(
        req("initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo={"name": "t", "version": "1"})
    )
    assert ev.version == "2025-06-18"
    s.respond(1, {})
    [ev] = s.receive(req("tools/list", id_=2))
    assert ev.version == "2025-06-18"


@pytest.mark.parametrize(
    "method,meta,code",
    [
        ("tools/list", {V: "1999-01-01", C: {}}, -32022),
        ("tools/list", {V: None, C: {}}, -32602),
        ("tools/list", {C: {}}, -32602),
        ("tools/list", {V: "2026-07-28"}, -32602),
        ("tools/list", {V: "2026-07-28", C: "all"}, -32602),
        ("tools/list", modern(**{L: "verbose"}), -32602),
        ("initialize", modern(), -32601),
        ("ping", modern(), -32601),
        ("logging/setLevel", modern(), -32601),
        ("resources/subscribe", modern(), -32601),
        ("tasks/list", modern(), -32601),  # core tasks/* of 2025-11-25: gone in 2026-07-28
        ("tasks/result", modern(), -32601),
    ],
)
def test_modern_refusals(method, meta, code):
    [r] = Connection("server").receive(req(method, meta))
    assert isinstance(r, Reply) and r.message["error"]["code"] == code and r.message["id"] == 1


def test_modern_only_methods_are_not_found_in_the_legacy_era():
    s = Connection("server")
    s.receive(
        req("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "1"})
    )
    s.respond(1, {})
    for i, method in enumerate(("server/discover", "subscriptions/listen"), start=2):
        [r] = s.receive(req(method, id_=i))
        assert r.message["error"]["code"] == -32601 and "_meta" in r.message["error"]["message"]


def test_cancellation_of_a_modern_request():
    s = Connection("server")
    s.receive(req("subscriptions/listen", modern(), id_="L1", notifications={}))
    [c] = s.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L1"}})
    assert c.id == "L1"
    assert s.respond("L1", {}) is None  # nothing is sent after a cancellation


@pytest.mark.parametrize("rid", [None, [1], {"a": 1}, 1.5])
def test_cancellation_with_invalid_request_id_is_ignored(rid):
    s = Connection("server")
    assert s.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}) == []
