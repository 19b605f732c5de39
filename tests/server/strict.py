"""Strict key check: no member a protocol version does not define.

The official MCP schemas never say ``additionalProperties: false``, so a ``title`` sent to a
2024-11-05 client, or ``structuredContent`` to a 2025-03-26 one, validates. A client built from
the older schema may still reject or misread it, and the server is meant to cut every field a
version lacks. ``unknown_members(instance, version, def_name)`` walks the instance along the
schema (resolving ``$ref``, picking the ``anyOf`` branch that validates) and returns the JSON
paths of members whose object schema lists ``properties`` but does not define that member.

Open-ended places are skipped: objects whose schema states ``additionalProperties``, and the
members in :data:`OPEN_MEMBERS` (JSON Schemas, ``_meta``, structured content, data payloads).
"""

from __future__ import annotations

from typing import Any

import jsonschema

from tests.support import wire

# Members whose value is free-form by design (a JSON Schema, a payload, metadata).
OPEN_MEMBERS = frozenset(
    {"inputSchema", "outputSchema", "requestedSchema", "_meta", "structuredContent", "experimental", "data", "metadata"}
)


def _defs(version: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    doc, key = wire._schema(version)
    return doc, key, doc[key]


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _valid(instance: Any, node: dict[str, Any], version: str) -> bool:
    doc, key, _ = _defs(version)
    sub = dict(node)
    sub[key] = doc[key]
    cls = jsonschema.validators.validator_for(doc)
    return cls(sub).is_valid(instance)


def unknown_members(instance: Any, version: str, def_name: str, member: str | None = None) -> list[str]:
    """Paths (``a/b/0/c``) of members ``version``'s schema does not define under ``def_name``
    (or under its property ``member``: the envelopes differ between versions, params do not)."""
    _, _, defs = _defs(version)
    node = _resolve(defs[def_name], defs)
    if member is not None:
        node = node["properties"][member]
    out: list[str] = []
    if isinstance(instance, dict) and "_meta" in instance:  # every params/result may carry _meta
        instance = {k: v for k, v in instance.items() if k != "_meta"}
    _walk(instance, node, defs, version, "", out)
    return out


def _walk(instance: Any, node: dict[str, Any], defs: dict[str, Any], version: str, path: str, out: list[str]) -> None:
    node = _resolve(node, defs)
    for combo in ("anyOf", "oneOf"):
        if combo in node:
            for branch in node[combo]:
                if _valid(instance, _resolve(branch, defs), version):
                    _walk(instance, branch, defs, version, path, out)
                    break
            return
    if isinstance(instance, dict):
        props = dict(node.get("properties", {}))
        for part in node.get("allOf", ()):
            props.update(_resolve(part, defs).get("properties", {}))
        if not props:
            return
        closed = "additionalProperties" not in node
        for k, v in instance.items():
            if k not in props:
                if closed:
                    out.append(f"{path}/{k}".lstrip("/"))
                continue
            if k not in OPEN_MEMBERS:
                _walk(v, props[k], defs, version, f"{path}/{k}", out)
    elif isinstance(instance, list) and isinstance(node.get("items"), dict):
        for i, v in enumerate(instance):
            _walk(v, node["items"], defs, version, f"{path}/{i}", out)


def check_strict(msg: dict[str, Any], version: str, request_method: str | None = None) -> None:
    """Fail on any member ``version`` lacks, in a request, notification or result message."""
    if "method" in msg:
        method = msg["method"]
        name = wire.REQUESTS.get(method, (None,))[0] if "id" in msg else wire.NOTIFICATIONS.get(method)
        target, where, member = msg.get("params"), f"{method} params", "params"
    elif "result" in msg and request_method in wire.REQUESTS:
        name = wire.REQUESTS[request_method][1]
        target, where, member = msg["result"], f"result of {request_method}", None
    else:
        return
    if name is None or target is None or not wire.has_def(version, name):
        return
    extra = unknown_members(target, version, name, member)
    assert not extra, f"{where}: members {extra} are not defined in the {version} schema ({name})\nmessage: {msg}"
