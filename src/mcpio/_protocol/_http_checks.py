"""One HTTP request of a Streamable HTTP app, checked and read once (no I/O, no asyncio).

* :class:`RequestChecks` — the checks every request passes before MCP sees it (Host, Origin,
  a POST's ``Content-Type``/``Accept``, the legacy ``MCP-Protocol-Version``), made once per app;
  it owns the request path's bounded memos (verdicts, header texts, ``Mcp-Name`` values).
* :func:`read_post` — a POST body read into a :class:`Post` (messages, kinds, batch, era,
  priming), each decided here and nowhere else.

The rules themselves are the pure functions of :mod:`._http`; this module only combines them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from .. import _jsonrpc as rpc
from .._errors import PARSE_ERROR
from ._http import (
    LOOPBACK_HOSTS,
    PROTOCOL_VERSION,
    SESSION_ID,
    BadBody,
    Refusal,
    accepts,
    check_host,
    check_legacy_version,
    check_origin,
    check_post,
    decode_header_value,
    priming,
    refuse,
    select_era,
)

MEMO_MAX = 256  # header value sets a RequestChecks remembers as passing (then it starts afresh)
_MEMO_KEY_MAX = 1024  # characters: longer header values are checked every time, never kept


class Verdict(msgspec.Struct, frozen=True, gc=False):  # nothing it holds refers back to it: no cycle
    """What the headers of a POST that passed :meth:`RequestChecks.post` allow."""

    json_ok: bool  # the client accepts a JSON response (``accepts``)
    sse_ok: bool  # the client accepts an SSE stream
    version_refusal: Refusal | None  # legacy: the 400 for an MCP-Protocol-Version that is no legacy one
    priming: bool  # legacy: the declared version primes its POST streams (``priming``)


class RequestChecks:
    """The request checks of one app: ``hosts`` and ``origins`` are its immutable allow-lists
    (default: loopback names on any port). Verdicts are remembered per exact header values,
    passes only, at most :data:`MEMO_MAX`: a new value (made-up Hosts too) is checked in full."""

    __slots__ = ("_passed", "decode_name", "hosts", "origins", "texts")

    def __init__(self, hosts: Iterable[str] | None = None, origins: Iterable[str] | None = None) -> None:
        self.hosts: tuple[str, ...] = LOOPBACK_HOSTS if hosts is None else tuple(hosts)
        self.origins: tuple[str, ...] = LOOPBACK_HOSTS if origins is None else tuple(origins)
        self._passed: dict[tuple[str | None, ...], Verdict] = {}
        self.texts: dict[bytes, str] = {}  # header_map(raw, texts): its memo (bounded there: KEPT_MAX)
        # decode_header_value of the Mcp-Name values a client repeats (one per tool it calls), bounded
        self.decode_name: Callable[[str], str] = functools.lru_cache(maxsize=256)(decode_header_value)

    def request(self, headers: Mapping[str, str]) -> Refusal | None:
        """The 403 of a request whose ``Host`` or ``Origin`` is not allowed (any method), else None."""
        return check_host(headers, self.hosts) or check_origin(headers, self.origins)

    def post(self, headers: Mapping[str, str]) -> Verdict | Refusal:
        """A POST's checks in order — Host, Origin (403), Content-Type (415), Accept (406) — and
        what its headers allow when it passes them."""
        key = (
            headers.get("host"),
            headers.get("origin"),
            headers.get("accept"),
            headers.get("content-type"),
            headers.get(PROTOCOL_VERSION),
        )
        verdict = self._passed.get(key)  # these exact values passed every check below
        if verdict is not None:
            return verdict
        refusal = self.request(headers)
        if refusal is not None:
            return refusal
        json_ok, sse_ok = accepted = accepts(key[2])
        refusal = check_post(headers, accepted)
        if refusal is not None:
            return refusal
        version, version_refusal = check_legacy_version(headers)
        verdict = Verdict(json_ok, sse_ok, version_refusal, priming(version))
        if sum(len(v) for v in key if v is not None) <= _MEMO_KEY_MAX:
            if len(self._passed) >= MEMO_MAX:
                self._passed.clear()
            self._passed[key] = verdict
        return verdict


class Post(msgspec.Struct, frozen=True, gc=False):  # nothing a Post holds refers back to it
    """A POST body as the app serves it (:func:`read_post`)."""

    body: bytes
    messages: list[Any]  # decoded; each a valid JSON-RPC message (kinds)
    kinds: list[int]  # rpc.REQUEST / NOTIFICATION / RESPONSE of each message
    batch: bool  # the body is a JSON array, even of one message (2025-03-26 only; else refused)
    era: str  # _http.MODERN or _http.LEGACY (select_era)
    requests: list[Any]  # the messages that are requests, in order
    id: Any  # the id of the POST's one message when it is a request, else None: a refusal carries it
    priming: bool  # legacy, in a session: its stream starts with a priming event (SEP-1699)


_decode_json = rpc.decode_json
_REQUEST = rpc.REQUEST


def read_post(body: bytes, headers: Mapping[str, str], verdict: Verdict) -> Post:
    """``body`` read once. ``BadBody`` (400) for bad JSON, an empty batch, or the first message
    that is not JSON-RPC (with its id when it has one). A POST without a session (``initialize``)
    has agreed no version yet: its stream is not primed."""
    try:
        value = _decode_json(body)
    except Exception:  # the decoder's own error: decoded again for the error's text
        try:
            value = rpc.decode(body)
        except rpc.InvalidMessage as exc:
            raise BadBody(refuse(400, exc.message, PARSE_ERROR)) from None
    try:
        if type(value) is dict:  # one message, as every POST but a 2025-03-26 batch: no list walked
            messages, kind = [value], rpc.classify(value)
            kinds, batch = [kind], False
            requests, rid = (messages, value["id"]) if kind == _REQUEST else ([], None)
        else:  # a batch (a JSON array, even of one), or a value that is no message at all
            batch = type(value) is list
            if batch and not value:
                raise BadBody(refuse(400, "Invalid Request: empty batch"))
            messages = value if batch else [value]
            kinds = [rpc.classify(m) for m in messages]
            requests = [m for m, k in zip(messages, kinds, strict=True) if k == _REQUEST]
            rid = requests[0]["id"] if len(messages) == 1 and requests else None
    except rpc.InvalidMessage as exc:
        raise BadBody(refuse(400, exc.message, exc.code, id=exc.id)) from None
    primed = verdict.priming and SESSION_ID in headers
    return Post(body, messages, kinds, batch, select_era(headers, messages), requests, rid, primed)
