"""Streamable HTTP, legacy era (2025-03-26 … 2025-11-25): sessions, headers, JSON and SSE answers,
the GET stream, server→client requests, resumability, expiry and limits — against a real uvicorn
server on 127.0.0.1, driven with httpx."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx

from tests.http.app import state
from tests.http.conftest import ACCEPT_BOTH, LEGACY, initialize, messages, read_events, rpc, session_headers


def test_initialize_mints_a_visible_ascii_session_id_and_answers_json(srv, http):
    sid = initialize(http, srv.url)
    assert 32 <= len(sid) <= 256 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    r = http.post(
        srv.url, json=rpc(1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}), headers=session_headers(sid)
    )
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json()["result"]["structuredContent"] == {"result": 5}
    # The id is on the answer that opened the session only (spec: the InitializeResult's
    # response); a later response does not repeat it, whatever it is (JSON, 202, GET's stream).
    assert "mcp-session-id" not in r.headers
    r = http.post(
        srv.url,
        json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        headers=session_headers(sid),
    )
    assert r.status_code == 202 and "mcp-session-id" not in r.headers


def test_session_id_missing_is_400_unknown_is_404_deleted_is_404(srv, http):
    r = http.post(srv.url, json=rpc(1, "tools/list"), headers={"accept": ACCEPT_BOTH})
    assert r.status_code == 400 and "Mcp-Session-Id" in r.json()["error"]["message"]
    r = http.post(srv.url, json=rpc(1, "tools/list"), headers=session_headers("no-such-session"))
    assert r.status_code == 404
    sid = initialize(http, srv.url)
    assert http.delete(srv.url, headers=session_headers(sid)).status_code == 200
    r = http.post(srv.url, json=rpc(2, "tools/list"), headers=session_headers(sid))
    assert r.status_code == 404
    assert http.delete(srv.url, headers=session_headers(sid)).status_code == 404
    assert http.get(srv.url, headers=session_headers(sid)).status_code == 404
    assert srv.call(lambda: len(srv.mcp_app.sessions)) == 0


def test_protocol_version_header(srv, http):
    sid = initialize(http, srv.url)
    r = http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(sid, "1999-01-01"))
    assert r.status_code == 400 and "MCP-Protocol-Version" in r.json()["error"]["message"]
    headers = session_headers(sid)
    del headers["mcp-protocol-version"]  # missing: 2025-03-26 is assumed
    assert http.post(srv.url, json=rpc(2, "ping"), headers=headers).json() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_accept_is_lenient_and_content_type_is_checked(srv, http):
    sid = initialize(http, srv.url)
    headers = session_headers(sid)
    del headers["accept"]
    assert http.post(srv.url, json=rpc(1, "ping"), headers=headers).status_code == 200  # missing = both
    r = http.post(srv.url, json=rpc(2, "ping"), headers=session_headers(sid, accept="text/event-stream"))
    assert r.headers["content-type"].startswith("text/event-stream")
    assert messages(read_events(r))[-1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert http.post(srv.url, json=rpc(3, "ping"), headers=session_headers(sid, accept="text/html")).status_code == 406
    r = http.post(
        srv.url,
        content=b'{"jsonrpc":"2.0","id":4,"method":"ping"}',
        headers=session_headers(sid, **{"content-type": "text/plain"}),
    )
    assert r.status_code == 415


def test_bad_json_and_bad_jsonrpc_are_400(srv, http):
    sid = initialize(http, srv.url)
    r = http.post(srv.url, content=b"{not json", headers=session_headers(sid, **{"content-type": "application/json"}))
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700
    r = http.post(srv.url, json={"jsonrpc": "1.0", "id": 5, "method": "ping"}, headers=session_headers(sid))
    assert r.status_code == 400 and r.json() == {"jsonrpc": "2.0", "id": 5, "error": r.json()["error"]}
    assert r.json()["error"]["code"] == -32600


def test_notifications_and_responses_get_202(srv, http):
    sid = initialize(http, srv.url)
    r = http.post(
        srv.url, json={"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}, headers=session_headers(sid)
    )
    assert r.status_code == 202 and r.content == b""
    r = http.post(srv.url, json={"jsonrpc": "2.0", "id": 99, "result": {}}, headers=session_headers(sid))
    assert r.status_code == 202


def test_progress_and_logs_come_on_the_requests_sse_stream_after_a_priming_event(srv, http):
    sid = initialize(http, srv.url)
    call = rpc(7, "tools/call", {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "p"}})
    with http.stream("POST", srv.url, json=call, headers=session_headers(sid)) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        assert r.headers["x-accel-buffering"] == "no"
        assert "mcp-session-id" not in r.headers  # sent on initialize's answer only
        events = read_events(r)
    assert events[0].data == "" and events[0].id and events[0].retry == 1000  # priming (2025-11-25)
    assert all(e.id for e in events)
    msgs = messages(events)
    assert [m["params"]["progress"] for m in msgs if m.get("method") == "notifications/progress"] == [1, 2, 3]
    assert [m["params"]["data"] for m in msgs if m.get("method") == "notifications/message"] == [
        "step 1",
        "step 2",
        "step 3",
    ]
    assert (
        msgs[-1]
        == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": "done"}], "structuredContent": {"result": "done"}},
        }
        or msgs[-1]["id"] == 7
    )


def test_no_priming_event_before_2025_11_25(srv, http):
    sid = initialize(http, srv.url, "2025-06-18")
    call = rpc(7, "tools/call", {"name": "progress", "arguments": {"steps": 1}, "_meta": {"progressToken": 1}})
    with http.stream("POST", srv.url, json=call, headers=session_headers(sid, "2025-06-18")) as r:
        events = read_events(r)
    assert all(e.data for e in events)
    assert messages(events)[-1]["id"] == 7


def test_a_silent_request_switches_to_sse_with_keepalives(serve, http):
    srv = serve(sse_after=0.05, keepalive=0.05)
    sid = initialize(http, srv.url)
    with http.stream(
        "POST",
        srv.url,
        json=rpc(1, "tools/call", {"name": "slow", "arguments": {"seconds": 0.4}}),
        headers=session_headers(sid),
    ) as r:
        assert r.headers["content-type"] == "text/event-stream"
        raw = b"".join(r.iter_raw())
    assert b": keep-alive\n\n" in raw
    assert b'"slept"' in raw


def test_sampling_request_goes_on_the_calls_stream_and_the_answer_is_posted_back(srv, http):
    sid = initialize(http, srv.url, capabilities={"sampling": {}})
    call = rpc(3, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}})
    with http.stream("POST", srv.url, json=call, headers=session_headers(sid)) as r:
        parser_events = []
        for event in _events(r):
            parser_events.append(event)
            msg = event
            if msg.get("method") == "sampling/createMessage":
                assert msg["params"]["messages"][0]["content"]["text"] == "hi"
                answer = {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "result": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "hello"},
                        "model": "m",
                        "stopReason": "endTurn",
                    },
                }
                with httpx.Client(timeout=10) as other:
                    assert other.post(srv.url, json=answer, headers=session_headers(sid)).status_code == 202
            if msg.get("id") == 3:
                break
    assert parser_events[-1]["result"]["content"][0]["text"] == "LLM said: hello"


def _events(response: httpx.Response):
    import json

    from mcpio._protocol._http import SSEParser

    parser = SSEParser()
    for chunk in response.iter_raw():
        for e in parser.feed(chunk):
            if e.data:
                yield json.loads(e.data)


def test_get_stream_carries_server_initiated_notifications(srv, http):
    sid = initialize(http, srv.url)
    got: list[dict] = []
    opened = threading.Event()

    def listen() -> None:
        with (
            httpx.Client(timeout=10) as c,
            c.stream("GET", srv.url, headers=session_headers(sid, accept="text/event-stream")) as r,
        ):
            assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
            assert "mcp-session-id" not in r.headers  # sent on initialize's answer only
            opened.set()
            for msg in _events(r):
                got.append(msg)
                break

    t = threading.Thread(target=listen)
    t.start()
    assert opened.wait(5)
    assert (
        http.get(srv.url, headers=session_headers(sid, accept="text/event-stream")).status_code == 409
    )  # one at a time
    time.sleep(0.1)
    srv.call(lambda: srv.mcp_server.add_tool(lambda: "y", name="from_outside"))
    t.join(5)
    assert got == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert http.get(srv.url, headers=session_headers(sid, accept="application/json")).status_code == 406


def test_server_closes_the_stream_and_the_client_resumes_with_last_event_id(srv, http):
    sid = initialize(http, srv.url)
    with http.stream(
        "POST", srv.url, json=rpc(5, "tools/call", {"name": "poll_me", "arguments": {}}), headers=session_headers(sid)
    ) as r:
        first = read_events(r)
    assert (first[0].data == "" and first[-1].retry == 50) or any(e.retry for e in first)
    assert [m["params"]["data"] for m in messages(first)] == ["before the break"]
    last_id = [e.id for e in first if e.id][-1]
    time.sleep(0.4)  # the tool finishes while nobody is connected
    other = initialize(http, srv.url)
    r = http.get(srv.url, headers=session_headers(other, **{"last-event-id": last_id}))
    assert r.status_code == 404  # event ids are scoped to their session
    with http.stream("GET", srv.url, headers=session_headers(sid, **{"last-event-id": last_id})) as r:
        assert r.status_code == 200
        rest = read_events(r)
    msgs = messages(rest)
    assert msgs[0]["params"]["data"] == "after the break"
    assert msgs[-1]["id"] == 5 and msgs[-1]["result"]["content"][0]["text"] == "resumed"


def test_resuming_a_live_stream_continues_it(srv, http):
    sid = initialize(http, srv.url)
    with http.stream(
        "POST", srv.url, json=rpc(6, "tools/call", {"name": "poll_me", "arguments": {}}), headers=session_headers(sid)
    ) as r:
        last_id = [e.id for e in read_events(r) if e.id][-1]
    with http.stream("GET", srv.url, headers=session_headers(sid, **{"last-event-id": last_id})) as r:  # at once
        msgs = messages(read_events(r))
    assert msgs[-1]["id"] == 6


def test_disconnect_is_not_cancellation(srv, http):
    sid = initialize(http, srv.url)
    state.pop("slow_cancelled", None)
    with http.stream(
        "POST",
        srv.url,
        json=rpc(8, "tools/call", {"name": "slow", "arguments": {"seconds": 0.3}}),
        headers=session_headers(sid),
    ):
        pass  # closes at once
    time.sleep(0.5)
    assert state.get("slow_started") and not state.get("slow_cancelled")


def test_duplicate_in_flight_id_is_refused(serve, http):
    srv = serve(sse_after=0.05)
    sid = initialize(http, srv.url)
    in_flight = threading.Event()  # the SSE response has started: the server holds id 9

    def call() -> None:
        call = rpc(9, "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}})
        with httpx.stream("POST", srv.url, json=call, headers=session_headers(sid), timeout=10) as r:
            in_flight.set()
            r.read()

    done = threading.Thread(target=call)
    done.start()
    assert in_flight.wait(10)
    r = http.post(srv.url, json=rpc(9, "ping"), headers=session_headers(sid))
    assert r.status_code == 400 and r.json()["id"] == 9
    done.join()


def test_idle_sessions_expire_but_not_while_a_request_runs(serve, http):
    srv = serve(session_timeout=0.3)
    idle = initialize(http, srv.url)
    busy = initialize(http, srv.url)
    r = http.post(
        srv.url,
        json=rpc(1, "tools/call", {"name": "slow", "arguments": {"seconds": 0.8}}),
        headers=session_headers(busy),
    )
    assert r.json()["result"]["content"][0]["text"] == "slept"
    assert http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(idle)).status_code == 404
    assert http.post(srv.url, json=rpc(2, "ping"), headers=session_headers(busy)).status_code == 200
    time.sleep(0.6)
    assert srv.call(lambda: len(srv.mcp_app.sessions)) == 0


def _init(id: Any) -> dict[str, Any]:
    return rpc(
        id, "initialize", {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )


def test_a_flood_of_sessions_is_capped_and_delete_frees_a_slot(serve, http):
    srv = serve(max_sessions=5)
    sids = [initialize(http, srv.url) for _ in range(5)]
    r = http.post(srv.url, json=_init("sixth"), headers={"accept": ACCEPT_BOTH})
    assert r.status_code == 503 and r.headers["retry-after"] == "5"
    assert "mcp-session-id" not in r.headers
    body = r.json()
    assert body["id"] == "sixth" and body["error"]["code"] == -32600  # the request's id: it was read
    msg = body["error"]["message"]
    assert "maximum of 5 sessions" in msg and "max_sessions" in msg  # whose limit...
    assert "the request itself is fine" in msg and "Retry after 5 s" in msg and "DELETE" in msg  # ...what to do
    assert "idle ones expire after 1800 s" in msg
    assert body["error"]["data"] == {"maxSessions": 5, "retryAfter": 5}
    assert http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(sids[0])).status_code == 200  # the 5 live on
    assert http.delete(srv.url, headers=session_headers(sids[0])).status_code == 200
    assert http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(sids[0])).status_code == 404
    initialize(http, srv.url)  # the freed slot
    assert http.post(srv.url, json=_init(7), headers={"accept": ACCEPT_BOTH}).status_code == 503  # full again


def test_idle_expiry_frees_slots_under_the_cap(serve, http):
    srv = serve(max_sessions=2, session_timeout=1.0)
    old = [initialize(http, srv.url) for _ in range(2)]
    assert http.post(srv.url, json=_init(3), headers={"accept": ACCEPT_BOTH}).status_code == 503
    deadline = time.monotonic() + 10  # the reaper runs every 0.25 s; both expire after 1 s idle
    while srv.call(lambda: len(srv.mcp_app.sessions)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.call(lambda: len(srv.mcp_app.sessions)) == 0
    for sid in old:
        assert http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(sid)).status_code == 404
    initialize(http, srv.url)
    initialize(http, srv.url)


def test_refusals_carry_the_request_id_when_it_was_read(srv, http):
    sid = initialize(http, srv.url)
    cases = [  # (body, headers, status, id)
        (rpc("a", "tools/list"), {"accept": ACCEPT_BOTH}, 400, "a"),  # no session id
        (rpc(2, "tools/list"), session_headers("no-such-session"), 404, 2),
        (rpc("c", "ping"), session_headers(sid, "1999-01-01"), 400, "c"),  # bad MCP-Protocol-Version
        (rpc(2**53, "ping"), session_headers("gone"), 404, 2**53),
        # No single id to give: a notification, a batch, a body that is not JSON-RPC
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, {"accept": ACCEPT_BOTH}, 400, None),
        ([rpc(1, "ping"), rpc(2, "ping")], session_headers("no-such-session"), 404, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, session_headers(sid), 400, None),
    ]
    for body, headers, status, id_ in cases:
        r = http.post(srv.url, json=body, headers=headers)
        assert (r.status_code, r.json()["id"]) == (status, id_), (body, r.text)
    r = http.post(
        srv.url,
        content=b'{"jsonrpc":"2.0","id":5,',
        headers={**session_headers(sid), "content-type": "application/json"},
    )
    assert (r.status_code, r.json()["id"], r.json()["error"]["code"]) == (400, None, -32700)
    # Refused before the body is read (Host, Content-Type, Accept): no id to give.
    r = http.post(srv.url, json=rpc(9, "ping"), headers={**session_headers(sid), "content-type": "text/plain"})
    assert (r.status_code, r.json()["id"]) == (415, None)


def test_rejected_requests_allocate_no_session(srv, http):
    for bad in (
        {"json": rpc(1, "tools/list")},
        {"content": b"garbage"},
        {"json": rpc(1, "initialize", {}), "headers": {"host": "evil.example.com"}},
    ):
        http.post(srv.url, **bad)
    assert srv.call(lambda: len(srv.mcp_app.sessions)) == 0


def test_body_size_cap_is_413(serve, http):
    srv = serve(max_body_size=200)
    sid = initialize(http, srv.url)
    r = http.post(
        srv.url,
        json=rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2, "pad": "x" * 300}}),
        headers=session_headers(sid),
    )
    assert r.status_code == 413


def test_batch_in_2025_03_26(srv, http):
    sid = initialize(http, srv.url, "2025-03-26")
    r = http.post(
        srv.url,
        json=[rpc(1, "ping"), rpc(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})],
        headers=session_headers(sid, "2025-03-26"),
    )
    assert r.status_code == 200
    assert sorted(m["id"] for m in r.json()) == [1, 2]


def test_a_batch_in_a_version_without_batches_is_answered_not_left_open(srv, http):
    # The protocol layer refuses a whole batch with a null id (only 2025-03-26 has batches); that
    # refusal answers the POST that carried it. It used to be dropped as "a response to an
    # unknown request", and the POST's stream stayed open with keep-alives: the client hung.
    sid = initialize(http, srv.url)
    batches = ([rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})], [rpc(2, "ping"), rpc(3, "ping")])
    for accept in (ACCEPT_BOTH, "application/json"):
        for batch in batches:
            r = http.post(srv.url, json=batch, headers={**session_headers(sid), "accept": accept}, timeout=5)
            json_body = r.headers["content-type"].startswith("application/json")
            body = r.json() if json_body else messages(read_events(r))[0]
            assert body["id"] is None and body["error"]["code"] == -32600, body
            assert "2025-03-26" in body["error"]["message"]
    # Its ids are free again, and the session still serves plain requests.
    r = http.post(srv.url, json=rpc(1, "ping"), headers=session_headers(sid), timeout=5)
    assert r.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_batch_stays_a_batch_when_the_body_is_decoded_once(srv, http):
    # The session takes the body the HTTP layer decoded (issue 17): a one-message batch is still
    # answered with an array, whitespace before "[" included, and a plain object with an object.
    sid = initialize(http, srv.url, "2025-03-26")
    headers = {**session_headers(sid, "2025-03-26"), "content-type": "application/json"}
    one = json.dumps([rpc(7, "ping")]).encode()
    for body in (one, b" \r\n\t" + one):
        r = http.post(srv.url, content=body, headers=headers)
        assert r.status_code == 200, r.text
        assert r.json() == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    r = http.post(srv.url, content=b"\n" + json.dumps(rpc(8, "ping")).encode(), headers=headers)
    assert r.json() == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_other_methods_and_paths(srv, http):
    assert http.put(srv.url).status_code == 405
    assert http.post(srv.base + "/other", json=rpc(1, "ping")).status_code == 404
