"""HTTP/2 and TLS on the wire (issue 14): ``mcpio run -t http --http2`` (hypercorn) serves h2
over TLS (ALPN) and h2c in cleartext (prior knowledge and ``Upgrade: h2c``); 50 SSE streams
share one HTTP/2 connection and each receives all its events; the mcpio client negotiates h2;
``--certfile/--keyfile`` alone serve HTTPS/1.1 with uvicorn; a certificate the client does not
trust, or a key that does not match, is refused with one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import subprocess
import sys
from typing import Any

import httpx
import pytest

from mcpio import Client
from mcpio._transports._http_client import HTTPClientTransport
from tests.h2.conftest import SERVER, Certs, mcpio_http

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
STREAMS = 50


def trust(ca: Any) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def together_call(i: int) -> dict[str, Any]:
    params = {"name": "together", "arguments": {"n": STREAMS}, "_meta": {**META, "progressToken": f"p{i}"}}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "together",
}


async def fifty_streams(url: str, **client: Any) -> set[str]:
    """50 concurrent tools/call answered as SSE streams, on a client limited to ONE connection:
    the tool answers only once all 50 are in flight, so they must be open at once on it."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(limits=limits, timeout=60, **client) as http:

        async def one(i: int) -> str:
            async with http.stream("POST", url, json=together_call(i), headers=HEADERS) as r:
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                events = [json.loads(line[5:]) async for line in r.aiter_lines() if line.startswith("data:")]
            progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
            assert [(p["progressToken"], p["progress"]) for p in progress] == [(f"p{i}", 1), (f"p{i}", 2)]
            assert events[-1]["id"] == i and events[-1]["result"]["structuredContent"] == {"result": STREAMS}
            return r.http_version

        return set(await asyncio.gather(*(one(i) for i in range(STREAMS))))


def test_fifty_sse_streams_share_one_h2_connection_over_tls(certs: Certs):
    with mcpio_http("--http2", "--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        url = served.url
        versions = asyncio.run(fifty_streams(url, http2=True, verify=trust(certs.ca)))
        assert versions == {"HTTP/2"}
        # the same port still serves HTTP/1.1 to a client that offers only that in ALPN
        r = httpx.post(url, json={}, verify=trust(certs.ca))
        assert r.http_version == "HTTP/1.1" and r.status_code == 400
    assert f"serving h2-test on {url} (both protocol eras, HTTP/2)" in served.stderr


def test_h2c_with_prior_knowledge():
    with mcpio_http("--http2") as served:
        url = served.url
        versions = asyncio.run(fifty_streams(url, http1=False, http2=True))
        assert versions == {"HTTP/2"}


def test_h2c_upgrade_from_http11():
    import h2.config
    import h2.connection
    import h2.events

    with mcpio_http("--http2") as served:
        url = served.url
        port = int(url.split(":")[2].split("/")[0])
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        settings = conn.initiate_upgrade_connection().decode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                (
                    "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                    f"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: {settings}\r\n\r\n"
                ).encode()
            )
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += sock.recv(65536)
            head, rest = buf.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 101") and b"upgrade: h2c" in head.lower()
            sock.sendall(conn.data_to_send())  # the client's connection preface
            status, body, ended = None, b"", False
            data = rest
            while not ended:
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 1:
                        status = dict(event.headers)[b":status"]
                    elif isinstance(event, h2.events.DataReceived) and event.stream_id == 1:
                        body += event.data
                        conn.acknowledge_received_data(event.flow_controlled_length, 1)
                    elif isinstance(event, h2.events.StreamEnded) and event.stream_id == 1:
                        ended = True
                sock.sendall(conn.data_to_send())
                if not ended:
                    data = sock.recv(65536)
                    assert data, "the server closed the connection before answering on stream 1"
        # the upgraded request (stream 1) was answered over HTTP/2 by the MCP endpoint: a GET
        # without a session is the server's 400 with a JSON-RPC error saying why
        assert status == b"400" and json.loads(body)["error"]["message"]


