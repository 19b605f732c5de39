"""Issue 12, break 6, on the wire: exception messages to remote clients, refused paths logged
in one line, the loopback check, Content-Type on POST, private trace files, uvicorn's
connection limits, and a client that skips an oversized line quietly."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile

import httpx
import pytest

from mcpio import Client, Server
from mcpio._protocol._http import is_loopback
from mcpio._transports._trace import open_private
from tests.client.support import arun
from tests.faults.harden_support import ACCEPT_BOTH, ROOT, headers, open_session, rpc, spawn, tool
from tests.faults.support import FAULTS
from tests.support.http import exchange

V = "2025-11-25"


def text(answer: dict) -> str:
    return answer["result"]["content"][0]["text"]


# ------------------------------------------------------------------ (a) and (b): errors and refusals
def test_remote_clients_get_the_exception_type_and_the_log_gets_the_detail(tmp_path):
    with spawn(tmp_path) as srv, httpx.Client(timeout=30) as http:
        sid = open_session(http, srv.url, V)
        crash = tool(http, srv.url, sid, "crash", V)["result"]
        assert crash["isError"] and "RuntimeError" in text({"result": crash})
        assert "/srv/secret" not in json.dumps(crash)
        assert text(tool(http, srv.url, sid, "refuse", V)) == "this message is for the client"  # ToolError: as is
        r = http.post(srv.url, json=rpc(9, "resources/read", {"uri": "internal://boom"}), headers=headers(sid, V))
        error = r.json()["error"]
        assert error["code"] == -32603 and "KeyError" in error["message"] and "/srv/secret" not in r.text
        # A refused path is the client's mistake: an isError result, and one log line.
        refused = tool(http, srv.url, sid, "read_file", V, arguments={"path": "../../etc/passwd"})["result"]
        assert refused["isError"] and "outside the allowed folder" in text({"result": refused})
    log = srv.stderr()
    assert "/srv/secret/internal/config.yaml" in log and "/srv/secret/table" in log  # the detail, for the operator
    refusals = [line for line in log.splitlines() if "refused a path" in line]
    assert len(refusals) == 1 and log.count("Traceback") == 2  # crash and boom only


def test_expose_errors_restores_full_messages_over_http(tmp_path):
    with spawn(tmp_path, "--expose-errors") as srv, httpx.Client(timeout=30) as http:
        sid = open_session(http, srv.url, V)
        assert "/srv/secret/internal/config.yaml" in text(tool(http, srv.url, sid, "crash", V))


def test_stdio_keeps_full_messages_by_default():
    async def go() -> None:
        async with Client(FAULTS, timeout=30) as client:
            result = await client.call_tool("raise", {"kind": "value"})
            assert result["isError"] and "bad value" in result["content"][0]["text"]

    arun(go(), timeout=60)


# ------------------------------------------------------------------ (c) loopback, (d) Content-Type
def test_only_literal_loopback_addresses_or_localhost_are_loopback():
    for ok in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert is_loopback(ok), ok
    for bad in ("127.evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "0.0.0.0", "::", "10.0.0.1", ""):
        assert not is_loopback(bad), bad
    with pytest.raises(ValueError, match="refusing to bind '127.evil.example'"):
        asyncio.run(Server("s").serve_http("127.evil.example", 0))


def test_a_post_without_json_content_type_is_415(tmp_path):
    init = rpc(0, "initialize", {"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    body = json.dumps(init).encode()
    with spawn(tmp_path) as srv, httpx.Client(timeout=30) as http:
        for ctype in (None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            hdrs = {"accept": ACCEPT_BOTH, **({"content-type": ctype} if ctype else {})}
            r = http.post(srv.url, content=body, headers=hdrs)
            assert r.status_code == 415 and "mcp-session-id" not in r.headers, (ctype, r.text)
        r = http.post(
            srv.url, content=body, headers={"accept": ACCEPT_BOTH, "content-type": "Application/JSON; charset=utf-8"}
        )
        assert r.status_code == 200 and r.headers["mcp-session-id"]


# ------------------------------------------------------------------ (e) trace files
def test_trace_files_are_private_and_never_followed_through_a_link(tmp_path):
    path = tmp_path / "trace.log"
    f = open_private(str(path))
    f.write("one\n")
    f.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    open_private(str(path)).close()  # an existing regular file: appended to
    assert path.read_text() == "one\n"
    target = tmp_path / "victim"
    target.write_text("keep\n")
    link = tmp_path / "link.log"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic link"):
        open_private(str(link))
    # On the wire: a server started with MCPIO_TRACE at the link serves, and writes nothing there.
    echo = ROOT / "tests" / "servers" / "echo_server.py"
    init = rpc(0, "initialize", {"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    out = subprocess.run(
        [sys.executable, str(echo)],
        input=(json.dumps(init) + "\n").encode(),
        capture_output=True,
        env={**os.environ, "MCPIO_TRACE": str(link)},
        timeout=30,
    )
    assert json.loads(out.stdout.splitlines()[0])["result"]["protocolVersion"] == V
    assert target.read_text() == "keep\n" and b"symbolic link" in out.stderr
    fresh = tmp_path / "fresh.log"
    subprocess.run(
        [sys.executable, str(echo)],
        input=(json.dumps(init) + "\n").encode(),
        capture_output=True,
        env={**os.environ, "MCPIO_TRACE": str(fresh)},
        timeout=30,
    )
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600 and " in " in fresh.read_text()


# ------------------------------------------------------------------ (f) uvicorn limits
# Every limit holds under both parsers: httptools (llhttp, the default where it imports) and h11.
PARSERS = pytest.mark.parametrize("parser", ["httptools", "h11"])


@PARSERS
def test_idle_connections_cannot_lock_out_a_real_client(tmp_path, parser):
    with spawn(tmp_path, "--max-connections", "50", "--http-parser", parser) as srv, httpx.Client(timeout=30) as http:
        port = int(srv.url.split(":")[2].split("/")[0])
        idle = []
        try:
            for _ in range(300):  # six times the cap, sending nothing
                idle.append(socket.create_connection(("127.0.0.1", port)))
            sid = open_session(http, srv.url, V)
            assert text(tool(http, srv.url, sid, "quick", V)) == "quick"
            closed = 0
            for s in idle:  # the oldest idle ones were closed to make room
                s.settimeout(10)
                try:
                    closed += s.recv(1) == b""
                except (TimeoutError, OSError):
                    pass
                if closed >= 200:
                    break
            assert closed >= 200
        finally:
            for s in idle:
                s.close()
    assert len(srv.stderr().splitlines()) <= 5, srv.stderr()


@PARSERS
def test_a_connection_that_never_finishes_its_head_is_closed(tmp_path, parser):
    with spawn(tmp_path, "--header-timeout", "0.5", "--http-parser", parser) as srv:
        port = int(srv.url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
            s.settimeout(30)
            assert s.recv(1) == b""  # closed by the server


def _post(body: bytes, extra: bytes = b"", sid: str | None = None) -> bytes:
    session = b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n" % (sid.encode(), V.encode()) if sid else b""
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\n%s%sContent-Length: %d\r\n\r\n%s"
        % (session, extra, len(body), body)
    )


@PARSERS
def test_a_request_head_past_the_limit_is_refused_before_it_is_buffered(tmp_path, parser):
    """A head past ``h11_max_incomplete_event_size`` is refused and the connection closed, whether it
    comes in one write or trickles; a head under it is served even when its body, sent in the same
    write, is larger than the limit (the body is the app's to limit, not the head's)."""
    with (
        spawn(tmp_path, "--max-head", "4096", "--header-timeout", "60", "--http-parser", parser) as srv,
        httpx.Client(timeout=30) as http,
    ):
        port = int(srv.url.split(":")[2].split("/")[0])
        refused = b"431 " if parser == "httptools" else b"400 "
        ping = json.dumps(rpc(1, "ping")).encode()
        big_header = b"X-Filler: " + b"a" * 8000 + b"\r\n"
        answer = exchange(port, _post(ping, big_header))
        assert answer.startswith(b"HTTP/1.1 " + refused), answer[:200]
        # Trickled: a header line that never ends, in small writes, is cut off once past the limit
        # (not at the head timeout, 60 s here): the server closes while the client still writes.
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ")
            try:
                for _ in range(256):  # 64 times the limit, unless the server closes first
                    s.sendall(b"a" * 1024)
            except OSError:
                pass  # closed under the writes: the refusal is what the rest checks
            s.settimeout(30)
            try:
                got = s.recv(65536)
            except ConnectionResetError:
                got = b""  # closed with our bytes unread: the reset may overtake the 431
            assert got == b"" or got.startswith(b"HTTP/1.1 " + refused), got[:200]
        # A small head and a body larger than the limit, in one write: served.
        sid = open_session(http, srv.url, V)
        body = json.dumps({**rpc(2, "tools/call", {"name": "quick", "arguments": {}}), "filler": "x" * 20000})
        answer = exchange(port, _post(body.encode(), sid=sid))
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
        assert b'"quick"' in answer
    assert "Traceback" not in srv.stderr(), srv.stderr()


# ------------------------------------------------------------------ (g) an oversized line to a client
def test_a_client_skips_an_oversized_line_without_an_unretrieved_task_exception():
    script = f"""
