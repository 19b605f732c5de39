"""Server→client requests through the Context (spec: client/sampling, client/elicitation,
client/roots, basic/utilities/ping): the peer answers them, every frame validated."""

from __future__ import annotations

import pytest

from mcpio import Context, MCPError, Server
from tests.server.peer import LEGACY, Peer, arun, since, within

SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "4"},
    "model": "test-model",
    "stopReason": "endTurn",
}
ROOTS = [{"uri": "file:///home/ada/project", "name": "project"}]
NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


def client_server(timeout: float = 5.0) -> Server:
    server = Server("asks")

    @server.tool
    async def ask(question: str, ctx: Context) -> str:
        r = await ctx.sample(question, max_tokens=16, system_prompt="Be brief.", temperature=0.0, timeout=timeout)
        return f"{question} -> {r['content']['text']}"

    @server.tool
    async def who(ctx: Context) -> str:
        r = await ctx.elicit("Who are you?", NAME_SCHEMA, timeout=timeout)
        return f"{r['action']}: {r.get('content', {}).get('name')}"

    @server.tool
    async def roots(ctx: Context) -> str:
        return ",".join(r["uri"] for r in await ctx.list_roots(timeout=timeout))

    @server.tool
    async def ping_client(ctx: Context) -> str:
        await ctx.ping(timeout=timeout)
        return "pong"

    @server.tool
    async def read_own(uri: str, ctx: Context) -> str:
        return (await ctx.read_resource(uri))[0]["text"]

    @server.resource("notes://{topic}")
    def notes(topic: str) -> str:
        return f"notes on {topic}"

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_sampling_roots_ping_and_own_resources(version):
    seen = []

    def sample(params):
        seen.append(params)
        return SAMPLED

    async def go():
        async with Peer(
            client_server(),
            version=version,
            capabilities={"sampling": {}, "roots": {"listChanged": True}},
            handlers={"sampling/createMessage": sample, "roots/list": lambda p: {"roots": ROOTS}},
        ) as peer:
            r = await peer.call_tool("ask", {"question": "2+2"})
            assert r["content"][0]["text"] == "2+2 -> 4"
            assert seen == [
                {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "2+2"}}],
                    "maxTokens": 16,
                    "systemPrompt": "Be brief.",
                    "temperature": 0.0,
                }
            ]
            assert (await peer.call_tool("roots"))["content"][0]["text"] == "file:///home/ada/project"
            assert (await peer.call_tool("ping_client"))["content"][0]["text"] == "pong"
            assert (await peer.call_tool("read_own", {"uri": "notes://owls"}))["content"][0]["text"] == "notes on owls"
            r = await peer.call_tool("read_own", {"uri": "nowhere://x"})
            assert r["isError"] is True and "nowhere://x" in r["content"][0]["text"]
            methods = [m["method"] for d, m in peer.frames if d == "in" and "method" in m and "id" in m]
            assert methods == ["sampling/createMessage", "roots/list", "ping"]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_elicitation_from_2025_06_18(version):
    async def go():
        caps = {"elicitation": {}} if since(version, "2025-06-18") else {}  # older clients cannot declare it
        async with Peer(
            client_server(),
            version=version,
            capabilities=caps,
            handlers={"elicitation/create": lambda p: {"action": "accept", "content": {"name": "Ada"}}},
        ) as peer:
            r = await peer.call_tool("who")
            if since(version, "2025-06-18"):
                assert r["content"][0]["text"] == "accept: Ada"
                (req,) = [m for d, m in peer.frames if d == "in" and m.get("method") == "elicitation/create"]
                assert req["params"]["requestedSchema"] == NAME_SCHEMA
                assert req["params"]["message"] == "Who are you?"
                assert ("mode" in req["params"]) == since(version, "2025-11-25")
            else:  # elicitation does not exist in this version: nothing is sent
                assert r["isError"] is True and "elicitation" in r["content"][0]["text"]
                assert not [m for _, m in peer.frames if m.get("method") == "elicitation/create"]

    arun(go())


@pytest.mark.parametrize("tool, capability", [("ask", "sampling"), ("roots", "roots"), ("who", "elicitation")])
def test_missing_client_capability_is_a_tool_error_naming_it(tool, capability):
    async def go():
        async with Peer(client_server(), capabilities={}) as peer:
            r = await peer.call_tool(tool, {"question": "q"} if tool == "ask" else {})
            assert r["isError"] is True
            text = r["content"][0]["text"]
            assert repr(capability) in text and "mcpio-tests" in text
            assert not peer.server_requests  # nothing was sent to the client

    arun(go())


def test_url_only_elicitation_capability_does_not_allow_form_mode():
    async def go():
        async with Peer(client_server(), capabilities={"elicitation": {"url": {}}}) as peer:
            r = await peer.call_tool("who")
            assert r["isError"] is True and "form" in r["content"][0]["text"]

    arun(go())


def test_client_error_answer_becomes_a_tool_error():
    def refuse(params):
        raise MCPError("User rejected sampling request", -1)

    async def go():
        async with Peer(
            client_server(), capabilities={"sampling": {}}, handlers={"sampling/createMessage": refuse}
        ) as peer:
            r = await peer.call_tool("ask", {"question": "q"})
            assert r["isError"] is True and "User rejected sampling request" in r["content"][0]["text"]

    arun(go())


def test_answers_are_correlated_by_id_not_by_order():
    async def go():
        async with Peer(client_server(), capabilities={"sampling": {}}) as peer:  # no handler: we answer by hand
            _, first = await peer.start("tools/call", {"name": "ask", "arguments": {"question": "first"}})
            _, second = await peer.start("tools/call", {"name": "ask", "arguments": {"question": "second"}})
            await peer.wait_for(lambda m: len(peer.server_requests) == 2)
            by_question = {r["params"]["messages"][0]["content"]["text"]: r["id"] for r in peer.server_requests}
            assert by_question["first"] != by_question["second"]
            for q in ("second", "first"):  # answer in the opposite order
                await peer.respond(by_question[q], dict(SAMPLED, content={"type": "text", "text": f"answer to {q}"}))
            r1, r2 = await within(first), await within(second)
            assert r1["result"]["content"][0]["text"] == "first -> answer to first"
            assert r2["result"]["content"][0]["text"] == "second -> answer to second"

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_unanswered_request_times_out_into_a_tool_error_and_is_cancelled(version):
    async def go():
        async with Peer(client_server(timeout=0.05), version=version, capabilities={"sampling": {}}) as peer:
            r = await peer.call_tool("ask", {"question": "hello?"})
            assert r["isError"] is True
            assert "sampling/createMessage" in r["content"][0]["text"] and "0.05" in r["content"][0]["text"]
            (req,) = peer.server_requests
            cancelled = await peer.notification("notifications/cancelled")
            assert cancelled["requestId"] == req["id"]
            # a late answer is ignored, and the connection carries on
            await peer.respond(req["id"], SAMPLED)
            await peer.barrier()

    arun(go())
