"""Must fail mypy: a misspelt attribute of a typed result."""

from mcpio import Client


async def names(client: Client) -> list[str]:
    return [t.nme for t in await client.list_tools()]  # E: "Tool" has no attribute "nme"
