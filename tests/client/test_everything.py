"""The mcpio client against the TypeScript reference server ``@modelcontextprotocol/server-everything``
(npm, pinned in scripts/setup-peers), over stdio."""

from __future__ import annotations

import asyncio
import base64

import pytest

from mcpio import Client, MCPError
from tests.client.support import arun, within
from tests.support import peers


@pytest.fixture(scope="module")
def everything() -> list[str]:
    return peers.everything_argv()


def test_lists_reads_prompts_and_plain_tools(everything):
    async def go():
        async with Client(everything, timeout=30) as c:
            assert c.server_info["name"] == "mcp-servers/everything"
            assert c.negotiated_version == "2025-11-25"
            caps = c.server_capabilities
            assert {"tools", "resources", "prompts", "logging", "completions"} <= set(caps)

            tools = {t["name"]: t for t in await c.list_tools()}
            assert {
                "echo",
                "get-sum",
                "get-tiny-image",
                "get-structured-content",
                "trigger-long-running-operation",
            } <= set(tools)
            # Without sampling/elicitation/roots handlers, the tools that need them are not offered.
            assert "trigger-sampling-request" not in tools and "get-roots-list" not in tools

            assert (await c.call_tool("echo", {"message": "hi"}))["content"] == [{"type": "text", "text": "Echo: hi"}]
            assert "5" in (await c.call_tool("get-sum", {"a": 2, "b": 3}))["content"][0]["text"]
            image = await c.call_tool("get-tiny-image", {})
            block = next(b for b in image["content"] if b["type"] == "image")
            assert block["mimeType"] == "image/png" and base64.b64decode(block["data"])[:4] == b"\x89PNG"
            weather = await c.call_tool("get-structured-content", {"location": "Chicago"})
            assert set(weather["structuredContent"]) == {"temperature", "conditions", "humidity"}
            bad = await c.call_tool("get-sum", {"a": "x"})
            assert bad.get("isError") is True

            progress: list[tuple] = []
            r = await c.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                on_progress=lambda p, t, m: progress.append((p, t)),
            )
            assert "Steps: 3" in r["content"][0]["text"]
            assert progress == [(1, 3), (2, 3), (3, 3)]

            resources = await c.list_resources()
            assert resources and all(r["uri"].startswith("demo://") for r in resources)
            doc = next(r for r in resources if r["uri"].endswith("architecture.md"))
            assert (await c.read_resource(doc["uri"]))[0]["text"].startswith("# Everything Server")
            templates = {t["uriTemplate"] for t in await c.list_resource_templates()}
            assert templates == {
                "demo://resource/dynamic/text/{resourceId}",
                "demo://resource/dynamic/blob/{resourceId}",
            }
            text = (await c.read_resource("demo://resource/dynamic/text/3"))[0]
            assert text["text"].startswith("Resource 3:")
            blob = (await c.read_resource("demo://resource/dynamic/blob/4"))[0]
            assert base64.b64decode(blob["blob"]).startswith(b"Resource 4:")
            with pytest.raises(MCPError):
                await c.read_resource("demo://resource/dynamic/text/0")

            prompts = {p["name"] for p in await c.list_prompts()}
            assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= prompts
            simple = await c.get_prompt("simple-prompt")
            assert simple["messages"][0]["role"] == "user"
            args = await c.get_prompt("args-prompt", {"city": "Paris"})
            assert "Paris" in args["messages"][0]["content"]["text"]
            embedded = await c.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
            assert embedded["messages"][1]["content"]["type"] == "resource"
            done = await c.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "Eng")
            assert done["values"] == ["Engineering"]
            await c.ping()

    arun(go(), timeout=60)


def test_answers_sampling_elicitation_and_roots_and_gets_notifications(everything, tmp_path):
    sampled: list[dict] = []
    notes: list[tuple[str, dict]] = []

    async def sampling(params):
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "hello from the model"}, "model": "test-llm"}

    def elicitation(params):
        return {"name": "Ada Lovelace", "check": True}

    async def go():
        updated, logged = asyncio.Event(), asyncio.Event()

        def on_notification(method, params):
            notes.append((method, params))
            if method == "notifications/resources/updated":
                updated.set()
            if method == "notifications/message":
                logged.set()

        async with Client(
            everything,
            sampling=sampling,
            elicitation=elicitation,
            roots=[tmp_path],
            on_notification=on_notification,
            on_log=lambda p: None,
            timeout=30,
        ) as c:
            tools = {t["name"] for t in await c.list_tools()}
            assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= tools

            r = await c.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
            assert "hello from the model" in r["content"][0]["text"] and "test-llm" in r["content"][0]["text"]
            assert sampled[0]["maxTokens"] == 20
            assert sampled[0]["messages"][0]["content"]["text"].endswith("say hi")

            r = await c.call_tool("trigger-elicitation-request", {})
            text = "\n".join(b["text"] for b in r["content"])
            assert "Name: Ada Lovelace" in text
            # The fields we left out were filled from the schema's defaults.
            assert "Favorite Integer: 42" in text and "Favorite Number: 3.14" in text
            assert '"untitledSingleSelectEnum": "Monica"' in text

            r = await c.call_tool("get-roots-list", {})
            assert tmp_path.resolve().as_uri() in r["content"][0]["text"]

            uri = "demo://resource/dynamic/text/1"
            await c.subscribe(uri)
            await c.call_tool("toggle-subscriber-updates", {})  # sends an update at once, then every 5 s
            await within(updated.wait())
            assert ("notifications/resources/updated", {"uri": uri}) in notes
            await c.unsubscribe(uri)

            await c.set_logging_level("debug")
            await c.call_tool("toggle-simulated-logging", {})
            await within(logged.wait())

    arun(go(), timeout=60)


def test_task_required_tools_are_called_as_2025_11_25_tasks(everything):
    """simulate-research-query is listed with execution.taskSupport "required" by a server that
    announces tasks.requests.tools.call: the client sends it with "task" and waits on
    tasks/result, answering the elicitation the task sends meanwhile (its input_required)."""
    asked: list[str] = []

    def elicitation(params):
        asked.append(params["message"])
        return {"interpretation": "technical"}

    async def go():
        async with Client(everything, timeout=30, elicitation=elicitation) as c:
            assert (
                c.negotiated_version == "2025-11-25" and "call" in c.server_capabilities["tasks"]["requests"]["tools"]
            )
            plain, unclear = await asyncio.gather(
                c.call_tool("simulate-research-query", {"topic": "bats"}),
                c.call_tool("simulate-research-query", {"topic": "python", "ambiguous": True}),
            )
            assert plain["content"][0]["text"].startswith("# Research Report: bats")
            assert unclear["content"][0]["text"].startswith("# Research Report: python (technical)")
            assert len(asked) == 1 and "python" in asked[0]
            assert "_meta" not in plain  # the related-task key is the transport's business
        async with Client(everything, timeout=30, tasks=False) as c:  # without tasks the server refuses it
            refused = await c.call_tool("simulate-research-query", {"topic": "bats"})
            assert refused["isError"] is True and "requires task augmentation" in refused["content"][0]["text"]

    arun(go(), timeout=60)
