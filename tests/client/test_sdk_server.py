"""The mcpio client against a server written with the official ``mcp`` Python SDK, over stdio."""

from __future__ import annotations

import json
import sys

import pytest

from mcpio import Client, RemoteProtocolError, ResourceNotFound
from tests.client.support import SERVERS, arun

SDK_SERVER = [sys.executable, str(SERVERS / "sdk_server.py")]


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
def test_everything_the_sdk_server_offers(tmp_path, era):
    logs: list[dict] = []
    progress: list[tuple] = []
    sampled: list[dict] = []
    elicited: list[dict] = []

    def sampling(params):
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "test-model"}

    def elicitation(params):
        elicited.append(params)
        return {"name": "Ada"}  # colour and lucky come from the schema's defaults

    async def go():
        async with Client(
            SDK_SERVER,
            sampling=sampling,
            elicitation=elicitation,
            roots=[tmp_path],
            on_log=logs.append,
            timeout=30,
            era=era,
        ) as c:
            assert c.server_info["name"] == "sdk-peer"
            # The SDK server is dual-era: it answers server/discover, so "auto" finds the modern era.
            assert c.negotiated_version == ("2025-11-25" if era == "legacy" else "2026-07-28")
            assert c.instructions == "A server built with the official SDK."
            tools = {t["name"]: t for t in await c.list_tools()}
            assert set(tools) == {"add", "shout", "count", "ask_llm", "ask_user", "roots", "plan"}
            assert tools["add"]["inputSchema"]["required"] == ["a", "b"]

            r = await c.call_tool("add", {"a": 2, "b": 40})
            assert r["structuredContent"] == {"result": 42} and r["content"][0]["text"] == "42"
            r = await c.call_tool("shout", {"text": "hi", "times": 2})
            assert r["structuredContent"] == {"result": "HI HI"}
            r = await c.call_tool("add", {"a": "not a number", "b": 1})
            assert r["isError"] is True

            r = await c.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, t, m)))
            assert r["structuredContent"] == {"result": "counted to 3"}
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            assert [entry["data"] for entry in logs] == ["counted 1", "counted 2", "counted 3"]

            if era == "legacy":  # server→client requests: the SDK's ctx.session API is legacy-only
                r = await c.call_tool("ask_llm", {"question": "the answer?"})
                assert r["structuredContent"] == {"result": "the model test-model said: forty-two"}
                assert sampled[0]["messages"][0]["content"]["text"] == "the answer?"
                assert sampled[0]["maxTokens"] == 50

                r = await c.call_tool("ask_user", {})
                assert r["structuredContent"] == {"result": "Ada likes blue and 7"}
                assert elicited[0]["requestedSchema"]["properties"]["colour"]["default"] == "blue"

                r = await c.call_tool("roots", {})
                assert r["structuredContent"] == {"result": tmp_path.resolve().as_uri()}
                sampled.clear()
                elicited.clear()
            else:  # in 2026-07-28 the SDK refuses them (no back-channel); its resolvers work
                with pytest.raises(RemoteProtocolError, match="back-channel"):
                    await c.call_tool("ask_llm", {"question": "the answer?"})

            # The SDK's resolvers: elicitation, then sampling (it depends on the answer), then
            # roots; in 2026-07-28 input rounds (input_required) answered by our handlers.
            r = await c.call_tool("plan", {})
            assert r["structuredContent"] == {"result": f"Ada/7: forty-two in {tmp_path.resolve().as_uri()}"}
            assert [e["message"] for e in elicited] == ["Tell me about yourself"]
            assert [m["messages"][0]["content"]["text"] for m in sampled] == ["Plan a day for Ada, who likes blue"]

            resources = await c.list_resources()
            assert [x["uri"] for x in resources] == ["config://app"]
            assert json.loads((await c.read_resource("config://app"))[0]["text"]) == {"debug": False}
            templates = await c.list_resource_templates()
            assert [t["uriTemplate"] for t in templates] == ["users://{user_id}/profile"]
            assert (await c.read_resource("users://7/profile"))[0]["text"] == "profile of user 7"
            try:
                await c.read_resource("nope://x")
            except ResourceNotFound as exc:  # the SDK answers -32602 with data.uri (2026 style)
                assert exc.uri == "nope://x" and exc.code in (-32002, -32602)
            else:
                raise AssertionError("reading an unknown resource must fail")

            prompts = await c.list_prompts()
            assert [p["name"] for p in prompts] == ["review"]
            assert {a["name"]: a.get("required", False) for a in prompts[0]["arguments"]} == {
                "code": True,
                "language": False,
            }
            got = await c.get_prompt("review", {"code": "x = 1", "language": "rust"})
            assert got["messages"][0]["content"]["text"] == "Please review this rust code:\nx = 1"
            await c.ping()

    arun(go(), timeout=60)


def test_a_late_answer_to_the_era_probe_is_followed():
    """A server slow to start answers ``server/discover`` after the probe gave up on it; the SDK's
    dual-era server has then taken the modern era and refuses ``initialize``: the client follows it
    into the modern era instead of failing (a probe of 1 ms always comes too late)."""

    async def go():
        async with Client(SDK_SERVER, era="auto", probe_timeout=0.001, timeout=30) as c:
            assert c.negotiated_version == "2026-07-28"
            assert (await c.call_tool("add", {"a": 40, "b": 2})).data == 42

    arun(go(), timeout=60)
