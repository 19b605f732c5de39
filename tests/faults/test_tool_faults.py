"""Tools that fail: raise (any exception, sys.exit and argparse included, sync or async), hang
(cancelled by the client's timeout or by the caller), print to stdout or start children that
write to fd 1 — the server answers each call once, keeps stdout clean, and stays healthy.
Driven through the mcpio Client over real stdio (tests/faults/fault_server.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mcpio import Client, RequestTimeout
from tests.client.support import arun, within
from tests.faults.support import FAULTS

KINDS = {
    "value": "ValueError: bad value",
    "tool": "a clean tool error",
    "exit": "RuntimeError: the handler raised SystemExit: 3",
    "argparse": "RuntimeError: the handler raised SystemExit: 2",
    "keyboard": "RuntimeError: the handler raised KeyboardInterrupt",
    "recursion": "RecursionError: maximum recursion depth exceeded",
    "memory": "MemoryError: pretend we ran out",
    "unprintable": "Weird: (its message could not be read)",
}


class SkippedLines(logging.Handler):
    """Counts the client's "skipping a line from the server that is not JSON" warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())

    def __enter__(self) -> SkippedLines:
        logging.getLogger("mcpio.session").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("mcpio.session").removeHandler(self)


async def alive(client: Client) -> int:
    return (await client.call_tool("alive"))["structuredContent"]["result"]


async def until_alive(client: Client, n: int, seconds: float = 5.0) -> None:
    """Poll the server's count of running ``hang`` calls (each poll is a round trip)."""
    async with asyncio.timeout(seconds):
        while await alive(client) != n:
            await asyncio.sleep(0.01)


def test_tools_that_raise_are_error_results_and_the_server_stays_up():
    async def go():
        async with Client(FAULTS, timeout=10) as client:
            for tool in ("raise", "raise_async"):
                for kind, text in KINDS.items():
                    result = await client.call_tool(tool, {"kind": kind})
                    assert result.get("isError") is True, (tool, kind, result)
                    message = result["content"][0]["text"]
                    assert text in message and "Traceback" not in message, (tool, kind, message)
                    await client.ping()
            assert (await client.call_tool("echo", {"text": "still here"}))["content"][0]["text"] == "still here"
        assert client._transport.returncode == 0  # and it exits cleanly on EOF

    arun(go())


def test_a_hanging_call_is_cancelled_by_the_client_timeout_and_by_the_caller():
    async def go():
        async with Client(FAULTS, timeout=10) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("hang", timeout=0.2)
            await until_alive(client, 0)  # notifications/cancelled stopped it on the server
            task = asyncio.create_task(client.call_tool("hang"))
            await until_alive(client, 1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until_alive(client, 0)
            assert not client.session._pending  # nothing left waiting on the client side either

    arun(go())


def test_stuck_worker_threads_never_stop_the_server_answering():
    # A sync tool stuck in time.sleep cannot be stopped (Python cannot kill a thread): its call
    # times out and is cancelled, its daemon thread is abandoned. With every worker thread stuck,
    # async tools and protocol requests are still served, a sync call times out cleanly, and the
    # process still exits at once on EOF.
    async def go():
        async with Client(FAULTS, timeout=10, grace=1.0) as client:
            calls = [asyncio.create_task(client.call_tool("hang_sync", timeout=0.5)) for _ in range(40)]
            for outcome in await asyncio.gather(*calls, return_exceptions=True):
                assert isinstance(outcome, RequestTimeout), outcome
            await client.ping()
            assert (await client.call_tool("nap", {"ms": 1}))["content"][0]["text"] == "napped 1.0"
            assert len(await client.list_tools()) > 5
            with pytest.raises(RequestTimeout):
                await client.call_tool("echo", {"text": "queued behind the stuck threads"}, timeout=0.3)
            loop = asyncio.get_running_loop()
            started = loop.time()
        assert loop.time() - started < 1.0 and client._transport.returncode == 0

    arun(go())


def test_stdout_noise_from_tools_and_their_children_never_reaches_the_client():
    stderr: list[str] = []

    async def go():
        late = asyncio.Event()

        def on_stderr(line: str) -> None:
            stderr.append(line)
            # two calls, five lines each; counted in the text, since the two grandchildren may
            # write at once (unbuffered, a print is several writes) and run two lines together
            if sum(s.count("spew: late child") for s in stderr) == 10:
                late.set()

        with SkippedLines() as skipped:
            async with Client(FAULTS, timeout=10, on_stderr=on_stderr) as client:
                for i in range(2):
                    assert (await client.call_tool("spew", {"text": f"answer {i}"}))["content"][0][
                        "text"
                    ] == f"answer {i}"
                await within(late.wait(), 10)  # the children went on writing after the tools returned
                await client.ping()
        assert skipped.records == []  # every line the client read was a protocol message

    arun(go())
    for s in ("spew: print to stdout", "spew: raw write to fd 1", "spew: child stdout", "spew: late child 4"):
        assert any(s in line for line in stderr), (s, stderr[-20:])
