"""The Streamable HTTP app behind uvicorn on 127.0.0.1, under malformed HTTP/1.1 and fuzzed requests.

The in-process fuzz test (test_http_fuzz.py) checks the app; this one checks what a client on
a socket sees: raw bytes that are not HTTP (bad request lines, header syntax, oversized
headers, bad chunked framing, a Content-Length that lies, a request that stops halfway, then
a client that stops talking), and a sample of the in-process test's requests sent with httpx.
Nothing is ever answered with a 5xx (but the 503 of the session cap, when it is reached),
uvicorn never logs an exception from the app, and the server still opens a session after all
of it, also while a half-sent request holds a connection open.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from tests.fuzz.http_cases import ACCEPT_BOTH, MAX_BODY, MAX_SESSIONS, Case, cases, fuzz_server
from tests.support.http import ServerThread, exchange

N = int(os.environ.get("MCPIO_HTTP_SOCKET_FUZZ_EXAMPLES", "60"))
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
).encode()


def post_bytes(body: bytes = INIT, *, extra: bytes = b"", length: int | None = None) -> bytes:
    n = len(body) if length is None else length
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % n
        + body
    )


# Each: (name, the bytes a client writes before it stops sending). None of these is a request
# the app may answer with 5xx; most never reach it (uvicorn's HTTP parser answers 400).
MALFORMED = [
    ("not http", b"GARBAGE\r\n\r\n"),
    ("binary", b"\x00\x01\x02\xff\xfe\r\n\r\n"),
    ("http/0.9", b"GET /mcp\r\n\r\n"),
    ("unknown version", b"POST /mcp HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n"),
    ("two spaces", b"POST  /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    ("non-ascii target", b"POST /mcp\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    ("percent-encoded NUL in the path", b"GET /mcp%00 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    ("header without colon", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n"),
    ("space before colon", b"POST /mcp HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n"),
    ("obsolete line folding", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: a,\r\n b\r\n\r\n"),
    ("bare LF", b"POST /mcp HTTP/1.1\nHost: 127.0.0.1\n\n"),
    ("NUL in a value", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Method: pi\x00ng\r\n\r\n"),
    ("no Host", b"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"),
    ("two Hosts", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example.com\r\nContent-Length: 0\r\n\r\n"),
    ("oversized header", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n"),
    ("10,000 headers", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-A: b\r\n" * 10_000 + b"\r\n"),
    ("latin-1 header values", post_bytes(extra=b"Mcp-Session-Id: \xe9\xff\r\nLast-Event-ID: 0-\xb2\r\n")),
    (
        "bad chunk size",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n",
    ),
    (
        "chunk longer than declared",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}xxxx\r\n0\r\n\r\n",
    ),
    (
        "chunked, never terminated",
        b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n',
    ),
    (
        "chunked and a length",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
    ),
    ("unknown transfer coding", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
    ("length not a number", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \xb2\r\n\r\n{}"),
    (
        "two different lengths",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ),
    ("length over the body cap", post_bytes(b"{}", length=MAX_BODY + 1)),
    ("length shorter than the body", post_bytes(INIT, length=len(INIT) // 2)),
    ("length longer than the body", post_bytes(INIT, length=len(INIT) + 100)),
    ("headers cut short", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"),
    ("request line cut short", b"POS"),
]


def statuses(raw: bytes) -> list[int]:
    return [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3}) ", raw)]


@pytest.fixture
def server() -> Iterator[ServerThread]:
    app = fuzz_server().http_app(max_body_size=MAX_BODY, max_sessions=MAX_SESSIONS, sse_after=0.02, keepalive=0.05)
    with ServerThread(app) as srv:
        srv.mcp_app = app  # type: ignore[attr-defined]
        yield srv


@pytest.fixture
def app_errors() -> Iterator[list[logging.LogRecord]]:
    """What uvicorn and mcpio log at ERROR: "Exception in ASGI application" and the like."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append  # type: ignore[method-assign]
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn", "mcpio", "asyncio")]
    for lg in loggers:
        lg.addHandler(handler)
    yield records
    for lg in loggers:
        lg.removeHandler(handler)


def initialize_works(srv: ServerThread) -> None:
    r = httpx.post(
        srv.url, content=INIT, headers={"content-type": "application/json", "accept": ACCEPT_BOTH}, timeout=10
    )
    assert r.status_code == 200 and r.json()["result"]["protocolVersion"] == "2025-11-25", r.text
    httpx.delete(srv.url, headers={"mcp-session-id": r.headers["mcp-session-id"]}, timeout=10)


