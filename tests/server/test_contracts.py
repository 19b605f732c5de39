"""Issue 34, "contracts the server does not keep": what a server promises in tools/list (the
input and output schemas) it keeps on every call, in both eras, met through a real Client (in
memory for each era, and a real ``mcpio run`` process where the server's log matters)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio import Client, InvalidParams, ResourceNotFound, Server

ERAS = ["legacy", "modern"]


def contract_server() -> Server:
    server = Server("contracts")

    @server.tool()
    def count(text: str) -> int:
        """A tool with a bug: its annotation says int, it returns a string."""
        return "five" if text == "bug" else len(text)

    @server.tool()
    def ratio(a: int, b: int) -> float:
        """An int for a float is fine: nothing is lost."""
        return a // b

    @server.tool()
    def search(query: str, limit: int = 10) -> list[str]:
        """Search."""
        return [query] * limit

    return server


@pytest.mark.parametrize("era", ERAS)
def test_a_result_that_breaks_its_annotation_fails_the_call_clearly(era: str) -> None:
    async def go() -> None:
        async with Client(contract_server(), era=era) as client:
            bad = await client.call_tool("count", {"text": "bug"})
            assert bad.is_error and bad.structured_content is None
            assert bad.text.startswith("Error executing tool count: its result does not match its output schema")
            assert "count() returned str 'five', which does not match its return annotation int" in bad.text
            good = await client.call_tool("count", {"text": "abc"})
            assert not good.is_error and good.data == 3
            lenient = await client.call_tool("ratio", {"a": 7, "b": 2})
            assert not lenient.is_error and lenient.data == 3

    asyncio.run(go())


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_argument_is_refused_with_did_you_mean(era: str) -> None:
    async def go() -> None:
        async with Client(contract_server(), era=era) as client:
            (tool,) = [t for t in await client.list_tools() if t.name == "search"]
            assert tool.input_schema["additionalProperties"] is False
            with pytest.raises(InvalidParams) as info:
                await client.call_tool("search", {"query": "a", "limt": 2})
            assert info.value.code == -32602
            assert "unknown argument 'limt' (did you mean 'limit'?)" in info.value.message
            assert "it takes query, limit" in info.value.message
            ok = await client.call_tool("search", {"query": "a", "limit": 2})
            assert ok.data == ["a", "a"]

    asyncio.run(go())


def test_mcpio_run_logs_a_broken_result_as_the_tools_bug(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(
        "from mcpio import Server\n\nserver = Server('s')\n\n\n@server.tool()\ndef count() -> int:\n    return 'five'\n"
    )
    stderr: list[str] = []

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(path)], on_stderr=stderr.append) as client:
            assert (await client.call_tool("count")).is_error

    asyncio.run(go())
    log = "\n".join(stderr)
    assert "mcpio: error: tool count broke its return annotation (a bug in the tool)" in log
    assert "returned str 'five'" in log


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "@server.resource\ndef notes() -> str:\n    return 'n'\n",
            'TypeError: @server.resource needs the resource\'s URI: write @server.resource("notes://notes")',
        ),
        (
            "@server.resource('notes')\ndef notes() -> str:\n    return 'n'\n",
            "ValueError: resource URI 'notes': a URI starts with its scheme",
        ),
        (
            "@server.tool(name='add note')\ndef add(text: str) -> str:\n    return text\n",
            "ValueError: tool name 'add note': the name must be 1-64 characters of A-Z a-z 0-9 _ . / -",
        ),
    ],
    ids=["bare resource", "resource without scheme", "tool name with a space"],
)
def test_registration_mistakes_fail_at_registration(tmp_path: Path, code: str, message: str) -> None:
    path = tmp_path / "server.py"
    path.write_text(f"from mcpio import Server\n\nserver = Server('s')\n\n\n{code}")
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "list", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert message in done.stderr
    assert "server.py:6:" in done.stderr  # the user's line, not mcpio's


@pytest.mark.parametrize("era", ERAS)
def test_str_and_int_tools_give_data_by_one_rule(era: str) -> None:
    server = Server("typed")

    @server.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool()
    def length(name: str) -> int:
        return len(name)

    @server.tool()
    def fail() -> str:
        raise ValueError("no")

    async def go() -> None:
        async with Client(server, era=era) as client:
            assert (await client.call_tool("greet", {"name": "Ada"})).data == "Hello, Ada!"
            assert (await client.call_tool("length", {"name": "Ada"})).data == 3
            failed = await client.call_tool("fail")
            assert failed.is_error and failed.data is None and "ValueError: no" in failed.text

    asyncio.run(go())


@pytest.mark.parametrize(("era", "code"), [("legacy", -32002), ("modern", -32602)])
def test_a_template_that_finds_nothing_answers_the_eras_not_found(era: str, code: int) -> None:
    server = Server("notes")
    notes = {1: "Buy milk"}

    @server.resource("notes://{note_id}")
    def note(note_id: int) -> str:
        if note_id not in notes:
            raise ResourceNotFound(f"notes://{note_id}")
        return notes[note_id]

    @server.resource("files://{name}")
    def file(name: str) -> str:
        raise ResourceNotFound()  # no URI given: the one read is reported

    async def go() -> None:
        async with Client(server, era=era) as client:
            assert (await client.read_resource("notes://1"))[0].text == "Buy milk"
            for uri in ("notes://7", "files://a.txt"):
                with pytest.raises(ResourceNotFound) as info:
                    await client.read_resource(uri)
                assert info.value.code == code
                assert info.value.message == f"Resource not found: {uri}"
                assert info.value.data == {"uri": uri}

    asyncio.run(go())


BLOCKER = """\
import asyncio
import time

from mcpio import Server

server = Server("blocking")


@server.tool()
async def blocker() -> str:
    time.sleep(0.4)  # the mistake: a blocking call in an async def
    return "done"


@server.tool()
async def polite() -> str:
    await asyncio.sleep(0.4)
    return "done"


@server.tool(inline=True)  # vouched never to block (as a proxy's forwarding is): not watched
async def vouched() -> str:
    time.sleep(0.2)
    return "done"
"""


def test_an_async_tool_that_blocks_the_loop_is_named_in_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(BLOCKER)
    stderr: list[str] = []

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(path)], on_stderr=stderr.append) as client:
            assert (await client.call_tool("polite")).data == "done"
            assert (await client.call_tool("vouched")).data == "done"
            assert (await client.call_tool("blocker")).data == "done"
            await client.ping()  # the warning is written before the next answer

    asyncio.run(go())
    log = "\n".join(stderr)
    assert "mcpio: warning: async tool 'blocker' held the event loop for 0.4" in log
    assert "time.sleep" in log and "make it a plain def" in log
    assert "polite" not in log and "vouched" not in log
