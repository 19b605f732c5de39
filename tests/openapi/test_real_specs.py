"""Large real-world OpenAPI documents (tests/openapi/specs.py: GitHub 3.0.3, OpenAI, Anthropic and
Cohere 3.1.0, Azure OpenAI 3.0.0): every operation is converted or skipped with a reason, every
tool name is valid and unique, every generated input and output schema is valid JSON Schema 2020-12,
and a server made from each lists its tools through a real client."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from typing import Any

import jsonschema
import pytest

from mcpio import Client, Server
from mcpio._openapi._build import analyze
from mcpio._openapi._operations import METHODS
from tests.openapi.specs import all_specs

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SPECS = all_specs()
check = jsonschema.Draft202012Validator.check_schema


@functools.cache
def analyzed(name: str) -> tuple[dict[str, Any], str, Any, dict[str, str]]:
    return analyze(str(SPECS[name]))


def _operations(doc: dict[str, Any]) -> int:
    return sum(1 for item in doc["paths"].values() for m in METHODS if isinstance(item.get(m), dict))


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its $defs and with its properties' names and schemas replaced by
    positions and ``true`` (what is left to check once each property schema is checked)."""
    names = {k: f"p{i}" for i, k in enumerate(schema.get("properties", {}))}
    out = {k: v for k, v in schema.items() if k not in ("$defs", "properties", "required")}
    out["properties"] = dict.fromkeys(names.values(), True)
    if "required" in schema:
        out["required"] = [names.get(r, r) for r in schema["required"]]
    return out


def _check_all(schemas: list[dict[str, Any]]) -> None:
    """check_schema of every schema, in one call over the distinct parts: each property schema,
    each object's shape and each $defs entry (they repeat: GitHub's 1,200 input schemas have 1,300
    distinct parts, and the metaschema check of each schema on its own takes a minute)."""
    parts: dict[str, Any] = {}
    for schema in schemas:
        for part in [*schema.get("$defs", {}).values(), *schema.get("properties", {}).values(), _shape(schema)]:
            parts[json.dumps(part, sort_keys=True)] = part
    check({"$defs": {str(i): part for i, part in enumerate(parts.values())}})


@pytest.mark.parametrize("name", list(SPECS))
def test_every_operation_is_a_valid_tool_or_skipped_with_a_reason(name: str):
    doc, _, converted, _ = analyzed(name)
    assert len(converted.operations) + len(converted.skipped) == _operations(doc)
    assert len(converted.operations) >= 6
    for label, reason in converted.skipped:
        assert reason and label.split()[0] in {m.upper() for m in METHODS} | {"*"}
    names = [op.name for op in converted.operations]
    assert len(set(names)) == len(names) and all(NAME.match(n) for n in names)
    for op in converted.operations:
        assert op.input_schema["type"] == "object"
        assert op.output_schema is None or op.output_schema["type"] == "object"
        for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', str(op.input_schema).replace("'", '"')):
            assert ref in op.input_schema["$defs"]  # every reference resolves inside the tool's own schema
    _check_all([op.input_schema for op in converted.operations])
    if name in ("cohere", "azure-openai"):  # the others' output schemas reach hundreds of response schemas: 10 s+ each
        _check_all([op.output_schema for op in converted.operations if op.output_schema])


def test_github_skips_only_what_it_cannot_send_and_lists_through_a_client():
    doc, _, converted, _ = analyzed("github")
    assert doc["openapi"].startswith("3.0") and len(converted.operations) > 1000
    assert converted.skipped == [
        (
            "POST /repos/{owner}/{repo}/releases/{release_id}/assets",
            "its request body is application/octet-stream (JSON, form, multipart and text/plain are served)",
        )
    ]
    server = Server.from_openapi(doc)  # the document read once by this module

    async def go() -> None:
        async with Client(server) as c:
            tools = {t["name"]: t for t in await c.list_tools()}
            assert len(tools) == len(converted.operations)
            get = tools["repos_get"]  # operationId repos/get: "/" is outside the 2025-11-25 rule
            assert get["inputSchema"]["required"] == ["owner", "repo"] and "outputSchema" in get

    asyncio.run(go())
