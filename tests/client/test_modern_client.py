"""The client's 2026-07-28 era: per-request _meta, input rounds (MRTR), subscriptions/listen,
era detection (probe, fallback, cache), -32022 retries, typed modern errors.

Against mcpio's own servers (over stdio and in memory), the official SDK's server, the
reference TypeScript server (legacy only) and scripted servers for the corner cases. Every
message of the in-memory runs is validated against the official 2026-07-28 schema.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

import pytest

from mcpio import Client, MCPError, RemoteProtocolError, RequestTimeout, UnsupportedProtocolVersion
from mcpio._client import _era
from mcpio._jsonrpc import decode, encode
from mcpio._transports._memory import memory_pair
from mcpio._transports._subprocess import SubprocessTransport
from tests.client.support import EXAMPLES, SERVERS, Recorder, arun, in_memory, within
from tests.support import peers

MODERN = "2026-07-28"
PV, CAPS, INFO, LEVEL = (
    f"io.modelcontextprotocol/{k}" for k in ("protocolVersion", "clientCapabilities", "clientInfo", "logLevel")
)
SUB_ID = "io.modelcontextprotocol/subscriptionId"
TRANSPORTS = ["stdio", "memory"]


def _load(path) -> Any:
    spec = importlib.util.spec_from_file_location(f"loaded_{path.stem}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def target(path, transport: str) -> Any:
    return [sys.executable, str(path)] if transport == "stdio" else _load(path)


# ---------------------------------------------------------------------- input rounds (MRTR)
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_trip_planner_asks_the_user_then_the_model(transport, era):
    asked: list[tuple] = []

    def elicitation(params):
        asked.append(("elicit", params["message"], params["requestedSchema"]["required"]))
        return {"budget": 80}  # pace comes from the schema's default

    async def sampling(params):
        asked.append(
            ("sample", params["messages"][0]["content"]["text"], params.get("systemPrompt"), params["maxTokens"])
        )
        return "Museum, then the river."

    async def go():
        async with Client(
            target(EXAMPLES / "trip_planner.py", transport), elicitation=elicitation, sampling=sampling, era=era
        ) as c:
            assert c.negotiated_era == era
            r = await c.call_tool("plan_trip", {"city": "Lyon"})
            assert r["content"] == [
                {"type": "text", "text": "Itinerary for Lyon (80 EUR, relaxed):\nMuseum, then the river."}
            ]
            assert "resultType" not in r
        # Each handler ran once, although in 2026-07-28 the tool ran three times (one per round).
        assert asked == [
            ("elicit", "Planning a day in Lyon: what budget and pace?", ["budget"]),
            (
                "sample",
                "Write a relaxed one-day itinerary for Lyon on a budget of 80 euros.",
                "You are a concise travel planner.",
                400,
            ),
        ]
        async with Client(
            target(EXAMPLES / "trip_planner.py", transport), elicitation=lambda p: None, sampling=sampling, era=era
        ) as c:
            r = await c.call_tool("plan_trip", {"city": "Oslo"})
            assert r["content"][0]["text"] == "No trip planned: the user chose to decline."

    arun(go())


def test_input_rounds_on_the_wire_validate_and_use_new_ids(wire_validator):
    async def go():
        transport, task = in_memory(_load(EXAMPLES / "trip_planner.py"))
        async with Client(
            transport=transport,
            era="modern",
            elicitation=lambda p: {"budget": 10, "pace": "busy"},
            sampling=lambda p: "Walk.",
            name="tests",
            version="1.2",
        ) as c:
            r = await c.call_tool("plan_trip", {"city": "Rome"})
            assert r["content"][0]["text"] == "Itinerary for Rome (10 EUR, busy):\nWalk."
        await task
        calls = [m for m in transport.sent if m.get("method") == "tools/call"]
        assert len(calls) == 3 and len({m["id"] for m in calls}) == 3  # a new id every round
        first, second, third = (m["params"] for m in calls)
        assert "inputResponses" not in first and "requestState" not in first
        assert second["inputResponses"] == {"elicit-0": {"action": "accept", "content": {"budget": 10, "pace": "busy"}}}
        assert (
            set(third["inputResponses"]) == {"sample-1"} and third["inputResponses"]["sample-1"]["model"] == "unknown"
        )
        results = {m["id"]: m["result"] for m in transport.received if "result" in m}
        for call, nxt in ((calls[0], second), (calls[1], third)):  # requestState echoed verbatim
            assert results[call["id"]]["resultType"] == "input_required"
            assert nxt["requestState"] == results[call["id"]]["requestState"]
        for m in transport.sent:
            if "id" in m:
                meta = m["params"]["_meta"]
                assert meta[PV] == MODERN and meta[INFO] == {"name": "tests", "version": "1.2"}
                assert meta[CAPS] == {
                    "sampling": {},
                    "elicitation": {},
                    "extensions": {"io.modelcontextprotocol/tasks": {}},
                }
        assert transport.methods()[0] == "server/discover"
        assert "initialize" not in transport.methods() and "notifications/initialized" not in transport.methods()
        assert transport.validate(MODERN) == 8

    arun(go())


# ---------------------------------------------------------------------- scripted servers
class Scripted:
    """A server at the far end of a memory pair: ``respond(msg)`` returns the reply (a result
    dict, an ``{"error": …}`` dict, or None for silence)."""

    def __init__(self, respond: Callable[[dict], Any], key: str | None = None) -> None:
        self.respond = respond
        self.ours, self.theirs = memory_pair(key=key)
        self.seen: list[dict] = []
        self.task: asyncio.Task | None = None

    def start(self) -> Scripted:
        self.task = asyncio.get_running_loop().create_task(self._serve())
        return self

    async def _serve(self) -> None:
        try:
            while True:
                msg = decode(await self.theirs.receive())
                self.seen.append(msg)
                if "id" not in msg:
                    continue
                reply = self.respond(msg)
                if reply is None:
                    continue
                body = {"error": reply["error"]} if "error" in reply else {"result": reply}
                await self.theirs.send(encode({"jsonrpc": "2.0", "id": msg["id"], **body}))
        except Exception:
            await self.theirs.aclose()

    def methods(self) -> list[str | None]:
        return [m.get("method") for m in self.seen]


DISCOVER = {
    "resultType": "complete",
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "2"}},
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "legacy", "version": "1"},
}


def unsupported(requested: str, supported: list[str]) -> dict:
    return {
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": supported, "requested": requested},
        }
    }


def test_minus_32022_is_retried_with_a_mutually_supported_version():
    refused: list[str] = []

    def respond(msg):
        version = msg["params"]["_meta"][PV]
        if not refused:  # like the conformance mock: the first request is refused whatever it asks
            refused.append(version)
            return unsupported(version, ["2099-01-01", MODERN])
        if msg["method"] == "server/discover":
            return DISCOVER
        return {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}

    async def go():
        s = Scripted(respond).start()
        async with Client(transport=s.ours) as c:
            assert c.negotiated_era == "modern" and c.server_info == {"name": "scripted", "version": "2"}
            assert (await c.call_tool("x"))["content"][0]["text"] == "ok"
        assert s.methods()[:3] == ["server/discover", "server/discover", "tools/call"]
        assert s.seen[0]["id"] != s.seen[1]["id"] and s.seen[1]["params"]["_meta"][PV] == MODERN

    arun(go())


def test_minus_32022_without_a_common_modern_version():
    def respond(msg):
        if msg["method"] == "initialize":
            return {**INIT, "protocolVersion": "2025-06-18"}
        if "_meta" in msg.get("params", {}) and PV in msg["params"]["_meta"]:
            return unsupported(msg["params"]["_meta"][PV], ["2030-01-01", "2025-06-18"])
        return {"tools": []}

    async def go():
        s = Scripted(respond).start()
        async with Client(transport=s.ours) as c:  # auto: the legacy version it lists will do
            assert c.negotiated_era == "legacy" and c.negotiated_version == "2025-06-18"
        assert s.methods()[:2] == ["server/discover", "initialize"]
        assert s.seen[1]["params"]["protocolVersion"] == "2025-06-18"
        s = Scripted(respond).start()
        with pytest.raises(UnsupportedProtocolVersion) as info:
            async with Client(transport=s.ours, era="modern"):
                pass
        assert info.value.code == -32022 and info.value.supported == ["2030-01-01", "2025-06-18"]
        assert info.value.requested == MODERN

    arun(go())


def test_input_rounds_echo_state_only_when_given_and_stop_at_the_cap():
    rounds: list[dict] = []

    def respond(msg):
        if msg["method"] == "server/discover":
            return DISCOVER
        p = msg["params"]
        rounds.append(p)
        if p["name"] == "forever":
            return {"resultType": "input_required", "requestState": f"s{len(rounds)}"}
        if len(rounds) == 1:
            return {
                "resultType": "input_required",
                "inputRequests": {
                    "who": {
                        "method": "elicitation/create",
                        "params": {
                            "message": "Name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string", "default": "Ada"}},
                            },
                        },
                    },
                    "where": {"method": "roots/list"},
                },
            }
        if len(rounds) == 2:
            return {"resultType": "input_required", "requestState": "opaque=="}
        return {"content": [{"type": "text", "text": "done"}]}  # no resultType: complete

    async def go():
        s = Scripted(respond).start()
        async with Client(transport=s.ours, elicitation=lambda p: {}, roots=["file:///srv"], max_input_rounds=3) as c:
            assert (await c.call_tool("steps", {"n": 1}))["content"][0]["text"] == "done"
            assert rounds[0] == {"name": "steps", "arguments": {"n": 1}, "_meta": rounds[0]["_meta"]}
            assert rounds[1]["inputResponses"] == {
                "who": {"action": "accept", "content": {"name": "Ada"}},
                "where": {"roots": [{"uri": "file:///srv", "name": "srv"}]},
            }
            assert "requestState" not in rounds[1]  # none was sent: none is echoed
            assert rounds[2]["requestState"] == "opaque==" and "inputResponses" not in rounds[2]
            rounds.clear()
            with pytest.raises(RemoteProtocolError, match="after 3 rounds"):
                await c.call_tool("forever")
            assert len(rounds) == 4 and rounds[3]["requestState"] == "s3"
            rounds.clear()
            with pytest.raises(
                RemoteProtocolError, match="tools/list: the server answered input_required"
            ):  # not allowed on lists
                s.respond = lambda m: {"resultType": "input_required", "requestState": "x"}
                await c.list_tools()

    arun(go())


def test_an_input_request_for_an_undeclared_capability_is_a_remote_error():
    def respond(msg):
        if msg["method"] == "server/discover":
            return DISCOVER
        return {
            "resultType": "input_required",
            "inputRequests": {"llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}},
        }

    async def go():
        s = Scripted(respond).start()
        async with Client(transport=s.ours) as c:
            with pytest.raises(RemoteProtocolError, match="sampling/createMessage"):
                await c.call_tool("x")

    arun(go())


# ---------------------------------------------------------------------- era detection
def test_a_server_that_answers_nothing_is_given_up_on_within_the_clients_timeout():
    """The handshake (the probe and then ``initialize``) answers within the client's ``timeout``,
    not the probe's wait and then ``timeout`` again: ``initialize`` waits what is left."""
    import time

    async def go():
        s = Scripted(lambda msg: None, key="scripted:mute").start()
        began = time.monotonic()
        with pytest.raises(RequestTimeout, match="neither server/discover nor initialize within 1.2 s"):
            async with Client(transport=s.ours, probe_timeout=1.0, timeout=1.2):
                pass
        # the probe waits 1 s, initialize what is left: 0.2 s (before: 1.2 s more, 2.2 s in all)
        assert time.monotonic() - began < 1.9
        assert s.methods()[:3] == ["server/discover", "notifications/cancelled", "initialize"]

    arun(go())


