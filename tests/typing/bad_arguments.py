"""Must fail mypy: call_tool's arguments are a dict, and its timeout a number."""

from mcpio import Client


async def call(client: Client) -> None:
    await client.call_tool("add", [1, 2])  # E: matches argument types "str", "list[int]"
    await client.call_tool("add", timeout="soon")  # E: matches argument types "str", "str"
