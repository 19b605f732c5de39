"""``k=v`` values become JSON values by the tool's inputSchema (pure functions, no processes)."""

from __future__ import annotations

import pytest

from mcpio._cli._targets import UsageError, coerce, parse_pairs

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "opts": {"type": "object"},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "either": {"type": ["string", "integer"]},
        "colour": {"enum": ["red", "green", 3]},
        "ref": {"$ref": "#/$defs/Level"},
    },
    "$defs": {"Level": {"type": "integer", "minimum": 0}},
}


@pytest.mark.parametrize(
    ("item", "value"),
    [
        ("n=42", 42),
        ("x=2.5", 2.5),
        ("x=3", 3),
        ("flag=true", True),
        ("flag=no", False),
        ("name=42", "42"),
        ("name=", ""),
        ("tags=1,2,3", [1, 2, 3]),
        ("tags=[4, 5]", [4, 5]),
        ("tags=", []),
        ('opts={"a": 1}', {"a": 1}),
        ("maybe=7", 7),
        ("maybe=null", None),
        ("either=12", 12),
        ("either=twelve", "twelve"),
        ("colour=green", "green"),
        ("colour=3", 3),
        ("ref=5", 5),
        ("unknown=12", 12),
        ("unknown=hello", "hello"),
        ('n:="raw"', "raw"),
        ("name:=[1]", [1]),
    ],
)
def test_values_follow_the_schema(item, value):
    key = item.partition("=")[0].rstrip(":")
    assert parse_pairs([item], SCHEMA) == {key: value}


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("n=1.5", "is not an integer"),
        ("x=abc", "is not a number"),
        ("flag=maybe", "is not a boolean"),
        ("opts=[1]", "is not a JSON object"),
        ("tags=1,b", "is not an integer"),
        ("colour=blue", "is not one of"),
        ("maybe=x", "matches none"),
        ("n:={", "is not valid JSON"),
        ("novalue", "KEY=VALUE"),
    ],
)
def test_bad_values_are_usage_errors(item, message):
    with pytest.raises(UsageError, match=message):
        parse_pairs([item], SCHEMA)


def test_prompt_arguments_stay_strings_and_a_schemaless_value_is_guessed():
    assert parse_pairs(["a=1", "b=true"], None) == {"a": "1", "b": "true"}
    assert coerce("[1, 2]", None) == [1, 2]
    assert coerce("plain", {}) == "plain"