def test_a_silent_probe_falls_back_to_legacy_and_the_era_is_cached():
    def respond(msg):
        return INIT if msg["method"] == "initialize" else ({"tools": []} if msg["method"] == "tools/list" else None)

    async def go():
        _era.ERA_CACHE.pop("scripted:silent", None)
        s = Scripted(respond, key="scripted:silent").start()
        async with Client(transport=s.ours, probe_timeout=0.2) as c:
            assert c.negotiated_era == "legacy" and await c.list_tools() == []
        assert s.methods()[:4] == [
            "server/discover",
            "notifications/cancelled",
            "initialize",
            "notifications/initialized",
        ]
        assert _era.ERA_CACHE["scripted:silent"] == "legacy"
        s = Scripted(respond, key="scripted:silent").start()
        async with Client(transport=s.ours, probe_timeout=0.2) as c:  # remembered: no probe
            assert c.negotiated_era == "legacy"
        assert s.methods()[0] == "initialize"

    arun(go())


def test_a_remembered_era_that_fails_is_forgotten():
    def modern_only(msg):
        if msg["method"] == "server/discover":
            return DISCOVER
        return {"error": {"code": -32601, "message": "Method not found: initialize is not a 2026-07-28 method"}}

    async def go():
        _era.ERA_CACHE["scripted:upgraded"] = "legacy"  # it used to be a legacy server
        s = Scripted(modern_only, key="scripted:upgraded").start()
        with pytest.raises(MCPError, match="initialize"):
            async with Client(transport=s.ours):
                pass
        assert "scripted:upgraded" not in _era.ERA_CACHE
        s = Scripted(modern_only, key="scripted:upgraded").start()
        async with Client(transport=s.ours) as c:
            assert c.negotiated_era == "modern"
        assert _era.ERA_CACHE["scripted:upgraded"] == "modern"

    arun(go())


