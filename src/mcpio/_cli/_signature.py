"""A tool's inputSchema for people: parameter types as short text (``str``, ``int | None``,
``list[str]``, ``"a" | "b"``, the name of a ``$ref``), a signature line, and the check of
``call`` arguments against the schema before anything is sent (unknown names with a
"did you mean", missing required ones, values of the wrong type).

The check covers what a person gets wrong on a command line (names, required, the JSON type,
enums); the server stays the judge of everything else (formats, ranges, patterns).
"""

from __future__ import annotations

from typing import Any

from .._suggest import did_you_mean

_NAMES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "object",
    "array": "list",
}


def deref(schema: Any, root: Any) -> Any:
    """``schema`` with local ``$ref``s (``#/…``) followed, at most 32 deep; ``{}`` for a dangling one."""
    seen = 0
    while (
        isinstance(schema, dict)
        and isinstance(schema.get("$ref"), str)
        and schema["$ref"].startswith("#/")
        and seen < 32
    ):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return {}
        schema, seen = node, seen + 1
    return schema


def type_text(schema: Any, root: Any = None, depth: int = 0) -> str:
    """The type ``schema`` describes, as short Python-like text (``any`` only when it says nothing)."""
    root = schema if root is None else root
    if schema is True or schema == {} or schema is None:
        return "any"
    if not isinstance(schema, dict) or depth > 6:
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = deref(schema, root)
        if isinstance(target, dict) and target.get("enum") is None and target.get("type") == "object":
            return ref.rsplit("/", 1)[-1]  # a named object type: its name says more than "object"
        return type_text(target, root, depth + 1)
    if "const" in schema:
        return _literal(schema["const"])
    if isinstance(schema.get("enum"), list):
        return " | ".join(_literal(v) for v in schema["enum"][:6]) + (" | …" if len(schema["enum"]) > 6 else "")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            parts: list[str] = []
            for option in options:
                text = type_text(option, root, depth + 1)
                if text not in parts:
                    parts.append(text)
            if "None" in parts:  # Optional[...] reads best with None last
                parts = [p for p in parts if p != "None"] + ["None"]
            return " | ".join(parts)
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        return type_text(schema["allOf"][0], root, depth + 1)
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " | ".join(type_text({**schema, "type": k}, root, depth + 1) for k in kinds) or "any"
    if kinds == "array" or (kinds is None and "items" in schema):
        items = schema.get("items")
        return f"list[{type_text(items, root, depth + 1)}]" if items not in (None, True, {}) else "list"
    if kinds == "object" or (kinds is None and "properties" in schema):
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not schema.get("properties"):
            return f"dict[str, {type_text(extra, root, depth + 1)}]"
        return "object"
    if isinstance(kinds, str):
        return _NAMES.get(kinds, kinds)
    return "any"


def _literal(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def signature(name: str, schema: Any) -> str:
    """``name(text: str, times: int = 1, *, ...)``: required parameters first, then optional ones."""
    return f"{name}({parameters(schema)})"


def parameters(schema: Any) -> str:
    """``text: str, times?: int`` for a ``list`` column (``?`` marks optional parameters)."""
    if not isinstance(schema, dict):
        return ""
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        return ""
    required = set(schema.get("required") or ()) if isinstance(schema.get("required"), list) else set()
    parts = []
    for key, prop in props.items():
        text = f"{key}: {type_text(prop, schema)}" if key in required else f"{key}?: {type_text(prop, schema)}"
        parts.append(text)
    parts.sort(key=lambda p: "?:" in p.split(" ", 1)[0])
    return ", ".join(parts)


suggest = did_you_mean  # the one "did you mean" rule (the server's messages use it too)


def _matches(value: Any, schema: Any, root: Any, depth: int = 0) -> bool:
    """Whether ``value`` has a JSON type ``schema`` allows (types, enums, const, anyOf/oneOf,
    array items, object properties); unknown keywords are not judged."""
    schema = deref(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return True
    if "const" in schema and value != schema["const"]:
        return False
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return False
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and not any(_matches(value, o, root, depth + 1) for o in options):
            return False
    if isinstance(schema.get("allOf"), list) and not all(_matches(value, o, root, depth + 1) for o in schema["allOf"]):
        return False
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, k) for k in kinds):
            return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(_matches(v, schema["items"], root, depth + 1) for v in value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return all(_matches(v, props[k], root, depth + 1) for k, v in value.items() if k in props)
    return True


def _is(value: Any, kind: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def argument_problems(arguments: dict[str, Any], schema: Any) -> list[str]:
    """What is wrong with ``arguments`` for a tool with this inputSchema (empty when nothing)."""
    if not isinstance(schema, dict):
        return []
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required = (
        [r for r in schema.get("required") or () if isinstance(r, str)]
        if isinstance(schema.get("required"), list)
        else []
    )
    open_ended = schema.get("additionalProperties", True) is not False and not props
    problems = []
    for key, value in arguments.items():
        if key not in props:
            if open_ended or schema.get("additionalProperties") not in (None, False):
                continue
            problems.append(f"unknown argument {key!r}{suggest(key, list(props))}")
        elif not _matches(value, props[key], schema):
            problems.append(f"argument {key!r} must be {type_text(props[key], schema)}, not {_literal(value)}")
    missing = [r for r in required if r not in arguments]
    if missing:
        problems.append(
            "missing required argument" + ("s " if len(missing) > 1 else " ") + ", ".join(repr(m) for m in missing)
        )
    return problems
