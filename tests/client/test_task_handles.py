"""The client's task handles (what ``mcpio inspect``'s Tasks panel uses): a tool call started
as a task and not followed (``start_tool_task``), then followed with every status seen
(``follow_tool_task``), in both eras, against an in-process mcpio server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpio import Client, MCPError, Server, TaskCancelled
from mcpio._client._tasks import follow_tool_task, start_tool_task
from tests.support.task_tools import add_task_tools

server = add_task_tools(Server("handles", task_poll_interval=0.01), page_delay=0.02)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_is_started_then_followed_with_its_statuses(era: str) -> None:
    asyncio.run(_started_then_followed(era))


async def _started_then_followed(era: str) -> None:
    async with Client(server, era=era, elicitation=lambda params: {"channel": "#news"}) as client:
        started = await start_tool_task(client, "build_report", {"pages": 2})
        task = started["task"]
        assert task["status"] == "working" and isinstance(task["taskId"], str)
        seen: list[dict[str, Any]] = []
        result = await follow_tool_task(client, task, seen.append)
        assert result["content"][0]["text"] == "Report on sales: 2 pages"
        assert seen[0]["status"] == "working" and seen[-1]["status"] == "completed"
        # a task that asks: the client's elicitation handler answers, the task completes
        statuses: list[str] = []
        asked = (await start_tool_task(client, "publish", {}))["task"]
        result = await follow_tool_task(client, asked, lambda t: statuses.append(t["status"]))
        assert result["content"][0]["text"] == "published notes to #news"
        if era == "modern":  # 2026-07-28: the question is in the task (2025-11-25: a request of its own)
            assert "input_required" in statuses


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_cancelled_by_tasks_cancel_ends_cancelled(era: str) -> None:
    asyncio.run(_cancelled(era))


async def _cancelled(era: str) -> None:
    async with Client(server, era=era) as client:
        task = (await start_tool_task(client, "wait_forever", {}))["task"]
        following = asyncio.ensure_future(follow_tool_task(client, task, lambda t: None))
        await client.request("tasks/cancel", {"taskId": task["taskId"]})
        with pytest.raises(TaskCancelled):
            await asyncio.wait_for(following, 10)


def test_a_tool_without_task_support() -> None:
    asyncio.run(_without_task_support())


async def _without_task_support() -> None:
    async with Client(server, era="modern") as client:  # the server decides: it answers at once
        assert (await start_tool_task(client, "add", {"a": 1, "b": 2}))["result"]["content"][0]["text"] == "3"
    async with Client(server, era="legacy") as client:  # the client asked for a task: refused
        with pytest.raises(MCPError):
            await start_tool_task(client, "add", {"a": 1, "b": 2})