def test_recognised_modern_errors_are_not_a_fallback():
    def respond(msg):
        return {"error": {"code": -32021, "message": "needs roots", "data": {"requiredCapabilities": {"roots": {}}}}}

    async def go():
        s = Scripted(respond).start()
        with pytest.raises(MCPError) as info:
            async with Client(transport=s.ours):
                pass
        assert info.value.code == -32021 and "initialize" not in s.methods()

    arun(go())


def test_auto_falls_back_to_legacy_against_the_legacy_only_reference_server():
    argv = peers.everything_argv()

    async def go():
        recorders = []
        for _ in range(2):
            rec = Recorder(SubprocessTransport(argv[0], argv[1:]))
            if not recorders:
                _era.ERA_CACHE.pop(rec.key, None)  # other tests may have met this server already
            recorders.append(rec)
            async with Client(transport=rec, timeout=30) as c:
                assert c.negotiated_era == "legacy" and c.negotiated_version == "2025-11-25"
                assert c.server_info["name"] == "mcp-servers/everything"
        first, second = recorders
        assert first.methods()[:2] == ["server/discover", "initialize"]  # -32601 to the probe
        assert next(m for m in first.received if m.get("id") == 1)["error"]["code"] == -32601
        assert second.methods()[0] == "initialize"  # the era was remembered for this command line

    arun(go(), timeout=60)


