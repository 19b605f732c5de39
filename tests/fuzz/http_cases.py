"""Hostile HTTP requests for the Streamable HTTP fuzz tests (hypothesis), and the server they hit.

:func:`cases` draws one whole request as a client might send it to ``server.http_app()``:
a method (the three the endpoint serves and four it does not), a path (the endpoint, near
misses, the HTTP+SSE paths, junk), headers (Host, Origin, Accept, Content-Type,
Content-Length, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Mcp-Param-*,
Last-Event-ID and arbitrary ones: valid, subtly wrong, garbage, latin-1 bytes, repeated, in any
case), and a body (JSON-RPC messages of both eras, mostly valid, then broken in one field: ids
of the wrong type or huge, methods that are not strings, params and ``_meta`` of the wrong
shape; batches, empty arrays, notifications, responses; random bytes, invalid UTF-8, JSON cut
short, nesting 100,000 deep, bodies over the size cap), cut into random chunks, with the client
leaving mid-body, early in a stream, or when it has waited long enough.

Header values that depend on the live server (a session id that exists, one that has ended)
are drawn as placeholders (:data:`LIVE_SESSION`, :data:`ENDED_SESSION`) and filled in when the
request is sent, so what hypothesis draws never depends on the run.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec
from hypothesis import strategies as st

from mcpio import Context, Server

LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
LIVE_SESSION = b"\x00live-session\x00"  # placeholders, replaced by the runner
ENDED_SESSION = b"\x00ended-session\x00"
MAX_BODY = 64 * 1024  # the fuzz app's body cap: 413s are cheap to provoke
MAX_SESSIONS = 4  # and so are 503s
ACCEPT_BOTH = b"application/json, text/event-stream"


def fuzz_server() -> Server:
    """Tools that answer at once, stream a little, or carry an ``x-mcp-header`` parameter; none
    waits for the client or sleeps long, so every request ends by itself."""
    server = Server("http-fuzz", "1.0.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool
    async def progress(steps: int, ctx: Context) -> str:
        """Progress and log notifications, then the answer (at most 3 steps)."""
        for i in range(max(0, min(steps, 3))):
            await ctx.report_progress(i + 1, steps)
            await ctx.info(f"step {i + 1}")
        return "done"

    @server.tool
    def regional(region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})]) -> str:
        """Its region also travels in the Mcp-Param-Region header."""
        return f"region {region}"

    @server.tool(task_support="optional")
    async def job(seconds: float = 0) -> str:
        """A task for clients that ask for one (2025-11-25) or declare the extension (2026-07-28)."""
        await asyncio.sleep(min(max(seconds, 0), 0.01))
        return "job done"

    @server.resource("test://doc")
    def doc() -> str:
        return "a document"

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return server


@dataclass
class Case:
    """One HTTP request and how its client behaves."""

    method: str
    path: str
    headers: list[tuple[bytes, bytes]]
    body: bytes
    query: bytes = b""
    root_path: str = ""
    cuts: list[int] = field(default_factory=list)  # where the body is split, in thousandths
    disconnect_after: int | None = None  # the client leaves after this many body chunks
    max_writes: int | None = 3  # ... or after this many writes of an SSE stream
    patience: float = 0.5  # ... or after this many seconds without a complete answer
    message: Any = None  # the JSON value of the body, when it is one

    def chunks(self) -> list[bytes]:
        out, prev = [], 0
        for c in sorted({len(self.body) * c // 1000 for c in self.cuts}):
            out.append(self.body[prev:c])  # a cut at 0 or twice in a place: an empty chunk
            prev = c
        out.append(self.body[prev:])
        return out

    def with_sessions(self, live: bytes, ended: bytes) -> list[tuple[bytes, bytes]]:
        return [(k, v.replace(LIVE_SESSION, live).replace(ENDED_SESSION, ended)) for k, v in self.headers]

    def readable_ids(self) -> list[Any]:
        """Ids a refusal may carry: those of the body's requests (int or str)."""
        items = self.message if type(self.message) is list else [self.message]
        return [m["id"] for m in items if type(m) is dict and type(m.get("id")) in (int, str)]