def test_the_mcpio_client_negotiates_h2_and_trusts_a_given_ca(certs: Certs):
    with mcpio_http("--http2", "--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        url = served.url

        async def go() -> None:
            for era in ("legacy", "modern"):
                transport = HTTPClientTransport(url, verify=certs.ca)
                async with Client(transport=transport, era=era) as c:
                    assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
                    assert c.negotiated_era == era
                assert transport.http_version == "HTTP/2"
            async with Client(url, verify=str(certs.ca)) as c:  # the option on Client itself
                assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}

        asyncio.run(go())


def test_tls_over_http11_with_uvicorn(certs: Certs):
    with mcpio_http("--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        url = served.url

        async def go() -> None:
            transport = HTTPClientTransport(url, verify=certs.ca)
            async with Client(transport=transport) as c:
                assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            assert transport.http_version == "HTTP/1.1"  # uvicorn: h2 offered in ALPN, not accepted

        asyncio.run(go())
        # It is TLS: plain HTTP gets no answer. The server closes on the bytes it cannot read as
        # a handshake; a close with the request still unread in its buffer is a reset (ReadError).
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            httpx.post(url.replace("https:", "http:"), json={})


def test_an_untrusted_certificate_is_refused_with_one_line(certs: Certs):
    with mcpio_http("--http2", "--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        url = served.url

        async def go(verify: Any) -> str:
            with pytest.raises(Exception) as info:
                async with Client(url, verify=verify) as c:
                    await c.call_tool("add", {"a": 1, "b": 1})
            return str(info.value)

        for verify in (None, certs.other_ca):  # the system's CAs; another CA
            message = asyncio.run(go(verify))
            assert "\n" not in message and "TLS certificate is not trusted" in message, message
            assert "verify=" in message and url in message


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--certfile", "missing.pem"], "no such file"),
        (["--keyfile", "KEY"], "a keyfile needs its certfile"),
        (["--certfile", "CERT", "--keyfile", "OTHER"], "cannot use the TLS certificate"),
        (["--http2"], "add -t http"),
    ],
)
def test_bad_tls_flags_are_one_usage_line(certs: Certs, flags: list[str], expected: str):
    flags = [{"CERT": str(certs.cert), "KEY": str(certs.key), "OTHER": str(certs.other_key)}.get(f, f) for f in flags]
    transport = [] if flags == ["--http2"] else ["-t", "http"]
    proc = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", str(SERVER), *transport, "--port", "1", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_uvicorn_serving_imports_nothing_of_http2():
    code = """
import asyncio, socket, sys
from mcpio import Server
async def main():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    task = asyncio.create_task(Server("x").serve_http(port=port))
    while True:
        try:
            asyncio.get_running_loop()
            r, w = await asyncio.open_connection("127.0.0.1", port); w.close(); break
        except OSError:
            await asyncio.sleep(0.02)
    task.cancel()
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("hypercorn", "h2", "hpack", "granian")))
asyncio.run(main())
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def established_to(port: int) -> int:
    """Client-side TCP connections to ``port`` on 127.0.0.1 now ESTABLISHED (Linux: /proc/net/tcp)."""
    lines = open("/proc/net/tcp").read().splitlines()[1:]
    return sum(1 for line in lines if line.split()[2].endswith(f":{port:04X}") and line.split()[3] == "01")


def test_one_mcpio_client_multiplexes_a_legacy_session_over_one_h2_connection(certs: Certs):
    """Legacy era through the mcpio client: the session's GET stream and 50 tool calls with
    progress, all open together, on one HTTP/2 connection; every progress notification arrives."""
    with mcpio_http("--http2", "--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        port = int(served.url.split(":")[2].split("/")[0])

        async def go() -> None:
            transport = HTTPClientTransport(served.url, verify=certs.ca)
            async with Client(transport=transport, era="legacy") as c:
                seen: dict[int, list[float]] = {i: [] for i in range(STREAMS)}
                connections: list[int] = []  # counted at each progress (HTTP/1.1 would need 51)

                async def call(i: int) -> None:
                    def progress(p: float, total: float | None, message: str | None) -> None:
                        seen[i].append(p)
                        connections.append(established_to(port))

                    result = await c.call_tool("together", {"n": STREAMS}, on_progress=progress)
                    assert result["structuredContent"] == {"result": STREAMS}

                await asyncio.gather(*(call(i) for i in range(STREAMS)))
                assert all(v == [1, 2] for v in seen.values()), seen
                assert transport.http_version == "HTTP/2" and c.negotiated_era == "legacy"
                assert set(connections) == {1}

        asyncio.run(go())


def test_with_a_certificate_the_default_audience_is_https(certs: Certs):
    from mcpio._cli._auth_flags import resource_server_from
    from mcpio.cli import build_parser

    def audience(*flags: str) -> str:
        args = build_parser().parse_args(
            ["run", "server.py", "-t", "http", "--port", "9443", "--auth-issuer", "https://idp.example.com", *flags]
        )
        return resource_server_from(args).resource

    assert audience() == "http://127.0.0.1:9443/mcp"
    assert audience("--certfile", str(certs.cert), "--keyfile", str(certs.key)) == "https://127.0.0.1:9443/mcp"


def test_mcpio_commands_trust_ssl_cert_file_and_refuse_otherwise_in_one_line(certs: Certs):
    import os

    with mcpio_http("--http2", "--certfile", certs.cert, "--keyfile", certs.key, scheme="https") as served:
        command = [sys.executable, "-m", "mcpio", "list", served.url, "tools", "--json"]
        env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
        ok = subprocess.run(
            command, capture_output=True, text=True, timeout=60, env={**env, "SSL_CERT_FILE": str(certs.ca)}
        )
        assert ok.returncode == 0 and {t["name"] for t in json.loads(ok.stdout)} == {"add", "together"}, ok.stderr
        refused = subprocess.run(command[:-1], capture_output=True, text=True, timeout=60, env=env)  # no --json
        assert refused.returncode != 0 and refused.stdout == ""
        error, hint = refused.stderr.strip().splitlines()  # the CLI's message and hint lines
        assert error.startswith("mcpio: error: ") and "TLS certificate is not trusted" in error, error
        assert "SSL_CERT_FILE=ca.pem" in hint, hint


def test_sigint_with_an_open_h2_sse_stream_ends_it_and_exits_cleanly():
    """hypercorn cancels what is still open after its grace period, and cancelling a task that
    holds an HTTP/2 stream fails inside hypercorn (exit status 1, a traceback): the app ends its
    streams itself just before. The fixture asserts exit status 0 and no traceback."""
    import signal

    with mcpio_http("--http2") as served:

        async def go() -> None:
            async with httpx.AsyncClient(http1=False, http2=True, timeout=30) as http:
                init = {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
                r = await http.post(served.url, json=init, headers={"Accept": "application/json, text/event-stream"})
                headers = {"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
                done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await http.post(
                    served.url, json=done, headers={**headers, "Accept": "application/json, text/event-stream"}
                )
                async with http.stream("GET", served.url, headers={**headers, "Accept": "text/event-stream"}) as get:
                    assert get.status_code == 200 and get.http_version == "HTTP/2"
                    served.proc.send_signal(signal.SIGINT)
                    with contextlib.suppress(httpx.HTTPError):
                        async for _ in get.aiter_bytes():
                            pass  # until the server ends the stream

        asyncio.run(go())
        assert served.proc.wait(20) == 0


@pytest.mark.parametrize("tls", [False, True])
def test_hypercorn_serves_on_sockets_already_bound(certs: Certs, tls: bool):
    """``_hypercorn.serve(app, cfg, sockets=[…])``: a listening socket made elsewhere (one port
    shared by worker processes) is served, h2c or h2 over TLS; cancelling the coroutine stops it."""
    from mcpio import Server
    from mcpio._transports import _hypercorn

    server = Server("sockets")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    async def go() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        port = sock.getsockname()[1]
        cert = {"certfile": str(certs.cert), "keyfile": str(certs.key)} if tls else {}
        cfg = _hypercorn.config("127.0.0.1", 0, log_level="warning", **cert)
        serving = asyncio.create_task(_hypercorn.serve(server.http_app(), cfg, sockets=[sock]))
        url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/mcp"
        client = {"verify": trust(certs.ca)} if tls else {"http1": False}
        async with httpx.AsyncClient(http2=True, **client) as http:
            call = {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": META}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
            r = await http.post(url, json=body, headers={**HEADERS, "Mcp-Name": "add"})
        assert r.http_version == "HTTP/2" and r.status_code == 200, r.text
        assert r.json()["result"]["structuredContent"] == {"result": 5}
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        assert serving.done()
        sock.close()

    asyncio.run(go())
