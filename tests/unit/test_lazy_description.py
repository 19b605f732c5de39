"""A tool's docstring description and input schema are made on first use (tools/list, or anything
that reads them), not at registration (issue 17: a server with hundreds of tools answers
``initialize`` sooner); what can fail is still checked at decoration time."""

from __future__ import annotations

import json

import pytest

import mcpio._docstrings as docstrings
from mcpio import Server
from mcpio._versions import RULES


def _look(query: str, limit: int = 10, mode: str = "fast") -> str:
    """Look something up: carefully.

    Args:
        query: what to look for
        limit: at most this many
    """
    return query


def _registered(monkeypatch: pytest.MonkeyPatch) -> tuple[Server, list[str | None]]:
    calls: list[str | None] = []
    real = docstrings.parse_docstring  # _schema imports it at the first description
    monkeypatch.setattr(docstrings, "parse_docstring", lambda doc: calls.append(doc) or real(doc))
    app = Server("t")
    app.add_tool(_look)
    return app, calls


def test_registration_leaves_the_docstring_to_the_first_use(monkeypatch):
    app, calls = _registered(monkeypatch)
    assert calls == []
    tool = app.registry.tools["_look"]
    assert tool.definition(RULES["2025-11-25"]) == {
        "name": "_look",
        "description": "Look something up: carefully.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "limit": {"type": "integer", "description": "at most this many", "default": 10},
                "mode": {"type": "string", "default": "fast"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    }
    [tool.definition(rules) for rules in RULES.values()]
    assert tool.sig.parameters[1].description == "at most this many" and tool.description
    assert len(calls) == 1  # once per function, whatever reads it


@pytest.mark.parametrize("first", ["definition", "parameters", "description", "input_schema", "bind"])
def test_the_definitions_do_not_depend_on_what_is_read_first(monkeypatch, first):
    reference, _ = _registered(monkeypatch)
    expected = json.dumps([reference.registry.tools["_look"].definition(rules) for rules in RULES.values()])
    app, _ = _registered(monkeypatch)
    tool = app.registry.tools["_look"]
    if first == "bind":
        assert tool.sig.bind({"query": "q", "limit": "7"}) == {"query": "q", "limit": 7}  # builds the Struct
    elif first != "definition":
        getattr(tool.sig if first == "parameters" else tool, first)
    assert json.dumps([tool.definition(rules) for rules in RULES.values()]) == expected


def test_bad_signatures_still_fail_at_decoration_time(monkeypatch):
    app, calls = _registered(monkeypatch)

    def star(*names: str) -> str:
        """Doc."""
        return ""

    def unrepresentable(a: object) -> str:
        """Doc."""
        return ""

    for fn, message in [(star, r"\*names is not supported"), (unrepresentable, "cannot be represented")]:
        with pytest.raises(TypeError, match=message):
            app.tool(fn)
    assert calls == []
