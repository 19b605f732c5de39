"""A ``tools/call`` that cannot wait, started eagerly, is answered without coroutines and
without a Context (``Session(answer_now=)``: ``_handlers.answer_now`` -> ``Tool.call_now``,
issue 17), and its answer is byte for byte the one the general path gives.

The same frames go to two sessions of the same server over an ``eager_safe`` in-memory
transport: one as users get it (the plain-function path applies) and one with a pass-through
middleware, which keeps every request on ``on_request``'s coroutines (``answers_at_once`` is
false under middleware). The two sequences of answers must be equal: results, ``isError``
results, ``structuredContent``, the size cap, bad arguments, an unknown tool, a tool that
raises (``ToolError``, an ``MCPError``, a bug, ``sys.exit``), a value that breaks the output
schema, a tool taking a Context, with and without ``expose_errors``, in legacy versions and
in 2026-07-28 (the era's ``_meta`` on every result, a forged ``requestState`` refused), and
a call cancelled in its batch before it started; each answer queued at once (``send_nowait``)
or, when the transport offers no such thing, sent by a Task.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpio import Context, Server
from mcpio._server._tools import Tool
from mcpio._transports._memory import memory_pair
from tests.server.peer import arun, within
from tests.support.differential_tools import add_differential_tools

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


RAN: list[int] = []  # the calls of ``noted`` that ran


def build(*, expose_errors: bool | None, via_session: bool) -> Server:
    server = Server("now", expose_errors=expose_errors)
    add_differential_tools(server)

    @server.tool(inline=True)
    def pair(a: int) -> dict[str, int]:
        """A structured result that is not a scalar."""
        return {"a": a, "twice": 2 * a}

    @server.tool(inline=True, structured_output=False)
    def unstructured(text: str) -> str:
        """Content only."""
        return text

    @server.tool(inline=True)
    def noted(n: int) -> int:
        """Records that it ran."""
        RAN.append(n)
        return n

    @server.tool
    def adaptive(a: int) -> int:
        """A plain def tool: on worker threads until promoted, then inline (answer_now)."""
        return a * 3

    @server.tool(inline=True)
    def with_ctx(a: int, ctx: Context) -> str:
        """Takes a Context: never answered by the plain-function path."""
        return f"{a} {ctx.request_id}"

    if via_session:

        @server.middleware
        async def passthrough(request: Any, call_next: Any) -> Any:
            return await call_next(request)

    return server


CALLS: list[tuple[str, Any]] = [
    ("add", {"a": 1, "b": 2}),
    ("add", {"a": "1", "b": 2}),  # lenient: converted as the signature says
    ("add", {"a": 1}),  # a missing argument
    ("add", None),
    ("add", [1, 2]),
    ("echo", {"text": "héllo"}),
    ("pair", {"a": 4}),
    ("unstructured", {"text": "plain"}),
    ("big", {"n": 10}),
    ("big", {"n": 500}),
    ("fails", {"kind": "tool"}),
    ("fails", {"kind": "protocol"}),
    ("fails", {"kind": "bug"}),
    ("fails", {"kind": "exit"}),
    ("wrong_type", {}),
    ("with_ctx", {"a": 5}),
    ("missing", {}),
    *[("adaptive", {"a": i}) for i in range(40)],  # its probation, then inline
]


def frames(version: str) -> list[dict[str, Any]]:
    modern = version == "2026-07-28"
    out: list[dict[str, Any]] = []
    if not modern:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        out.append({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        out.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, (name, arguments) in enumerate(CALLS):
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if modern:
            params["_meta"] = MODERN
        out.append({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": params})
    # A retry carrying a requestState that does not verify (2026-07-28: refused; before: ignored)
    retry = {"name": "add", "arguments": {"a": 1, "b": 2}, "requestState": "forged", "inputResponses": {}}
    if modern:
        retry["_meta"] = MODERN
    out.append({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": retry})
    if version == "2025-03-26":  # a batch (this version only): a call cancelled before it started is not answered
        cancel = {"requestId": 200, "reason": "changed my mind"}
        out.append(
            [
                {
                    "jsonrpc": "2.0",
                    "id": 200,
                    "method": "tools/call",
                    "params": {"name": "noted", "arguments": {"n": 200}},
                },
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel},
                {
                    "jsonrpc": "2.0",
                    "id": 201,
                    "method": "tools/call",
                    "params": {"name": "noted", "arguments": {"n": 201}},
                },
            ]
        )
    return out


async def answers(server: Server, version: str, nowait: bool) -> list[Any]:
    client, end = memory_pair()
    end.eager_safe = True  # type: ignore[attr-defined]  # as the stdio transport
    if nowait:  # as the stdio transport: answers queued without a coroutine when there is room

        def send_nowait(frame: bytes) -> bool:
            try:
                end._outbox.put_nowait(bytes(frame))
            except asyncio.QueueFull:
                return False
            return True

        end.send_nowait = send_nowait  # type: ignore[attr-defined]
    # else every answer the fast path builds is sent by a Task (Session._sent)
    got: list[Any] = []
    async with server.running():
        session = server.session(end)
        run = asyncio.get_running_loop().create_task(session.run())
        for frame in frames(version):  # one at a time: the adaptive tool's calls go in order
            await client.send(json.dumps(frame).encode())
            if type(frame) is list or "id" in frame:
                got.append(json.loads(await within(client.receive())))
        await end.aclose()
        await client.aclose()
        await within(run)
    assert len(got) == len([f for f in frames(version) if type(f) is list or "id" in f])
    return got


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("expose_errors", [None, False])
@pytest.mark.parametrize("nowait", [True, False])
def test_answer_now_answers_as_the_general_path(
    version: str, expose_errors: bool | None, nowait: bool, monkeypatch: Any
) -> None:
    used: list[str] = []
    call_now = Tool.call_now

    def counted(self: Tool, *args: Any) -> Any:
        used.append(self.name)
        return call_now(self, *args)

    monkeypatch.setattr(Tool, "call_now", counted)
    RAN.clear()
    general = arun(answers(build(expose_errors=expose_errors, via_session=True), version, nowait))
    assert used == []
    ran_general = RAN[:]
    RAN.clear()
    now = arun(answers(build(expose_errors=expose_errors, via_session=False), version, nowait))
    assert RAN == ran_general == ([201] if version == "2025-03-26" else [])  # the cancelled call never ran
    assert now == general
    assert {"add", "fails", "big", "wrong_type", "adaptive"} <= set(used)  # the fast path did answer
    assert "with_ctx" not in used
    assert any(a.get("result", {}).get("isError") for a in now)
    assert any("error" in a for a in now)
