"""2025-11-25 core tasks over Streamable HTTP (a legacy session): the mcpio client calls a
task-required tool; the task's elicitation reaches it while it waits on tasks/result."""

from __future__ import annotations

import asyncio

from mcpio import Client
from tests.client.test_modern_client import _load
from tests.conftest import EXAMPLES
from tests.support.http import ServerThread


def test_a_core_task_with_elicitation_over_http():
    asked: list[str] = []

    def elicitation(params):
        asked.append(params["message"])
        return {"confirm": True}

    async def go(url: str) -> None:
        async with Client(url, era="legacy", elicitation=elicitation, timeout=10) as c:
            assert c.negotiated_version == "2025-11-25"
            result = await asyncio.wait_for(c.call_tool("purge_table", {"table": "sessions"}), 20)
            assert result == {"content": [{"type": "text", "text": "Purged sessions"}]}
            assert (await c.request("tasks/list"))["tasks"][0]["status"] == "completed"

    with ServerThread(_load(EXAMPLES / "tasks.py").http_app()) as srv:
        asyncio.run(go(srv.url))
    assert asked == ["Delete every row of sessions?"]
