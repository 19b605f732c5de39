"""The generated wire shapes (tests/support/wire_types): examples round-trip, the schema agrees, no drift.

Every example of the 2026-07-28 specification must parse into the type named by its folder
and serialise back to an equal document (absent stays absent, null stays null), and what we
serialise must validate against the schema's ``$defs`` entry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support import wire_types as _types
from tests.support.wire import SCHEMA_DIR, validate_def

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = SCHEMA_DIR / "2026-07-28" / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))
V26 = "2026-07-28"
V25 = "2025-11-25"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: keys must match exactly, bool is not a number, 50 == 50.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _round_trip(name: str, raw: bytes, version: str = V26) -> tuple[Any, Any]:
    obj = msgspec.json.decode(raw, type=_types.type_of(name, version), strict=True)
    return obj, msgspec.to_builtins(obj)


def test_examples_are_there():
    assert len(EXAMPLE_FILES) >= 100, f"expected the spec's examples under {EXAMPLES}"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_round_trips_to_an_equal_document(path: Path):
    raw = path.read_bytes()
    doc = json.loads(raw)
    obj, back = _round_trip(path.parent.name, raw)
    assert _same(back, doc), (back, doc)
    # the dict route (msgspec.convert, strict) and the public helpers agree with the bytes route
    assert _types.decode(path.parent.name, doc) == obj
    assert _same(json.loads(_types.encode(obj)), doc)
    # what we serialise is what the schema describes
    validate_def(back, V26, path.parent.name)


@pytest.mark.parametrize("version", _types.VERSIONS)
def test_every_def_has_a_usable_type(version):
    table = _types.defs(version)
    schema = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    assert sorted(table) == sorted(schema["$defs"])
    for tp in table.values():
        msgspec.json.Decoder(tp)  # raises if msgspec cannot handle the annotation


def test_shapes_are_frozen_keyword_only_and_tagged():
    from tests.support.wire_types import _v2026_07_28 as t

    text = t.TextContent(text="hi")
    assert msgspec.to_builtins(text) == {"type": "text", "text": "hi"}
    with pytest.raises(AttributeError):
        text.text = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.TextContent("hi")  # type: ignore[misc]
    assert t.CallToolRequest.__struct_config__.tag == "tools/call"
    assert t.CallToolRequest.__struct_config__.tag_field == "method"
    block = _types.decode("ContentBlock", {"type": "image", "data": "AAAA", "mimeType": "image/png"})
    assert isinstance(block, t.ImageContent)


def test_absent_stays_absent_and_null_stays_null():
    from tests.support.wire_types import _v2025_11_25 as t

    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": None,
    }
    obj = _types.decode("Task", task, version=V25)
    assert obj.ttl is None and obj.pollInterval is msgspec.UNSET
    assert _types.to_builtins(obj) == task
    validate_def(_types.to_builtins(obj), V25, "Task")
    with pytest.raises(msgspec.ValidationError, match="ttl"):
        _types.decode("Task", {k: v for k, v in task.items() if k != "ttl"}, version=V25)
    assert isinstance(obj, t.Task)


def test_meta_is_renamed_and_kept_as_a_dict():
    doc = {"type": "text", "text": "x", "_meta": {"io.modelcontextprotocol/related": {"a": 1}, "k": None}}
    obj = _types.decode("TextContent", json.dumps(doc).encode())
    assert obj.meta == doc["_meta"]
    assert _types.to_builtins(obj) == doc


LEGACY = {  # 2025-11-25 has no examples folder: a few canonical messages
    "InitializeRequest": {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": V25,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "c", "version": "1"},
        },
    },
    "InitializeResult": {
        "protocolVersion": V25,
        "capabilities": {"tools": {"listChanged": False}, "logging": {}},
        "serverInfo": {"name": "s", "version": "1", "icons": [{"src": "https://x/i.png"}]},
    },
    "CallToolResult": {
        "content": [{"type": "text", "text": "hi"}, {"type": "resource", "resource": {"uri": "a:b", "text": "t"}}],
        "structuredContent": {"n": 1},
        "isError": False,
    },
    "ListToolsResult": {
        "tools": [
            {
                "name": "add",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "additionalProperties": False,
                    "$defs": {},
                },
            }
        ]
    },
    "JSONRPCErrorResponse": {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope", "data": None}},
    "ProgressNotification": {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 0.5, "total": 1},
    },
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_messages_round_trip(name):
    doc = LEGACY[name]
    _, back = _round_trip(name, json.dumps(doc).encode(), V25)
    assert _same(back, doc), (back, doc)
    validate_def(back, V25, name)


def test_built_objects_validate_against_the_schema():
    from tests.support.wire_types import _v2026_07_28 as t

    result = t.CallToolResult(
        content=[t.TextContent(text="4"), t.ImageContent(data="AA==", mimeType="image/png")],
        resultType="complete",
        structuredContent={"sum": 4},
    )
    validate_def(_types.to_builtins(result), V26, "CallToolResult")
    meta = {"io.modelcontextprotocol/protocolVersion": V26, "io.modelcontextprotocol/clientCapabilities": {}}
    request = t.CallToolRequest(id=7, jsonrpc="2.0", params=t.CallToolRequestParams(meta=meta, name="add"))
    validate_def(json.loads(_types.encode(request)), V26, "CallToolRequest")


@pytest.mark.parametrize(
    ("name", "doc", "where"),
    [
        ("TextContent", {"type": "image", "text": "x"}, "type"),  # wrong tag
        ("ContentBlock", {"type": "video", "data": "x"}, "type"),  # unknown tag in a union
        ("ContentBlock", {"text": "x"}, "type"),  # a union needs its tag
        ("TextContent", {"type": "text"}, "text"),  # missing required field
        ("CallToolRequest", {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, "params"),
        (
            "CallToolRequest",
            {"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"_meta": {}, "name": "x"}},
            "jsonrpc",
        ),  # wrong const
        ("CancelledNotificationParams", {"requestId": True}, "requestId"),  # strict: bool is not an id
        ("CancelledNotificationParams", {"requestId": 1.5}, "requestId"),
        ("Tool", {"name": "t", "title": None, "inputSchema": {"type": "object"}}, "title"),  # null not allowed
        ("Annotations", {"priority": 1.5}, "priority"),  # maximum: 1
        ("LoggingLevel", "loud", None),  # enum
    ],
)
def test_rejects_what_the_schema_rejects(name, doc, where):
    with pytest.raises(msgspec.ValidationError) as info:
        _types.decode(name, doc)
    if where:
        assert where in str(info.value)
    with pytest.raises(msgspec.ValidationError):
        _types.decode(name, json.dumps(doc).encode())


def test_unknown_names_and_versions_are_reported():
    with pytest.raises(KeyError, match="NoSuchThing"):
        _types.decode("NoSuchThing", {})
    with pytest.raises(ValueError, match="1999-01-01"):
        _types.decode("TextContent", {}, version="1999-01-01")


def test_generated_modules_match_the_generator(tmp_path):
    """Re-generate into a temp dir: the committed modules never drift from schema + generator."""
    cmd = [sys.executable, str(ROOT / "tools" / "gen_types.py"), "--schema-dir", str(SCHEMA_DIR), "--out-dir"]
    subprocess.run([*cmd, str(tmp_path / "a")], check=True, capture_output=True)
    subprocess.run([*cmd, str(tmp_path / "b")], check=True, capture_output=True)
    committed = ROOT / "tests" / "support" / "wire_types"
    for version in _types.VERSIONS:
        name = f"_v{version.replace('-', '_')}.py"
        fresh = (tmp_path / "a" / name).read_bytes()
        assert fresh == (tmp_path / "b" / name).read_bytes(), "the generator is not deterministic"
        assert fresh == (committed / name).read_bytes(), f"{name} is stale: run python tools/gen_types.py"
        assert fresh.startswith(b"# Generated by tools/gen_types.py from schema/" + version.encode())


def test_the_package_does_not_ship_the_wire_types():
    """They are a test aid now: the client's typed results are views of the wire dicts."""
    out = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('mcpio._types'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "None"


def test_the_schemas_in_the_repository_are_the_shared_ones() -> None:
    """``schemas/mcp-schema`` (what a clone anywhere tests against) holds the same files as the
    workspace's shared/ folder beside the checkout, when there is one."""
    copy = ROOT / "schemas" / "mcp-schema"
    shared = ROOT.parent / "shared" / "mcp-schema"
    if not shared.is_dir():
        pytest.skip("no shared/ folder beside this checkout")
    files = sorted(p.relative_to(shared) for p in shared.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
    for f in files:
        assert (shared / f).read_bytes() == (copy / f).read_bytes(), f