# ---------------------------------------------------------------------- subscriptions
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_subscriptions_and_list_changed(transport, era):
    notes: list[tuple[str, dict]] = []
    history: list[tuple[str, dict]] = []

    async def go():
        arrived = asyncio.Event()

        def on_notification(method, params):
            notes.append((method, params or {}))
            history.append((method, params or {}))
            arrived.set()

        async def next_note(method: str) -> dict:
            while True:
                for i, (m, p) in enumerate(notes):
                    if m == method:
                        del notes[: i + 1]
                        return p
                arrived.clear()
                await within(arrived.wait(), 10)

        async with Client(
            target(SERVERS / "dynamic_server.py", transport), on_notification=on_notification, era=era
        ) as c:
            assert c.negotiated_era == era
            await c.subscribe("memo://a")
            await c.call_tool("write_memo", {"key": "a", "text": "one"})
            p = await next_note("notifications/resources/updated")
            assert p["uri"] == "memo://a"
            if era == "modern":  # tagged with the listen request's id
                assert isinstance(p["_meta"][SUB_ID], int)
                assert c._era.subscriptions == {
                    "toolsListChanged": True,
                    "promptsListChanged": True,
                    "resourcesListChanged": True,
                    "resourceSubscriptions": ["memo://a"],
                }
            await c.subscribe("memo://b")  # modern: a new stream replaces the old one
            start = len(history)
            await c.call_tool("write_memo", {"key": "a", "text": "two"})
            await c.call_tool("add_tool", {"name": "extra"})
            await next_note("notifications/tools/list_changed")
            updates = [p["uri"] for m, p in history[start:] if m == "notifications/resources/updated"]
            assert "extra" in {t["name"] for t in await c.list_tools()}
            await c.unsubscribe("memo://a")
            await c.unsubscribe("memo://b")
            notes.clear()
            await c.call_tool("write_memo", {"key": "a", "text": "three"})
            await c.call_tool("add_tool", {"name": "more"})
            await next_note("notifications/tools/list_changed")  # everything before it has arrived
            assert not any(m == "notifications/resources/updated" for m, p in notes)
            return updates

    before = arun(go())
    # The update sent after the stream was replaced (memo://a, memo://b) arrived exactly once.
    assert before == ["memo://a"]


