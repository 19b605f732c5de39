"""HTTP/1.1 for the client, sans-IO (``mcpio._protocol._http1``): pure functions, no sockets."""

from __future__ import annotations

import gzip
import zlib

import pytest

from mcpio._protocol import _http1 as p


def test_a_response_head_is_parsed_and_a_bad_one_named():
    head, size = p.parse_head(b"HTTP/1.1 200 OK\r\nContent-Type: a\r\nX: 1\r\nx: 2\r\n\r\nbody")
    assert (head.status, head.reason, head.version, size) == (200, "OK", "HTTP/1.1", 48)
    assert head.headers.get("content-type") == "a" and head.headers.get("X") == "1, 2"
    assert p.parse_head(b"HTTP/1.1 200 OK\r\nContent-") is None  # incomplete
    lf, size = p.parse_head(b"HTTP/1.1 200 OK\nA: 1\n\nx")  # LF-only line ends are taken
    assert (lf.headers.get("a"), size) == ("1", 22)
    with pytest.raises(p.ProtocolViolation, match="illegal status line"):
        p.parse_head(b"HTTX/1.1 200 OK\r\n\r\n")
    with pytest.raises(p.ProtocolViolation, match="illegal status line"):
        p.parse_head(b"<html>")  # fails before the head ends
    with pytest.raises(p.ProtocolViolation, match="illegal header line"):
        p.parse_head(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n")


def test_framing_follows_rfc_9112():
    def frame(raw: bytes, method: str = "POST") -> tuple[str, int]:
        head, _ = p.parse_head(raw)
        return p.framing(method, head.status, head.headers)

    assert frame(b"HTTP/1.1 204 No Content\r\n\r\n") == ("none", 0)
    assert frame(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n") == ("chunked", 0)
    assert frame(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n") == ("length", 3)
    assert frame(b"HTTP/1.1 200 OK\r\n\r\n") == ("close", 0)
    with pytest.raises(p.ProtocolViolation):
        frame(b"HTTP/1.1 200 OK\r\ncontent-length: 3, 4\r\n\r\n")


def test_chunked_bodies_decode_in_any_split():
    wire = b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n"
    for cut in range(1, len(wire)):
        dec, buf, out = p.Chunked(), bytearray(), []
        for part in (wire[:cut], wire[cut:]):
            buf += part
            out += dec.feed(buf)
        assert b"".join(out) == b"hello world" and dec.done and not buf
    with pytest.raises(p.ProtocolViolation):
        p.Chunked().feed(bytearray(b"zz\r\n"))


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda d: zlib.compress(d)[2:-4]),  # raw deflate, as some servers send
        ("identity", lambda d: d),
    ],
)
def test_content_codings_decode_in_bounded_pieces(coding, encode):
    data = b"x" * (3 * p.CHUNK + 5)
    pieces = p.Decoder(coding).decode(encode(data))
    assert b"".join(pieces) == data if coding != "identity" else pieces == [data]
    assert coding == "identity" or max(len(x) for x in pieces) <= p.CHUNK
    with pytest.raises(p.BadContent):
        p.Decoder("gzip").decode(b"not gzip")


def test_request_head_order_is_httpx_s():
    merged = p.merge_headers([("Accept", "*/*"), ("User-Agent", "u")], [("X", "1")], [("accept", "a/b")])
    assert merged == [("User-Agent", "u"), ("X", "1"), ("accept", "a/b")]
    full = p.request_head("POST", "/mcp", "h:1", merged, None, b"{}")
    assert full[0] == ("Host", "h:1") and full[-1] == ("Content-Length", "2")
    with pytest.raises(ValueError):
        p.encode_head("GET", "/", [("X", "a\r\nInjected: 1")])


def test_redirects_as_httpx():
    assert [p.redirect_method("POST", s) for s in (301, 302, 303, 307, 308)] == ["GET", "GET", "GET", "POST", "POST"]
    old, new = p.split_url("http://a:8000/mcp"), p.split_url("http://b:8000/x")
    headers = [("Host", "a:8000"), ("Authorization", "t"), ("Cookie", "c"), ("Content-Length", "2")]
    assert p.redirect_headers(headers, old, new, to_get=True) == [("Host", "b:8000")]
    same = p.split_url("http://a:8000/y")
    assert p.redirect_headers(headers, old, same, to_get=False) == [
        ("Host", "a:8000"),
        ("Authorization", "t"),
        ("Content-Length", "2"),
    ]
    assert p.redirect_url("http://a/mcp#f", "/b?q=1") == "http://a/b?q=1#f"


def test_cookies_go_back_where_they_apply():
    jar, url = p.CookieJar(), p.split_url("http://api.example.com/mcp/x")
    jar.store(url, ["a=1", "b=2; Path=/other", "c=3; Domain=example.com", "d=4; Secure", "e=5; Max-Age=0"], now=0)
    assert jar.header(url, now=0) == "a=1; c=3"
    assert jar.header(p.split_url("http://www.example.com/mcp/y"), now=0) == "c=3"
    jar.store(url, ["a=1; Max-Age=0"], now=1)
    assert jar.header(url, now=1) == "c=3"
    jar.store(url, ["x=1; Domain=other.com"], now=1)  # not this server's domain: ignored
    assert "x=1" not in (jar.header(p.split_url("http://other.com/"), now=1) or "")


@pytest.mark.parametrize(
    ("env", "url", "uses"),
    [
        ({}, "http://a.example.com/", False),
        ({"http": "http://proxy:3128"}, "http://a.example.com/", True),
        ({"https": "http://proxy:3128"}, "http://a.example.com/", False),
        ({"all": "http://proxy:3128"}, "http://a.example.com/", True),
        ({"http": "p:1", "no": "*"}, "http://a.example.com/", False),
        ({"http": "p:1", "no": "example.com"}, "http://a.example.com/", False),
        ({"http": "p:1", "no": "example.com"}, "http://example.com/", False),
        ({"http": "p:1", "no": "example.com"}, "http://badexample.com/", True),
        ({"http": "p:1", "no": ".example.com"}, "http://example.com/", True),
        ({"http": "p:1", "no": ".example.com"}, "http://a.example.com/", False),
        ({"http": "p:1", "no": "127.0.0.1, localhost"}, "http://127.0.0.1:8000/", False),
        ({"http": "p:1", "no": "localhost"}, "http://localhost:8000/", False),
        ({"http": "p:1", "no": "::1"}, "http://[::1]:8000/", False),
        ({"http": "p:1", "no": "http://a.example.com:8000"}, "http://a.example.com:8000/", False),
        ({"http": "p:1", "no": "http://a.example.com:8000"}, "http://a.example.com:9000/", True),
    ],
)
def test_environment_proxies_apply_as_httpx_decides(env, url, uses):
    assert p.proxied(p.split_url(url), env) is uses
