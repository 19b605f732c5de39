"""The Streamable HTTP rules (``mcpio._protocol._http``): pure functions, no sockets, no loop."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from mcpio import _jsonrpc as rpc
from mcpio._protocol import _http as h
from mcpio._protocol._http_checks import Verdict, read_post
from mcpio._transports._http_events import MemoryEventStore

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def read_messages(body: bytes) -> tuple[list[Any], list[int], bool]:
    """What ``read_post`` reads of a body: its messages, their kinds, whether it is a batch."""
    post = read_post(body, {}, Verdict(True, True, None, False))
    return post.messages, post.kinds, post.batch


def call(method="tools/call", name="add", arguments=None, meta=META, id=1):
    params = (
        {"name": name, "arguments": arguments or {}, "_meta": dict(meta)}
        if method == "tools/call"
        else {"_meta": dict(meta)}
    )
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


# ---------------------------------------------------------------------------- security
@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:3000", "[::1]", "LOCALHOST:9"])
def test_loopback_hosts_on_any_port_are_allowed(host):
    assert h.check_host({"host": host}, h.LOOPBACK_HOSTS) is None


@pytest.mark.parametrize(
    "host", ["evil.example.com", "evil.example.com:8000", "127.0.0.2", "localhost.evil.com", "[::2]:80"]
)
def test_other_hosts_get_403_naming_the_allowed_ones(host):
    refusal = h.check_host({"host": host}, h.LOOPBACK_HOSTS)
    assert refusal is not None and refusal.status == 403
    assert "localhost" in refusal.error["message"] and "127.0.0.1" in refusal.error["message"]


def test_missing_host_is_refused():
    assert h.check_host({}, h.LOOPBACK_HOSTS).status == 403


def test_host_allow_list_with_port_and_wildcard():
    assert h.host_allowed("mcp.example.com:443", ["mcp.example.com:443"])
    assert not h.host_allowed("mcp.example.com:444", ["mcp.example.com:443"])
    assert h.host_allowed("anything", ["*"])


@pytest.mark.parametrize("origin", ["http://localhost:5173", "https://127.0.0.1", "http://[::1]:8080"])
def test_loopback_origins_are_allowed(origin):
    assert h.check_origin({"origin": origin}, h.LOOPBACK_HOSTS) is None


@pytest.mark.parametrize("origin", ["http://evil.example.com", "null", "file://", "http://localhost.evil.com"])
def test_other_origins_get_403(origin):
    assert h.check_origin({"origin": origin}, h.LOOPBACK_HOSTS).status == 403


def test_missing_origin_is_fine_and_full_origins_can_be_allowed():
    assert h.check_origin({}, h.LOOPBACK_HOSTS) is None
    assert h.check_origin({"origin": "https://app.example.com"}, ["https://app.example.com"]) is None
    assert h.check_origin({"origin": "http://app.example.com"}, ["https://app.example.com"]) is not None


@pytest.mark.parametrize(
    "addr,loop",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.2", False),
        ("::", False),
    ],
)
def test_is_loopback(addr, loop):
    assert h.is_loopback(addr) is loop


# ---------------------------------------------------------------------------- negotiation
@pytest.mark.parametrize(
    "accept,expected",
    [
        (None, (True, True)),
        ("", (True, True)),
        ("*/*", (True, True)),
        ("application/json", (True, False)),
        ("text/event-stream", (False, True)),
        ("application/json, text/event-stream", (True, True)),
        ("text/html", (False, False)),
        ("application/*;q=0.5", (True, False)),
        ("text/event-stream;q=0, application/json", (True, False)),
    ],
)
def test_accepts_is_lenient(accept, expected):
    assert h.accepts(accept) == expected


def test_post_needs_json_body_and_an_acceptable_answer():
    assert h.check_post({"content-type": "application/json; charset=utf-8"}) is None
    assert h.check_post({"content-type": "application/json"}) is None
    assert h.check_post({}).status == 415  # no type: a web page's simple request (issue 12, break 6d)
    assert h.check_post({"content-type": ""}).status == 415
    assert h.check_post({"content-type": "text/plain"}).status == 415
    assert h.check_post({"content-type": "application/json", "accept": "text/html"}).status == 406
    assert h.check_get({"accept": "application/json"}).status == 406
    assert h.check_get({}) is None


def test_bad_bodies_are_400_with_the_jsonrpc_error():
    with pytest.raises(h.BadBody) as e:
        read_messages(b"{nope")
    assert e.value.refusal.status == 400 and e.value.refusal.error["code"] == -32700
    with pytest.raises(h.BadBody) as e:
        read_messages(b'[{"jsonrpc": "2.0", "method": "x"}, {"jsonrpc": "1.0", "id": 7, "method": "x"}]')
    assert e.value.refusal.error["code"] == -32600 and e.value.refusal.id == 7
    with pytest.raises(h.BadBody) as e:
        read_messages(b" []")
    assert e.value.refusal.error["message"] == "Invalid Request: empty batch"


def test_a_json_array_is_a_batch_even_of_one():
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert read_messages(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}') == ([ping], [rpc.REQUEST], False)
    assert read_messages(b' \n[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]') == ([ping], [rpc.REQUEST], True)


# ---------------------------------------------------------------------------- eras and sessions
def test_select_era():
    legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert h.select_era({}, [call()]) == h.MODERN
    assert h.select_era({"mcp-session-id": "s"}, [call()]) == h.MODERN  # modern _meta wins; the id is ignored
    assert h.select_era({}, [legacy]) == h.LEGACY
    assert h.select_era({"mcp-protocol-version": "2025-11-25"}, [legacy]) == h.LEGACY
    assert h.select_era({"mcp-protocol-version": "2026-07-28"}, [legacy]) == h.MODERN  # then -32602: no _meta
    assert h.select_era({"mcp-protocol-version": "2026-07-28", "mcp-session-id": "s"}, [legacy]) == h.LEGACY


def test_session_ids_are_secure_visible_ascii():
    ids = {h.new_session_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(re.fullmatch(r"[\x21-\x7e]{32,256}", i) for i in ids)  # spec: visible ASCII, 0x21-0x7E


def test_legacy_version_header():
    assert h.check_legacy_version({}) == ("2025-03-26", None)
    assert h.check_legacy_version({"mcp-protocol-version": "2025-06-18"}) == ("2025-06-18", None)
    assert h.check_legacy_version({"mcp-protocol-version": "1999-01-01"})[1].status == 400
    assert h.check_legacy_version({"mcp-protocol-version": "2026-07-28"})[1].status == 400


# ---------------------------------------------------------------------------- modern headers
def headers_for(msg, **extra):
    out = {"mcp-method": msg["method"], "mcp-protocol-version": "2026-07-28"}
    if msg["method"] == "tools/call":
        out["mcp-name"] = msg["params"]["name"]
    out.update(extra)
    return out


def test_standard_headers_that_match_pass():
    msg = call()
    assert h.check_standard_headers(headers_for(msg), msg) is None
    assert h.check_standard_headers(headers_for(msg, **{"mcp-name": "  add\t"}), msg) is None  # OWS trimmed


@pytest.mark.parametrize(
    "change",
    [
        {"mcp-method": "tools/list"},
        {"mcp-method": "TOOLS/CALL"},
        {"mcp-name": "other"},
        {"mcp-protocol-version": "2025-11-25"},
        {"mcp-name": "=?base64?!!!?="},
    ],
)
def test_standard_header_mismatch_is_400_and_32020(change):
    msg = call(id=9)
    refusal = h.check_standard_headers(headers_for(msg, **change), msg)
    assert refusal is not None and refusal.status == 400
    assert refusal.error["code"] == -32020 and refusal.id == 9


@pytest.mark.parametrize("drop", ["mcp-method", "mcp-name", "mcp-protocol-version"])
def test_missing_standard_header_is_a_mismatch(drop):
    msg = call()
    headers = headers_for(msg)
    del headers[drop]
    assert h.check_standard_headers(headers, msg).error["code"] == -32020


def test_name_may_be_base64_encoded():
    msg = call(name="café tool")
    encoded = h.encode_header_value("café tool")
    assert encoded.startswith("=?base64?")
    assert h.check_standard_headers(headers_for(msg, **{"mcp-name": encoded}), msg) is None


@pytest.mark.parametrize(
    "value,expected",
    [
        ("Hello", "Hello"),
        ("  Hello ", "Hello"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no sentinel: literal
        ("=?base64?" + base64.b64encode("日本".encode()).decode() + "?=", "日本"),
    ],
)
def test_decode_header_value(value, expected):
    assert h.decode_header_value(value) == expected


@pytest.mark.parametrize("value", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?/w==?=", "caf\xe9"])
def test_decode_header_value_rejects_bad_base64_and_non_ascii(value):
    with pytest.raises(ValueError):
        h.decode_header_value(value)


@pytest.mark.parametrize("value", ["plain", " lead", "trail ", "ünï", "=?base64?x?=", "tab\tinside"])
def test_encode_then_decode_round_trips(value):
    assert h.decode_header_value(h.encode_header_value(value)) == value


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "nested": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
        "dup1": {"type": "string", "x-mcp-header": "Same"},
        "dup2": {"type": "string", "x-mcp-header": "same"},
        "bad": {"type": "string", "x-mcp-header": "has space"},
    },
}


def test_param_headers_are_read_from_the_schema():
    assert h.param_headers(SCHEMA) == {
        "region": ("region",),
        "count": ("count",),
        "flag": ("flag",),
        "deep": ("nested", "deep"),
    }
    assert h.param_headers({"type": "object"}) == {}


def test_a_tools_param_headers_are_read_once_from_its_schema():
    from mcpio import Server
    from mcpio._server import _http as server_http

    server = Server("param-headers")

    @server.tool(input_schema=SCHEMA)
    def search(region: str = "", count: int = 0) -> str:
        """Search."""
        return region

    @server.tool
    def plain(a: int) -> int:
        """Plain."""
        return a

    first = server_http.param_headers(server, "search")
    assert first == h.param_headers(SCHEMA)
    assert server_http.param_headers(server, "search") is first  # walked once per tool
    assert server_http.param_headers(server, "plain") == {}
    assert server_http.param_headers(server, "missing") is None

    # A tool registered again is a new Tool: read afresh from its schema, never the old answer.
    replaced = {"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Query"}}}

    @server.tool(name="search", input_schema=replaced)
    def search_again(q: str = "") -> str:
        """Search."""
        return q

    assert server_http.param_headers(server, "search") == {"query": ("q",)}


def test_param_headers_mirror_the_arguments():
    declared = h.param_headers(SCHEMA)
    args = {"region": "eu", "count": 3, "flag": False, "nested": {"deep": "x"}}
    good = {"mcp-param-region": "eu", "mcp-param-count": "3", "mcp-param-flag": "false", "mcp-param-deep": "x"}
    assert h.check_param_headers(good, declared, args) is None
    assert h.check_param_headers({}, declared, {}) is None  # absent values: no headers
    for bad in (
        {**good, "mcp-param-region": "us"},
        {k: v for k, v in good.items() if k != "mcp-param-count"},
        {**good, "mcp-param-region": "=?base64?ZXU?="},
    ):
        refusal = h.check_param_headers(bad, declared, args, id=4)
        assert refusal.status == 400 and refusal.error["code"] == -32020 and refusal.id == 4
    assert h.check_param_headers({"mcp-param-region": "eu"}, declared, {}).error["code"] == -32020  # header, no value
    assert h.check_param_headers({**good, "mcp-param-region": "=?base64?ZXU=?="}, declared, args) is None


def test_modern_error_statuses():
    assert h.status_for_error(-32601, h.MODERN) == 404
    for code in (-32602, -32020, -32021, -32022, -32600):
        assert h.status_for_error(code, h.MODERN) == 400
    assert h.status_for_error(-32603, h.MODERN) == 200
    assert h.status_for_error(-32601, h.LEGACY) == 200


# ---------------------------------------------------------------------------- SSE
def test_sse_event_encoding():
    assert h.sse_event(b'{"a":1}') == b'data: {"a":1}\n\n'
    assert h.sse_event(b"", id="1-1", retry=500) == b"id: 1-1\nretry: 500\ndata: \n\n"
    assert h.sse_event(b"/messages?x", event="endpoint") == b"event: endpoint\ndata: /messages?x\n\n"
    assert h.sse_event(b"a\nb") == b"data: a\ndata: b\n\n"
    assert h.sse_comment() == b": keep-alive\n\n"


def test_sse_parser_round_trip_in_any_chunking():
    wire = (
        h.sse_event(b"", id="3-1", retry=700)
        + h.sse_comment()
        + h.sse_event(b'{"x":1}', id="3-2")
        + h.sse_event(b"a\nb", event="endpoint")
        + b"data: crlf\r\n\r\n"
    )
    for size in (1, 2, 7, len(wire)):
        p = h.SSEParser()
        events = []
        for i in range(0, len(wire), size):
            events += p.feed(wire[i : i + size])
        assert [(e.data, e.event, e.id) for e in events] == [  # a priming event has empty data (WHATWG)
            ("", "message", "3-1"),
            ('{"x":1}', "message", "3-2"),
            ("a\nb", "endpoint", "3-2"),
            ("crlf", "message", "3-2"),
        ]
        assert p.retry == 700 and p.last_event_id == "3-2"


def test_event_ids():
    assert h.parse_event_id(h.event_id("12", 7)) == ("12", 7)
    assert h.parse_event_id("nonsense") is None and h.parse_event_id("1-x") is None
    assert h.parse_event_id("0-\u00b2") is None  # a digit to isdigit(), not to int(): found by the HTTP fuzz


def test_sse_parser_ignores_a_retry_that_is_not_ascii_digits():
    p = h.SSEParser()
    assert [e.data for e in p.feed("retry: \u00b2\ndata: x\n\n".encode())] == ["x"]
    assert p.retry is None


# ---------------------------------------------------------------------------- the in-memory event store
def test_memory_event_store_is_scoped_bounded_and_skips_priming():
    import asyncio

    async def go():
        store = MemoryEventStore(max_events=3, ttl=60)
        prime = await store.store("s1", "1", b"")
        ids = [await store.store("s1", "1", f"m{i}".encode()) for i in range(4)]
        other = await store.store("s1", "2", b"other-stream")
        assert (await store.replay_after("s1", ids[1]))[1] == [(ids[2], b"m2"), (ids[3], b"m3")]
        assert (await store.replay_after("s1", ids[0]))[1] == [
            (i, f"m{n}".encode()) for n, i in enumerate(ids) if n >= 1
        ]
        assert await store.replay_after("s1", prime) is None  # m0 was evicted: no replay with a hole
        assert await store.replay_after("s2", ids[0]) is None  # another session sees nothing
        assert (await store.replay_after("s1", other))[1] == []
        assert await store.replay_after("s1", "9-1") is None and await store.replay_after("s1", "junk") is None
        assert len(store) == 4
        await store.forget("s1")
        assert len(store) == 0 and store.bytes == 0

    asyncio.run(go())


def test_memory_event_store_bounds_bytes_per_session_and_in_total_oldest_first():
    import asyncio

    from mcpio._transports._http_events import EVENT_OVERHEAD

    cost = 1000 + EVENT_OVERHEAD

    async def go():
        store = MemoryEventStore(max_session_bytes=5 * cost, max_total_bytes=8 * cost)
        a = [await store.store("a", str(i), b"x" * 1000) for i in range(7)]  # seven streams, one event each
        assert store.bytes == 5 * cost and store.evicted == 2
        assert await store.replay_after("a", "0-0") is None and await store.replay_after("a", "1-0") is None
        assert (await store.replay_after("a", "2-0"))[1] == [(a[2], b"x" * 1000)]
        b = [await store.store("b", "1", b"y" * 1000) for _ in range(4)]
        assert store.bytes == 8 * cost  # the total bound took a's oldest, not b's
        assert await store.replay_after("a", "2-0") is None
        assert (await store.replay_after("a", "3-0"))[1] == [(a[3], b"x" * 1000)]
        assert len((await store.replay_after("b", "1-0"))[1]) == 4 and b
        await store.discard_stream("b", "1")  # delivered: dropped at once
        assert store.bytes == 4 * cost and await store.replay_after("b", "1-0") is None
        big = await store.store("c", "1", b"z" * (6 * cost))  # larger than a session's bound: not kept
        assert store.bytes == 4 * cost and await store.replay_after("c", big) is not None
        assert await store.replay_after("c", "1-0") is None
        for sid in "abc":
            await store.forget(sid)
        assert store.bytes == 0 and len(store) == 0

    asyncio.run(go())


@pytest.mark.parametrize("era", [h.LEGACY, h.MODERN])
def test_a_whole_json_response_has_the_status_its_message_gives(era):
    """``json_response`` (a frame) gives the status ``status_for_error`` gives the message's
    error code, in both eras; a result that merely contains the text "error" is 200."""
    from mcpio import _jsonrpc as rpc
    from mcpio._transports import _http_server_streams as streams

    messages = [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": '"error"'}]}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Invalid params"}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Internal error"}},
    ]
    for message in messages:
        error = message.get("error")
        expected = h.status_for_error(error["code"], era) if error else 200
        start, body = streams.json_response(rpc.encode(message), [], era)
        assert start["status"] == expected and body["body"] == rpc.encode(message)


def test_a_json_response_says_its_length_and_the_lengths_kept_are_bounded():
    """``json_response`` keeps Content-Length values it made (issue 17), only below its bound: each
    says its frame's length, a kept one and a new one alike."""
    from mcpio._transports import _http_server_streams as streams

    for size in (0, 1, 9, 10, 113, streams._MAX_LENGTH_KEPT - 1, streams._MAX_LENGTH_KEPT, 10**6):
        for _ in range(2):  # made, then found
            start, body = streams.json_response(b"x" * size, [(b"mcp-session-id", b"s")], h.LEGACY)
            assert start["headers"] == [
                (b"mcp-session-id", b"s"),
                (b"content-type", b"application/json"),
                (b"content-length", str(size).encode()),
            ]
            assert body == {"type": "http.response.body", "body": b"x" * size, "more_body": False}
    assert all(n < streams._MAX_LENGTH_KEPT for n in streams._LENGTHS)
    assert streams._LENGTHS[113] == b"113"