import asyncio, sys
from mcpio import Client
from mcpio._transports._subprocess import SubprocessTransport
async def main():
    t = SubprocessTransport(sys.executable, [{str(ROOT / "tests" / "faults" / "oversized_server.py")!r}],
                            max_line_size=1 << 20)
    async with Client(transport=t, era="legacy", protocol_version="{V}", timeout=20) as c:
        try:
            await c.call_tool("x", {{}})
        except Exception as e:
            print("failed:", type(e).__name__)
asyncio.run(main())
import gc; gc.collect()
"""
    out = subprocess.run(
        [sys.executable, "-X", "dev", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tempfile.gettempdir(),
    )
    assert "failed: ServerExited" in out.stdout, out
    assert "Task exception was never retrieved" not in out.stderr, out.stderr
    assert "skipping a message of" in out.stderr


def test_an_unknown_http_parser_is_refused_before_listening():
    server = Server("parser")
    with pytest.raises(ValueError, match="http_parser must be one of 'auto', 'httptools', 'h11', not 'llhttp'"):
        arun(server.serve_http(port=0, http_parser="llhttp"))


def test_an_oversized_pipelined_head_behind_a_response_in_flight_only_closes_the_connection(tmp_path):
    """llhttp (the limit is ours): a head past the limit, pipelined behind a request still being
    answered, closes the connection; no 431 is written into the response in flight."""
    with spawn(tmp_path, "--max-head", "4096", "--http-parser", "httptools") as srv, httpx.Client(timeout=30) as http:
        port = int(srv.url.split(":")[2].split("/")[0])
        sid = open_session(http, srv.url, V)
        block = json.dumps(rpc(2, "tools/call", {"name": "block", "arguments": {}})).encode()
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(_post(block, sid=sid).replace(b"Connection: close\r\n", b""))  # kept alive
            while json.loads(text(tool(http, srv.url, sid, "stats", V, id=3)))["block_started"] < 1:
                pass  # the first request is in: its answer waits for release
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + b"a" * 8000)
            s.settimeout(30)
            got = b""
            try:
                while chunk := s.recv(65536):
                    got += chunk
            except ConnectionResetError:
                pass
            assert b"431" not in got, got[:300]
        assert text(tool(http, srv.url, sid, "release", V, id=4)) == "ok"