# ---------------------------------------------------------------------------- JSON values
hostile = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1.5,
        10**30,
        -(2**63) - 1,
        "",
        "x" * 5000,
        "é\u0000\ud800",
        [],
        {},
        [[[]]],
        {"a": {"b": {}}},
        "2026-07-28",
        "tools/call",
    ]
)
small_json = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    ),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=8,
)
ids = st.one_of(
    st.integers(-(2**53), 2**53), st.integers(2**64, 2**70), st.text(max_size=20), st.just("L" * 3000), hostile
)


def _arguments(draw: Any, tool: Any) -> Any:
    if tool == "add":
        return {"a": draw(st.one_of(st.integers(-(10**6), 10**6), hostile)), "b": draw(st.integers(-5, 5))}
    if tool == "echo":
        return {"text": draw(st.one_of(st.text(max_size=30), hostile))}
    if tool == "progress":
        return {"steps": draw(st.one_of(st.integers(-1, 3), hostile))}
    if tool == "job":
        return {"seconds": draw(st.one_of(st.sampled_from([0, 0.005]), hostile))}
    if tool == "regional":
        return {
            "region": draw(
                st.one_of(
                    st.sampled_from(["eu-west", "ünïcode", " padded ", "=?base64?eA==?="]),
                    st.text(max_size=10),
                    hostile,
                )
            )
        }
    return draw(small_json)


REQUESTS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "resources/subscribe",
    "no/such/method",
    "",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
]
NOTIFICATIONS = [
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/whatever",
]


@st.composite
def request(draw: Any, modern: bool, method: str | None = None) -> dict[str, Any]:
    method = method or draw(st.sampled_from(REQUESTS))
    params: dict[str, Any] = {}
    if method == "initialize":
        params = {
            "protocolVersion": draw(st.sampled_from([*LEGACY_VERSIONS, MODERN, "1999-01-01"])),
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        }
    elif method == "tools/call":
        tool = draw(st.sampled_from(["add", "echo", "progress", "regional", "job", "nope"]))
        params = {"name": tool, "arguments": _arguments(draw, tool)}
        if draw(st.integers(0, 3)) == 0:  # 2025-11-25 core tasks: the client asks for a task
            params["task"] = draw(st.sampled_from([{}, {"ttl": 1000}, [], "soon"]))
    elif method.startswith("tasks/"):
        params = {"taskId": draw(st.one_of(st.text(max_size=12), small_json))}
        if method == "tasks/update":
            params["inputResponses"] = draw(st.sampled_from([{}, {"k": {"action": "accept"}}, None]))
    elif method == "resources/read" or method == "resources/subscribe":
        params = {"uri": draw(st.sampled_from(["test://doc", "test://nope", "file:///etc/passwd"]))}
    elif method == "prompts/get":
        params = {"name": "greet", "arguments": {"name": draw(st.text(max_size=8))}}
    elif method == "logging/setLevel":
        params = {"level": draw(st.sampled_from(["debug", "error", "loud"]))}
    elif method == "subscriptions/listen":
        params = {"notifications": draw(st.sampled_from([{"toolsListChanged": True}, {}, None]))}
    msg: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": draw(st.one_of(st.integers(0, 1000), st.text(max_size=8), ids)),
        "method": method,
    }
    if modern:
        params["_meta"] = {
            META_VERSION: draw(st.sampled_from([MODERN, MODERN, MODERN, "2025-11-25", "2099-01-01"])),
            META_CAPS: draw(
                st.sampled_from([{}, {}, {"sampling": {}}, {"extensions": {"io.modelcontextprotocol/tasks": {}}}])
            ),
        }
    if params or draw(st.booleans()):
        msg["params"] = params
    return msg


@st.composite
def notification(draw: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(st.sampled_from(NOTIFICATIONS))}
    if msg["method"] == "notifications/cancelled":
        msg["params"] = {"requestId": draw(ids), "reason": "fuzz"}
    return msg


@st.composite
def response(draw: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(ids)}
    if draw(st.booleans()):
        msg["result"] = draw(small_json)
    else:
        msg["error"] = draw(st.one_of(st.just({"code": -1, "message": "no"}), small_json))
    return msg


