"""A server that corrupts its stdout (tests/faults/garbage_server.py): banners, invalid UTF-8,
half lines, JSON that is not a message, answers to ids never sent, a 1 MiB junk line, deep
nesting, answers split across writes, CRLF. The mcpio client skips and logs each bad line and
keeps working; a server that dies mid-answer fails the call promptly with its exit code and
stderr (pain point #5: lenient clients, never a dead session over one line)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mcpio import Client, ServerExited
from tests.client.support import arun
from tests.faults.support import GARBAGE


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.parametrize(
    "flags",
    [["--banner", "--junk"], ["--junk", "--split", "--crlf"], ["--split"]],
    ids=["junk", "junk-split-crlf", "split"],
)
def test_the_client_skips_garbage_lines_and_keeps_working(flags):
    records = Records()
    logger = logging.getLogger("mcpio.session")
    logger.addHandler(records)
    try:

        async def go():
            async with Client([*GARBAGE, *flags], timeout=10) as client:
                assert client.server_info["name"] == "garbage"
                results = [await client.call_tool("say", {"text": f"hi {i}"}) for i in range(10)]
                assert [r["content"][0]["text"] for r in results] == [f"hi {i}" for i in range(10)]
                # concurrent calls: answers never cross, whatever comes between them
                many = await asyncio.gather(*(client.call_tool("say", {"text": str(i)}) for i in range(50)))
                assert [r["content"][0]["text"] for r in many] == [str(i) for i in range(50)]
                assert [t["name"] for t in await client.list_tools()] == ["say"]
                await client.ping()

        arun(go())
    finally:
        logger.removeHandler(records)
    skipped = [m for m in records.messages if m.startswith("skipping a line from the server that is not JSON")]
    if "--junk" in flags:
        assert skipped, "the junk should have been logged"
        assert all(len(m) < 400 for m in skipped)  # a 1 MiB junk line is not logged whole
    else:
        assert not skipped


def test_a_server_that_dies_mid_answer_fails_the_call_promptly():
    async def go():
        async with Client([*GARBAGE, "--junk"], timeout=30) as client:
            await client.call_tool("say", {"text": "fine"})
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(ServerExited) as info:
                await client.call_tool("say", {"text": "die"})
            assert loop.time() - started < 2.0
            assert info.value.exit_code == 5
            assert "giving up mid-answer" in info.value.stderr_tail
            with pytest.raises(ServerExited):
                await client.ping()

    arun(go())
