"""What the stdio start-up leaves for later (issue 17: cold start) still behaves as before: the task
store's options are checked when the Server is made, though the store is made at its first use;
a resource update announced before any client connects is a no-op; the worker pool, the method
table and the HTTP glue load when first needed."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from mcpio import Server
from tests.support import uncovered_env


@pytest.mark.parametrize(
    "options", [{"max_tasks": 0}, {"task_ttl": 0}, {"task_poll_interval": -1.0}, {"max_tasks_per_requester": 0}]
)
def test_bad_task_options_are_refused_by_the_constructor(options: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="task_ttl|max_tasks"):
        Server("s", **options)  # type: ignore[arg-type]


def test_the_task_store_is_made_at_first_use_with_the_options() -> None:
    server = Server("s", max_tasks=7, max_tasks_per_requester=3, task_ttl=12.0)
    assert "tasks" not in vars(server)
    store = server.tasks
    assert (store.max_tasks, store.max_per_requester, store.ttl) == (7, 3, 12.0)
    assert server.tasks is store


def test_a_resource_update_before_any_client_is_a_no_op() -> None:
    server = Server("s")

    @server.resource("file:///a.txt")
    def a() -> str:
        return "a"

    asyncio.run(server.notify_resource_updated("file:///a.txt"))


PROBE = """
import sys
from mcpio import Server
server = Server("s")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

@server.resource("users://{id}")
def user(id: str) -> str:
    return id

later = ["mcpio._server._tasks", "mcpio._server._handlers", "mcpio._server._http", "mcpio._server._threads",
         "mcpio._server._subscriptions", "threading", "base64", "weakref"]
print(" ".join(m for m in later if m in sys.modules))
"""


def test_registering_loads_none_of_what_serving_loads_later() -> None:
    # not measured by coverage: its start-up would load threading and the rest into the probe
    env = uncovered_env()
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True, env=env
    )
    assert done.stdout.strip() == "", f"loaded at registration: {done.stdout.strip()}"