@st.composite
def mutated(draw: Any, msg: dict[str, Any]) -> Any:
    """``msg`` with one field replaced by a value of the wrong type (or none changed)."""
    where = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "none",
                "id",
                "method",
                "params",
                "jsonrpc",
                "meta",
                "meta_field",
                "name",
                "arguments",
                "drop_id",
                "drop_method",
                "extra",
            ]
        )
    )
    value = draw(st.one_of(hostile, small_json))
    msg = json.loads(json.dumps(msg))  # a copy
    params = msg.get("params")
    if where in ("id", "method", "params", "jsonrpc"):
        msg[where] = value
    elif where == "meta" and isinstance(params, dict):
        params["_meta"] = value
    elif where == "meta_field" and isinstance(params, dict) and isinstance(params.get("_meta"), dict):
        params["_meta"][draw(st.sampled_from([META_VERSION, META_CAPS]))] = value
    elif where in ("name", "arguments") and isinstance(params, dict):
        params[where] = value
    elif where in ("drop_id", "drop_method"):
        msg.pop(where[5:], None)
    elif where == "extra":
        msg["extra"] = value
    return msg


@st.composite
def message(draw: Any) -> Any:
    kind = draw(
        st.sampled_from(
            ["legacy", "legacy", "modern", "modern", "notification", "response", "batch", "initialize", "initialize"]
        )
    )
    if kind == "notification":
        return draw(notification())
    if kind == "response":
        return draw(response())
    if kind == "batch":
        return draw(st.lists(st.one_of(request(False), notification(), response(), small_json), max_size=4))
    if kind == "initialize":  # opens a session (up to the cap)
        return draw(mutated(draw(request(False, "initialize"))))
    return draw(mutated(draw(request(kind == "modern"))))


