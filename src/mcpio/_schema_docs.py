"""JSON Schema documents as plain dicts: cleaned of ``title`` keywords with enum refs inlined,
``$defs`` cut to what a schema reaches, ``$ref`` resolved one level. Pure, no types: what
``_schema`` does to the schemas it generates (split from it to keep modules small)."""

from __future__ import annotations

from typing import Any

REF = "#/$defs/"

_NAMED = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})
_SUB = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
_DATA = frozenset({"default", "enum", "const", "examples"})


def clean(node: Any, enums: dict[str, Any]) -> Any:
    """Copy of a schema with ``title`` keywords dropped, enum refs inlined, enum ``type`` added."""
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF) and ref[len(REF) :] in enums:
        node = {**enums[ref[len(REF) :]], **{k: v for k, v in node.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _NAMED and isinstance(value, dict):
            out[key] = {n: clean(s, enums) for n, s in value.items()}
        elif key in _SUB:
            out[key] = clean(value, enums)
        elif key in _LISTS and isinstance(value, list):
            out[key] = [clean(s, enums) for s in value]
        else:
            out[key] = value
    if isinstance(out.get("enum"), list) and "type" not in out:
        from ._schema_errors import json_type  # with the first enum (not at start-up)

        kinds = {json_type(v) for v in out["enum"]}
        if {"integer", "number"} <= kinds:
            kinds.discard("integer")
        rest = sorted(kinds - {"null"})
        if len(rest) == 1 and rest[0] in ("string", "integer", "number", "boolean"):  # homogeneous
            out["type"] = [rest[0], "null"] if "null" in kinds else rest[0]
    return out


def reachable(root: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``defs`` that ``root`` refers to, directly or through other defs."""
    seen: set[str] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            key = ref[len(REF) :] if isinstance(ref, str) and ref.startswith(REF) else None
            if key in defs and key not in seen:
                seen.add(key)
                stack.append(defs[key])
            stack.extend(v for k, v in node.items() if k not in _DATA)
        elif isinstance(node, list):
            stack.extend(node)
    return {k: v for k, v in defs.items() if k in seen}


def attach_defs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if not defs:  # nothing to attach: no need to walk the schema
        return schema
    used = reachable(schema, defs)
    if used:
        schema["$defs"] = used
    return schema


def resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF):
        return {**defs.get(ref[len(REF) :], {}), **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def wants_json(schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether a parameter takes only arrays/objects (so a JSON string may be decoded for it)."""
    found = [resolve(s, defs).get("type") for s in schema.get("anyOf", [schema])]
    kinds = {k for t in found for k in (t if isinstance(t, list) else [t])} - {"null"}
    return bool(kinds) and kinds <= {"array", "object"}


def prompt_arguments(sig: Any) -> list[dict[str, Any]]:
    """The MCP ``PromptArgument`` list for ``sig`` (a ``FunctionSignature``): name, description
    (if any), required."""
    return [
        {"name": p.name, **({"description": p.description} if p.description else {}), "required": p.required}
        for p in sig.parameters
    ]
