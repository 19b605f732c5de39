"""The scalar fast path of result building (``_schema._jsonable``, ``_content.json_text``) writes
exactly what the general path (msgspec) writes, for every value it takes, and leaves subclasses
(IntEnum, bool-like ints) and floats to the general path."""

from __future__ import annotations

import enum

import msgspec
import pytest

from mcpio._content import json_text
from mcpio._schema import _jsonable


class Level(enum.IntEnum):
    LOW = 1


class Name(enum.StrEnum):
    A = "a"


@pytest.mark.parametrize(
    "value", [0, -5, 10**30, -(10**40), True, False, None, "", "x", 'é\n"q"', 1.5, float("nan"), Level.LOW, Name.A]
)
def test_fast_path_matches_msgspec(value):
    assert json_text(value) == msgspec.json.encode(value).decode()
    expected = msgspec.json.decode(msgspec.json.encode(value))
    got = _jsonable(value)
    assert type(got) is type(expected) and (got == expected or (got != got and expected != expected))


@pytest.mark.parametrize("value", [0, -5, 10**30, True, None, "", "x", 'é\n"q"', 1.5, Level.LOW, Name.A])
def test_tool_result_scalar_fast_path_matches_general_path(value):
    """``Tool.result`` builds an int or str result at once; it must equal the general rule: the
    structured ``{"result": …}`` plus its JSON text (a string is its own text), spec 2025-06-18."""
    from mcpio._server._tools import Tool
    from mcpio._versions import RULES

    def f() -> int | str | bool | float | None:
        return value

    tool = Tool.from_function(f)
    data = _jsonable(value)
    expected = {
        "content": [{"type": "text", "text": data if isinstance(data, str) else json_text(data)}],
        "structuredContent": {"result": data},
    }
    got = tool.result(value, RULES["2025-11-25"])
    assert got == expected
    assert [type(b["text"]) for b in got["content"]] == [str]
    assert type(got["structuredContent"]["result"]) is type(data)