def test_malformed_http_gets_4xx_or_a_closed_connection_never_5xx(server, app_errors):
    seen = {}
    # A client that sends half a request and goes quiet holds a connection: others are served.
    with socket.create_connection(("127.0.0.1", server.port)) as slow:
        slow.sendall(b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"jsonrpc":')
        for name, data in MALFORMED:
            raw = exchange(
                server.port, data, wait=0.3 if name.endswith(("than the body", "terminated", "cut short")) else 5
            )
            seen[name] = statuses(raw)
            assert all(s < 500 for s in seen[name]), (name, raw[:300])
        initialize_works(server)
    # Not all of them reach the app: those that do got the app's own 4xx.
    assert seen["latin-1 header values"] == [404]  # an unknown session
    assert seen["length over the body cap"] == [413]
    assert seen["length shorter than the body"] == [400]  # the half it got is not JSON (the rest: not HTTP)
    assert seen["length longer than the body"] == []  # it waits for the rest; the client left
    assert seen["no Host"] in ([400], [403])
    assert not app_errors, [r.getMessage() for r in app_errors]
    initialize_works(server)
    assert server.call(lambda: len(server.mcp_app.sessions)) == 0  # nothing half-made was kept


def test_a_last_event_id_of_latin_1_digits_is_404_over_the_wire(server, app_errors):
    # Found by test_http_fuzz.py: "0-\xb2" reached the app through uvicorn and int("²") raised (500).
    r = httpx.post(
        server.url, content=INIT, headers={"content-type": "application/json", "accept": ACCEPT_BOTH}, timeout=10
    )
    headers = {"mcp-session-id": r.headers["mcp-session-id"], "accept": "text/event-stream", "last-event-id": b"0-\xb2"}
    r = httpx.get(server.url, headers=headers, timeout=10)
    assert r.status_code == 404 and r.json()["error"]["code"] == -32600
    assert not app_errors, [r.getMessage() for r in app_errors]


def send_case(http: httpx.Client, url: str, case: Case, live: str) -> tuple[int, bytes, str]:
    """Send ``case`` (its body whole; its client leaves after a few stream writes or 0.5 s)."""
    headers = [(k, v) for k, v in case.with_sessions(live.encode(), b"ended") if k.lower() not in (b"content-length",)]
    body = b""
    deadline = time.monotonic() + max(case.patience, 0.2)
    with http.stream(
        case.method,
        url + case.path.removeprefix("/mcp") + ("?" + case.query.decode("latin-1") if case.query else ""),
        headers=headers,
        content=case.body or None,
    ) as r:
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            for i, chunk in enumerate(r.iter_raw()):
                body += chunk
                if i + 1 >= (case.max_writes or 3) or time.monotonic() > deadline:
                    break
        else:
            body = r.read()
        return r.status_code, body, r.headers.get("content-type", "")


def test_fuzzed_requests_over_a_socket_never_get_5xx(server, app_errors):
    started = time.monotonic()
    url = server.base + "/mcp"
    seen: dict[int, int] = {}
    sessions = lambda: server.call(lambda: list(server.mcp_app.sessions))  # noqa: E731
    with httpx.Client(timeout=httpx.Timeout(10, read=2)) as http:
        live = [""]

        def tidy() -> None:
            """End the fuzzed sessions (so the cap is hit only sometimes), keep one live."""
            for sid in sessions():
                if sid != live[0]:
                    assert http.delete(url, headers={"mcp-session-id": sid}).status_code == 200
            if live[0] not in sessions():  # a fuzzed DELETE ended it
                live[0] = http.post(
                    url, content=INIT, headers={"content-type": "application/json", "accept": ACCEPT_BOTH}
                ).headers["mcp-session-id"]

        @settings(max_examples=N, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=cases(), tidy_now=st.integers(0, 25))
        def one(case: Case, tidy_now: int) -> None:
            if case.root_path or case.method in ("HEAD",):
                reject()
            if live[0] not in sessions() or tidy_now == 0:
                tidy()
            try:
                status, body, ctype = send_case(http, url, case, live[0])
            except (httpx.LocalProtocolError, httpx.UnsupportedProtocol, httpx.InvalidURL, UnicodeError, ValueError):
                reject()  # httpx will not send it (a header h11 refuses, a URL it cannot build)
            seen[status] = seen.get(status, 0) + 1
            at_cap = status == 503 and len(sessions()) >= MAX_SESSIONS
            assert status < 500 or at_cap, (status, body[:300], case)
            if ctype.startswith("application/json"):
                json.loads(body)
            assert not app_errors, [r.getMessage() for r in app_errors]

        one()
        live[0] = ""
        tidy()  # ends them all, opens one
    initialize_works(server)
    print(f"\n{N} fuzzed requests over a socket in {time.monotonic() - started:.1f} s; statuses {sorted(seen.items())}")
    assert not app_errors, [r.getMessage() for r in app_errors]
