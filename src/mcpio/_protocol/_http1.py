"""HTTP/1.1 for the client, sans-IO: the request head, the response head and body framing,
content decoding, redirects (RFC 9110/9112; pure functions and small state machines, no I/O).

The lean client of ``_transports/_http1_client`` does the I/O; what it puts on the wire is
what httpx (the other client backend) puts there, so these rules follow httpx 0.28 where it
chooses between options the RFCs leave open:

* **Request head** — :func:`merge_headers` merges the client's default headers, the caller's
  client-wide headers and the request's own: a later name replaces every earlier entry of that
  name (case-insensitively) and goes after the rest; ``Host`` comes first, ``Cookie`` and
  ``Content-Length`` last (:func:`request_head`).
* **Response head** — :func:`parse_head`: ``HTTP/1.x SP 3DIGIT [SP reason]``, then header
  lines (LF or CRLF; an obsolete folded line joins the previous value). Anything else is a
  :class:`ProtocolViolation` naming the bad line.
* **Body framing** — :func:`framing` (RFC 9112 §6.3): none for 1xx/204/304 and HEAD, chunked
  when the last transfer coding is ``chunked``, else ``Content-Length`` (several different
  values: a violation), else read to the close. :class:`Chunked` decodes chunked framing
  incrementally (extensions and trailers skipped).
* **Content decoding** — :class:`Decoder`: ``gzip`` and ``deflate`` (zlib-wrapped or raw),
  layered in the order given; ``identity`` and unknown codings pass through (as httpx does).
  Each step inflates at most ``CHUNK`` bytes per call, so a small compressed body never
  becomes one huge buffer before the caller's size limit sees it.
* **Keep-alive** — :func:`keep_alive`: HTTP/1.1 unless ``Connection: close``; HTTP/1.0 only
  with ``Connection: keep-alive``.
* **Redirects** — :func:`redirect_method` (303 → GET, 302 → GET, 301 POST → GET; 307/308
  keep the method and body), :func:`redirect_headers` (a new origin drops ``Authorization``
  and gets its own ``Host``; a switch to GET drops ``Content-Length``; ``Cookie`` is always
  recomputed).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

ACCEPT_ENCODING = "gzip, deflate"  # only what Decoder decodes
MAX_HEAD = 100 * 1024  # bytes of a response head (h11's default limit)
CHUNK = 64 * 1024  # the most one decoding step inflates at a time
REDIRECTS = frozenset({301, 302, 303, 307, 308})

_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\r\n]*))?")
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_FIELD = re.compile(r"^([-!#$%&'*+.^_`|~0-9A-Za-z]+):(.*)$", re.M)  # one "name:value" field line


class ProtocolViolation(Exception):
    """The server's bytes are not HTTP/1.1 (the message names what is wrong)."""


class BadContent(Exception):
    """A body whose Content-Encoding does not decode."""


