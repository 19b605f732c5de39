"""Must fail mypy: .data has the declared result type, not another."""

import msgspec

from mcpio import Client


class Sum(msgspec.Struct):
    total: int


async def total(client: Client) -> str:
    result = await client.call_tool("add", {"parts": [1]}, result_type=Sum)
    return result.data.total  # E: Incompatible return value type (got "int", expected "str")
