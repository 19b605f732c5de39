"""Hypothesis strategies shared by the fuzz tests: JSON values, JSON-RPC messages, hostile lines.

``lines()`` draws what a hostile or broken client writes: valid requests of both eras mixed with
garbage, partial JSON, invalid UTF-8, huge and odd ids, deep nesting, batches, CRLF and blank
lines. Every line is returned without its newline (and never contains one), so a test knows
exactly which lines the peer reads however the stream is chunked.

Request ids are unique within a run: :class:`Ids` hands out the unique part and the strategy
only picks the *shape* (small, huge, negative, long string, unicode string), so "every request
with a readable id gets exactly one response" can be checked by counting.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN = "2026-07-28"

# JSON values: scalars of every kind (huge ints included), nested a few levels.
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


class Ids:
    """Unique request ids in several shapes (the counter makes each one unique)."""

    def __init__(self) -> None:
        self._n = itertools.count(1)

    def make(self, shape: str, text: str = "") -> int | str:
        n = next(self._n)
        if shape == "small":
            return n
        if shape == "huge":
            return 10**30 + n  # beyond int64 and uint64
        if shape == "negative":
            return -(2**63) - n
        if shape == "long":
            return "L" * 10_000 + str(n)
        return f"{text}#{n}"  # any unicode text


id_shapes = st.sampled_from(["small", "huge", "negative", "long", "text", "text"])
# Ids no request uses (cancellations of unknown requests, responses to requests never sent).
foreign_ids = st.one_of(
    st.integers(min_value=10**40, max_value=10**41), st.text(max_size=10).map(lambda t: "foreign:" + t)
)

METHODS = [
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "initialize",
    "logging/setLevel",
    "resources/list",
    "resources/read",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "no/such/method",
    "notifications/cancelled",
    "",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/list",
    "tasks/result",
]
TASKS = {"io.modelcontextprotocol/tasks": {}}


def _params(draw: Any, method: str) -> Any:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(json_values)  # anything, often not an object: -32602
    if kind == 1:
        return None
    if method == "tools/call":
        tool = draw(st.sampled_from(["echo", "echo", "sleep", "job", "nope", 7]))
        if tool == "echo":
            args: Any = {"text": draw(st.one_of(st.text(max_size=50), st.just("x" * 50_000), json_values))}
        elif tool in ("sleep", "job"):
            args = {"seconds": draw(st.sampled_from([0, 0.001, 0.02, -1, "soon"]))}
        else:
            args = draw(json_values)
        if draw(st.integers(0, 3)) == 0:  # 2025-11-25: a task-augmented call
            return {
                "name": tool,
                "arguments": args,
                "task": draw(st.one_of(st.just({}), st.just({"ttl": 1000}), json_values)),
            }
        return {"name": tool, "arguments": args}
    if method == "initialize":
        return {
            "protocolVersion": draw(st.one_of(st.sampled_from(VERSIONS + (MODERN, "1999-01-01")), json_values)),
            "capabilities": draw(st.one_of(st.just({}), json_values)),
            "clientInfo": {"name": "fuzz", "version": "1"},
        }
    if method.startswith("tasks/"):  # task ids the server never issued, or not ids at all
        out = {"taskId": draw(st.one_of(st.text(max_size=30), json_values))}
        if method == "tasks/update":
            out["inputResponses"] = draw(st.one_of(st.just({}), json_values))
        return out
    if method == "logging/setLevel":
        return {"level": draw(st.one_of(st.sampled_from(["debug", "info", "nope"]), json_values))}
    return draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3))


def _modern_meta(draw: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": draw(st.sampled_from([MODERN, MODERN, "2099-01-01", 5])),
        "io.modelcontextprotocol/clientCapabilities": draw(
            st.sampled_from(
                [{}, {}, None, [], {"extensions": TASKS}, {"extensions": {"io.modelcontextprotocol/tasks": 1}}]
            )
        ),
    }
    if draw(st.booleans()):
        meta["io.modelcontextprotocol/logLevel"] = draw(st.sampled_from(["debug", "loud", {}]))
    return meta


@st.composite
def request(draw: Any, ids: Ids) -> dict[str, Any]:
    """A request with a unique, readable id: valid, or broken in one way that keeps the id."""
    method = draw(st.sampled_from(METHODS))
    msg: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": ids.make(draw(id_shapes), draw(st.text(max_size=12))),
        "method": method,
    }
    params = _params(draw, method)
    if params is not None:
        msg["params"] = params
    if draw(st.integers(0, 4)) == 0 and isinstance(msg.get("params", {}), dict):
        msg.setdefault("params", {})["_meta"] = _modern_meta(draw)  # the 2026-07-28 era
    breakage = draw(st.integers(0, 12))
    if breakage == 0:
        msg["jsonrpc"] = draw(st.sampled_from(["1.0", 2.0, None]))
    elif breakage == 1:
        msg["method"] = draw(st.sampled_from([5, [], {}, True]))
    elif breakage == 2:
        msg["extra"] = draw(json_values)  # unknown members are ignored
    return msg


@st.composite
def notification(draw: Any) -> dict[str, Any]:
    method = draw(
        st.sampled_from(
            [
                "notifications/initialized",
                "notifications/cancelled",
                "notifications/progress",
                "notifications/whatever",
                "notifications/roots/list_changed",
            ]
        )
    )
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if method == "notifications/cancelled":
        msg["params"] = {"requestId": draw(st.one_of(foreign_ids, json_values)), "reason": draw(json_values)}
    elif draw(st.booleans()):
        msg["params"] = draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3))
    return msg


@st.composite
def response(draw: Any) -> dict[str, Any]:
    """A response to a request the server never sent (it must be ignored, or refused with id null)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.one_of(foreign_ids, json_values))}
    if draw(st.booleans()):
        msg["result"] = draw(json_values)
    else:
        msg["error"] = draw(st.one_of(json_values, st.just({"code": -1, "message": "x"})))
    return msg


