"""Issue 34, "errors that hide the cause": what a user sees when their server or their own code
goes wrong, met as they meet it (a real ``mcpio run`` process and its stderr, a real Client)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcpio import Client

BOOM = '''\
from mcpio import Server

server = Server("boom")


@server.tool()
def boom(x: int) -> str:
    """Always fails."""
    raise ValueError(f"cannot handle {x}")
'''


def test_a_tool_that_raises_under_mcpio_run_logs_its_traceback(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(BOOM)
    stderr: list[str] = []

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(path)], on_stderr=stderr.append) as client:
            result = await client.call_tool("boom", {"x": 7})
            assert result.is_error and "ValueError: cannot handle 7" in result.text

    asyncio.run(go())
    log = "\n".join(stderr)
    assert "tool boom raised" in log
    assert "Traceback (most recent call last)" in log
    assert 'server.py", line 9, in boom' in log
    assert "ValueError: cannot handle 7" in log
