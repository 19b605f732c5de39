"""An HTTP server with a small, observable SSE event store: the subject of
tests/faults/test_event_store.py (issue 12, break 1).

    python tests/faults/event_store_server.py PORT SESSION_BYTES TOTAL_BYTES [REDIS_URL]

With REDIS_URL the store is the Redis one (``Server.run("http", state=RedisState(...))``).

Tools: ``big`` (a log message, then ``n`` bytes of text, both on the POST's SSE stream), ``abandoned`` (ends the
SSE connection first, SEP-1699 polling, then returns ``n`` bytes: the answer waits in the event
store for a resumption) and ``store_stats`` (the store's retained bytes, events and evictions).
"""

from __future__ import annotations

import sys

from mcpio import Context, Server
from mcpio._state import MemoryState

server = Server("event-store", version="1.0.0")
bounds = {"max_session_bytes": int(sys.argv[2]), "max_total_bytes": int(sys.argv[3])}
if len(sys.argv) > 4:
    from mcpio._state import RedisState

    state = RedisState(sys.argv[4], **bounds)
else:
    state = MemoryState(**bounds)
store = state.events


@server.tool(max_result_bytes=None)
async def big(n: int, ctx: Context) -> str:
    await ctx.info("working")  # a notification first: the answer follows on an SSE stream
    return "b" * n


@server.tool(max_result_bytes=None)
async def abandoned(n: int, ctx: Context) -> str:
    await ctx.close_sse_stream(retry_ms=60_000)
    return "a" * n


@server.tool
async def store_stats() -> dict[str, int]:
    if hasattr(store, "stats"):
        return await store.stats()
    return {"bytes": store.bytes, "evicted": store.evicted}


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), state=state)
