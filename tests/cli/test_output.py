"""The CLI's pure helpers: cleaning untrusted text, fitting tables, rendering and checking schemas."""

from __future__ import annotations

import pytest

from mcpio._cli._output import clean, content_text, one_line, table
from mcpio._cli._signature import argument_problems, signature, type_text


@pytest.mark.parametrize(
    "raw,shown",
    [
        ("plain text", "plain text"),
        ("a\x1b[2Jb", "ab"),  # CSI: clear screen
        ("a\x1b]0;title\x07b", "ab"),  # OSC ended by BEL
        ("a\x1b]52;c;Zm9v\x1b\\b", "ab"),  # OSC 52 (clipboard) ended by ST
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "alink"),  # hyperlinks
        ("a\x1b]0;never ended", "a"),  # an unterminated OSC swallows nothing after it
        ("a\x9b31mb", "ab"),  # 8-bit CSI
        ("a\x9d0;t\x9cb", "ab"),  # 8-bit OSC ... ST
        ("a\x1bPq#0\x1b\\b", "ab"),  # DCS (sixel)
        ("x\ry", "xy"),  # a carriage return would overwrite the line
        ("bell\x07 back\x08 del\x7f nul\x00", "bell back del nul"),
        ("line1\nline2\ttab", "line1\nline2\ttab"),  # newline and tab are kept
        ("crlf\r\n", "crlf\n"),
        ("rtl\u202eoverride", "rtloverride"),  # bidirectional override
        ("unicode é ✓", "unicode é ✓"),
    ],
)
def test_clean(raw, shown):
    assert clean(raw) == shown


def test_one_line_and_content_are_cleaned():
    assert one_line("a\nb\x1b[31m\tc") == "a b c"
    assert content_text({"type": "text", "text": "\x1b]0;t\x07ok"}) == "ok"
    assert content_text({"type": "resource_link", "uri": "x://\x1b[2J", "name": "n"}) == "[resource link x:// (n)]"


def test_table_fits_the_width_and_cuts_with_an_ellipsis():
    rows = [["short", "a" * 50, "b" * 80], ["x", "y", "z"]]
    text = table(["NAME", "ARGUMENTS", "DESCRIPTION"], rows, total=60)
    assert all(len(line) <= 60 for line in text.splitlines())
    assert text.splitlines()[2].startswith("short  ") and "…" in text
    wide = table(["NAME", "ARGUMENTS", "DESCRIPTION"], rows, total=1000)
    assert "b" * 80 in wide and "…" not in wide


SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "times": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["loud", "quiet"]},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "where": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
        "level": {"$ref": "#/$defs/Level"},
        "meta": {"type": "object", "additionalProperties": {"type": "number"}},
        "anything": {},
    },
    "required": ["text"],
    "$defs": {
        "Point": {"type": "object", "properties": {"x": {"type": "number"}}},
        "Level": {"type": "string", "enum": ["low", "high"]},
    },
}


def test_types_are_rendered_from_the_schema():
    props = SCHEMA["properties"]
    shown = {k: type_text(v, SCHEMA) for k, v in props.items()}
    assert shown == {
        "text": "str",
        "times": "int",
        "tags": "list[str]",
        "mode": '"loud" | "quiet"',
        "limit": "int | None",
        "where": "Point | None",
        "level": '"low" | "high"',
        "meta": "dict[str, float]",
        "anything": "any",
    }
    assert signature("t", SCHEMA).startswith("t(text: str, times?: int, tags?: list[str]")
    assert type_text({"type": ["string", "null"]}) == "str | None"


def test_arguments_are_checked_against_the_schema():
    assert argument_problems({"text": "hi", "times": 2, "where": {"x": 1}, "level": "low"}, SCHEMA) == []
    assert argument_problems({"text": "hi", "tims": 2}, SCHEMA) == ["unknown argument 'tims' (did you mean 'times'?)"]
    assert argument_problems({}, SCHEMA) == ["missing required argument 'text'"]
    assert argument_problems({"text": 1, "mode": "x", "tags": [1], "level": "mid"}, SCHEMA) == [
        "argument 'text' must be str, not 1",
        'argument \'mode\' must be "loud" | "quiet", not "x"',
        "argument 'tags' must be list[str], not [1]",
        'argument \'level\' must be "low" | "high", not "mid"',
    ]
    # a schema that says nothing about properties, or allows more, accepts other names
    assert argument_problems({"x": 1}, {"type": "object"}) == []
    assert argument_problems({"x": 1}, {"type": "object", "properties": {"a": {}}, "additionalProperties": True}) == []
