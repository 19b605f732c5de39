"""An HTTP server with a small, observable SSE event store: the subject of
tests/faults/test_event_store.py (issue 12, break 1).

    python tests/faults/event_store_server.py PORT SESSION_BYTES TOTAL_BYTES

Tools: ``big`` (a log message, then ``n`` bytes of text, both on the POST's SSE stream), ``abandoned`` (ends the
SSE connection first, SEP-1699 polling, then returns ``n`` bytes: the answer waits in the event
store for a resumption) and ``store_stats`` (the store's retained bytes, events and evictions).
"""

from __future__ import annotations

import sys

from mcpio import Context, Server
from mcpio._transports._http_events import MemoryEventStore

server = Server("event-store", version="1.0.0")
store = MemoryEventStore(max_session_bytes=int(sys.argv[2]), max_total_bytes=int(sys.argv[3]))


@server.tool(max_result_bytes=None)
async def big(n: int, ctx: Context) -> str:
    await ctx.info("working")  # a notification first: the answer follows on an SSE stream
    return "b" * n


@server.tool(max_result_bytes=None)
async def abandoned(n: int, ctx: Context) -> str:
    await ctx.close_sse_stream(retry_ms=60_000)
    return "a" * n


@server.tool
def store_stats() -> dict[str, int]:
    return {"bytes": store.bytes, "events": len(store), "evicted": store.evicted}


if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), event_store=store)
