"""``completion/complete`` through ``Server.proxy`` fails as every forwarded request does when its
upstream fails: with the upstream's own error as it came, and with -32603 naming the upstream when
it cannot be reached (the error ``resources/read`` and ``prompts/get`` give). It answered an empty
completion for both, which tells a host there is nothing to complete."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from mcpio import Client, InvalidParams, MCPError, Server
from tests.client.support import arun

UPSTREAM = Path(__file__).parent / "upstream.py"


def test_the_upstreams_completion_error_reaches_the_client_as_it_came():
    """The upstream refuses an argument its prompt does not have (-32602, its message): the
    client of the proxy gets that error, as it gets the upstream's error of ``prompts/get``."""
    upstream = Server("upstream")

    @upstream.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @upstream.completion
    def complete(ref, argument, context):
        if argument["name"] != "name":
            raise InvalidParams(f"prompt greet has no argument {argument['name']!r}")
        return ["Ada"]

    async def go() -> None:
        async with Client(Server.proxy(upstream, name="up")) as c:
            ref = {"type": "ref/prompt", "name": "greet"}
            assert (await c.complete(ref, "name", "A"))["values"] == ["Ada"]
            with pytest.raises(InvalidParams, match="prompt greet has no argument 'nmae'"):
                await c.complete(ref, "nmae", "A")
            with pytest.raises(InvalidParams):  # the upstream's refusal of prompts/get: the same rule
                await c.get_prompt("greet", {"nmae": "A"})

    arun(go(), timeout=60)


def test_a_completion_whose_upstream_cannot_be_reached_is_the_error_a_read_gets(tmp_path: Path):
    """The upstream (a real subprocess) dies and cannot start again (its program is gone):
    ``completion/complete`` fails with -32603 naming the upstream, as ``resources/read`` does."""
    program = tmp_path / "upstream.py"
    shutil.copy(UPSTREAM, program)

    async def go() -> None:
        async with Client(Server.proxy([sys.executable, str(program)], name="up"), timeout=60) as c:
            pid = (await c.call_tool("pid", {})).data
            program.unlink()
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(MCPError) as read:
                await c.read_resource("note://1")
            with pytest.raises(MCPError) as completed:
                await c.complete({"type": "ref/resource", "uri": "note://{id}"}, "id", "1")
            for failed in (read.value, completed.value):
                assert failed.code == -32603 and str(failed).startswith("upstream 'up' "), failed

    arun(go(), timeout=60)