def _encode(value: Any) -> bytes:
    """Raw UTF-8 JSON; a lone surrogate becomes bytes that are not UTF-8 (a refusal, not a crash)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def raw_body(draw: Any) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind == 1:  # invalid UTF-8 inside a valid request
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]))
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + bad + b'"}}'
    if kind == 2:  # JSON cut short
        whole = _encode(draw(message()))
        return whole[: len(whole) * draw(st.integers(0, 99)) // 100]
    if kind == 3:  # deep nesting
        return draw(st.sampled_from([b"[", b'{"a":'])) * draw(st.sampled_from([500, 1000, 5000, 100_000]))
    if kind == 4:
        depth = draw(st.sampled_from([100, 900, 3000]))
        return b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"
    if kind == 5:  # over the body cap
        return b'{"jsonrpc":"2.0","id":"big","method":"ping","x":"' + b"y" * (MAX_BODY + 10) + b'"}'
    if kind == 6:
        return draw(
            st.sampled_from(
                [
                    b"",
                    b" ",
                    b"[]",
                    b"{}",
                    b"null",
                    b"[[]]",
                    b"\xef\xbb\xbf{}",
                    b"NaN",
                    b'{"id":1e400}',
                    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
                    b"[" + b"{}," * 2000 + b"{}]",
                ]
            )
        )
    if kind == 7:
        return _encode(draw(small_json))
    if kind == 8:
        return draw(st.text(max_size=60)).encode("utf-8", "surrogatepass")
    return b'{"jsonrpc":"2.0","id":' + b"9" * draw(st.integers(1, 5000)) + b',"method":"ping"}'


# ---------------------------------------------------------------------------- headers
def _b(text: str) -> bytes:
    return text.encode("latin-1", "replace")


garbage_value = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "replace")),
    st.sampled_from(
        [
            b"",
            b" ",
            b"\xb2",
            b"\xff\xfe",
            b"0-\xb2",
            b"\xb9-1",
            b"=?base64?!!?=",
            b"=?base64?/w==?=",
            b"9" * 400,
            b"-1",
            b"\t",
        ]
    ),
)
token_name = st.from_regex(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}", fullmatch=True).map(str.encode)
HOSTS = [b"127.0.0.1:8000", b"localhost", b"localhost:3000", b"[::1]:9", b"127.0.0.1", b"127.evil.example"]
ORIGINS = [
    b"http://localhost:3000",
    b"https://127.0.0.1",
    b"http://[::1]:1",
    b"null",
    b"http://evil.example.com",
    b"file://",
    b"http://localhost.evil.com",
    b"http://127.evil.example:8000",
]
ACCEPTS = [
    ACCEPT_BOTH,
    ACCEPT_BOTH,
    b"application/json",
    b"text/event-stream",
    b"*/*",
    b"",
    b"text/html",
    b"application/json;q=0, text/event-stream;q=0",
    b"application/*;q=0.5",
    b"text/*",
]
CTYPES = [
    b"application/json",
    b"application/json",
    b"application/json; charset=utf-8",
    b"APPLICATION/JSON",
    b"text/plain",
    b"",
    b"application/json-rpc",
    b"multipart/form-data; boundary=x",
    b"application/x-www-form-urlencoded",
    b"text/plain; charset=utf-8",
]
VERSIONS = [*(_b(v) for v in LEGACY_VERSIONS), _b(MODERN), b"2099-01-01", b" 2025-11-25 ", b"2025-11-25, 2026-07-28"]
# Bad bearer credentials (issue 13): the fuzz app has no auth and must ignore them; the
# authorization fuzz test (tests/auth/test_auth_fuzz.py) serves them to a protected app.
_JWT_NONE = (
    base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=")
    + b"."
    + base64.urlsafe_b64encode(b'{"sub":"x","aud":"https://mcp.fuzz/mcp","exp":4102444800}').rstrip(b"=")
    + b"."
)
_JWT_HS = base64.urlsafe_b64encode(b'{"alg":"HS256","kid":"rsa-1"}').rstrip(b"=") + b".e30.c2ln"
BAD_AUTHORIZATION = [
    b"Bearer",
    b"Bearer ",
    b"Bearer  ",
    b"bearer garbage",
    b"Bearer a b",
    b"Bearer \xe9t\xe9",
    b"Bearer " + _JWT_NONE,
    b"Bearer " + _JWT_HS,
    b"Bearer e30.e30.e30",
    b"Bearer a.b.c",
    b"Bearer " + b"A" * 20_000,
    b"Bearer ====",
    b"Basic dTpw",
    b"Digest x",
    b"",
    b"\xff\xfe",
    b"Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2ln",
    b"Bearer %00",
    b"Bearer x, Bearer y",
]
EVENT_IDS = [b"0-1", b"1-1", b"1-0", b"2-5", b"x-1", b"0-99999999999999999999", b"-1", b"0-", b"0-\xb2", b"\xb2-1"]


def _header_value(name: bytes, draw: Any) -> bytes:
    if draw(st.integers(0, 5)) == 0:
        return draw(garbage_value)
    choices = {
        b"host": HOSTS,
        b"origin": ORIGINS,
        b"accept": ACCEPTS,
        b"content-type": CTYPES,
        b"mcp-protocol-version": VERSIONS,
        b"last-event-id": EVENT_IDS,
        b"mcp-session-id": [LIVE_SESSION, LIVE_SESSION, ENDED_SESSION, b"nope", b"a" * 300],
        b"authorization": BAD_AUTHORIZATION,
        b"content-length": [b"0", b"5", b"100000000", b"99999999999999999999999", b"abc", b"-1", b"\xb2", b"1, 2"],
    }
    if name in choices:
        return draw(st.sampled_from(choices[name]))
    return draw(st.one_of(st.text(max_size=20).map(lambda t: t.encode("utf-8")), garbage_value))


def _mcp_headers(msg: Any) -> list[tuple[bytes, bytes]]:
    """The standard headers a conforming modern client sends with ``msg``."""
    if type(msg) is not dict:
        return []
    out: list[tuple[bytes, bytes]] = []
    if isinstance(msg.get("method"), str):
        out.append((b"mcp-method", msg["method"].encode("utf-8", "replace")))
    params = msg.get("params") if type(msg.get("params")) is dict else {}
    meta = params.get("_meta") if type(params.get("_meta")) is dict else {}
    if isinstance(meta.get(META_VERSION), str):
        out.append((b"mcp-protocol-version", meta[META_VERSION].encode("utf-8", "replace")))
    name = params.get("name", params.get("uri"))
    if isinstance(name, str):
        out.append((b"mcp-name", _header_text(name)))
    args = params.get("arguments")
    if type(args) is dict and isinstance(args.get("region"), (str, int, bool)):
        out.append((b"Mcp-Param-Region", _header_text(str(args["region"]))))
    return out


def _header_text(value: str) -> bytes:
    if value.isascii() and value.isprintable() and value == value.strip():
        return value.encode()
    return b"=?base64?" + base64.b64encode(value.encode("utf-8", "surrogatepass")) + b"?="


@st.composite
def headers(draw: Any, msg: Any, method: str) -> list[tuple[bytes, bytes]]:
    out: list[tuple[bytes, bytes]] = []
    if draw(st.integers(0, 9)):  # usually a Host this server allows
        out.append((b"host", draw(st.sampled_from(HOSTS))))
    if method == "POST" and draw(st.integers(0, 5)):
        out.append((b"content-type", b"application/json"))
    if draw(st.integers(0, 4)):
        out.append((b"accept", ACCEPT_BOTH))
    if draw(st.integers(0, 2)):  # what a conforming client would send for this body
        out += _mcp_headers(msg)
    initialize = type(msg) is dict and msg.get("method") == "initialize"
    if draw(st.integers(0, 3)) == 0 if initialize else draw(st.booleans()):
        out.append((b"mcp-session-id", LIVE_SESSION))
        if draw(st.booleans()):
            out.append((b"mcp-protocol-version", draw(st.sampled_from(VERSIONS[:4]))))
    if method == "GET" and draw(st.booleans()):  # resumption, with ids good and bad
        out.append((b"last-event-id", draw(st.sampled_from(EVENT_IDS))))
    if draw(st.integers(0, 3)) == 0:  # the real length (uvicorn passes it on), or not
        out.append((b"content-length", draw(st.sampled_from([b"<len>", b"<len>", b"0", b"\xb2", b"1" * 30]))))
    names = [
        b"host",
        b"origin",
        b"accept",
        b"content-type",
        b"content-length",
        b"mcp-protocol-version",
        b"mcp-session-id",
        b"mcp-method",
        b"mcp-name",
        b"mcp-param-region",
        b"mcp-param-other",
        b"last-event-id",
        b"authorization",
    ]
    for _ in range(draw(st.integers(0, 4))):  # more: known names with odd values, or any name
        name = draw(st.one_of(st.sampled_from(names), token_name, st.binary(min_size=1, max_size=12)))
        value = _header_value(name.lower(), draw)
        if draw(st.integers(0, 3)) == 0:
            name = name.upper()
        if draw(st.booleans()) or name.lower() in (k for k, _ in out):
            out.append((name, value))  # also a repeat
        else:
            out = [(k, v) for k, v in out if k.lower() != name.lower()] + [(name, value)]
    return draw(st.permutations(out))


PATHS = [
    "/mcp",
    "/mcp",
    "/mcp",
    "/mcp",
    "/mcp/",
    "/MCP",
    "/",
    "/mcp/x",
    "//mcp",
    "/mcp%00",
    "/sse",
    "/messages",
    "/mcp\u00e9",
    "",
]


@st.composite
def cases(draw: Any) -> Case:
    method = draw(st.sampled_from(["POST"] * 8 + ["GET"] * 3 + ["DELETE", "PUT", "OPTIONS", "HEAD", "PATCH"]))
    path = "/mcp"
    if draw(st.integers(0, 4)) == 0:  # mostly the endpoint: that is where the rules are
        path = draw(st.one_of(st.sampled_from(PATHS), st.text(max_size=12).map(lambda t: "/" + t)))
    root_path = ""
    if draw(st.integers(0, 9)) == 0:
        root_path = "/prefix"
        path = root_path + path
    msg: Any = None
    body = b""
    if method in ("POST", "PUT", "PATCH") or draw(st.integers(0, 5)) == 0:
        if draw(st.integers(0, 3)):
            msg = draw(message())
            body = _encode(msg)
        else:
            body = draw(raw_body())
            try:
                msg = json.loads(body)
            except (ValueError, RecursionError):
                msg = None
    hdrs = [(k, str(len(body)).encode() if v == b"<len>" else v) for k, v in draw(headers(msg, method))]
    query = draw(st.sampled_from([b"", b"", b"session_id=nope", b"a=%ff&&=", b"\xff"]))
    return Case(
        method=method,
        path=path,
        root_path=root_path,
        headers=hdrs,
        body=body,
        query=query,
        message=msg,
        cuts=draw(st.lists(st.integers(0, 1000), max_size=4)),
        disconnect_after=draw(st.one_of(st.none(), st.none(), st.none(), st.integers(0, 3))),
        max_writes=draw(st.sampled_from([None, 1, 2, 3, 3, 3])),
        patience=draw(st.sampled_from([0.5, 0.5, 0.5, 0.5, 0.05, 0.0])),
    )
