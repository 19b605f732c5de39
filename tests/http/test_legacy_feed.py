"""A legacy session's POST of one request, with nothing queued ahead of it, is served on the
POST's own task (``Session.feed``) through the transport's feeder seam, and sent as the whole
JSON response when nothing came before its answer; the same answers as through a stream are
checked on every route by tests/routes/test_route_matrix.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest

from mcpio import Server
from mcpio._transports._base import serving
from mcpio._transports._http_legacy import LegacyTransport
from mcpio._transports._http_server_streams import Stream

from .test_http_cost import Client, add_wait_forever, call_body, open_legacy_session, scope


def build() -> Server:
    server = Server("at-once")

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool
    async def progress(ctx: Any) -> str:
        """Report progress, then answer (a task: its stream is made)."""
        await ctx.report_progress(1, 2)
        await ctx.info("half way")
        return "done"

    return server


def call(id_: Any, name: str, arguments: Any) -> dict[str, Any]:
    body = call_body(1, name, arguments, modern=False)
    body["id"] = id_
    return body


ACCEPTS = {
    "both": [(b"accept", b"application/json, text/event-stream")],
    "json": [(b"accept", b"application/json")],
    "sse": [(b"accept", b"text/event-stream")],
}


class _Engine:
    """What a legacy transport is given as its session engine (``LegacyTransport.attach``)
    besides feeding: nothing in flight to cancel or wait for."""

    def abort(self, grace: float = 0.0) -> None:
        pass

    def in_flight(self) -> int:
        return 0


async def post(
    t: LegacyTransport, frame: bytes, messages: list[Any], ids: set[Any], *, json_ok: bool, sse_ok: bool, priming: bool
) -> Any:
    """What the app does with a POST: ``deliver_post``, awaited when it gives a coroutine."""
    out = t.deliver_post(frame, messages, ids, json_ok, sse_ok, priming)
    return out if isinstance(out, (bytes, Stream)) else await out


def attach(t: LegacyTransport, engine: Any) -> None:
    """Give ``t`` its engine as the server does: through its declared ``attach``, feeding on."""
    assert t.abilities.attach is not None
    t.abilities.attach(engine, feed=True, mirror=lambda _engine: None)


class _Feeder(_Engine):
    """Serves what it is fed by sending ``sends`` (each in the request's serving context)."""

    answers_only = False  # sends anything, in the request's context: routed through its UnmadeStream

    def __init__(self, transport: LegacyTransport, sends: list[bytes]) -> None:
        self.transport = transport
        self.sends = sends

    def reading(self) -> bool:
        return True

    def answer_admitted(self, message: dict[str, Any]) -> bytes | None:
        return None  # fed, always (Session.answer_admitted: not without the engine's bookkeeping)

    async def feed(self, message: dict[str, Any]) -> None:
        serving.set((self.transport, message["id"]))
        for f in self.sends:
            await self.transport.send(f)


ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'


@pytest.mark.parametrize(
    ("sends", "at_once"), [([ANSWER], True), ([NOTE, ANSWER], False), ([NOTE], False), ([], False)]
)
def test_the_stream_is_made_when_anything_comes_before_the_answer(sends: list[bytes], at_once: bool) -> None:
    async def go() -> None:
        t = LegacyTransport("s", store=None)
        attach(t, _Feeder(t, sends))
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        out = await post(t, body, [json.loads(body)], {1}, json_ok=True, sse_ok=True, priming=False)
        if at_once:
            assert out == ANSWER and not t.streams and not t.answering(1)
            return
        assert isinstance(out, Stream) and t.streams == {out.id: out}
        assert list(out.items) == sends and out.finished is (ANSWER in sends)
        assert t.answering(1) is (ANSWER not in sends)
        if ANSWER not in sends:  # it comes later, on the stream
            await t.send(ANSWER)
            assert list(out.items)[-1] == ANSWER and out.finished

    asyncio.run(go())


def test_deliver_post_answers_without_a_coroutine_and_gives_one_only_for_what_waits() -> None:
    """``deliver_post`` (the app's plain call per POST, issue 17) gives the answer or the stream
    when nothing waits, else the coroutine finishing the delivery."""
    t = LegacyTransport("s", store=None)

    class AtOnce(_Engine):  # answers on the caller's stack, as a Session with an answer function does
        answers_only = True

        def reading(self) -> bool:
            return True

        def answer_admitted(self, message: dict[str, Any]) -> bytes | None:
            return ANSWER if message["id"] == 5 else None  # Session.answer_admitted's answer, or fed

        def feed(self, message: dict[str, Any]) -> None:
            assert t.answer_nowait(message["id"], ANSWER)

    async def go() -> None:
        attach(t, AtOnce())
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        assert t.deliver_post(body, [json.loads(body)], {1}, True, True, False) == ANSWER
        assert not t.streams and not t.answering(1)
        body5 = b'{"jsonrpc":"2.0","id":5,"method":"ping"}'  # answered at once: neither fed nor routed
        assert t.deliver_post(body5, [json.loads(body5)], None, True, True, False) == ANSWER
        assert not t.streams and not t.answering(5)
        waits = LegacyTransport("s", store=None)
        attach(waits, _Feeder(waits, [ANSWER]))  # waits (a coroutine to await)
        pending = waits.deliver_post(body, [json.loads(body)], {1}, True, True, False)
        assert asyncio.iscoroutine(pending) and await pending == ANSWER
        unfed = LegacyTransport("s", store=None)  # no engine fed: queued for the session, a delivery to await
        body2 = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
        pending = unfed.deliver_post(body2, [json.loads(body2)], {2}, True, True, False)
        assert asyncio.iscoroutine(pending)
        out = await pending
        assert isinstance(out, Stream) and unfed.answering(2) and unfed._inbox.qsize() == 1

    asyncio.run(go())


def test_without_a_feeder_with_frames_queued_or_for_a_batch_the_stream_is_made_first() -> None:
    async def go() -> None:
        t = LegacyTransport("s", store=None)
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        out = await post(t, body, [json.loads(body)], {1}, json_ok=True, sse_ok=True, priming=False)
        assert isinstance(out, Stream) and t.answering(1)
        attach(t, _Feeder(t, [ANSWER]))
        await t.deliver(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', [{}])  # queued
        body2 = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
        out2 = await post(t, body2, [json.loads(body2)], {2}, json_ok=True, sse_ok=True, priming=False)
        assert isinstance(out2, Stream) and t.answering(2)
        queued = t._inbox.qsize()
        batch = b" [" + body2.replace(b'"id":2', b'"id":3') + b"]"  # a batch of one: queued
        out3 = await post(t, batch, [json.loads(batch)[0]], {3}, json_ok=True, sse_ok=True, priming=False)
        assert isinstance(out3, Stream) and t.answering(3) and t._inbox.qsize() == queued + 1

    asyncio.run(go())


def test_a_request_id_in_flight_is_refused_on_another_post() -> None:
    async def go() -> None:
        server = build()
        started, cancelled = asyncio.Event(), asyncio.Event()
        add_wait_forever(server, started, cancelled)
        app = server.http_app("/mcp")
        try:
            session = await open_legacy_session(app)
            first = Client(call(5, "wait_forever", {}))
            running = asyncio.ensure_future(app(scope(session), first.receive, first.send))
            await asyncio.wait_for(started.wait(), 10)
            again = Client(call(5, "add", {"a": 1, "b": 2}))
            await app(scope(session), again.receive, again.send)
            assert again.status() == 400
            assert again.json()["id"] == 5
            assert "request id 5 is already in flight" in again.json()["error"]["message"]
            other = Client(call(6, "add", {"a": 1, "b": 2}))
            await app(scope(session), other.receive, other.send)
            assert other.json()["result"]["structuredContent"] == {"result": 3}
            second = Client(call(7, "wait_forever", {}))
            also = asyncio.ensure_future(app(scope(session), second.receive, second.send))
            while not any(t.answering(7) for t in app.sessions.values()):
                await asyncio.sleep(0)
            batch = Client([call(9, "add", {"a": 1, "b": 2}), call(7, "add", {}), call(5, "add", {})])
            await app(scope(session), batch.receive, batch.send)  # refused whole: the first busy id named
            assert batch.status() == 400 and batch.json()["id"] == 7
            assert "request id 7 is already in flight" in batch.json()["error"]["message"]
            end = Client({})
            await app({**scope(session), "method": "DELETE"}, end.receive, end.send)  # cancels it
            await asyncio.wait_for(cancelled.wait(), 10)
            first.left.set()
            second.left.set()
            await asyncio.wait_for(asyncio.gather(running, also), 10)
        finally:
            await app.aclose()

    asyncio.run(go())


VERSIONS = ["2025-11-25", "1999-01-01", None, " 2025-11-25 ", "2025-06-18", "1999-01-01", "2025-03-26", "2025-11-25"]


@pytest.mark.parametrize("accept", ["json", "sse", "alternating"])
def test_each_posts_version_header_is_checked_as_on_a_sessions_first_post(accept: str) -> None:
    """The MCP-Protocol-Version check's outcome is remembered with the other header values that
    passed the request checks (``RequestChecks.post``): whatever values came before, each POST
    gets what the same values get on a new session's first request (status, id, priming, JSON
    or SSE)."""
    kinds = ["json", "sse", "both"]

    async def post(app: Any, session: list[tuple[bytes, bytes]], version: str | None, id_: int) -> Any:
        kind = kinds[id_ % 3] if accept == "alternating" else accept
        headers = [h for h in session if h[0] not in (b"accept", b"mcp-protocol-version")] + ACCEPTS[kind]
        if version is not None:
            headers.append((b"mcp-protocol-version", version.encode()))
        c = Client(call(id_, "add", {"a": 2, "b": 40}))
        await asyncio.wait_for(app(scope(headers), c.receive, c.send), 10)
        raw = b"".join(m.get("body", b"") for m in c.messages[1:])
        data = [json.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:") and line[5:].strip()]
        return c.messages[0]["status"], b"retry:" in raw, data or json.loads(raw)

    async def go() -> None:
        app = build().http_app("/mcp")
        try:
            kept = await open_legacy_session(app)
            for i, version in enumerate(VERSIONS):
                got = await post(app, kept, version, 100 + i)
                want = await post(app, await open_legacy_session(app), version, 100 + i)
                assert got == want, (version, got, want)
                assert got[0] == (400 if version == "1999-01-01" else 200), (version, got)
        finally:
            await app.aclose()

    asyncio.run(go())


class _AnswersOnly(_Engine):
    """A feeder like the Session's (``answers_only``): what it starts on the caller's stack sends
    nothing but its answer, through ``answer_nowait``; ``how`` says what it does with a request."""

    answers_only = True

    def __init__(self, transport: LegacyTransport, how: str) -> None:
        self.transport, self.how = transport, how

    def reading(self) -> bool:
        return True

    def answer_admitted(self, message: dict[str, Any]) -> bytes | None:
        return None  # fed, always (Session.answer_admitted: not without the engine's bookkeeping)

    def feed(self, message: dict[str, Any]) -> Any:
        if self.how == "answer":
            self.routed = self.transport.answering(message["id"])  # a route while it is fed
            if not self.transport.answer_nowait(message["id"], ANSWER):  # sent, on this stack (Session._start)
                with contextlib.suppress(StopIteration):
                    self.transport.send(ANSWER).send(None)
        elif self.how == "refuse":  # the protocol layer's refusal, sent once awaited
            return self.transport.send(REFUSAL)
        elif self.how == "fail":
            raise RuntimeError("boom")
        return None  # "task": started, answered later


REFUSAL = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}'


@pytest.mark.parametrize("how", ["answer", "task", "refuse", "fail"])
@pytest.mark.parametrize("json_ok", [True, False])
def test_a_request_fed_without_a_route_is_answered_as_through_one(how: str, json_ok: bool) -> None:
    """``LegacyTransport.post`` with an ``answers_only`` feeder and a JSON-accepting client feeds
    the request without an UnmadeStream (issue 17): each outcome must be what the same feeder
    gives through one (``answers_only = False``): the whole answer, or the stream it comes on."""

    async def outcome(answers_only: bool) -> Any:
        t = LegacyTransport("s", store=None)
        feeder = _AnswersOnly(t, how)
        feeder.answers_only = answers_only
        attach(t, feeder)
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        try:
            out = await post(t, body, [json.loads(body)], {1}, json_ok=json_ok, sse_ok=True, priming=False)
        except RuntimeError as exc:  # a feeder's bug: it reaches the app (the route left, if any, differs)
            assert t._fed_id != 1
            return ("raised", str(exc))
        assert t._fed_id != 1 and t._fed_answer is None  # nothing left of the feed
        if how == "answer":  # routed while fed only through the general path (or to a stream)
            assert feeder.routed is not (answers_only and json_ok)
        if isinstance(out, Stream):
            if t.answering(1):
                await t.send(ANSWER)  # answered later, on its stream
            return ("stream", out.id, list(out.items), out.finished, t.answering(1), sorted(t.streams))
        return ("answer", out, t.answering(1), sorted(t.streams))

    async def go() -> None:
        assert await outcome(True) == await outcome(False)

    asyncio.run(go())