class Headers:
    """Response headers: names lower-cased; :meth:`get` joins repeated fields with ``", "`` (as
    httpx does); ``Set-Cookie`` lines are also kept apart (:attr:`set_cookie`)."""

    __slots__ = ("_map", "raw", "set_cookie")

    def __init__(self, raw: list[tuple[str, str]]) -> None:
        self.raw = raw  # (lower-case name, value), in order
        joined: dict[str, str] = {}
        cookies: list[str] = []
        for name, value in raw:
            joined[name] = f"{joined[name]}, {value}" if name in joined else value
            if name == "set-cookie":
                cookies.append(value)
        self._map = joined
        self.set_cookie = cookies

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._map.get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return self._map[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._map

    def items(self) -> list[tuple[str, str]]:
        return list(self._map.items())


class Head(NamedTuple):
    version: str  # "HTTP/1.1" or "HTTP/1.0"
    status: int
    reason: str
    headers: Headers


def parse_head(buf: bytes | bytearray) -> tuple[Head, int] | None:
    """The response head at the start of ``buf`` and its length in bytes, or None while it is
    incomplete; :class:`ProtocolViolation` when it is not a response head."""
    end = buf.find(b"\r\n\r\n")
    size = end + 4
    lf = buf.find(b"\n\n", 0, end if end >= 0 else len(buf))  # lenient: LF-only line ends
    if lf >= 0:
        end, size = lf, lf + 2
    if end < 0:
        if len(buf) > MAX_HEAD:
            raise ProtocolViolation(f"the response head exceeds {MAX_HEAD} bytes")
        if buf and not b"HTTP/1."[: len(buf)].startswith(bytes(buf[:7])):
            raise ProtocolViolation(f"illegal status line: {bytes(buf[:80])!r}")
        return None
    status_line, _, block = bytes(buf[:end]).partition(b"\n")
    status_line = status_line.rstrip(b"\r")
    m = _STATUS.fullmatch(status_line)
    if m is None:
        raise ProtocolViolation(f"illegal status line: {status_line[:200]!r}")
    raw = [(name.lower(), value.rstrip("\r").strip(" \t")) for name, value in _FIELD.findall(block.decode("latin-1"))]
    if len(raw) != (block.count(b"\n") + 1 if block else 0):  # a line not a plain field: read line by line
        raw = []
        for line in block.split(b"\n"):
            line = line.rstrip(b"\r")
            if line[:1] in (b" ", b"\t") and raw:  # obs-fold (RFC 9112 §5.2): part of the previous value
                name, value = raw[-1]
                raw[-1] = (name, f"{value} {line.strip().decode('latin-1')}")
                continue
            name_b, sep, value_b = line.partition(b":")
            if not sep or not _TOKEN.fullmatch(name_b):
                raise ProtocolViolation(f"illegal header line: {line[:200]!r}")
            raw.append((name_b.decode("ascii").lower(), value_b.strip(b" \t").decode("latin-1")))
    reason = (m.group(3) or b"").decode("latin-1")
    return Head(f"HTTP/1.{m.group(1).decode()}", int(m.group(2)), reason, Headers(raw)), size


def merge_headers(*layers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``layers`` merged as httpx merges client and request headers (the module docstring)."""
    out: list[tuple[str, str]] = []
    for layer in layers:
        items = list(layer)
        if not items:
            continue
        names = {k.lower() for k, _ in items}
        out = [(k, v) for k, v in out if k.lower() not in names]
        out.extend(items)
    return out


def request_head(
    method: str, target: str, host: str, headers: list[tuple[str, str]], cookie: str | None, body: bytes | None
) -> list[tuple[str, str]]:
    """The full header list of a request: ``Host`` first unless given, then ``headers``, then
    ``Cookie`` (unless given) and ``Content-Length`` (a body, or POST/PUT/PATCH: 0)."""
    given = {k.lower() for k, _ in headers}
    out = headers if "host" in given else [("Host", host), *headers]
    if cookie and "cookie" not in given:
        out.append(("Cookie", cookie))
    if "content-length" not in given and (body or method in ("POST", "PUT", "PATCH")):
        out.append(("Content-Length", str(len(body or b""))))
    return out


def encode_head(method: str, target: str, headers: Iterable[tuple[str, str]]) -> bytes:
    """The bytes of a request head (header names as given)."""
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in headers:
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"the header {name!r} holds a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def framing(method: str, status: int, headers: Headers) -> tuple[str, int]:
    """How the body of a response is delimited: ("none", 0), ("chunked", 0), ("length", n) or
    ("close", 0); :class:`ProtocolViolation` for a Content-Length that is not one number."""
    if method == "HEAD" or status < 200 or status in (204, 304):
        return "none", 0
    coding = headers.get("transfer-encoding")
    if coding is not None and coding.rsplit(",", 1)[-1].strip().lower() == "chunked":
        return "chunked", 0
    length = headers.get("content-length")
    if length is None:
        return "close", 0
    if not (length.isascii() and length.isdigit()):  # else: a list of the same number, or invalid
        values = {v.strip() for v in length.split(",")}
        length = next(iter(values))
        if len(values) != 1 or not (length.isascii() and length.isdigit()):
            raise ProtocolViolation(f"invalid Content-Length: {headers.get('content-length')!r}")
    return "length", int(length)


def keep_alive(head: Head) -> bool:
    """Whether the connection may carry another request after this response."""
    connection = head.headers.get("connection")
    if connection is None:
        return head.version != "HTTP/1.0"
    tokens = {t.strip().lower() for t in connection.split(",")}
    if head.version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


class Chunked:
    """Incremental decoder of the chunked transfer coding (RFC 9112 §7.1)."""

    __slots__ = ("_left", "_state", "done")

    def __init__(self) -> None:
        self._left = 0  # bytes of chunk data still to come
        self._state = "size"  # size | data | crlf | trailer
        self.done = False

    def feed(self, buf: bytearray) -> list[bytes]:
        """Consume what it can from ``buf`` (in place); the chunk data found."""
        out: list[bytes] = []
        while buf and not self.done:
            if self._state == "data":
                piece = bytes(buf[: self._left])
                del buf[: len(piece)]
                self._left -= len(piece)
                out.append(piece)
                if self._left == 0:
                    self._state = "crlf"
                continue
            nl = buf.find(b"\n")
            if nl < 0:
                if len(buf) > 4096:
                    raise ProtocolViolation("a chunk header line exceeds 4096 bytes")
                break
            line = bytes(buf[:nl]).rstrip(b"\r")
            del buf[: nl + 1]
            if self._state == "crlf":
                if line:
                    raise ProtocolViolation(f"chunk data not followed by CRLF: {line[:80]!r}")
                self._state = "size"
            elif self._state == "size":
                size = line.split(b";", 1)[0].strip()
                try:
                    self._left = int(size, 16)
                except ValueError:
                    raise ProtocolViolation(f"illegal chunk size line: {line[:80]!r}") from None
                if self._left < 0 or not size.isalnum():
                    raise ProtocolViolation(f"illegal chunk size line: {line[:80]!r}")
                self._state = "trailer" if self._left == 0 else "data"
            elif not line:  # the blank line after the trailer fields
                self.done = True
        return out


class _Inflate:
    __slots__ = ("_first", "_z", "gzip")

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)
        self._first = not gzip  # deflate: zlib-wrapped, or raw when the first bytes say so

    def step(self, data: bytes) -> bytes:
        try:
            out = self._z.decompress(data, CHUNK)
        except zlib.error as exc:
            if self._first:
                self._first = False
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.step(data)
            raise BadContent(f"the {'gzip' if self.gzip else 'deflate'} body does not decode: {exc}") from None
        self._first = False
        return out

    def more(self, last: bytes) -> bytes:
        """Output held back by the CHUNK bound after the step that gave ``last`` (b"" once none
        is left: zlib may hold output even when all input was taken)."""
        tail = self._z.unconsumed_tail
        return self.step(tail) if tail or len(last) == CHUNK else b""


class Decoder:
    """The Content-Encoding layers of a response, decoded incrementally (the module docstring)."""

    __slots__ = ("_layers",)

    def __init__(self, content_encoding: str | None) -> None:
        if not content_encoding:
            self._layers: list[_Inflate] = []
            return
        names = [v.strip().lower() for v in content_encoding.split(",")]
        self._layers = [_Inflate(n == "gzip") for n in reversed(names) if n in ("gzip", "deflate")]

    def __bool__(self) -> bool:
        return bool(self._layers)

    def decode(self, data: bytes) -> list[bytes]:
        """The decoded pieces of ``data`` (each at most CHUNK bytes)."""
        pieces = [data]
        for layer in self._layers:
            out: list[bytes] = []
            for piece in pieces:
                chunk = layer.step(piece)
                while chunk:
                    out.append(chunk)
                    chunk = layer.more(chunk)
            pieces = out
        return pieces


# ---------------------------------------------------------------------- URLs and redirects
class Origin(NamedTuple):
    scheme: str
    host: str  # lower case; an IPv6 address without brackets
    port: int
    target: str  # path and query: what the request line names
    netloc: str  # the Host header's value


def split_url(url: str) -> Origin:
    """The parts of an absolute ``http``/``https`` URL a request needs; ValueError otherwise."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    default = 80 if scheme == "http" else 443
    port = parts.port or default
    host = parts.hostname
    name = f"[{host}]" if ":" in host else host
    netloc = name if port == default else f"{name}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Origin(scheme, host, port, target, netloc)


def redirect_method(method: str, status: int) -> str:
    """The method of the request a redirect leads to (httpx's rules, the module docstring)."""
    if status in (302, 303) and method != "HEAD":
        return "GET"
    if status == 301 and method == "POST":
        return "GET"
    return method


def redirect_url(url: str, location: str) -> str:
    """The absolute URL a ``Location`` names (relative to ``url``; the fragment kept)."""
    target = urljoin(url, location.strip())
    fragment = urlsplit(url).fragment
    if fragment and "#" not in target:
        target = f"{target}#{fragment}"
    return target


def same_origin(a: Origin, b: Origin) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


def redirect_headers(
    headers: list[tuple[str, str]], old: Origin, new: Origin, *, to_get: bool
) -> list[tuple[str, str]]:
    """The headers of the request a redirect leads to (built from the last request's full
    header list; ``Cookie`` removed, to be recomputed for the new URL)."""
    drop = {"cookie"}
    host = None
    if not same_origin(old, new):
        if not (old.scheme == "http" and new.scheme == "https" and old.host == new.host and old.port == 80):
            drop.add("authorization")  # never carried to another origin (but http -> https, same host)
        host = new.netloc
    if to_get:
        drop |= {"content-length", "transfer-encoding"}
    out = [(k, v) for k, v in headers if k.lower() not in drop]
    if host is not None:
        out = [(k, host if k.lower() == "host" else v) for k, v in out]
    return out


def proxied(url: Origin, proxies: Mapping[str, str]) -> bool:
    """Whether httpx (``trust_env``) would send a request for ``url`` through a proxy, given
    ``proxies`` as :func:`urllib.request.getproxies` reads them from the environment (keys
    ``http``, ``https``, ``all``, ``no``): the most specific matching pattern wins, a
    ``NO_PROXY`` entry being a pattern that says "none" (curl's rules: ``*`` for every host;
    ``example.com`` for it and its subdomains; ``.example.com`` for its subdomains; an IP
    address or ``localhost`` exactly; ``scheme://host[:port]`` as written)."""
    patterns: list[tuple[str, str, int | None, bool]] = []  # scheme ("" any), host pattern, port, uses a proxy
    for scheme in ("http", "https", "all"):
        if proxies.get(scheme):
            patterns.append(("" if scheme == "all" else scheme, "", None, True))
    for entry in (h.strip() for h in proxies.get("no", "").split(",")):
        if entry == "*":
            return False
        if not entry:
            continue
        if "://" in entry:
            parts = urlsplit(entry)
            scheme = "" if parts.scheme == "all" else parts.scheme.lower()
            patterns.append((scheme, (parts.hostname or "").lower(), parts.port, False))
        elif entry.lower() == "localhost" or _is_ip(entry):
            patterns.append(("", entry.split("/")[0].strip("[]").lower(), None, False))
        else:
            patterns.append(("", "*" + entry.lower(), None, False))
    # httpx's priority: a port first, then the longer host, then the longer scheme
    patterns.sort(key=lambda p: (p[2] is None, -len(p[1]), -len(p[0])))
    for scheme, host, port, uses in patterns:
        if scheme and scheme != url.scheme:
            continue
        if port is not None and port != url.port:
            continue
        if host and not _host_matches(host, url.host):
            continue
        return uses
    return False


def _is_ip(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text.strip("[]").split("/")[0])
    except ValueError:
        return False
    return True


def _host_matches(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    if pattern.startswith("*"):
        domain = pattern[1:]
        return host == domain or host.endswith("." + domain)
    return host == pattern


# ---------------------------------------------------------------------- cookies
class CookieJar:
    """The cookies servers set, sent back where they apply (RFC 6265 §5: the Domain, Path,
    Secure, Max-Age and Expires attributes), one jar per client as httpx keeps one. ``now``
    (seconds since the epoch) is the caller's clock."""

    __slots__ = ("_cookies",)

    def __init__(self) -> None:
        # (domain, path, name) -> (value, host only, secure, expires or None)
        self._cookies: dict[tuple[str, str, str], tuple[str, bool, bool, float | None]] = {}

    def __bool__(self) -> bool:
        return bool(self._cookies)

    def store(self, url: Origin, set_cookie: list[str], now: float) -> None:
        for line in set_cookie:
            self._store_one(url, line, now)

    def _store_one(self, url: Origin, line: str, now: float) -> None:
        pair, *attrs = line.split(";")
        name, sep, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            return  # RFC 6265 §5.2: a cookie without "=" or a name is ignored
        path = url.target.split("?", 1)[0]
        path = path[: path.rfind("/")] if path.count("/") > 1 else "/"  # the default-path (§5.1.4)
        domain, host_only, secure, expires = url.host, True, False, None
        for attr in attrs:
            key, _, val = attr.partition("=")
            key, val = key.strip().lower(), val.strip()
            if key == "path" and val.startswith("/"):
                path = val
            elif key == "domain" and val:
                val = val.lstrip(".").lower()
                if not (url.host == val or url.host.endswith("." + val)):
                    return  # a cookie for a domain this server is not in: ignored
                domain, host_only = val, False
            elif key == "secure":
                secure = True
            elif key == "max-age" and val.lstrip("-").isdigit():
                expires = now + int(val)
            elif key == "expires" and expires is None:
                expires = _http_date(val)
        if expires is not None and expires <= now:
            self._cookies.pop((domain, path, name), None)
        else:
            self._cookies[(domain, path, name)] = (value, host_only, secure, expires)

    def header(self, url: Origin, now: float) -> str | None:
        """The ``Cookie`` header for a request to ``url`` (longer paths first), or None."""
        if not self._cookies:
            return None
        path = url.target.split("?", 1)[0]
        found = []
        for (domain, cpath, name), (value, host_only, secure, expires) in list(self._cookies.items()):
            if expires is not None and expires <= now:
                del self._cookies[(domain, cpath, name)]
                continue
            if url.host != domain and (host_only or not url.host.endswith("." + domain)):
                continue
            if not (path == cpath or path.startswith(cpath if cpath.endswith("/") else cpath + "/")):
                continue
            if secure and url.scheme != "https":
                continue
            found.append((len(cpath), name, value))
        found.sort(key=lambda f: -f[0])
        return "; ".join(f"{name}={value}" for _, name, value in found) or None


def _http_date(text: str) -> float | None:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
