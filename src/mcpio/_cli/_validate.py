"""Is this a valid JSON Schema? A dependency-free check of the keywords' shapes (2020-12, with
draft-07 spellings accepted), plus ``jsonschema``'s own ``check_schema`` when it is installed.

Only what a host's validator would choke on is reported: wrong keyword types, unknown
``type`` names, bad regular expressions, ``required`` names that are not strings, local
``$ref``s that point nowhere.
"""

from __future__ import annotations

import re
from typing import Any

TYPES = {"null", "boolean", "object", "array", "number", "string", "integer"}
_SCHEMA = (
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_COUNTS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def schema_problems(schema: Any, limit: int = 10) -> list[str]:
    out: list[str] = []
    _check(schema, "", schema, out)
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None and isinstance(schema, dict):
        try:
            jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
        except jsonschema.SchemaError as exc:
            if not out:  # ours saw nothing wrong; report what jsonschema saw
                where = "/".join(str(p) for p in exc.absolute_path)
                out.append(f"is not a valid JSON Schema at {where or '(root)'}: {exc.message}")
        except Exception:  # an unknown $schema dialect and the like: not our finding
            pass
    return out[:limit]


def _check(node: Any, path: str, root: Any, out: list[str]) -> None:
    at = path or "(root)"
    if isinstance(node, bool):
        return
    if not isinstance(node, dict):
        out.append(f"is not a valid JSON Schema at {at}: a schema must be an object or a boolean")
        return
    t = node.get("type")
    names = t if isinstance(t, list) else [t] if t is not None else []
    for name in names:
        if name not in TYPES:
            out.append(f"is not a valid JSON Schema at {at}: unknown type {name!r}")
    for key in _SCHEMA:
        if key in node:
            _check(node[key], f"{path}/{key}", root, out)
    for key in _SCHEMA_MAPS:
        if key in node:
            value = node[key]
            if not isinstance(value, dict):
                out.append(f"is not a valid JSON Schema at {at}: {key!r} must be an object")
                continue
            for k, sub in value.items():
                if key == "patternProperties":
                    _regex(k, f"{path}/{key}", out)
                _check(sub, f"{path}/{key}/{k}", root, out)
    for key in _SCHEMA_LISTS:
        if key in node:
            value = node[key]
            if not isinstance(value, list) or not value:
                out.append(f"is not a valid JSON Schema at {at}: {key!r} must be a non-empty array")
                continue
            for i, sub in enumerate(value):
                _check(sub, f"{path}/{key}/{i}", root, out)
    if "items" in node:
        items = node["items"]
        for i, sub in enumerate(items if isinstance(items, list) else [items]):
            _check(sub, f"{path}/items" + (f"/{i}" if isinstance(items, list) else ""), root, out)
    req = node.get("required")
    if req is not None and (not isinstance(req, list) or not all(isinstance(r, str) for r in req)):
        out.append(f"is not a valid JSON Schema at {at}: 'required' must be an array of strings")
    if "enum" in node and not isinstance(node["enum"], list):
        out.append(f"is not a valid JSON Schema at {at}: 'enum' must be an array")
    for key in _COUNTS:
        if key in node and not (type(node[key]) is int and node[key] >= 0):
            out.append(f"is not a valid JSON Schema at {at}: {key!r} must be a non-negative integer")
    for key in _NUMBERS:
        if key in node and (isinstance(node[key], bool) or not isinstance(node[key], (int, float))):
            out.append(f"is not a valid JSON Schema at {at}: {key!r} must be a number")
    if "pattern" in node:
        _regex(node["pattern"], path, out)
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str):
            out.append(f"is not a valid JSON Schema at {at}: '$ref' must be a string")
        elif ref.startswith("#") and not _resolves(root, ref):
            out.append(f"has a $ref that points nowhere at {at}: {ref}")


def _regex(pattern: Any, path: str, out: list[str]) -> None:
    if not isinstance(pattern, str):
        out.append(f"is not a valid JSON Schema at {path or '(root)'}: a pattern must be a string")
        return
    try:
        re.compile(pattern)
    except re.error as exc:
        out.append(f"is not a valid JSON Schema at {path or '(root)'}: bad pattern {pattern!r} ({exc})")


def _resolves(root: Any, ref: str) -> bool:
    node = root
    for part in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True