def test_listen_streams_are_cancelled_and_validate(wire_validator):
    async def go():
        transport, task = in_memory(_load(SERVERS / "dynamic_server.py"))
        async with Client(transport=transport, era="modern") as c:  # no on_notification: no stream yet
            assert "subscriptions/listen" not in transport.methods()
            await c.subscribe("memo://a")
            await c.subscribe("memo://b")
        await task
        listens = [m for m in transport.sent if m.get("method") == "subscriptions/listen"]
        assert [m["params"]["notifications"] for m in listens] == [
            {"resourceSubscriptions": ["memo://a"]},
            {"resourceSubscriptions": ["memo://a", "memo://b"]},
        ]
        cancelled = [m["params"]["requestId"] for m in transport.sent if m.get("method") == "notifications/cancelled"]
        assert cancelled == [listens[0]["id"], listens[1]["id"]]  # replaced, then closed with the client
        acks = [m for m in transport.received if m.get("method") == "notifications/subscriptions/acknowledged"]
        assert [a["params"]["_meta"][SUB_ID] for a in acks] == [listens[0]["id"], listens[1]["id"]]
        transport.validate(MODERN)

    arun(go())


def test_a_listen_stream_that_ends_is_opened_again():
    listens: list[dict] = []

    async def serve(theirs) -> None:
        """Acknowledges each listen; ends the first one gracefully at once (a restarting server)."""
        try:
            while True:
                msg = decode(await theirs.receive())
                if msg.get("method") == "server/discover":
                    await theirs.send(
                        encode(
                            {
                                "jsonrpc": "2.0",
                                "id": msg["id"],
                                "result": {**DISCOVER, "capabilities": {"resources": {"subscribe": True}}},
                            }
                        )
                    )
                elif msg.get("method") == "subscriptions/listen":
                    listens.append(msg)
                    tag = {"_meta": {SUB_ID: msg["id"]}}
                    await theirs.send(
                        encode(
                            {
                                "jsonrpc": "2.0",
                                "method": "notifications/subscriptions/acknowledged",
                                "params": {"notifications": msg["params"]["notifications"], **tag},
                            }
                        )
                    )
                    if len(listens) == 1:
                        await theirs.send(
                            encode({"jsonrpc": "2.0", "id": msg["id"], "result": {"resultType": "complete", **tag}})
                        )
                    else:
                        await theirs.send(
                            encode(
                                {
                                    "jsonrpc": "2.0",
                                    "method": "notifications/resources/updated",
                                    "params": {"uri": "memo://x", **tag},
                                }
                            )
                        )
        except Exception:
            await theirs.aclose()

    async def go():
        ours, theirs = memory_pair()
        task = asyncio.get_running_loop().create_task(serve(theirs))
        got = asyncio.Event()
        async with Client(
            transport=ours, on_notification=lambda m, p: got.set() if m.endswith("updated") else None
        ) as c:
            await c.subscribe("memo://x")
            await within(got.wait(), 5)  # delivered by the second stream, opened a second later
        task.cancel()
        assert len(listens) == 2 and listens[1]["id"] != listens[0]["id"]

    arun(go())


# ---------------------------------------------------------------------- logging
def test_the_log_level_travels_with_each_request():
    async def go():
        got: list[str] = []
        transport, task = in_memory(_load(SERVERS / "dynamic_server.py"))
        async with Client(transport=transport, era="modern", on_log=lambda p: got.append(p["level"])) as c:
            await c.call_tool("chatty")  # on_log given: every level
            assert got == ["debug", "info", "warning", "error"]
            got.clear()
            await c.set_logging_level("warning")  # nothing is sent: it rides on the next requests
            await c.call_tool("chatty")
            assert got == ["warning", "error"]
        await task
        levels = [m["params"]["_meta"].get(LEVEL) for m in transport.sent if m.get("method") == "tools/call"]
        assert levels == ["debug", "warning"] and "logging/setLevel" not in transport.methods()

    arun(go())


def test_without_on_log_each_request_asks_for_what_the_server_logger_lets_through_now():
    import logging

    server_log = logging.getLogger("mcpio.server")
    before = server_log.level

    async def go():
        transport, task = in_memory(_load(SERVERS / "dynamic_server.py"))
        async with Client(transport=transport, era="modern") as c:
            server_log.setLevel(logging.ERROR)
            await c.call_tool("chatty")
            server_log.setLevel(logging.DEBUG)  # the level in effect now, not the one of the first request
            await c.call_tool("chatty")
        await task
        levels = [m["params"]["_meta"].get(LEVEL) for m in transport.sent if m.get("method") == "tools/call"]
        assert levels == ["error", "debug"]

    try:
        arun(go())
    finally:
        server_log.setLevel(before)
