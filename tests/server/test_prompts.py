"""Prompts (spec: server/prompts) and completion (spec: server/utilities/completion)."""

from __future__ import annotations

import enum
from typing import Literal

import pytest

from mcpio import EmbeddedResource, Image, Message, Server, Text
from tests.server.peer import LEGACY, Peer, arun, since

ICON = {"src": "https://example.com/p.png"}
PNG = b"\x89PNG\r\n\x1a\nfake"


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


def prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt(title="Code review", icons=[ICON])
    def review(code: str, language: Literal["python", "rust", "ruby"] = "python") -> str:
        """Review some code.

        Args:
            code: The code to review.
            language: The language it is written in.
        """
        return f"Review this {language} code:\n{code}"

    @server.prompt
    def chat(topic: str) -> list[Message]:
        """A short conversation."""
        return [
            Message("user", f"Tell me about {topic}"),
            Message("assistant", "Gladly."),
            Message("user", [Text("Look at this:"), Image(data=PNG, mime_type="image/png")]),
        ]

    @server.prompt
    def attach() -> Message:
        return Message("user", EmbeddedResource(uri="file:///notes.txt", text="notes", mime_type="text/plain"))

    @server.resource("paint://{color}/{name}")
    def paint(color: Color, name: str) -> str:
        return f"{name} in {color.value}"

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_prompt_arguments_come_from_the_signature_and_docstring(version):
    async def go():
        async with Peer(prompt_server(), version=version) as peer:
            assert peer.init_result["capabilities"]["prompts"] == {"listChanged": True}
            prompts = {p["name"]: p for p in (await peer.call("prompts/list"))["prompts"]}
            assert set(prompts) == {"review", "chat", "attach"}
            r = prompts["review"]
            assert r["description"] == "Review some code."
            args = {a["name"]: a for a in r["arguments"]}
            assert list(args) == ["code", "language"]
            assert args["code"]["required"] is True
            assert args["code"]["description"] == "The code to review."
            assert not args["language"].get("required")
            assert args["language"]["description"] == "The language it is written in."
            assert ("title" in r) == since(version, "2025-06-18")
            assert ("icons" in r) == since(version, "2025-11-25")
            assert "arguments" not in prompts["attach"]

    arun(go())


@pytest.mark.parametrize("version", LEGACY)
def test_get_prompt_renders_strings_messages_images_and_resources(version):
    async def go():
        async with Peer(prompt_server(), version=version) as peer:
            r = await peer.call("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}})
            assert r == {
                "description": "Review some code.",
                "messages": [{"role": "user", "content": {"type": "text", "text": "Review this python code:\nx = 1"}}],
            }
            r = await peer.call("prompts/get", {"name": "review", "arguments": {"code": "fn", "language": "rust"}})
            assert "rust" in r["messages"][0]["content"]["text"]

            r = await peer.call("prompts/get", {"name": "chat", "arguments": {"topic": "owls"}})
            roles = [m["role"] for m in r["messages"]]
            kinds = [m["content"]["type"] for m in r["messages"]]
            assert roles == ["user", "assistant", "user", "user"]
            assert kinds == ["text", "text", "text", "image"]
            assert r["messages"][3]["content"]["mimeType"] == "image/png"

            r = await peer.call("prompts/get", {"name": "attach"})
            assert r["messages"] == [
                {
                    "role": "user",
                    "content": {
                        "type": "resource",
                        "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"},
                    },
                }
            ]

    arun(go())


def test_missing_argument_and_unknown_prompt_are_invalid_params():
    async def go():
        async with Peer(prompt_server()) as peer:
            err = await peer.error("prompts/get", {"name": "review", "arguments": {}})
            assert err["code"] == -32602 and "code" in err["message"]
            err = await peer.error("prompts/get", {"name": "review"})
            assert err["code"] == -32602
            err = await peer.error("prompts/get", {"name": "nope"})
            assert err["code"] == -32602 and "nope" in err["message"]

    arun(go())


# ---------------------------------------------------------------------------- completion
@pytest.mark.parametrize("version", LEGACY)
def test_literal_and_enum_parameters_complete_from_their_values(version):
    async def go():
        async with Peer(prompt_server(), version=version) as peer:
            assert ("completions" in peer.init_result["capabilities"]) == since(version, "2025-03-26")
            r = await peer.call(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "r"}},
            )
            assert r == {"completion": {"values": ["rust", "ruby"], "total": 2, "hasMore": False}}
            r = await peer.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "paint://{color}/{name}"},
                    "argument": {"name": "color", "value": ""},
                },
            )
            assert r["completion"]["values"] == ["red", "green", "blue"]
            r = await peer.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "paint://{color}/{name}"},
                    "argument": {"name": "name", "value": "x"},
                },
            )
            assert r["completion"]["values"] == []

    arun(go())


def test_enum_template_parameter_reads_as_the_enum():
    async def go():
        async with Peer(prompt_server()) as peer:
            contents = (await peer.call("resources/read", {"uri": "paint://green/door"}))["contents"]
            assert contents[0]["text"] == "door in green"
            err = await peer.error("resources/read", {"uri": "paint://mauve/door"})
            assert err["code"] == -32002

    arun(go())


def test_completion_of_an_unknown_prompt_or_a_bad_ref_is_invalid_params():
    async def go():
        async with Peer(prompt_server()) as peer:
            err = await peer.error(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}},
            )
            assert err["code"] == -32602 and "nope" in err["message"]
            err = await peer.error(
                "completion/complete",
                {"ref": {"type": "ref/resource", "uri": "nope://{x}"}, "argument": {"name": "x", "value": ""}},
            )
            assert err["code"] == -32602

    arun(go())


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_user_completer_gets_ref_argument_and_context_and_is_capped_at_100(version):
    server = prompt_server()
    seen = []

    @server.completion
    async def complete(ref, argument, context):
        seen.append((ref, argument, context))
        return [f"{argument['value']}{i}" for i in range(150)]

    async def go():
        async with Peer(server, version=version) as peer:
            params = {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "code", "value": "v"}}
            if since(version, "2025-06-18"):
                params["context"] = {"arguments": {"language": "rust"}}
            r = (await peer.call("completion/complete", params))["completion"]
            assert len(r["values"]) == 100 and r["values"][:2] == ["v0", "v1"]
            assert r["total"] == 150 and r["hasMore"] is True
            ref, argument, context = seen[0]
            assert ref == {"type": "ref/prompt", "name": "review"}
            assert argument == {"name": "code", "value": "v"}
            assert context == ({"arguments": {"language": "rust"}} if since(version, "2025-06-18") else None)

    arun(go())


def test_a_completer_returning_a_completion_object_is_capped_too():
    server = prompt_server()

    @server.completion
    def complete(ref, argument, context):
        return {"values": [str(i) for i in range(300)], "total": 300}

    async def go():
        async with Peer(server) as peer:
            r = (
                await peer.call(
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "code", "value": ""}},
                )
            )["completion"]
            assert len(r["values"]) == 100 and r["total"] == 300 and r["hasMore"] is True

    arun(go())