def encode(msg: Any, pretty: bool = False) -> bytes:
    if pretty:  # still one line: JSON-RPC over stdio forbids embedded newlines
        return json.dumps(msg, indent=None, separators=(", ", ": "), ensure_ascii=True).encode()
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode()


def _no_newline(b: bytes) -> bytes:
    return b.replace(b"\n", b" ")


@st.composite
def garbage(draw: Any, ids: Ids) -> bytes:
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return _no_newline(draw(st.binary(max_size=200)))
    if kind == 1:  # a request cut short: not JSON
        line = encode(draw(request(ids)))
        return line[: len(line) * draw(st.integers(0, 99)) // 100]  # (the draw must not depend on the id)
    if kind == 2:  # invalid UTF-8 inside an otherwise valid request
        return (
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
            + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]))
            + b'"}}'
        )
    if kind == 3:  # deep nesting, below and far above any recursion limit
        depth = draw(st.sampled_from([10, 500, 900, 1000, 5000, 100_000]))
        opener = draw(st.sampled_from([b"[", b'{"a":']))
        return opener * depth
    if kind == 4:
        depth = draw(st.sampled_from([100, 900, 3000]))
        return b'{"jsonrpc":"2.0","id":null,"method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"
    if kind == 5:  # JSON that is not an object
        return encode(draw(json_scalars))
    if kind == 6:
        return draw(st.sampled_from([b"", b"   ", b"\t", b"\r", b"\x00", b"\xef\xbb\xbf{}", b"NaN", b'{"id":1e400}']))
    if kind == 7:  # numbers and ids JSON-RPC refuses
        return encode(
            {"jsonrpc": "2.0", "id": draw(st.sampled_from([1.5, True, None, [], {"a": 1}])), "method": "ping"}
        )
    if kind == 8:  # oversized for the fuzz server's 256 KiB limit
        return b'{"jsonrpc":"2.0","id":"big","method":"ping","x":"' + b"y" * 300_000 + b'"}'
    if kind == 9:
        return _no_newline(draw(st.text(max_size=80)).encode("utf-8"))
    if kind == 10:
        return b"{" * draw(st.integers(1, 50)) + b"}" * draw(st.integers(0, 50))
    return (
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":'
        + b"9" * draw(st.integers(1, 400))
        + b"}}"
    )


@st.composite
def batch(draw: Any, ids: Ids) -> list[Any]:
    items = draw(st.lists(st.one_of(request(ids), notification(), response(), json_scalars), max_size=5))
    return items


@st.composite
def line(draw: Any, ids: Ids) -> bytes:
    kind = draw(st.integers(0, 11))
    if kind <= 3:
        out = encode(draw(request(ids)), pretty=draw(st.booleans()))
    elif kind == 4:
        out = encode(draw(notification()))
    elif kind == 5:
        out = encode(draw(response()))
    elif kind == 6:
        out = encode(draw(batch(ids)))
    else:
        out = draw(garbage(ids))
    if draw(st.integers(0, 7)) == 0:
        out += b"\r"  # CRLF writers
    return out


def lines(ids: Ids, max_size: int = 25) -> st.SearchStrategy[list[bytes]]:
    return st.lists(line(ids), min_size=1, max_size=max_size)


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given offsets, in thousandths of its length (any order, duplicates
    allowed; relative, so that what is drawn does not depend on the unique ids)."""
    out, prev = [], 0
    for c in sorted({len(data) * c // 1000 for c in cuts} - {0, len(data)}):
        out.append(data[prev:c])
        prev = c
    out.append(data[prev:])
    return out


# ------------------------------------------------------------------------------- the oracles
def model_lines(stream: bytes, limit: int) -> list[Any]:
    """What ``LineBuffer(limit)`` must produce for ``stream`` fed whole and closed: the lines
    split at once, each over ``limit`` replaced by one ``Oversized``, one trailing CR stripped,
    blank lines dropped, a final line without newline delivered at close."""
    from mcpio._protocol._framing import Oversized

    *complete, tail = stream.split(b"\n")
    out: list[Any] = []
    for line in complete + ([tail] if tail else []):
        if len(line) > limit:
            out.append(Oversized(len(line), limit))
            continue
        if line.endswith(b"\r"):
            line = line[:-1]
        if line and not line.isspace():
            out.append(line)
    return out


def readable_request_id(value: Any) -> tuple[bool, Any]:
    """(True, id) when ``value`` is an object the peer must answer under that id: it has a string
    or integer ``id`` and a non-null ``method`` (valid or not, it is a request to answer), or
    neither ``method`` nor ``result`` nor ``error`` (an invalid request whose id is readable).
    A response (``result`` or ``error``, no method) is never answered."""
    if type(value) is dict and "id" in value:
        id_ = value["id"]
        if (type(id_) is int or type(id_) is str) and (
            value.get("method") is not None or ("result" not in value and "error" not in value)
        ):
            return True, id_
    return False, None


def hashable_id(id_: Any) -> Any:
    return (type(id_).__name__, id_)
